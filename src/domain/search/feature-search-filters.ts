import { sql, type Expression, type ExpressionBuilder, type SelectQueryBuilder, type SqlBool } from 'kysely';
import type { Database, FeaturesTable } from '../../db/schema.js';
import { BadDataError } from '../../shared/errors.js';
import { BECAME_READY_EVENT, type RemovalVerdict } from '../code-references/removal-readiness.js';
import { FEATURE_TYPES } from '../features/feature-types.js';
import { LIFECYCLE_STAGES } from '../features/feature-views.js';
import { likePattern, MAX_FILTER_VALUES, parseDay, parseFilter, parseUserIds, type Filter } from '../../shared/filters.js';

// The filters of the feature search (spec 4.7), one small function each.

/** The search reads `features` under the alias `f`, which the correlated subqueries refer to. */
export type SearchDatabase = Database & { f: FeaturesTable };
export type FeatureQuery = SelectQueryBuilder<SearchDatabase, 'f', object>;
type Eb = ExpressionBuilder<SearchDatabase, 'f'>;

export interface SearchContext {
  viewerUserId: number | null;
  now: Date;
}

const SET_OPERATORS = ['IS', 'IS_NOT', 'IS_ANY_OF', 'IS_NONE_OF'] as const;
const LIST_OPERATORS = ['INCLUDE', 'DO_NOT_INCLUDE', 'INCLUDE_ALL_OF', 'INCLUDE_ANY_OF', 'EXCLUDE_IF_ANY_OF', 'EXCLUDE_ALL'] as const;
const STATES = ['active', 'stale', 'potentially-stale'] as const;
/** Flags that need attention (flag health): see `healthCondition`. */
export const HEALTH_PROBLEMS = ['potentially-stale', 'never-seen', 'unused-in-production', 'ready-to-remove'] as const;

/** Removal readiness as the hourly watch last judged it in a production environment (removal_readiness). */
const READINESS_VERDICTS: Record<string, RemovalVerdict[]> = {
  keep: ['keep'],
  'ready-to-remove': ['ready to remove (keep the on branch)', 'ready to remove (keep the off branch)'],
  'ready-to-remove-keep-on': ['ready to remove (keep the on branch)'],
  'ready-to-remove-keep-off': ['ready to remove (keep the off branch)'],
  'ready-to-archive': ['ready to archive'],
};
export const READINESS_FILTER_VALUES = Object.keys(READINESS_VERDICTS);
export type HealthProblem = (typeof HEALTH_PROBLEMS)[number];
const DAY_MS = 86_400_000;
/** A new flag gets this long before "never seen" counts against it. */
const NEVER_SEEN_AFTER_DAYS = 7;
/** Enabled in production and not evaluated there for this long. */
const UNUSED_IN_PRODUCTION_DAYS = 30;
/** On everywhere, unchanged for this long: its code path has won. */
const READY_TO_REMOVE_DAYS = 21;
/** Each text term is a trigram search in three places; a person types a few. */
const MAX_QUERY_TERMS = 10;

function invalid(parameter: string, raw: string, message: string): BadDataError {
  return new BadDataError(`Invalid ${parameter} filter: ${message}`, [
    { path: `/query/${parameter}`, message: `${message} (got ${JSON.stringify(raw.length > 100 ? `${raw.slice(0, 97)}...` : raw)})` },
  ]);
}

function requireKnown(parameter: string, raw: string, values: string[], known: readonly string[]): void {
  const unknown = values.filter((value) => !known.includes(value));
  if (unknown.length > 0) throw invalid(parameter, raw, `values must be among ${known.join(', ')}`);
}

/**
 * IS/IS_ANY_OF keep the flags matching any value; IS_NOT/IS_NONE_OF keep those matching none. `matchesAny` is
 * one predicate over all the values (an IN list), never one per value: a plan that grows with the number of
 * values is what let one request pin the database.
 */
function setCondition(eb: Eb, filter: Filter<(typeof SET_OPERATORS)[number]>, matchesAny: Expression<SqlBool>) {
  return filter.operator === 'IS' || filter.operator === 'IS_ANY_OF' ? matchesAny : eb.not(matchesAny);
}

