import { setImmediate } from 'node:timers/promises';
import { sql, type Selectable, type SelectQueryBuilder } from 'kysely';
import type { Db } from '../../db/database.js';
import type { Database, EventsTable } from '../../db/schema.js';
import { BadDataError } from '../../shared/errors.js';
import { likePattern, parseDay, parseFilter, parseUserIds, parseWholeNumber, type Filter } from '../../shared/filters.js';
import { describeEvent } from './event-descriptions.js';
import { EVENT_TYPES, type EventType, SPEC_EVENT_TYPES, isEventType } from './event-types.js';
import type { Actor } from '../../db/unit-of-work.js';
import { actorMay } from '../access/permissions.js';
import { inProjectVisibleTo } from '../access/project-visibility.js';
import { ALL_EVENTS_SCOPE, creatorScope, projectScope, typeScope } from './event-counts.js';
import type { EventTag } from './record-event.js';

/** An event as the API shows it (spec 2.1), with its label and summary. */
export interface EventView {
  id: number;
  createdAt: string;
  type: string;
  createdBy: string;
  createdByUserId: number | null;
  environment: string | null;
  project: string | null;
  featureName: string | null;
  data: unknown;
  preData: unknown;
  tags: EventTag[];
  label: string;
  summary: string;
  /** Present on the events written by applying a change request (Vexil's addition). */
  changeRequestId?: number;
  /** Present on the events an agent caused: its name and version, as its MCP client introduced itself (Vexil's addition). */
  via?: string;
}

export function toEventView(row: Selectable<EventsTable>): EventView {
  const event = {
    id: row.id,
    createdAt: row.created_at.toISOString(),
    type: row.type,
    createdBy: row.created_by,
    createdByUserId: row.created_by_user_id,
    environment: row.environment,
    project: row.project,
    featureName: row.feature_name,
    data: row.data ?? null,
    preData: row.pre_data ?? null,
    tags: (row.tags ?? []) as EventTag[],
  };
  const grouping = row.change_request_id === null ? {} : { changeRequestId: row.change_request_id };
  const agent = row.via === null ? {} : { via: row.via };
  return { ...event, ...describeEvent(event), ...grouping, ...agent };
}

/**
 * The text `query` searches: the same expression as the trigram index events_search_text_idx, so the planner
 * can use it (a different spelling would not match the index).
 */
const SEARCH_TEXT = sql<string>`(coalesce(data::text, '') || ' ' || coalesce(pre_data::text, '') || ' ' || tags::text)`;

/** The exact number of events in the given counter scopes (event-counts.ts), which must not overlap. */
async function countScopes(db: Db, scopes: string[]): Promise<number> {
  const row = await db
    .selectFrom('event_counts')
    .select(sql<number>`coalesce(sum(count), 0)::int8`.as('total'))
    .where('scope', 'in', scopes)
    .executeTakeFirstOrThrow();
  return row.total;
}

/** The exact number of events of the whole log or of one project, from the counters kept with the events. */
export function countEvents(db: Db, project?: string): Promise<number> {
  return countScopes(db, [project === undefined ? ALL_EVENTS_SCOPE : projectScope(project)]);
}

export async function countFeatureEvents(db: Db, featureName: string): Promise<number> {
  const row = await db
    .selectFrom('events')
    .select(sql<number>`count(*)::int8`.as('total'))
    .where('feature_name', '=', featureName)
    .executeTakeFirstOrThrow();
  return row.total;
}

export async function recentEvents(db: Db, limit: number): Promise<EventView[]> {
  const rows = await db.selectFrom('events').selectAll().orderBy('id', 'desc').limit(limit).execute();
  return rows.map(toEventView);
}

/**
 * Every event of a project or flag, newest first, fetched in keyset batches (`id < last`), so memory stays
 * flat however many there are and the first batch is ready at once. Events committed after the first batch
 * are not included: the listing is the log as it stood when it began.
 */
