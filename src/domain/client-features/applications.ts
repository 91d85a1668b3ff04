import type { Actor } from '../../db/unit-of-work.js';
import { inProjectVisibleTo } from '../access/project-visibility.js';
import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import { parseWholeNumber } from '../../shared/filters.js';

export interface ApplicationsQuery {
  /** Part of the application's name, in any case. */
  query?: string;
  offset?: string;
  limit?: string;
}

/** The applications SDKs registered, by name, one page of them with the total that match. */
export async function listApplications(db: Db, parameters: ApplicationsQuery) {
  const limit = parseWholeNumber('limit', parameters.limit, 100, 1, 1000);
  const offset = parseWholeNumber('offset', parameters.offset, 0, 0, Number.MAX_SAFE_INTEGER);
  const text = parameters.query?.trim();
  // LIKE's own wildcards in the text are matched as characters.
  const pattern = text ? `%${text.replace(/[\\%_]/g, (character) => `\\${character}`)}%` : undefined;
  let matching = db.selectFrom('client_applications as a');
  if (pattern) matching = matching.where(sql<boolean>`a.app_name ILIKE ${pattern}`);
  const [rows, total] = await Promise.all([
    matching
      .select(['a.app_name', 'a.strategies', 'a.created_at', 'a.seen_at'])
      .select((eb) =>
        eb
          .selectFrom('client_instances as i')
          .select((inner) => inner.fn.agg<string[]>('array_agg', ['i.environment']).distinct().as('environments'))
          .whereRef('i.app_name', '=', 'a.app_name')
          .as('environments'),
      )
      .select((eb) =>
        eb
          .selectFrom('client_instances as i')
          .select((inner) => inner.fn.agg<string[]>('array_agg', ['i.sdk_version']).distinct().as('sdk_versions'))
          .whereRef('i.app_name', '=', 'a.app_name')
          .where('i.sdk_version', 'is not', null)
          .as('sdk_versions'),
      )
      .select((eb) =>
        eb
          .selectFrom('client_instances as i')
          .select((inner) => inner.fn.countAll<string>().as('instances'))
          .whereRef('i.app_name', '=', 'a.app_name')
          .as('instances'),
      )
      .orderBy('a.app_name')
      .limit(limit)
      .offset(offset)
      .execute(),
    matching.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return {
    applications: rows.map((row) => ({
      appName: row.app_name,
      strategies: row.strategies,
      environments: [...(row.environments ?? [])].sort(),
      instances: Number(row.instances ?? 0),
      sdkVersions: [...(row.sdk_versions ?? [])].sort(),
      createdAt: row.created_at.toISOString(),
      seenAt: row.seen_at.toISOString(),
    })),
    total: Number(total.total),
  };
}

/** An application's page shows at most this many instances; the most recently seen first. */
export const APPLICATION_INSTANCES_LIMIT = 500;
/** How far back an application's page looks for the flags it evaluated. */
const FLAGS_WINDOW_MS = 7 * 24 * 3_600_000;

/**
 * One application: its instances, the flags it evaluated in the last week (with their counts), and the names it
 * asked for that no flag has.
 */
export async function getApplication(db: Db, actor: Actor, appName: string, now: Date) {
  const application = await db.selectFrom('client_applications').selectAll().where('app_name', '=', appName).executeTakeFirst();
  if (!application) return undefined;
  const [instances, flags, missing] = await Promise.all([
    db
      .selectFrom('client_instances')
      .selectAll()
      .where('app_name', '=', appName)
      .orderBy('seen_at', 'desc')
      .limit(APPLICATION_INSTANCES_LIMIT)
      .execute(),
    db
      .selectFrom('feature_usage_hourly as u')
      .innerJoin('features as f', 'f.name', 'u.feature_name')
      .select([
        'u.feature_name',
        'f.project',
        'u.environment',
        sql<string>`sum(u.yes)`.as('yes'),
        sql<string>`sum(u.no)`.as('no'),
        sql<Date>`max(u.hour)`.as('last_hour'),
      ])
      .where('u.app_name', '=', appName)
      .where('u.hour', '>=', new Date(now.getTime() - FLAGS_WINDOW_MS))
      .where(inProjectVisibleTo(actor, 'f.project'))
      .groupBy(['u.feature_name', 'f.project', 'u.environment'])
      .orderBy('u.feature_name')
      .orderBy('u.environment')
      .limit(1000)
      .execute(),
    db
      .selectFrom('client_application_missing_flags as m')
      .select(['m.feature_name', 'm.environment', 'm.last_seen_at'])
      .where('m.app_name', '=', appName)
      .where(({ not, exists, selectFrom }) =>
        not(exists(selectFrom('features').select('name').whereRef('features.name', '=', 'm.feature_name'))),
      )
      .orderBy('m.feature_name')
      .execute(),
  ]);
  return {
    appName: application.app_name,
    description: application.description,
    url: application.url,
    color: application.color,
    icon: application.icon,
    strategies: application.strategies,
    createdAt: application.created_at.toISOString(),
    seenAt: application.seen_at.toISOString(),
    instances: instances.map((row) => ({
      instanceId: row.instance_id,
      environment: row.environment,
      sdkVersion: row.sdk_version,
      clientIp: row.client_ip,
      started: row.started_at?.toISOString() ?? null,
      interval: row.interval_ms,
      lastSeen: row.seen_at.toISOString(),
    })),
    flags: flags.map((row) => ({
      name: row.feature_name,
      project: row.project,
      environment: row.environment,
      yes: Number(row.yes),
      no: Number(row.no),
      lastHour: new Date(row.last_hour).toISOString(),
    })),
    missingFlags: missing.map((row) => ({
      name: row.feature_name,
      environment: row.environment,
      lastSeenAt: row.last_seen_at.toISOString(),
    })),
  };
}
