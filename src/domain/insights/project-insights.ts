import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import { healthCondition } from '../search/feature-search-filters.js';

// What Unleash's project pages read about a project's state: its flags' health, its lead time to production, how
// busy it has been. Each a few aggregate queries; all counts are of flags not archived unless said otherwise.

const DAY_MS = 86_400_000;
/** Unleash's "current window": the last 30 days; the "past window" is the 30 days before. */
const WINDOW_DAYS = 30;
const daysBefore = (now: Date, days: number) => new Date(now.getTime() - days * DAY_MS);

export interface FlagHealth {
  /** Flags not marked stale (potentially stale ones included, as Unleash counts them). */
  activeCount: number;
  potentiallyStaleCount: number;
  staleCount: number;
  /** 100, less the share of stale and of potentially stale flags, in per cent. */
  rating: number;
}

export async function flagHealth(db: Db, project: string, now: Date): Promise<FlagHealth> {
  const row = await db
    .selectFrom('features as f')
    .where('f.project', '=', project)
    .where('f.archived_at', 'is', null)
    .select((eb) => [
      sql<string>`count(*) FILTER (WHERE NOT f.stale)`.as('active'),
      sql<string>`count(*) FILTER (WHERE f.stale)`.as('stale'),
      sql<string>`count(*) FILTER (WHERE ${healthCondition(eb, 'potentially-stale', now)})`.as('potentially_stale'),
    ])
    .executeTakeFirstOrThrow();
  const [activeCount, staleCount, potentiallyStaleCount] = [row.active, row.stale, row.potentially_stale].map(Number) as [
    number,
    number,
    number,
  ];
  const total = activeCount + staleCount;
  const rating = total === 0 ? 100 : Math.round(100 - (staleCount / total) * 100 - (potentiallyStaleCount / total) * 100);
  return { activeCount, potentiallyStaleCount, staleCount, rating };
}

