import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';
import type { Db, Tx } from '../../src/db/database.js';
import { findContextField } from '../../src/domain/context-fields/context-fields.js';
import { findFeature } from '../../src/domain/features/feature-lookup.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const fixture = fileURLToPath(new URL('../fixtures/domain-floors/', import.meta.url));
const config = createRequire(import.meta.url)('../../.dependency-cruiser.cjs') as { forbidden: { name: string }[] };
const run = promisify(execFile);

describe('the floors inside src/domain', () => {
  it('puts every area of src/domain on a floor', () => {
    const areas = readdirSync(`${root}src/domain`, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    const loose = readdirSync(`${root}src/domain`).filter((name) => name.endsWith('.ts'));
    assert.deepEqual(loose, [], 'every module of src/domain belongs to an area folder');
    const ruled = new Set(config.forbidden.map((rule) => rule.name));
    assert.deepEqual(
      areas.filter((area) => !ruled.has(`domain-${area}-imports-lower-floors`)),
      [],
    );
  });

  it('refuses an import from an area to one on a higher floor', async () => {
    const check = run(`${root}node_modules/.bin/depcruise`, ['src', '--config', `${root}.dependency-cruiser.cjs`, '--output-type', 'err'], {
      cwd: fixture,
    });
    const failure = await check.then(
      () => assert.fail('the upward import passed the check'),
      (error: { code: number; stdout: string }) => error,
    );
    assert.equal(failure.code, 1);
    assert.match(
      failure.stdout,
      /error domain-access-imports-lower-floors: src\/domain\/access\/upward-import\.ts → src\/domain\/features\/flag-name\.ts/,
    );
  });
});

describe('units of work', () => {
  it('are the only transactions: nothing outside src/db opens one', () => {
    const sources = readdirSync(`${root}src`, { recursive: true, encoding: 'utf8' }).filter(
      (path) => path.endsWith('.ts') && !path.startsWith('db/'),
    );
    assert.ok(sources.length > 100, 'the source tree was read');
    assert.deepEqual(
      sources.filter((path) => readFileSync(`${root}src/${path}`, 'utf8').includes('.transaction()')),
      [],
    );
  });
});

describe('tables', () => {
  it('each have one writer: the area of src/domain that owns it, and nothing outside src/domain writes one', () => {
    const writers = new Map<string, Set<string>>();
    const sources = readdirSync(`${root}src`, { recursive: true, encoding: 'utf8' }).filter(
      (path) => path.endsWith('.ts') && !path.startsWith('db/migrations/'),
    );
    for (const path of sources) {
      const owner = path.startsWith('domain/') ? path.split('/')[1]! : path.split('/')[0]!;
      for (const match of readFileSync(`${root}src/${path}`, 'utf8').matchAll(/(?:insertInto|updateTable|deleteFrom)\('([a-z_]+)'/g)) {
        const table = match[1]!;
        writers.set(table, new Set([...(writers.get(table) ?? []), owner]));
      }
    }
    assert.ok(writers.size > 30, 'the writes were read');
    const shared = [...writers].filter(([, owners]) => owners.size > 1).map(([table, owners]) => `${table}: ${[...owners].join(', ')}`);
    const outside = [...writers]
      .filter(([, owners]) => [...owners].some((owner) => !sources.some((path) => path.startsWith(`domain/${owner}/`))))
      .map(([table, owners]) => `${table}: ${[...owners].join(', ')}`);
    assert.deepEqual(shared, []);
    assert.deepEqual(outside, []);
  });
});

/** Each area's reads of tables an area on a higher floor owns (writes), with why the read belongs where it is. */
const READS_UP: Record<string, Array<{ tables: string[]; why: string }>> = {
  access: [
    {
      tables: [
        'api_token_projects',
        'api_tokens',
        'group_users',
        'groups',
        'oauth_access_tokens',
        'oauth_clients',
        'personal_access_tokens',
        'project_access',
        'projects',
        'role_permissions',
        'roles',
        'scim_tokens',
        'signal_endpoint_tokens',
        'signal_endpoints',
        'user_sessions',
        'users',
      ],
      why: 'deciding who calls and what they may do reads every credential, role and private project on each request; access is the floor all others stand on',
    },
  ],
  events: [
    { tables: ['addons'], why: 'recording an event enqueues its deliveries to the configured integrations in the same transaction' },
  ],
  'agent-authorization': [{ tables: ['users'], why: 'an agent token is granted to an active person' }],
  'api-tokens': [{ tables: ['projects'], why: "a token's projects must exist when it is made or issued" }],
  'code-references': [
    {
      tables: ['change_request_changes', 'change_requests'],
      why: "a flag's removal readiness waits for the change requests still open on it, which it only counts",
    },
  ],
  'context-fields': [
    {
      tables: ['features', 'feature_strategies', 'projects', 'segments'],
      why: "a field's usage (strategies and segments constraining on it) is listed and stops its deletion; a project's field names its project",
    },
  ],
  environments: [{ tables: ['project_environments'], why: 'an environment a project uses is listed with it and cannot go while used' }],
  features: [
    {
      tables: ['feature_tags', 'project_environments', 'projects', 'segments'],
      why: "a flag lives in its project's environments, takes their default strategy, and is shown with its tags and segments",
    },
  ],
  'protected-environments': [
    {
      tables: ['change_requests', 'feature_strategies', 'feature_strategy_segments', 'features'],
      why: 'the change-request guard decides from the flags, strategies and segments in play and the open change requests',
    },
  ],
  roles: [{ tables: ['groups', 'project_access', 'users'], why: 'a role in use by people, groups or project grants cannot be deleted' }],
  strategies: [{ tables: ['feature_strategies', 'features'], why: 'a strategy definition flags use cannot be deleted' }],
  usage: [{ tables: ['features'], why: "usage is reported by flag name and shown with the flag's project, for visibility" }],
  users: [
    {
      tables: ['action_sets', 'group_users', 'groups', 'project_access'],
      why: "a person's roles come from groups and project grants (profile, last-Admin rule); a service account an action set runs as stays",
    },
  ],
};

describe('data rules', () => {
  const sources = readdirSync(`${root}src`, { recursive: true, encoding: 'utf8' }).filter(
    (path) => path.endsWith('.ts') && !path.startsWith('db/migrations/'),
  );
  const text = (path: string) => readFileSync(`${root}src/${path}`, 'utf8');
  const areaOf = (path: string) => (path.startsWith('domain/') ? path.split('/')[1]! : undefined);

  it('every read of a table an area on a higher floor owns is listed with its reason, and nothing listed is stale', () => {
    const floors = new Map<string, number>();
    for (const rule of config.forbidden as Array<{ name: string; comment?: string }>) {
      const area = /^domain-(.+)-imports-lower-floors$/.exec(rule.name)?.[1];
      if (area) floors.set(area, Number(/floor (\d+)/.exec(rule.comment ?? '')![1]));
    }
    const owners = new Map<string, string>();
    for (const path of sources) {
      const area = areaOf(path);
      if (!area) continue;
      for (const [, table] of text(path).matchAll(/\.(?:insertInto|updateTable|deleteFrom)\('([a-z_]+)'/g)) owners.set(table!, area);
    }
    const readsUp = new Set<string>();
    for (const path of sources) {
      const area = areaOf(path);
      if (!area) continue;
      for (const [, table] of text(path).matchAll(/\.(?:selectFrom|innerJoin|leftJoin|rightJoin|fullJoin)\('([a-z_]+)/g)) {
        const owner = owners.get(table!);
        if (owner && owner !== area && floors.get(owner)! > floors.get(area)!) readsUp.add(`${area} reads ${table} (${owner}'s)`);
      }
    }
    const listed = new Set(
      Object.entries(READS_UP).flatMap(([area, groups]) =>
        groups.flatMap(({ tables }) => tables.map((table) => `${area} reads ${table} (${owners.get(table)}'s)`)),
      ),
    );
    assert.ok(readsUp.size > 20, 'the reads were found');
    assert.deepEqual([...readsUp].filter((read) => !listed.has(read)).sort(), [], 'a new read up a floor says why, or moves to the owner');
    assert.deepEqual([...listed].filter((read) => !readsUp.has(read)).sort(), [], 'a listed read that no longer happens leaves the list');
  });

  it('a row lock is taken only on a transaction: in a unit of work, on a `Tx`, or through a `LockingHandle`', () => {
    const unguarded: string[] = [];
    for (const path of sources) {
      const source = text(path);
      for (const match of source.matchAll(/\.(forUpdate|forShare|forNoKeyUpdate|forKeyShare)\(\)/g)) {
        const before = source.slice(0, match.index);
        const start = Math.max(
          ...['\nexport async function', '\nasync function', '\nfunction', '\nexport function'].map((s) => before.lastIndexOf(s)),
        );
        const signature = source.slice(start, source.indexOf('{', start));
        if (!/UnitOfWork|: Tx\b|LockingHandle</.test(signature)) unguarded.push(`${path}:${before.split('\n').length}`);
      }
    }
    assert.deepEqual(unguarded, []);
  });
});

/**
 * Never called: it only has to compile. Asking for a lock on the root handle is a type error (`LockingHandle`), so the
 * lines marked below would fail `npm run typecheck` if the rule were lost.
 */
export async function rowLocksNeedATransaction(db: Db, tx: Tx): Promise<void> {
  await findContextField(tx, 'region', true);
  await findContextField(db, 'region');
  // @ts-expect-error: a lock on the root handle, outside any transaction
  await findContextField(db, 'region', true);
  // @ts-expect-error: likewise for a flag
  await findFeature(db, 'default', 'a-flag', { lock: true });
}
