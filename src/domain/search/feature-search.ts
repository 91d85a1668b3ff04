import { sql, type Expression, type ExpressionBuilder, type SelectQueryBuilder, type SqlBool } from 'kysely';
import type { Db } from '../../db/database.js';
import type { Database, FeaturesTable } from '../../db/schema.js';
import { BadDataError } from '../../shared/errors.js';
import type { Actor } from '../access/actor.js';
import { openChangeRequestIds } from '../change-requests/change-requests.queries.js';
import { FEATURE_TYPES } from '../features/features.commands.js';
import { LIFECYCLE_STAGES, loadFeatureViews, type FeatureView } from '../features/feature-views.js';
import { likePattern, parseDay, parseFilter, parseUserIds, parseWholeNumber, type Filter } from './filters.js';

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
  archived?: string;
  sortBy?: string;
  sortOrder?: string;
  favoritesFirst?: string;
  offset?: string;
  limit?: string;
}

/** The search reads `features` under the alias `f`, which the correlated subqueries refer to. */
type SearchDatabase = Database & { f: FeaturesTable };
type FeatureQuery = SelectQueryBuilder<SearchDatabase, 'f', object>;
type Eb = ExpressionBuilder<SearchDatabase, 'f'>;

interface SearchContext {
  viewerUserId: number | null;
  now: Date;
}

const SET_OPERATORS = ['IS', 'IS_NOT', 'IS_ANY_OF', 'IS_NONE_OF'] as const;
const LIST_OPERATORS = ['INCLUDE', 'DO_NOT_INCLUDE', 'INCLUDE_ALL_OF', 'INCLUDE_ANY_OF', 'EXCLUDE_IF_ANY_OF', 'EXCLUDE_ALL'] as const;
const STATES = ['active', 'stale', 'potentially-stale'] as const;

/** How long a flag of each type is expected to live before it is potentially stale (Unleash's defaults). */
const EXPECTED_LIFETIME_DAYS: Record<string, number | null> = {
  release: 40,
  experiment: 40,
  operational: 7,
  'kill-switch': null,
  permission: null,
};

function invalid(parameter: string, raw: string, message: string): BadDataError {
  return new BadDataError(`Invalid ${parameter} filter: ${message}`, [
    { path: `/query/${parameter}`, message: `${message} (got ${JSON.stringify(raw.length > 100 ? `${raw.slice(0, 97)}...` : raw)})` },
  ]);
}

function requireKnown(parameter: string, raw: string, values: string[], known: readonly string[]): void {
  const unknown = values.filter((value) => !known.includes(value));
  if (unknown.length > 0) throw invalid(parameter, raw, `values must be among ${known.join(', ')}`);
}

/** IS/IS_ANY_OF keep the flags matching any value; IS_NOT/IS_NONE_OF keep those matching none. */
function setCondition(eb: Eb, filter: Filter<(typeof SET_OPERATORS)[number]>, matches: (value: string) => Expression<SqlBool>) {
  const any = eb.or(filter.values.map(matches));
  return filter.operator === 'IS' || filter.operator === 'IS_ANY_OF' ? any : eb.not(any);
}

/** The six list operators of tags and segments over "the flag has this item". */
function listCondition(eb: Eb, filter: Filter<(typeof LIST_OPERATORS)[number]>, has: (value: string) => Expression<SqlBool>) {
  const hasAny = eb.or(filter.values.map(has));
  const hasAll = eb.and(filter.values.map(has));
  switch (filter.operator) {
    case 'INCLUDE':
    case 'INCLUDE_ANY_OF':
      return hasAny;
    case 'INCLUDE_ALL_OF':
      return hasAll;
    case 'DO_NOT_INCLUDE':
    case 'EXCLUDE_IF_ANY_OF':
      return eb.not(hasAny);
    case 'EXCLUDE_ALL':
      return eb.not(hasAll);
  }
}

/** The current lifecycle stage: the latest in stage order that the flag has entered. */
const currentStage = sql<string>`(
  SELECT fl.stage FROM feature_lifecycles fl WHERE fl.feature_name = f.name
  ORDER BY array_position(${sql.raw(`ARRAY[${LIFECYCLE_STAGES.map((s) => `'${s}'`).join(',')}]`)}::text[], fl.stage) DESC LIMIT 1
)`;

function potentiallyStale(eb: Eb, now: Date): Expression<SqlBool> {
  const overdue = Object.entries(EXPECTED_LIFETIME_DAYS)
    .filter((entry): entry is [string, number] => entry[1] !== null)
    .map(([type, days]) =>
      eb.and([eb('f.type', '=', type), eb('f.created_at', '<', new Date(now.getTime() - days * 86_400_000))]),
    );
  return eb.and([eb('f.stale', '=', false), eb.or(overdue)]);
}

