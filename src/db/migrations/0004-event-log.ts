import { sql, type Kysely } from 'kysely';

/**
 * What keeps the event log fast as it grows to millions of rows:
 * - one index per filter of the event search, each ending in `id DESC` so a filtered, newest-first page is a
 *   short index range scan;
 * - a trigram index over the text that `query` searches (data, preData, tags), so a substring search does not
 *   read every event;
 * - exact event counts kept in the same transaction as the events (sharded rows, so concurrent writers do
 *   not queue on one counter), so the total of the whole log, or of one project, type or creator, is never a
 *   count(*).
 */
const statements = [
  `CREATE EXTENSION IF NOT EXISTS pg_trgm`,
  // Search pages are newest first by (created_at, id): time ranges and filters are index range scans in
  // that order. Listing by id (GET /events) uses the primary key and events_project_idx.
  `CREATE INDEX events_created_at_idx ON events (created_at DESC, id DESC)`,
  `CREATE INDEX events_type_idx ON events (type, created_at DESC, id DESC)`,
  `CREATE INDEX events_created_by_user_idx ON events (created_by_user_id, created_at DESC, id DESC)`,
  `CREATE INDEX events_project_created_at_idx ON events (project, created_at DESC, id DESC) WHERE project IS NOT NULL`,
  `CREATE INDEX events_feature_created_at_idx ON events (feature_name, created_at DESC, id DESC) WHERE feature_name IS NOT NULL`,
  `CREATE INDEX events_search_text_idx ON events USING gin (
    (coalesce(data::text, '') || ' ' || coalesce(pre_data::text, '') || ' ' || tags::text) gin_trgm_ops
  )`,
  `CREATE TABLE event_counts (
    scope text NOT NULL,
    shard smallint NOT NULL,
    count bigint NOT NULL,
    CONSTRAINT event_counts_pkey PRIMARY KEY (scope, shard)
  )`,
  // The counters of the events already there (frozen copy of the backfill as it stood when this was written).
  `INSERT INTO event_counts (scope, shard, count) SELECT '*', 0, count(*) FROM events`,
  `INSERT INTO event_counts (scope, shard, count) SELECT 'type:' || type, 0, count(*) FROM events GROUP BY type`,
  `INSERT INTO event_counts (scope, shard, count)
    SELECT 'project:' || project, 0, count(*) FROM events WHERE project IS NOT NULL GROUP BY project`,
  `INSERT INTO event_counts (scope, shard, count)
    SELECT 'user:' || created_by_user_id, 0, count(*) FROM events WHERE created_by_user_id IS NOT NULL GROUP BY created_by_user_id`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) {
    await sql.raw(statement).execute(db);
  }
}