/**
 * The six list operators of tags and segments, from one subquery counting how many of the distinct wanted
 * items the flag has: any (count > 0) or all (count = number wanted).
 */
function listCondition(eb: Eb, filter: Filter<(typeof LIST_OPERATORS)[number]>, matchedCount: Expression<number>) {
  const hasAny = eb(matchedCount, '>', 0);
  const hasAll = eb(matchedCount, '=', filter.values.length);
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

/** Not marked stale, and older than its type's expected lifetime (an Admin sets it; none: never potentially stale). */
function potentiallyStale(eb: Eb, now: Date): Expression<SqlBool> {
  return eb.and([
    eb('f.stale', '=', false),
    eb.exists(
      eb
        .selectFrom('feature_type_lifetimes as ftl')
        .select('ftl.type')
        .whereRef('ftl.type', '=', 'f.type')
        .where(sql<SqlBool>`f.created_at < ${now}::timestamptz - make_interval(days => ftl.lifetime_days)`),
    ),
  ]);
}

/**
 * The health problems, each one condition on the flag: past its type's expected lifetime; never evaluated by any
 * SDK (after a week); enabled in a production environment yet not evaluated there for 30 days; or on in every
 * environment of its project with no change for three weeks (ready to remove from the code).
 */
export function healthCondition(eb: Eb, problem: HealthProblem, now: Date): Expression<SqlBool> {
  switch (problem) {
    case 'potentially-stale':
      return potentiallyStale(eb, now);
    case 'never-seen':
      return eb.and([
        eb('f.created_at', '<', new Date(now.getTime() - NEVER_SEEN_AFTER_DAYS * DAY_MS)),
        eb.not(
          eb.exists(eb.selectFrom('feature_environment_usage as u').select('u.feature_name').whereRef('u.feature_name', '=', 'f.name')),
        ),
      ]);
    case 'unused-in-production': {
      const since = new Date(now.getTime() - UNUSED_IN_PRODUCTION_DAYS * DAY_MS);
      return eb.and([
        eb('f.created_at', '<', since),
        eb.exists(
          eb
            .selectFrom('feature_environments as fe')
            .innerJoin('environments as e', 'e.name', 'fe.environment')
            .innerJoin('project_environments as pe', (join) =>
              join.onRef('pe.environment_name', '=', 'fe.environment').onRef('pe.project_id', '=', 'f.project'),
            )
            .leftJoin('feature_environment_usage as u', (join) =>
              join.onRef('u.feature_name', '=', 'fe.feature_name').onRef('u.environment', '=', 'fe.environment'),
            )
            .select('fe.feature_name')
            .whereRef('fe.feature_name', '=', 'f.name')
            .where('fe.enabled', '=', true)
            .where('e.type', '=', 'production')
            .where((inner) => inner.or([inner('u.last_seen_at', 'is', null), inner('u.last_seen_at', '<', since)])),
        ),
      ]);
    }
    case 'ready-to-remove':
      return eb.and([
        eb.not(
          eb.exists(
            eb
              .selectFrom('project_environments as pe')
              .leftJoin('feature_environments as fe', (join) =>
                join.onRef('fe.environment', '=', 'pe.environment_name').onRef('fe.feature_name', '=', 'f.name'),
              )
              .select('pe.environment_name')
              .whereRef('pe.project_id', '=', 'f.project')
              .where((inner) => inner.or([inner('fe.enabled', 'is', null), inner('fe.enabled', '=', false)])),
          ),
        ),
        eb('f.created_at', '<', new Date(now.getTime() - READY_TO_REMOVE_DAYS * DAY_MS)),
        eb.not(
          eb.exists(
            eb
              .selectFrom('events as ev')
              .select('ev.id')
              .whereRef('ev.feature_name', '=', 'f.name')
              // Saying the flag became ready is not a change to it.
              .where('ev.type', '!=', BECAME_READY_EVENT)
              .where('ev.created_at', '>=', new Date(now.getTime() - READY_TO_REMOVE_DAYS * DAY_MS)),
          ),
        ),
      ]);
  }
}

/** One small function per filter: each narrows the query or throws a 400 naming the parameter. */
export const FILTERS: Record<string, (q: FeatureQuery, raw: string, context: SearchContext) => FeatureQuery> = {
  query: (q, raw) => {
    const terms = [
      ...new Set(
        raw
          .split(',')
          .map((term) => term.trim())
          .filter(Boolean),
      ),
    ];
    if (terms.length === 0) return q;
    if (terms.length > MAX_QUERY_TERMS) throw invalid('query', raw, `give at most ${MAX_QUERY_TERMS} comma-separated terms`);
    // A union of three lookups, each served by its trigram index; an OR across the tables would read every flag.
    const patterns = terms.map((term) => likePattern(term));
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
    return q.where((eb) => setCondition(eb, filter, eb('f.project', 'in', filter.values)));
  },
  type: (q, raw) => {
    const filter = parseFilter('type', raw, SET_OPERATORS);
    requireKnown('type', raw, filter.values, FEATURE_TYPES);
    return q.where((eb) => setCondition(eb, filter, eb('f.type', 'in', filter.values)));
  },
  createdBy: (q, raw) => {
    const filter = parseFilter('createdBy', raw, SET_OPERATORS);
    const ids = parseUserIds('createdBy', raw, filter.values);
    return q.where((eb) => setCondition(eb, filter, eb('f.created_by_user_id', 'in', ids)));
  },
  state: (q, raw, context) => {
    const filter = parseFilter('state', raw, SET_OPERATORS);
    requireKnown('state', raw, filter.values, STATES);
    // At most three known values, each a plain condition on the flag's own row.
    return q.where((eb) =>
      setCondition(
        eb,
        filter,
        eb.or(
          filter.values.map((value) =>
            value === 'stale'
              ? eb('f.stale', '=', true)
              : value === 'active'
                ? eb('f.stale', '=', false)
                : potentiallyStale(eb, context.now),
          ),
        ),
      ),
    );
  },
  health: (q, raw, context) => {
    const filter = parseFilter('health', raw, SET_OPERATORS);
    requireKnown('health', raw, filter.values, HEALTH_PROBLEMS);
    return q.where((eb) =>
      setCondition(eb, filter, eb.or(filter.values.map((value) => healthCondition(eb, value as HealthProblem, context.now)))),
    );
  },
  lifecycle: (q, raw) => {
    const filter = parseFilter('lifecycle', raw, SET_OPERATORS);
    requireKnown('lifecycle', raw, filter.values, LIFECYCLE_STAGES);
    return q.where((eb) => setCondition(eb, filter, eb(currentStage, 'in', filter.values)));
  },
  tag: (q, raw) => {
    const filter = parseFilter('tag', raw, LIST_OPERATORS);
    const tags = filter.values.map((value) => {
      const colon = value.indexOf(':');
      if (colon <= 0 || colon === value.length - 1) throw invalid('tag', raw, 'tags are written type:value');
      return { type: value.slice(0, colon), value: value.slice(colon + 1) };
    });
    return q.where((eb) =>
      listCondition(
        eb,
        filter,
        eb
          .selectFrom('feature_tags as t')
          .select(sql<number>`count(*)`.as('matched'))
          .whereRef('t.feature_name', '=', 'f.name')
          .where((w) =>
            w(
              w.refTuple('t.tag_type', 't.tag_value'),
              'in',
              tags.map((tag) => w.tuple(tag.type, tag.value)),
            ),
          )
          .$asScalar(),
      ),
    );
  },
  segment: (q, raw) => {
    const filter = parseFilter('segment', raw, LIST_OPERATORS);
    return q.where((eb) =>
      listCondition(
        eb,
        filter,
        eb
          .selectFrom('feature_strategies as fs')
          .innerJoin('feature_strategy_segments as fss', 'fss.strategy_id', 'fs.id')
          .innerJoin('segments as s', 's.id', 'fss.segment_id')
          .select(sql<number>`count(DISTINCT s.name)`.as('matched'))
          .whereRef('fs.feature_name', '=', 'f.name')
          .where('s.name', 'in', filter.values)
          .$asScalar(),
      ),
    );
  },
  createdAt: (q, raw) => {
    const filter = parseFilter('createdAt', raw, ['IS_BEFORE', 'IS_ON_OR_AFTER'] as const);
    if (filter.values.length !== 1) throw invalid('createdAt', raw, 'give one day as IS_BEFORE:yyyy-MM-dd or IS_ON_OR_AFTER:yyyy-MM-dd');
    const day = parseDay('createdAt', raw, filter.values[0]!);
    return q.where('f.created_at', filter.operator === 'IS_BEFORE' ? '<' : '>=', day);
  },
  codeReferences: (q, raw) => {
    const filter = parseFilter('codeReferences', raw, ['IS', 'IS_NOT'] as const);
    requireKnown('codeReferences', raw, filter.values, ['true', 'false']);
    if (filter.values.length !== 1) throw invalid('codeReferences', raw, 'give true or false');
    const wanted = (filter.values[0] === 'true') === (filter.operator === 'IS');
    return q.where((eb) => {
      const referenced = eb.exists(
        eb.selectFrom('code_references as cr').select('cr.feature_name').whereRef('cr.feature_name', '=', 'f.name'),
      );
      return wanted ? referenced : eb.not(referenced);
    });
  },
  removalReadiness: (q, raw) => {
    const filter = parseFilter('removalReadiness', raw, SET_OPERATORS);
    requireKnown('removalReadiness', raw, filter.values, READINESS_FILTER_VALUES);
    const verdicts = [...new Set(filter.values.flatMap((value) => READINESS_VERDICTS[value]!))];
    return q.where((eb) =>
      setCondition(
        eb,
        filter,
        eb.exists(
          eb
            .selectFrom('removal_readiness as rr')
            .select('rr.feature_name')
            .whereRef('rr.feature_name', '=', 'f.name')
            .where('rr.verdict', 'in', verdicts),
        ),
      ),
    );
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
export function statusFilter(q: FeatureQuery, entries: string[]): FeatureQuery {
  const parsed = entries
    .flatMap((entry) => entry.split(','))
    .map((entry) => {
      const match = /^(.+):(enabled|disabled)$/.exec(entry.trim());
      if (!match) throw invalid('status', entry, 'entries are <environment>:enabled or <environment>:disabled');
      return { environment: match[1]!, enabled: match[2] === 'enabled' };
    });
  if (parsed.length > MAX_FILTER_VALUES) {
    throw invalid('status', entries.join('&'), `give at most ${MAX_FILTER_VALUES} entries`);
  }
  const enabledIn = [...new Set(parsed.filter((entry) => entry.enabled).map((entry) => entry.environment))];
  const disabledIn = [...new Set(parsed.filter((entry) => !entry.enabled).map((entry) => entry.environment))];
  // Two predicates at most, each over a list of environments, whatever the number of entries.
  return q.where((eb) => {
    const conditions: Expression<SqlBool>[] = [];
    if (enabledIn.length > 0) {
      conditions.push(
        eb.exists(
          eb
            .selectFrom('feature_environments as fe')
            .select('fe.feature_name')
            .whereRef('fe.feature_name', '=', 'f.name')
            .where('fe.environment', 'in', enabledIn)
            .where('fe.enabled', '=', true),
        ),
      );
    }
    if (disabledIn.length > 0) {
      // Disabled means the environment is the project's and the flag is off there.
      conditions.push(
        eb.exists(
          eb
            .selectFrom('project_environments as pe')
            .select('pe.project_id')
            .whereRef('pe.project_id', '=', 'f.project')
            .where('pe.environment_name', 'in', disabledIn)
            .where((inner) =>
              inner.not(
                inner.exists(
                  inner
                    .selectFrom('feature_environments as fe')
                    .select('fe.feature_name')
                    .whereRef('fe.feature_name', '=', 'f.name')
                    .whereRef('fe.environment', '=', 'pe.environment_name')
                    .where('fe.enabled', '=', true),
                ),
              ),
            ),
        ),
      );
    }
    return eb.or(conditions);
  });
}

/**
 * Archived flags are left out unless asked for: by `archived`, or by a lifecycle filter that looks for the
 * `archived` stage (which only archived flags are in).
 */
export function archivedFilter(q: FeatureQuery, raw: string | undefined, lifecycle: string | undefined): FeatureQuery {
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