export async function* streamEvents(
  db: Db,
  scope: { project: string } | { featureName: string },
  batchSize = 250,
): AsyncGenerator<EventView[]> {
  let before: number | undefined;
  for (;;) {
    let query = db.selectFrom('events').selectAll();
    query = 'project' in scope ? query.where('project', '=', scope.project) : query.where('feature_name', '=', scope.featureName);
    if (before !== undefined) query = query.where('id', '<', before);
    const rows = await query.orderBy('id', 'desc').limit(batchSize).execute();
    if (rows.length === 0) return;
    yield rows.map(toEventView);
    if (rows.length < batchSize) return;
    before = rows[rows.length - 1]!.id;
    // Let other requests run between batches: on the embedded engine each query holds the one connection and
    // the event loop, so a long export must not chain its batches back to back.
    await setImmediate();
  }
}

const IS_ANY_OF = ['IS', 'IS_ANY_OF'] as const;

export interface EventSearchParameters {
  query?: string;
  feature?: string;
  project?: string;
  type?: string;
  createdBy?: string;
  via?: string;
  from?: string;
  to?: string;
  offset?: string;
  limit?: string;
}

type EventQuery = SelectQueryBuilder<Database, 'events', object>;

/** One small function per filter: each narrows the query or throws a 400 naming the parameter. */
const FILTERS: Record<Exclude<keyof EventSearchParameters, 'offset' | 'limit'>, (q: EventQuery, raw: string) => EventQuery> = {
  query: (q, raw) => q.where(SEARCH_TEXT, 'ilike', likePattern(raw)),
  feature: (q, raw) => q.where('feature_name', 'in', parseFilter('feature', raw, IS_ANY_OF).values),
  project: (q, raw) => q.where('project', 'in', parseFilter('project', raw, IS_ANY_OF).values),
  type: (q, raw) => {
    const { values } = parseFilter('type', raw, IS_ANY_OF);
    const unknown = values.filter((value) => !isEventType(value));
    if (unknown.length > 0) {
      throw new BadDataError(`Unknown event type ${unknown.map((t) => JSON.stringify(t)).join(', ')}`, [
        { path: '/query/type', message: `type must be event types such as feature-created (got ${JSON.stringify(raw)})` },
      ]);
    }
    return q.where('type', 'in', values);
  },
  createdBy: (q, raw) => {
    const { values } = parseFilter('createdBy', raw, IS_ANY_OF);
    return q.where('created_by_user_id', 'in', parseUserIds('createdBy', raw, values));
  },
  via: (q, raw) => q.where('via', 'is not', null).where('via', 'ilike', likePattern(raw)),
  from: (q, raw) => q.where('created_at', '>=', dayFilter('from', raw)),
  // `to` is inclusive: everything before the start of the next day.
  to: (q, raw) => q.where('created_at', '<', new Date(dayFilter('to', raw).getTime() + 86_400_000)),
};

function dayFilter(parameter: string, raw: string): Date {
  const filter: Filter = parseFilter(parameter, raw, ['IS'] as const);
  if (filter.values.length !== 1) {
    throw new BadDataError(`Invalid ${parameter} filter: give one day`, [
      { path: `/query/${parameter}`, message: `give one day as IS:yyyy-MM-dd (got ${JSON.stringify(raw)})` },
    ]);
  }
  return parseDay(parameter, raw, filter.values[0]!);
}

/** Narrows `query` by every filter given (an empty text query is none); throws a 400 naming a bad one. */
function applyFilters(query: EventQuery, parameters: EventSearchParameters): { filtered: EventQuery; applied: string[] } {
  let filtered = query;
  const applied: string[] = [];
  for (const [name, apply] of Object.entries(FILTERS) as Array<[keyof typeof FILTERS, (q: EventQuery, raw: string) => EventQuery]>) {
    const raw = parameters[name];
    if (raw === undefined || (name === 'query' && raw === '')) continue;
    filtered = apply(filtered, raw);
    applied.push(name);
  }
  return { filtered, applied };
}

/**
 * The events someone without the Admin role may read: those of flags, their configuration and change requests, and
 * of projects, in the projects they can see. Events about people, sign-ins, tokens, roles, integrations and settings
 * stay the Admins'.
 */
const READER_EVENT =
  /^(feature-(?!(un)?favorited$)|strategy-|context-field-|segment-|tag-|change-|release-plan-|safeguard-|project-(created|updated|deleted|archived|revived|environment-added|environment-removed)$|default-strategy-updated$|features-(exported|imported)$|review-bypassed$)/;
