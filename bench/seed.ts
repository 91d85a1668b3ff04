/**
 * Fills a database with a realistic installation for benchmarks:
 *   npm run bench:seed -- --flags 50000 --events 2000000 --database-url postgres://…
 *   npm run bench:seed -- --flags 5000 --events 120000 --data-dir ./bench-data
 * Projects, environments, users, flags of every type with tags, segments, strategies with constraints,
 * variants, favorites and lifecycle stages, and events spread over a year. Everything is written with bulk
 * SQL (generate_series) in Vexil's own schema after its migrations ran; half the events go to one "hot"
 * project so a project with a million events exists at 2 M events.
 */
import { parseArgs } from 'node:util';
import cliProgress from 'cli-progress';
import { sql } from 'kysely';
import { openDatabase } from '../src/db/database.js';
import type { Db } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { EVENT_COUNT_BACKFILL } from '../src/domain/events/event-counts.js';
import { databaseFromArgs } from './bench-database.js';

const EVENT_BATCH = 100_000;
const USERS = 25;
const SEGMENTS = 40;
const WORDS = [
  'checkout',
  'payments',
  'search',
  'onboarding',
  'billing',
  'rollout',
  'dashboard',
  'profile',
  'cart',
  'pricing',
  'recommendations',
  'notifications',
  'mobile',
  'web',
  'api',
  'beta',
  'experiment',
  'legacy',
  'redesign',
  'export',
  'import',
  'reports',
  'analytics',
  'sso',
  'invoices',
  'shipping',
  'inventory',
  'coupons',
  'wishlist',
  'reviews',
];
const TEAMS = ['payments', 'growth', 'platform', 'mobile', 'search', 'checkout', 'identity', 'data', 'infra', 'support'];
/** Event types in the mix a busy installation records, the common ones repeated. */
const EVENT_MIX = [
  'feature-strategy-update',
  'feature-strategy-update',
  'feature-strategy-update',
  'feature-environment-enabled',
  'feature-environment-disabled',
  'feature-metadata-updated',
  'feature-strategy-add',
  'feature-created',
  'feature-tagged',
  'feature-environment-variants-updated',
  'feature-stale-on',
  'feature-archived',
  'segment-updated',
  'feature-strategy-remove',
  'feature-environment-enabled',
  'feature-strategy-update',
];

const sqlArray = (values: string[]) => sql.raw(`ARRAY[${values.map((v) => `'${v}'`).join(',')}]`);

export interface SeedSize {
  flags: number;
  events: number;
  /** The share of flags on in production, in percent; two in three (as in the other environments) when absent. */
  productionOnPercent?: number;
}

export function projectCount(flags: number): number {
  return Math.max(3, Math.round(flags / 2000));
}

