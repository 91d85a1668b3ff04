import { projectsHiddenFrom } from '../access/project-visibility.js';
import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import { BadDataError } from '../../shared/errors.js';
import type { Actor } from '../../db/unit-of-work.js';
import { openChangeRequestIds } from '../change-requests/change-request-views.js';
import { loadFeatureViews, type FeatureView } from '../features/feature-views.js';
import { archivedFilter, FILTERS, statusFilter, type FeatureQuery, type SearchContext } from './feature-search-filters.js';
import { parseWholeNumber } from '../../shared/filters.js';

/** A flag as the feature search returns it (spec 2.5): environments summarised, without strategy bodies. */
export interface FeatureSearchView extends Omit<FeatureView, 'environments' | 'dependencies' | 'children'> {
  dependencyType: 'parent' | 'child' | null;
  segments: string[];
  environments: Array<{
    name: string;
    environment: string;
    type: string;
    enabled: boolean;
    sortOrder: number;
    variantCount: number;
    hasStrategies: boolean;
    hasEnabledStrategies: boolean;
    lastSeenAt: string | null;
    yes: number;
    no: number;
    /** Open change requests changing the flag in this environment. */
    changeRequestIds: number[];
  }>;
}

export interface FeatureSearchParameters {
  query?: string;
  project?: string;
  state?: string;
  type?: string;
  createdBy?: string;
  tag?: string;
  segment?: string;
  status?: string | string[];
  createdAt?: string;
  lifecycle?: string;
  favorite?: string;
  codeReferences?: string;
  archived?: string;
  sortBy?: string;
  sortOrder?: string;
  favoritesFirst?: string;
  offset?: string;
  limit?: string;
}

const SORT_FIELDS = ['createdAt', 'name', 'type', 'project', 'stale', 'lastSeenAt', 'environment:<name>'];

function sortExpression(sortBy: string) {
  switch (sortBy) {
    case 'createdAt':
      return sql`f.created_at`;
    case 'name':
      return sql`f.name`;
    case 'type':
      return sql`f.type`;
    case 'project':
      return sql`f.project`;
    case 'stale':
      return sql`f.stale`;
    case 'lastSeenAt':
      return sql`(SELECT max(m.last_seen_at) FROM feature_environment_usage m WHERE m.feature_name = f.name)`;
    default: {
      const environment = /^environment:(.+)$/.exec(sortBy)?.[1];
      if (environment === undefined) {
        throw new BadDataError(`Unknown sortBy "${sortBy}"`, [
          { path: '/query/sortBy', message: `sortBy must be one of ${SORT_FIELDS.join(', ')} (got ${JSON.stringify(sortBy)})` },
        ]);
      }
      return sql`(sorted_environment.feature_name IS NOT NULL)`;
    }
  }
}

function sortOrder(raw: string | undefined): 'asc' | 'desc' {
  if (raw === undefined || raw === 'asc' || raw === 'desc') return raw ?? 'asc';
  throw new BadDataError(`Unknown sortOrder "${raw}"`, [
    { path: '/query/sortOrder', message: `sortOrder must be asc or desc (got ${JSON.stringify(raw)})` },
  ]);
}

function booleanParameter(name: string, raw: string | undefined): boolean {
  if (raw === undefined || raw === 'false') return false;
  if (raw === 'true') return true;
  throw new BadDataError(`Invalid ${name}`, [
    { path: `/query/${name}`, message: `${name} must be true or false (got ${JSON.stringify(raw)})` },
  ]);
}

function toSearchView(
  view: FeatureView,
  segmentNames: Map<number, string>,
  usage: Map<string, UsageRow>,
  changeRequestIds: Map<string, number[]>,
): FeatureSearchView {
  const { environments, dependencies, children, ...rest } = view;
  const segmentIds = new Set(environments.flatMap((env) => env.strategies.flatMap((strategy) => strategy.segments)));
  const lastSeen = environments
    .map((env) => usage.get(`${view.name}\u0000${env.name}`)?.last_seen_at)
    .filter((date): date is Date => Boolean(date))
    .sort((a, b) => b.getTime() - a.getTime())[0];
  return {
    ...rest,
    lastSeenAt: lastSeen ? lastSeen.toISOString() : null,
    dependencyType: dependencies.length > 0 ? 'child' : children.length > 0 ? 'parent' : null,
    segments: [...segmentIds]
      .map((id) => segmentNames.get(id)!)
      .filter(Boolean)
      .sort(),
    environments: environments.map((env) => {
      const used = usage.get(`${view.name}\u0000${env.name}`);
      return {
        name: env.name,
        environment: env.environment,
        type: env.type,
        enabled: env.enabled,
        sortOrder: env.sortOrder,
        variantCount: env.variantCount,
        hasStrategies: env.hasStrategies,
        hasEnabledStrategies: env.hasEnabledStrategies,
        lastSeenAt: used?.last_seen_at ? used.last_seen_at.toISOString() : null,
        yes: used?.yes ?? 0,
        no: used?.no ?? 0,
        changeRequestIds: changeRequestIds.get(`${view.name}\u0000${env.name}`) ?? [],
      };
    }),
  };
}

interface UsageRow {
  feature_name: string;
  environment: string;
  last_seen_at: Date | null;
  yes: number;
  no: number;
}

