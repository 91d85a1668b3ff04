import type { Db } from '../../db/database.js';
import { NotFoundError } from '../../shared/errors.js';

export interface HourlyUsage {
  environment: string;
  appName: string;
  timestamp: string;
  yes: number;
  no: number;
  /** How often each variant was given, for flags with variants. */
  variants: Record<string, number>;
}

/** An answer lists at most this many hours × applications × environments; the busiest are kept. */
export const USAGE_ROWS_LIMIT = 5000;

/**
 * A flag's evaluations per hour, environment and application over the last hours, from the hourly usage SDKs
 * report (the table's key starts with the flag and environment, so this reads only the flag's rows).
 */
export async function flagUsageOverTime(db: Db, featureName: string, hoursBack: number, now: Date): Promise<HourlyUsage[]> {
  const flag = await db.selectFrom('features').select('name').where('name', '=', featureName).executeTakeFirst();
  if (!flag) throw new NotFoundError(`Could not find flag "${featureName}"`);
  const since = new Date(Math.floor(now.getTime() / 3_600_000) * 3_600_000 - (hoursBack - 1) * 3_600_000);
  const rows = await db
    .selectFrom('feature_usage_hourly')
    .select(['environment', 'app_name', 'hour', 'yes', 'no'])
    .where('feature_name', '=', featureName)
    .where('hour', '>=', since)
    .orderBy('hour')
    .orderBy('environment')
    .orderBy('app_name')
    .limit(USAGE_ROWS_LIMIT)
    .execute();
  const variantRows = await db
    .selectFrom('feature_variant_usage_hourly')
    .select(['environment', 'app_name', 'hour', 'variant', 'count'])
    .where('feature_name', '=', featureName)
    .where('hour', '>=', since)
    .limit(USAGE_ROWS_LIMIT)
    .execute();
  const key = (environment: string, appName: string, hour: Date) => `${environment}\u0000${appName}\u0000${hour.toISOString()}`;
  const variantsOf = new Map<string, Record<string, number>>();
  for (const row of variantRows) {
    const counts = variantsOf.get(key(row.environment, row.app_name, row.hour)) ?? {};
    counts[row.variant] = Number(row.count);
    variantsOf.set(key(row.environment, row.app_name, row.hour), counts);
  }
  return rows.map((row) => ({
    environment: row.environment,
    appName: row.app_name,
    timestamp: row.hour.toISOString(),
    yes: Number(row.yes),
    no: Number(row.no),
    variants: variantsOf.get(key(row.environment, row.app_name, row.hour)) ?? {},
  }));
}

/**
 * A flag's evaluations in the current hour per environment and application, and every application that reported it
 * within the retention (Unleash's `GET /api/admin/client-metrics/features/:name`).
 */
export async function flagUsageSummary(
  db: Db,
  featureName: string,
  now: Date,
): Promise<{ lastHourUsage: Array<Omit<HourlyUsage, 'variants'> & { featureName: string }>; seenApplications: string[] }> {
  const lastHour = await flagUsageOverTime(db, featureName, 1, now);
  const applications = await db
    .selectFrom('feature_usage_hourly')
    .select('app_name')
    .distinct()
    .where('feature_name', '=', featureName)
    .orderBy('app_name')
    .limit(USAGE_ROWS_LIMIT)
    .execute();
  return {
    lastHourUsage: lastHour.map(({ variants: _variants, ...usage }) => ({ featureName, ...usage })),
    seenApplications: applications.map((row) => row.app_name),
  };
}

/** A name SDKs evaluated that no flag has, as Unleash's `unknownFlagSchema` reports it. */
export interface UnknownFlag {
  name: string;
  lastSeenAt: string;
  /** The last event about a flag of that name (one deleted, or renamed away), if any. */
  lastEventAt: string | null;
  reports: Array<{ appName: string; environments: Array<{ environment: string; seenAt: string }> }>;
}

/**
 * Names SDKs evaluated that no flag has, most recently seen first (Unleash's `GET /api/admin/metrics/unknown-flags`).
 * What is kept of them is bounded when reports are recorded (client-metrics.ts); names a flag has by now are left out.
 */
export async function listUnknownFlags(db: Db): Promise<UnknownFlag[]> {
  const rows = await db
    .selectFrom('client_application_missing_flags as m')
    .select(['m.feature_name', 'm.app_name', 'm.environment', 'm.last_seen_at'])
    .where((eb) => eb.not(eb.exists(eb.selectFrom('features as f').select('f.name').whereRef('f.name', '=', 'm.feature_name'))))
    .orderBy('m.feature_name')
    .orderBy('m.app_name')
    .orderBy('m.environment')
    .execute();
  const names = [...new Set(rows.map((row) => row.feature_name))];
  const lastEvents =
    names.length === 0
      ? []
      : await db
          .selectFrom('events')
          .select(['feature_name', (eb) => eb.fn.max('created_at').as('at')])
          .where('feature_name', 'in', names)
          .groupBy('feature_name')
          .execute();
  const lastEventAt = new Map(lastEvents.map((event) => [event.feature_name!, event.at]));
  const byName = new Map<string, UnknownFlag>();
  for (const row of rows) {
    const flag = byName.get(row.feature_name) ?? {
      name: row.feature_name,
      lastSeenAt: row.last_seen_at.toISOString(),
      lastEventAt: lastEventAt.get(row.feature_name)?.toISOString() ?? null,
      reports: [],
    };
    if (row.last_seen_at.toISOString() > flag.lastSeenAt) flag.lastSeenAt = row.last_seen_at.toISOString();
    let report = flag.reports.find((entry) => entry.appName === row.app_name);
    if (!report) {
      report = { appName: row.app_name, environments: [] };
      flag.reports.push(report);
    }
    report.environments.push({ environment: row.environment, seenAt: row.last_seen_at.toISOString() });
    byName.set(row.feature_name, flag);
  }
  return [...byName.values()].sort((a, b) => (a.lastSeenAt < b.lastSeenAt ? 1 : a.lastSeenAt > b.lastSeenAt ? -1 : 0));
}