async function seedCatalog(db: Db, flags: number, projects: number): Promise<void> {
  await sql`INSERT INTO environments (name, type, sort_order) VALUES ('staging', 'preproduction', 150) ON CONFLICT DO NOTHING`.execute(db);
  await sql`
    INSERT INTO projects (id, name, description, created_at)
    SELECT 'bench-' || p, 'Bench project ' || p, 'Seeded for benchmarks', now() - interval '400 days'
    FROM generate_series(0, ${projects - 1}) p`.execute(db);
  await sql`
    INSERT INTO project_environments (project_id, environment_name)
    SELECT 'bench-' || p, e FROM generate_series(0, ${projects - 1}) p, unnest(ARRAY['development', 'staging', 'production']) e`.execute(
    db,
  );
  await sql`
    INSERT INTO users (username, email, name, root_role, created_at)
    SELECT 'bench-user-' || u, 'bench-user-' || u || '@example.com', 'Bench User ' || u,
      CASE WHEN u % 5 = 0 THEN 'Admin' ELSE 'Editor' END, now() - interval '400 days'
    FROM generate_series(1, ${USERS}) u`.execute(db);
  await sql`INSERT INTO tag_types (name, description) VALUES ('team', 'Owning team'), ('area', 'Product area') ON CONFLICT DO NOTHING`.execute(
    db,
  );
  await sql`
    INSERT INTO segments (name, description, constraints, created_at, created_by)
    SELECT 'segment-' || s, 'Seeded segment ' || s,
      jsonb_build_array(jsonb_build_object('contextName', 'userId', 'operator', 'IN', 'values',
        jsonb_build_array(s::text, (s * 7)::text), 'caseInsensitive', false, 'inverted', false)),
      now() - interval '300 days', 'bench-user-1'
    FROM generate_series(1, ${SEGMENTS}) s`.execute(db);
  // Flags are flag-<k> for k in 0..N-1, in project bench-<k mod P>, created over the past year.
  await sql`
    INSERT INTO features (name, project, type, description, impression_data, stale, created_at, created_by_user_id, created_by, archived_at)
    SELECT 'flag-' || lpad(k::text, 7, '0'), 'bench-' || (k % ${projects}),
      (ARRAY['release', 'experiment', 'operational', 'kill-switch', 'permission'])[1 + k % 5],
      'Controls ' || w[1 + (k * 7) % ${WORDS.length}] || ' ' || w[1 + (k * 13) % ${WORDS.length}] || ' for ' || w[1 + (k * 17) % ${WORDS.length}],
      k % 7 = 0, k % 23 = 0,
      now() - ((k * 7919) % 365) * interval '1 day' - (k % 86400) * interval '1 second',
      u.id, u.username,
      CASE WHEN k % 50 = 0 THEN now() - interval '3 days' END
    FROM generate_series(0, ${flags - 1}) k
    CROSS JOIN LATERAL (SELECT ${sqlArray(WORDS)} AS w) words
    JOIN users u ON u.username = 'bench-user-' || (1 + k % ${USERS})`.execute(db);
}