/** One small function per filter: each narrows the query or throws a 400 naming the parameter. */
const FILTERS: Record<string, (q: FeatureQuery, raw: string, context: SearchContext) => FeatureQuery> = {
  query: (q, raw) => {
    const terms = raw.split(',').map((term) => term.trim()).filter(Boolean);
    if (terms.length === 0) return q;
    // A union of three lookups, each served by its trigram index; an OR across the tables would read every flag.
    const patterns = terms.map(likePattern);
    return q.where('f.name', 'in', (eb) =>
      eb
        .selectFrom('features as byName')
        .select('byName.name')
        .where((w) => w.or(patterns.map((p) => w('byName.name', 'ilike', p))))
        .union(
          eb
            .selectFrom('features as byDescription')
            .select('byDescription.name')
            .where((w) => w.or(patterns.map((p) => w('byDescription.description', 'ilike', p)))),
        )
        .union(
          eb
            .selectFrom('feature_tags as byTag')
            .select('byTag.feature_name as name')
            .where((w) => w.or(patterns.map((p) => w('byTag.tag_value', 'ilike', p)))),
        ),
    );
  },
  project: (q, raw) => {
    const filter = parseFilter('project', raw, SET_OPERATORS);
    return q.where((eb) => setCondition(eb, filter, (value) => eb('f.project', '=', value)));
  },
  type: (q, raw) => {
    const filter = parseFilter('type', raw, SET_OPERATORS);
    requireKnown('type', raw, filter.values, FEATURE_TYPES);
    return q.where((eb) => setCondition(eb, filter, (value) => eb('f.type', '=', value)));
  },
  createdBy: (q, raw) => {
    const filter = parseFilter('createdBy', raw, SET_OPERATORS);
    const ids = parseUserIds('createdBy', raw, filter.values);
    return q.where((eb) => setCondition(eb, filter, (value) => eb('f.created_by_user_id', '=', ids[filter.values.indexOf(value)]!)));
  },
  state: (q, raw, context) => {
    const filter = parseFilter('state', raw, SET_OPERATORS);
    requireKnown('state', raw, filter.values, STATES);
    return q.where((eb) =>
      setCondition(eb, filter, (value) =>
        value === 'stale' ? eb('f.stale', '=', true) : value === 'active' ? eb('f.stale', '=', false) : potentiallyStale(eb, context.now),
      ),
    );
  },
  lifecycle: (q, raw) => {
    const filter = parseFilter('lifecycle', raw, SET_OPERATORS);
    requireKnown('lifecycle', raw, filter.values, LIFECYCLE_STAGES);
    return q.where((eb) => setCondition(eb, filter, (value) => eb(currentStage, '=', value)));
  },
  tag: (q, raw) => {
    const filter = parseFilter('tag', raw, LIST_OPERATORS);
    const tags = filter.values.map((value) => {
      const colon = value.indexOf(':');
      if (colon <= 0 || colon === value.length - 1) throw invalid('tag', raw, 'tags are written type:value');
      return { type: value.slice(0, colon), value: value.slice(colon + 1) };
    });
    return q.where((eb) =>
      listCondition(eb, filter, (item) => {
        const tag = tags[filter.values.indexOf(item)]!;
        return eb.exists(
          eb
            .selectFrom('feature_tags as t')
            .select('t.feature_name')
            .whereRef('t.feature_name', '=', 'f.name')
            .where('t.tag_type', '=', tag.type)
            .where('t.tag_value', '=', tag.value),
        );
      }),
    );
  },
  segment: (q, raw) => {
    const filter = parseFilter('segment', raw, LIST_OPERATORS);
    return q.where((eb) =>
      listCondition(eb, filter, (name) =>
        eb.exists(
          eb
            .selectFrom('feature_strategies as fs')
            .innerJoin('feature_strategy_segments as fss', 'fss.strategy_id', 'fs.id')
            .innerJoin('segments as s', 's.id', 'fss.segment_id')
            .select('fs.id')
            .whereRef('fs.feature_name', '=', 'f.name')
            .where('s.name', '=', name),
        ),
      ),
    );
  },
  createdAt: (q, raw) => {
    const filter = parseFilter('createdAt', raw, ['IS_BEFORE', 'IS_ON_OR_AFTER'] as const);
    if (filter.values.length !== 1) throw invalid('createdAt', raw, 'give one day as IS_BEFORE:yyyy-MM-dd or IS_ON_OR_AFTER:yyyy-MM-dd');
    const day = parseDay('createdAt', raw, filter.values[0]!);
    return q.where('f.created_at', filter.operator === 'IS_BEFORE' ? '<' : '>=', day);
  },
  favorite: (q, raw, context) => {
    const filter = parseFilter('favorite', raw, ['IS', 'IS_NOT'] as const);
    requireKnown('favorite', raw, filter.values, ['true', 'false']);
    if (filter.values.length !== 1) throw invalid('favorite', raw, 'give true or false');
    const wanted = (filter.values[0] === 'true') === (filter.operator === 'IS');
    // An admin token has no user and so no favorites.
    if (context.viewerUserId === null) return wanted ? q.where(sql<boolean>`false`) : q;
    const userId = context.viewerUserId;
    return q.where((eb) => {
      const isFavorite = eb.exists(
        eb
          .selectFrom('favorite_features as fav')
          .select('fav.feature_name')
          .whereRef('fav.feature_name', '=', 'f.name')
          .where('fav.user_id', '=', userId),
      );
      return wanted ? isFavorite : eb.not(isFavorite);
    });
  },
};