/** How many of the project's flags are not archived and marked stale or past their type's lifetime. */
export async function staleFlagCount(db: Db, project: string, now: Date): Promise<number> {
  const row = await db
    .selectFrom('features as f')
    .where('f.project', '=', project)
    .where('f.archived_at', 'is', null)
    .where((eb) => eb.or([eb('f.stale', '=', true), healthCondition(eb, 'potentially-stale', now)]))
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

export interface ProjectStats {
  avgTimeToProdCurrentWindow: number;
  createdCurrentWindow: number;
  createdPastWindow: number;
  archivedCurrentWindow: number;
  archivedPastWindow: number;
  projectActivityCurrentWindow: number;
  projectActivityPastWindow: number;
  projectMembersAddedCurrentWindow: number;
}

/** The project's last 30 days beside the 30 before them, as Unleash's project overview shows them. */
export async function projectStats(db: Db, project: string, now: Date): Promise<ProjectStats> {
  const current = daysBefore(now, WINDOW_DAYS);
  const past = daysBefore(now, 2 * WINDOW_DAYS);
  const [flags, activity, members, leadTime] = await Promise.all([
    db
      .selectFrom('features')
      .where('project', '=', project)
      .select([
        sql<string>`count(*) FILTER (WHERE created_at >= ${current})`.as('created_current'),
        sql<string>`count(*) FILTER (WHERE created_at >= ${past} AND created_at < ${current})`.as('created_past'),
        sql<string>`count(*) FILTER (WHERE archived_at >= ${current})`.as('archived_current'),
        sql<string>`count(*) FILTER (WHERE archived_at >= ${past} AND archived_at < ${current})`.as('archived_past'),
      ])
      .executeTakeFirstOrThrow(),
    db
      .selectFrom('events')
      .where('project', '=', project)
      .where('created_at', '>=', past)
      .select([
        sql<string>`count(*) FILTER (WHERE created_at >= ${current})`.as('current'),
        sql<string>`count(*) FILTER (WHERE created_at < ${current})`.as('past'),
      ])
      .executeTakeFirstOrThrow(),
    db
      .selectFrom('project_access')
      .where('project_id', '=', project)
      .where('user_id', 'is not', null)
      .where('created_at', '>=', current)
      .select(sql<string>`count(DISTINCT user_id)`.as('count'))
      .executeTakeFirstOrThrow(),
    timeToProduction(db, project, current),
  ]);
  return {
    avgTimeToProdCurrentWindow: leadTime.projectAverage,
    createdCurrentWindow: Number(flags.created_current),
    createdPastWindow: Number(flags.created_past),
    archivedCurrentWindow: Number(flags.archived_current),
    archivedPastWindow: Number(flags.archived_past),
    projectActivityCurrentWindow: Number(activity.current),
    projectActivityPastWindow: Number(activity.past),
    projectMembersAddedCurrentWindow: Number(members.count),
  };
}

export interface LeadTime {
  /** Each flag that reached production, with the whole days from its creation to its first enabling there. */
  features: Array<{ name: string; timeToProduction: number }>;
  /** Their mean, in days; 0 when none has. */
  projectAverage: number;
}

/**
 * The days from creating each of the project's flags (archived ones too) to its first enabling in a production
 * environment, which is when it entered the `live` stage. `createdSince` counts only flags made since then.
 */
export async function timeToProduction(db: Db, project: string, createdSince?: Date): Promise<LeadTime> {
  let query = db
    .selectFrom('features as f')
    .innerJoin('feature_lifecycles as fl', (join) => join.onRef('fl.feature_name', '=', 'f.name').on('fl.stage', '=', 'live'))
    .where('f.project', '=', project)
    .select(['f.name', sql<number>`extract(epoch FROM fl.created_at - f.created_at) / 86400`.as('days')])
    .orderBy('f.name');
  if (createdSince) query = query.where('f.created_at', '>=', createdSince);
  const rows = await query.execute();
  const features = rows.map((row) => ({ name: row.name, timeToProduction: Math.max(0, Math.floor(Number(row.days))) }));
  const projectAverage =
    rows.length === 0 ? 0 : Math.round((rows.reduce((sum, row) => sum + Math.max(0, Number(row.days)), 0) / rows.length) * 10) / 10;
  return { features, projectAverage };
}

/** The people with a role in the project, and how many of them were given it in the last 30 days. */
export async function projectMembers(db: Db, project: string, now: Date): Promise<{ currentMembers: number; change: number }> {
  const row = await db
    .selectFrom('project_access')
    .where('project_id', '=', project)
    .where('user_id', 'is not', null)
    .select([
      sql<string>`count(DISTINCT user_id)`.as('current'),
      sql<string>`count(DISTINCT user_id) FILTER (WHERE created_at >= ${daysBefore(now, WINDOW_DAYS)})`.as('change'),
    ])
    .executeTakeFirstOrThrow();
  return { currentMembers: Number(row.current), change: Number(row.change) };
}

/** How many of the project's flags are of each type, most common first. */
export async function featureTypeCounts(db: Db, project: string): Promise<Array<{ type: string; count: number }>> {
  const rows = await db
    .selectFrom('features')
    .where('project', '=', project)
    .where('archived_at', 'is', null)
    .select(['type', (eb) => eb.fn.countAll<string>().as('count')])
    .groupBy('type')
    .orderBy('count', 'desc')
    .orderBy('type')
    .execute();
  return rows.map((row) => ({ type: row.type, count: Number(row.count) }));
}

interface StageSummary {
  /** Whole days flags of the project stayed in the stage before the next, on average; null when none has left it. */
  averageDays: number | null;
  currentFlags: number;
}

export interface LifecycleSummary {
  initial: StageSummary;
  preLive: StageSummary;
  live: StageSummary;
  completed: StageSummary;
  archived: { currentFlags: number; last30Days: number };
}

/** Where the project's flags stand in their lifecycle, and how long they stay in each stage. */
export async function lifecycleSummary(db: Db, project: string, now: Date): Promise<LifecycleSummary> {
  const [durations, current, archived] = await Promise.all([
    sql<{ stage: string; days: string | null }>`
      SELECT stage, round(avg(days)) AS days FROM (
        SELECT fl.feature_name, fl.stage,
               extract(epoch FROM min(next.created_at) - fl.created_at) / 86400 AS days
        FROM feature_lifecycles fl
        JOIN features f ON f.name = fl.feature_name AND f.project = ${project}
        JOIN feature_lifecycles next ON next.feature_name = fl.feature_name AND next.created_at > fl.created_at
        WHERE fl.stage <> 'archived'
        GROUP BY fl.feature_name, fl.stage, fl.created_at
      ) durations GROUP BY stage`.execute(db),
    sql<{ stage: string; count: string }>`
      SELECT latest.stage, count(*) AS count FROM features f
      JOIN LATERAL (
        SELECT fl.stage FROM feature_lifecycles fl WHERE fl.feature_name = f.name ORDER BY fl.created_at DESC LIMIT 1
      ) latest ON true
      WHERE f.project = ${project} AND f.archived_at IS NULL
      GROUP BY latest.stage`.execute(db),
    db
      .selectFrom('features')
      .where('project', '=', project)
      .where('archived_at', 'is not', null)
      .select([
        (eb) => eb.fn.countAll<string>().as('all'),
        sql<string>`count(*) FILTER (WHERE archived_at >= ${daysBefore(now, WINDOW_DAYS)})`.as('recent'),
      ])
      .executeTakeFirstOrThrow(),
  ]);
  const days = new Map(durations.rows.map((row) => [row.stage, row.days === null ? null : Number(row.days)]));
  const counts = new Map<string, number>();
  // A flag not archived whose latest stage is `archived` was revived: it starts again.
  for (const row of current.rows) {
    const stage = row.stage === 'archived' ? 'initial' : row.stage;
    counts.set(stage, (counts.get(stage) ?? 0) + Number(row.count));
  }
  const stage = (name: string): StageSummary => ({ averageDays: days.get(name) ?? null, currentFlags: counts.get(name) ?? 0 });
  return {
    initial: stage('initial'),
    preLive: stage('pre-live'),
    live: stage('live'),
    completed: stage('completed'),
    archived: { currentFlags: Number(archived.all), last30Days: Number(archived.recent) },
  };
}

/** The number of the project's events on each day of the last year that had any, oldest first. */
export async function activityByDate(db: Db, project: string, now: Date): Promise<Array<{ date: string; count: number }>> {
  const rows = await db
    .selectFrom('events')
    .where('project', '=', project)
    .where('created_at', '>=', daysBefore(now, 365))
    .select([sql<string>`to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')`.as('date'), (eb) => eb.fn.countAll<string>().as('count')])
    .groupBy('date')
    .orderBy('date')
    .execute();
  return rows.map((row) => ({ date: row.date, count: Number(row.count) }));
}

/** What the project holds besides flags: its members, its API tokens, its segments. */
export async function projectResources(db: Db, project: string): Promise<{ members: number; apiTokens: number; segments: number }> {
  const [members, tokens, segments] = await Promise.all([
    db
      .selectFrom('project_access')
      .where('project_id', '=', project)
      .where('user_id', 'is not', null)
      .select(sql<string>`count(DISTINCT user_id)`.as('count'))
      .executeTakeFirstOrThrow(),
    db
      .selectFrom('api_token_projects')
      .where('project_id', '=', project)
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .executeTakeFirstOrThrow(),
    db
      .selectFrom('segments')
      .where('project', '=', project)
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .executeTakeFirstOrThrow(),
  ]);
  return { members: Number(members.count), apiTokens: Number(tokens.count), segments: Number(segments.count) };
}