export const READER_EVENT_TYPES: readonly EventType[] = EVENT_TYPES.filter((type) => READER_EVENT.test(type));

/** The events `actor` may read: all of them for an Admin, the readers' kinds in visible projects for anyone else. */
function readableBy(actor: Actor, query: EventQuery): EventQuery {
  if (actorMay(actor, 'ADMIN')) return query;
  return query.where('type', 'in', READER_EVENT_TYPES).where(inProjectVisibleTo(actor, 'project'));
}

export async function searchEvents(
  db: Db,
  actor: Actor,
  parameters: EventSearchParameters,
): Promise<{ events: EventView[]; total: number }> {
  const limit = parseWholeNumber('limit', parameters.limit, 50, 1, 1000);
  const offset = parseWholeNumber('offset', parameters.offset, 0, 0, Number.MAX_SAFE_INTEGER);
  const { filtered, applied } = applyFilters(readableBy(actor, db.selectFrom('events')), parameters);
  // The counters count every event: a reader's share is counted exactly, within the read's time bound.
  if (!actorMay(actor, 'ADMIN')) applied.push('reader');
  // Newest first by time, id breaking ties: every filter has an index in this order (migration 0004).
  // One after the other: a bounded read runs on one connection, where overlapping queries only queue (and pg warns).
  const rows = await filtered.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).offset(offset).execute();
  const total = await countMatches(db, filtered, applied, parameters);
  return { events: rows.map(toEventView), total };
}

export type EventExportFilters = Omit<EventSearchParameters, 'offset' | 'limit'>;

/** An event row as the export reads it: its JSON columns as text, parsed only when the row is written out. */
export type ExportedEventRow = Omit<Selectable<EventsTable>, 'data' | 'pre_data' | 'tags'> & {
  data: string | null;
  pre_data: string | null;
  tags: string;
};

export function exportedEventView(row: ExportedEventRow): EventView {
  return toEventView({
    ...row,
    data: row.data === null ? null : JSON.parse(row.data),
    pre_data: row.pre_data === null ? null : JSON.parse(row.pre_data),
    tags: JSON.parse(row.tags),
  });
}

/**
 * The events matching the search filters, oldest first, in keyset batches (`id > last`) read each by `readBatch`
 * (a bounded read), so memory stays flat whatever the log holds. Rows keep their JSON as text until written
 * out: a batch waiting for the socket then holds compact strings, not object trees that outlive V8's young
 * generation. Filters are checked before the first batch, so a bad one is a 400 before anything is sent. The
 * export is the log as it stood when it began: later events are left out.
 */
export function exportEvents(
  db: Db,
  filters: EventExportFilters,
  readBatch: <T>(work: (db: Db) => Promise<T>) => Promise<T>,
  batchSize = 500,
): AsyncGenerator<ExportedEventRow[]> {
  // Checked here, before the first batch; each batch applies them again to the query of its own read.
  applyFilters(db.selectFrom('events'), filters);
  return (async function* batches() {
    const newest = await readBatch((reader) =>
      reader.selectFrom('events').select(sql<number | null>`max(id)`.as('id')).executeTakeFirstOrThrow(),
    );
    if (newest.id === null) return;
    let after = 0;
    for (;;) {
      const rows = await readBatch((reader) =>
        applyFilters(reader.selectFrom('events'), filters)
          .filtered.select([
            'id',
            'created_at',
            'type',
            'created_by',
            'created_by_user_id',
            'project',
            'environment',
            'feature_name',
            'change_request_id',
            'via',
            sql<string | null>`data::text`.as('data'),
            sql<string | null>`pre_data::text`.as('pre_data'),
            sql<string>`tags::text`.as('tags'),
          ])
          .where('id', '>', after)
          .where('id', '<=', newest.id!)
          .orderBy('id')
          .limit(batchSize)
          .execute(),
      );
      if (rows.length === 0) return;
      yield rows;
      if (rows.length < batchSize) return;
      after = rows[rows.length - 1]!.id;
      // Other requests get their turn between batches (the embedded engine runs each query on the event loop).
      await setImmediate();
    }
  })();
}