/**
 * `status` entries `<environment>:enabled|disabled`, repeated or comma-separated, OR-ed: flags matching any
 * entry.
 */
function statusFilter(q: FeatureQuery, entries: string[]): FeatureQuery {
  const parsed = entries.flatMap((entry) => entry.split(',')).map((entry) => {
    const match = /^(.+):(enabled|disabled)$/.exec(entry.trim());
    if (!match) throw invalid('status', entry, 'entries are <environment>:enabled or <environment>:disabled');
    return { environment: match[1]!, enabled: match[2] === 'enabled' };
  });
  return q.where((eb) =>
    eb.or(
      parsed.map(({ environment, enabled }) => {
        const isEnabled = eb.exists(
          eb
            .selectFrom('feature_environments as fe')
            .select('fe.feature_name')
            .whereRef('fe.feature_name', '=', 'f.name')
            .where('fe.environment', '=', environment)
            .where('fe.enabled', '=', true),
        );
        if (enabled) return isEnabled;
        // Disabled means the environment is the project's and the flag is off there.
        const inProject = eb.exists(
          eb
            .selectFrom('project_environments as pe')
            .select('pe.project_id')
            .whereRef('pe.project_id', '=', 'f.project')
            .where('pe.environment_name', '=', environment),
        );
        return eb.and([inProject, eb.not(isEnabled)]);
      }),
    ),
  );
}

/**
 * Archived flags are left out unless asked for: by `archived`, or by a lifecycle filter that looks for the
 * `archived` stage (which only archived flags are in).
 */
function archivedFilter(q: FeatureQuery, raw: string | undefined, lifecycle: string | undefined): FeatureQuery {
  if (raw === undefined) {
    const filter = lifecycle ? parseFilter('lifecycle', lifecycle, SET_OPERATORS) : undefined;
    const asksForArchived =
      filter !== undefined && (filter.operator === 'IS' || filter.operator === 'IS_ANY_OF') && filter.values.includes('archived');
    return asksForArchived ? q : q.where('f.archived_at', 'is', null);
  }
  const filter = parseFilter('archived', raw, ['IS', 'IS_NOT'] as const);
  requireKnown('archived', raw, filter.values, ['true', 'false']);
  if (filter.values.length !== 1) throw invalid('archived', raw, 'give true or false');
  const archived = (filter.values[0] === 'true') === (filter.operator === 'IS');
  return q.where('f.archived_at', archived ? 'is not' : 'is', null);
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
  throw new BadDataError(`Invalid ${name}`, [{ path: `/query/${name}`, message: `${name} must be true or false (got ${JSON.stringify(raw)})` }]);
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
    segments: [...segmentIds].map((id) => segmentNames.get(id)!).filter(Boolean).sort(),
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
  page = page.orderBy(sql`${orderBy} ${sql.raw(direction)} NULLS LAST`).orderBy('f.name', 'asc').limit(limit).offset(offset);

  const [rows, count] = await Promise.all([
    page.execute(),
    filtered.select(sql<number>`count(*)::int8`.as('total')).executeTakeFirstOrThrow(),
  ]);
  const views = await loadFeatureViews(db, rows, context.viewerUserId);
  const names = rows.map((row) => row.name);
  const segmentIds = [...new Set(views.flatMap((v) => v.environments.flatMap((e) => e.strategies.flatMap((s) => s.segments))))];
  const [segments, usage, changeRequestIds] = await Promise.all([
    segmentIds.length === 0 ? [] : db.selectFrom('segments').select(['id', 'name']).where('id', 'in', segmentIds).execute(),
    names.length === 0 ? [] : loadUsage(db, names, now),
    openChangeRequestIds(db, names),
  ]);
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
  const [seen, counts] = await Promise.all([
    db.selectFrom('feature_environment_usage').selectAll().where('feature_name', 'in', names).execute(),
    db
      .selectFrom('feature_usage_hourly')
      .select(['feature_name', 'environment', sql<number>`sum(yes)::int8`.as('yes'), sql<number>`sum(no)::int8`.as('no')])
      .where('feature_name', 'in', names)
      .where('hour', '>=', since)
      .groupBy(['feature_name', 'environment'])
      .execute(),
  ]);
  const rows = new Map<string, UsageRow>();
  for (const row of seen) {
    rows.set(`${row.feature_name}\u0000${row.environment}`, { ...row, yes: 0, no: 0 });
  }
  for (const row of counts) {
    const key = `${row.feature_name}\u0000${row.environment}`;
    rows.set(key, { feature_name: row.feature_name, environment: row.environment, last_seen_at: rows.get(key)?.last_seen_at ?? null, yes: row.yes, no: row.no });
  }
  return [...rows.values()];
}