/**
 * Feature search (spec 4.7): filters narrow one query over `features`; `total` counts the distinct matching
 * flags; the page is read in a fixed number of queries whatever its size. Ties in any order are broken by
 * name, so paging walks every match exactly once.
 */
export async function searchFeatures(
  db: Db,
  parameters: FeatureSearchParameters,
  actor: Actor,
  now: Date,
): Promise<{ features: FeatureSearchView[]; total: number }> {
  const context: SearchContext = { viewerUserId: actor.kind === 'user' ? actor.userId : null, now };
  const limit = parseWholeNumber('limit', parameters.limit, 50, 1, 1000);
  const offset = parseWholeNumber('offset', parameters.offset, 0, 0, Number.MAX_SAFE_INTEGER);
  const direction = sortOrder(parameters.sortOrder);
  const orderBy = sortExpression(parameters.sortBy ?? 'createdAt');
  const favoritesFirst = booleanParameter('favoritesFirst', parameters.favoritesFirst);

  let filtered: FeatureQuery = archivedFilter(db.selectFrom('features as f'), parameters.archived, parameters.lifecycle);
  const hidden = await projectsHiddenFrom(db, actor);
  if (hidden.size > 0) filtered = filtered.where('f.project', 'not in', [...hidden]);
  for (const [name, apply] of Object.entries(FILTERS)) {
    const raw = parameters[name as keyof FeatureSearchParameters];
    if (typeof raw === 'string' && raw !== '') filtered = apply(filtered, raw, context);
  }
  if (parameters.status !== undefined) {
    const entries = Array.isArray(parameters.status) ? parameters.status : [parameters.status];
    if (entries.length > 0) filtered = statusFilter(filtered, entries);
  }

  let page = filtered.selectAll('f');
  // Sorting by an environment joins which flags are on there (feature_environments_enabled_idx), once.
  const sortEnvironment = /^environment:(.+)$/.exec(parameters.sortBy ?? '')?.[1];
  if (sortEnvironment !== undefined) {
    page = page.leftJoin('feature_environments as sorted_environment', (join) =>
      join
        .onRef('sorted_environment.feature_name', '=', 'f.name')
        .on('sorted_environment.environment', '=', sortEnvironment)
        .on('sorted_environment.enabled', '=', true),
    );
  }
  if (favoritesFirst && context.viewerUserId !== null) {
    page = page.orderBy(
      sql`EXISTS (SELECT 1 FROM favorite_features fav WHERE fav.feature_name = f.name AND fav.user_id = ${context.viewerUserId})`,
      'desc',
    );
  }
  page = page
    .orderBy(sql`${orderBy} ${sql.raw(direction)} NULLS LAST`)
    .orderBy('f.name', 'asc')
    .limit(limit)
    .offset(offset);

  // One after the other: a bounded read runs on one connection, where overlapping queries only queue (and pg warns).
  const rows = await page.execute();
  const count = await filtered.select(sql<number>`count(*)::int8`.as('total')).executeTakeFirstOrThrow();
  const views = await loadFeatureViews(db, rows, context.viewerUserId);
  const names = rows.map((row) => row.name);
  const segmentIds = [...new Set(views.flatMap((v) => v.environments.flatMap((e) => e.strategies.flatMap((s) => s.segments))))];
  const segments =
    segmentIds.length === 0 ? [] : await db.selectFrom('segments').select(['id', 'name']).where('id', 'in', segmentIds).execute();
  const usage = names.length === 0 ? [] : await loadUsage(db, names, now);
  const changeRequestIds = await openChangeRequestIds(db, names);
  const segmentNames = new Map(segments.map((s) => [s.id, s.name]));
  const usageByKey = new Map(usage.map((row) => [`${row.feature_name}\u0000${row.environment}`, row]));
  return {
    features: views.map((view) => toSearchView(view, segmentNames, usageByKey, changeRequestIds)),
    total: count.total,
  };
}

/** Last-seen times and the last hour's yes/no counts (all applications) of the given flags per environment. */
async function loadUsage(db: Db, names: string[], now: Date): Promise<UsageRow[]> {
  const since = new Date(Math.floor(now.getTime() / 3_600_000) * 3_600_000 - 3_600_000);
  const seen = await db.selectFrom('feature_environment_usage').selectAll().where('feature_name', 'in', names).execute();
  const counts = await db
    .selectFrom('feature_usage_hourly')
    .select(['feature_name', 'environment', sql<number>`sum(yes)::int8`.as('yes'), sql<number>`sum(no)::int8`.as('no')])
    .where('feature_name', 'in', names)
    .where('hour', '>=', since)
    .groupBy(['feature_name', 'environment'])
    .execute();
  const rows = new Map<string, UsageRow>();
  for (const row of seen) {
    rows.set(`${row.feature_name}\u0000${row.environment}`, { ...row, yes: 0, no: 0 });
  }
  for (const row of counts) {
    const key = `${row.feature_name}\u0000${row.environment}`;
    rows.set(key, {
      feature_name: row.feature_name,
      environment: row.environment,
      last_seen_at: rows.get(key)?.last_seen_at ?? null,
      yes: row.yes,
      no: row.no,
    });
  }
  return [...rows.values()];
}