async function seedFlagConfiguration(db: Db, productionOnPercent: number | undefined): Promise<void> {
  const enabled =
    productionOnPercent === undefined
      ? sql`abs(hashtext(f.name || e)) % 3 <> 0`
      : sql`CASE WHEN e = 'production' THEN abs(hashtext(f.name || e)) % 100 < ${productionOnPercent} ELSE abs(hashtext(f.name || e)) % 3 <> 0 END`;
  await sql`
    INSERT INTO feature_environments (feature_name, environment, enabled, variants)
    SELECT f.name, e, ${enabled},
      CASE WHEN abs(hashtext(f.name)) % 10 = 0
        THEN '[{"name":"control","weight":500,"weightType":"variable","stickiness":"default","overrides":[]},{"name":"treatment","weight":500,"weightType":"variable","stickiness":"default","overrides":[]}]'::jsonb
        ELSE '[]'::jsonb END
    FROM features f, unnest(ARRAY['development', 'staging', 'production']) e`.execute(db);
  await sql`
    INSERT INTO feature_strategies (id, feature_name, environment, strategy_name, sort_order, parameters, constraints, variants, created_at)
    SELECT gen_random_uuid(), fe.feature_name, fe.environment, 'flexibleRollout', 0,
      jsonb_build_object('rollout', (abs(hashtext(fe.feature_name)) % 101)::text, 'stickiness', 'default', 'groupId', fe.feature_name),
      CASE WHEN abs(hashtext(fe.feature_name || 'c')) % 4 = 0
        THEN '[{"contextName":"appName","operator":"IN","values":["web","ios"],"caseInsensitive":false,"inverted":false}]'::jsonb
        ELSE '[]'::jsonb END,
      '[]'::jsonb, now() - interval '200 days'
    FROM feature_environments fe
    WHERE fe.enabled OR abs(hashtext(fe.feature_name || fe.environment || 's')) % 2 = 0`.execute(db);
  await sql`
    INSERT INTO feature_strategy_segments (strategy_id, segment_id)
    SELECT fs.id, s.id FROM feature_strategies fs
    JOIN segments s ON s.name = 'segment-' || (1 + abs(hashtext(fs.id::text)) % ${SEGMENTS})
    WHERE abs(hashtext(fs.feature_name)) % 8 = 0`.execute(db);
  await sql`
    INSERT INTO feature_tags (feature_name, tag_type, tag_value, created_at)
    SELECT f.name, 'team', (${sqlArray(TEAMS)})[1 + abs(hashtext(f.name)) % ${TEAMS.length}], f.created_at FROM features f
    UNION ALL
    SELECT f.name, 'simple', 'beta', f.created_at FROM features f WHERE abs(hashtext(f.name || 't')) % 3 = 0
    UNION ALL
    SELECT f.name, 'area', (${sqlArray(WORDS)})[1 + abs(hashtext(f.name || 'a')) % ${WORDS.length}], f.created_at FROM features f
    WHERE abs(hashtext(f.name || 'a')) % 2 = 0`.execute(db);
  await sql`
    INSERT INTO favorite_features (user_id, feature_name, created_at)
    SELECT u.id, f.name, now() FROM users u
    JOIN features f ON abs(hashtext(f.name || u.id::text)) % 2500 = 0
    WHERE u.username LIKE 'bench-user-%'`.execute(db);
  await sql`
    INSERT INTO feature_lifecycles (feature_name, stage, created_at)
    SELECT f.name, 'initial', f.created_at FROM features f
    UNION ALL
    SELECT DISTINCT fe.feature_name, 'pre-live', f.created_at + interval '1 day' FROM feature_environments fe
    JOIN features f ON f.name = fe.feature_name WHERE fe.enabled AND fe.environment <> 'production'
    UNION ALL
    SELECT fe.feature_name, 'live', f.created_at + interval '5 days' FROM feature_environments fe
    JOIN features f ON f.name = fe.feature_name WHERE fe.enabled AND fe.environment = 'production'
    UNION ALL
    SELECT f.name, 'archived', f.archived_at FROM features f WHERE f.archived_at IS NOT NULL`.execute(db);
}

/**
 * Events `from`..`to` of `total`: created over the past year in id order, half of them in bench-0 (the hot
 * project). Data carries words to search for, and one event in 10,000 the rare word "zanzibar".
 */
async function seedEvents(db: Db, from: number, to: number, total: number, flags: number, projects: number): Promise<void> {
  const perProject = Math.max(1, Math.floor(flags / projects));
  await sql`
    INSERT INTO events (created_at, type, created_by, created_by_user_id, project, environment, feature_name, data, pre_data, tags)
    SELECT
      now() - interval '365 days' + (i::float8 / ${total}) * interval '365 days',
      t.types[1 + (i * 31) % ${EVENT_MIX.length}],
      'bench-user-' || (1 + i % ${USERS}), u.id,
      'bench-' || r, (ARRAY['development', 'staging', 'production'])[1 + i % 3],
      'flag-' || lpad((((i::int8 * 7919) % ${perProject}) * ${projects} + r)::text, 7, '0'),
      jsonb_build_object(
        'name', 'flexibleRollout',
        'parameters', jsonb_build_object('rollout', ((i * 37) % 101)::text, 'stickiness', 'default'),
        'note', CASE WHEN i % 10000 = 0 THEN 'zanzibar release train' ELSE 'rollout of ' || t.w[1 + (i * 7) % ${WORDS.length}] END),
      CASE WHEN i % 3 = 0 THEN jsonb_build_object('parameters', jsonb_build_object('rollout', ((i * 11) % 101)::text)) END,
      jsonb_build_array(jsonb_build_object('type', 'team', 'value', (${sqlArray(TEAMS)})[1 + i % ${TEAMS.length}]))
    FROM generate_series(${from}::int8, ${to}::int8) i
    CROSS JOIN LATERAL (SELECT CASE WHEN i % 2 = 0 THEN 0 ELSE i % ${projects} END AS r) project
    CROSS JOIN (SELECT ${sqlArray(EVENT_MIX)} AS types, ${sqlArray(WORDS)} AS w) t
    JOIN users u ON u.username = 'bench-user-' || (1 + i % ${USERS})`.execute(db);
}

