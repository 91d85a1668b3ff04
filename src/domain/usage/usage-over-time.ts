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