/** Counter scopes of a search filtering on nothing, or on exactly one project, type or creator filter. */
function counterScopes(applied: string[], parameters: EventSearchParameters): string[] | undefined {
  if (applied.length === 0) return [ALL_EVENTS_SCOPE];
  if (applied.length !== 1) return undefined;
  const [name] = applied;
  if (name === 'project') return parseFilter('project', parameters.project!, IS_ANY_OF).values.map(projectScope);
  if (name === 'type') return parseFilter('type', parameters.type!, IS_ANY_OF).values.map(typeScope);
  if (name === 'createdBy') {
    const { values } = parseFilter('createdBy', parameters.createdBy!, IS_ANY_OF);
    return parseUserIds('createdBy', parameters.createdBy!, values).map(creatorScope);
  }
  return undefined;
}

/**
 * `total` is exact: from the counters when the filter is one they keep (a sum over the values, which are
 * disjoint), otherwise a count of the matches through the filter's index.
 */
async function countMatches(db: Db, filtered: EventQuery, applied: string[], parameters: EventSearchParameters): Promise<number> {
  const scopes = counterScopes(applied, parameters);
  if (scopes) return countScopes(db, scopes);
  const row = await filtered.select(sql<number>`count(*)::int8`.as('total')).executeTakeFirstOrThrow();
  return row.total;
}

export interface DeprecatedSearchBody {
  type?: string;
  project?: string;
  feature?: string;
  query?: string;
  limit?: number;
  offset?: number;
}

/**
 * The deprecated `POST /events/search`: exact, case-sensitive fields; `query` also matches the type and the
 * creator; `totalEvents` counts the matches of every filter including `query`.
 */
export async function deprecatedEventSearch(db: Db, body: DeprecatedSearchBody): Promise<{ events: EventView[]; totalEvents: number }> {
  if (body.type !== undefined && !(SPEC_EVENT_TYPES as readonly string[]).includes(body.type)) {
    throw new BadDataError(`Unknown event type ${JSON.stringify(body.type)}`, [
      { path: '/body/type', message: `type must be one of the event types of the API (got ${JSON.stringify(body.type)})` },
    ]);
  }
  let filtered: EventQuery = db.selectFrom('events');
  if (body.type !== undefined) filtered = filtered.where('type', '=', body.type);
  if (body.project !== undefined) filtered = filtered.where('project', '=', body.project);
  if (body.feature !== undefined) filtered = filtered.where('feature_name', '=', body.feature);
  if (body.query) {
    const pattern = likePattern(body.query, '/body/query');
    filtered = filtered.where((eb) =>
      eb.or([eb(SEARCH_TEXT, 'ilike', pattern), eb('type', 'ilike', pattern), eb('created_by', 'ilike', pattern)]),
    );
  }
  // One after the other: a bounded read runs on one connection, where overlapping queries only queue (and pg warns).
  const rows = await filtered
    .selectAll()
    .orderBy('id', 'desc')
    .limit(body.limit ?? 100)
    .offset(body.offset ?? 0)
    .execute();
  const count = await filtered.select(sql<number>`count(*)::int8`.as('total')).executeTakeFirstOrThrow();
  return { events: rows.map(toEventView), totalEvents: count.total };
}

/**
 * Everyone who has recorded an event, for a creator filter: `[{id, name}]` by name, with the name they last
 * recorded under. A skip scan over events_created_by_user_idx reads one index entry per creator, not every
 * event, so it stays fast on millions of events.
 */
export async function eventCreators(db: Db): Promise<Array<{ id: number; name: string }>> {
  const { rows } = await sql<{ id: number; name: string }>`
    WITH RECURSIVE creators AS (
      SELECT min(created_by_user_id) AS id FROM events
      UNION ALL
      SELECT (SELECT min(created_by_user_id) FROM events WHERE created_by_user_id > creators.id)
      FROM creators WHERE creators.id IS NOT NULL
    )
    SELECT creators.id,
      (SELECT created_by FROM events WHERE created_by_user_id = creators.id ORDER BY id DESC LIMIT 1) AS name
    FROM creators WHERE creators.id IS NOT NULL`.execute(db);
  return rows.sort((a, b) => a.name.localeCompare(b.name) || a.id - b.id);
}