/** The exact counters that back totalEvents, rebuilt from the log after the bulk load. */
async function recountEvents(db: Db): Promise<void> {
  for (const statement of EVENT_COUNT_BACKFILL) await sql.raw(statement).execute(db);
}

export async function seed(db: Db, size: SeedSize, onProgress: (step: string, done: number, total: number) => void): Promise<void> {
  const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM features`.execute(db);
  if (rows[0]!.n > 0) throw new Error('This database already has flags: seed a fresh database');
  const projects = projectCount(size.flags);
  const steps = 4 + Math.ceil(size.events / EVENT_BATCH);
  let done = 0;
  const step = async (name: string, work: () => Promise<void>) => {
    onProgress(name, done, steps);
    await work();
    done += 1;
    onProgress(name, done, steps);
  };
  await step('projects, users, segments, flags', () => seedCatalog(db, size.flags, projects));
  await step('environments, strategies, tags, favorites, lifecycle', () => seedFlagConfiguration(db, size.productionOnPercent));
  for (let from = 1; from <= size.events; from += EVENT_BATCH) {
    const to = Math.min(size.events, from + EVENT_BATCH - 1);
    await step(`events ${from.toLocaleString('en')}–${to.toLocaleString('en')}`, () =>
      seedEvents(db, from, to, size.events, size.flags, projects),
    );
  }
  await step('event counters', () => recountEvents(db));
  // Fresh statistics and visibility maps, as autovacuum would leave them on a live installation.
  await step('vacuum and analyze', async () => {
    await sql`VACUUM ANALYZE`.execute(db);
  });
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      flags: { type: 'string', default: '5000' },
      events: { type: 'string', default: '120000' },
      'production-on-percent': { type: 'string' },
      'database-url': { type: 'string' },
      'data-dir': { type: 'string' },
    },
  });
  const onPercent = values['production-on-percent'] === undefined ? undefined : Number(values['production-on-percent']);
  const size = { flags: Number(values.flags), events: Number(values.events), productionOnPercent: onPercent };
  if (!Number.isInteger(size.flags) || size.flags < 10 || !Number.isInteger(size.events) || size.events < 0) {
    throw new Error('--flags must be a whole number of at least 10 and --events a whole number');
  }
  if (onPercent !== undefined && !(Number.isInteger(onPercent) && onPercent >= 0 && onPercent <= 100)) {
    throw new Error('--production-on-percent must be a whole number from 0 to 100');
  }
  const config = databaseFromArgs(values['database-url'], values['data-dir']);
  const database = await openDatabase(config);
  const started = Date.now();
  const bar = new cliProgress.SingleBar(
    // Without a terminal (CI, a log file) the bar is printed as a line every few seconds instead.
    { format: 'Seeding [{bar}] {value}/{total} steps | {step} | {duration}s', hideCursor: true, noTTYOutput: true, notTTYSchedule: 5000 },
    cliProgress.Presets.shades_classic,
  );
  try {
    await migrateToLatest(database.db);
    bar.start(1, 0, { step: 'starting' });
    await seed(database.db, size, (step, done, total) => {
      bar.setTotal(total);
      bar.update(done, { step });
    });
    bar.stop();
    const where = config.kind === 'postgres' ? 'PostgreSQL' : `the embedded database in ${config.dataDir}`;
    process.stdout.write(
      `Seeded ${size.flags.toLocaleString('en')} flags in ${projectCount(size.flags)} projects and ${size.events.toLocaleString('en')} events into ${where} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
    );
  } finally {
    bar.stop();
    await database.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((error: unknown) => {
    process.stderr.write(`bench:seed failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
