import { sql } from 'kysely';
import type { Db, Tx } from '../../db/database.js';
import type { SdkToken } from '../access/authenticate.js';
import type { ClientMetrics } from './sdk-report-checks.js';

const HOUR_MS = 3_600_000;

/** Variants counted per flag and report; a flag has at most 100, and SDKs send the ones they gave. */
const MAX_VARIANTS_PER_FLAG = 100;

/** Names an application may have recorded as missing, and how many of one report are looked at. */
export const MISSING_FLAGS_PER_APPLICATION = 100;
/** Names recorded as missing of all applications together: past it, only names already recorded are refreshed. */
export const MISSING_FLAGS_TOTAL = 10_000;

/**
 * Remembers names the application evaluated that no flag has (a typo, a flag deleted too early), at most
 * MISSING_FLAGS_PER_APPLICATION per application and MISSING_FLAGS_TOTAL in all, so its page can warn (names a
 * flag has by then are not shown).
 */
async function recordMissingFlags(tx: Tx, appName: string, environment: string, missing: string[], seenAt: Date): Promise<void> {
  if (missing.length === 0) return;
  const held = await tx.selectFrom('client_application_missing_flags').select('feature_name').where('app_name', '=', appName).execute();
  const known = new Set(held.map((row) => row.feature_name));
  const { n } = await tx
    .selectFrom('client_application_missing_flags')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  const room = Math.max(0, Math.min(MISSING_FLAGS_PER_APPLICATION - known.size, MISSING_FLAGS_TOTAL - Number(n)));
  const names = [...missing.filter((name) => known.has(name)), ...missing.filter((name) => !known.has(name)).slice(0, room)].slice(
    0,
    MISSING_FLAGS_PER_APPLICATION,
  );
  if (names.length === 0) return;
  await tx
    .insertInto('client_application_missing_flags')
    .values(names.map((name) => ({ app_name: appName, environment, feature_name: name, last_seen_at: seenAt })))
    .onConflict((oc) => oc.columns(['app_name', 'environment', 'feature_name']).doUpdateSet({ last_seen_at: sql`excluded.last_seen_at` }))
    .execute();
}

/**
 * Records a report in the caller's transaction: per flag, hourly yes/no counts for the token's environment and
 * application, and when the flag was last evaluated there. Flags that do not exist, or that lie outside the
 * token's projects, are skipped: SDKs evaluate whatever names their code asks for. A report time a little in the
 * future (within what assertReportTime lets through) is taken as now, so one client's clock cannot push
 * `lastSeenAt` ahead.
 */
export async function recordClientMetrics(tx: Tx, token: SdkToken, metrics: ClientMetrics, now: Date): Promise<number> {
  const reported = Object.entries(metrics.bucket.toggles).filter(([, counts]) => counts.yes + counts.no > 0);
  if (reported.length === 0) return 0;
  const stop = new Date(Math.min(Date.parse(metrics.bucket.stop), now.getTime()));
  const hour = new Date(Math.floor(stop.getTime() / HOUR_MS) * HOUR_MS);
  const known = tx
    .selectFrom('features')
    .select('name')
    .where(
      'name',
      'in',
      reported.map(([name]) => name),
    );
  const existing = await known.select('project').execute();
  const existingNames = new Set(existing.map((row) => row.name));
  await recordMissingFlags(
    tx,
    metrics.appName,
    token.environment,
    reported.map(([name]) => name).filter((name) => !existingNames.has(name)),
    stop,
  );
  const inScope = token.projects === '*' ? existing : existing.filter((row) => (token.projects as string[]).includes(row.project));
  const names = new Set(inScope.map((row) => row.name));
  const rows = reported.filter(([name]) => names.has(name));
  if (rows.length === 0) return 0;
  await tx
    .insertInto('feature_usage_hourly')
    .values(
      rows.map(([name, counts]) => ({
        feature_name: name,
        environment: token.environment,
        app_name: metrics.appName,
        hour,
        yes: counts.yes,
        no: counts.no,
      })),
    )
    .onConflict((oc) =>
      oc.columns(['feature_name', 'environment', 'hour', 'app_name']).doUpdateSet({
        yes: sql`feature_usage_hourly.yes + excluded.yes`,
        no: sql`feature_usage_hourly.no + excluded.no`,
      }),
    )
    .execute();
  const variantRows = rows.flatMap(([name, counts]) =>
    Object.entries(counts.variants ?? {})
      .filter(([, count]) => count > 0)
      .slice(0, MAX_VARIANTS_PER_FLAG)
      .map(([variant, count]) => ({
        feature_name: name,
        environment: token.environment,
        app_name: metrics.appName,
        hour,
        variant,
        count,
      })),
  );
  if (variantRows.length > 0) {
    await tx
      .insertInto('feature_variant_usage_hourly')
      .values(variantRows)
      .onConflict((oc) =>
        oc
          .columns(['feature_name', 'environment', 'hour', 'app_name', 'variant'])
          .doUpdateSet({ count: sql`feature_variant_usage_hourly.count + excluded.count` }),
      )
      .execute();
  }
  await tx
    .insertInto('feature_environment_usage')
    .values(rows.map(([name]) => ({ feature_name: name, environment: token.environment, last_seen_at: stop })))
    .onConflict((oc) =>
      oc.columns(['feature_name', 'environment']).doUpdateSet({
        last_seen_at: sql`greatest(feature_environment_usage.last_seen_at, excluded.last_seen_at)`,
      }),
    )
    .execute();
  return rows.length;
}

/** How long hourly usage is kept: the flag page draws a month. */
export const USAGE_RETENTION_DAYS = 35;
/** Deleted per statement, so a large backlog never holds long locks. */
const PRUNE_BATCH = 5_000;

/**
 * Forgets usage past its retention, a batch at a time, and the names no flag has that an application has not asked
 * for since `missingCutoff` (as long as an application is kept).
 */
export async function pruneUsage(db: Db, now: Date, missingCutoff: Date): Promise<void> {
  await db.deleteFrom('client_application_missing_flags').where('last_seen_at', '<', missingCutoff).execute();
  const usageCutoff = new Date(now.getTime() - USAGE_RETENTION_DAYS * 24 * HOUR_MS);
  for (const table of ['feature_usage_hourly', 'feature_variant_usage_hourly'] as const) {
    for (;;) {
      const result = await sql`
        DELETE FROM ${sql.table(table)} WHERE ctid IN (SELECT ctid FROM ${sql.table(table)} WHERE hour < ${usageCutoff} LIMIT ${PRUNE_BATCH})`.execute(
        db,
      );
      if (Number(result.numAffectedRows ?? 0) < PRUNE_BATCH) break;
    }
  }
}
