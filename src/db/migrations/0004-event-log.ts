import { sql, type Kysely } from 'kysely';

/**
 * What keeps the event log fast as it grows to millions of rows:
 * - one index per filter of the event search, each ending in `id DESC` so a filtered, newest-first page is a
 *   short index range scan;
 * - a trigram index over the text that `query` searches (data, preData, tags), so a substring search does not
 *   read every event;
 * - exact event counts kept in the same transaction as the events (sharded rows, so concurrent writers do
 *   not queue on one counter), so `totalEvents` of the whole log or of a project is never a count(*).
 */
const statements = [
  `CREATE EXTENSION IF NOT EXISTS pg_trgm`,
  `CREATE INDEX events_type_idx ON events (type, id DESC)`,
  `CREATE INDEX events_created_by_user_idx ON events (created_by_user_id, id DESC)`,
  `CREATE INDEX events_created_at_idx ON events (created_at)`,
  `CREATE INDEX events_search_text_idx ON events USING gin (
    (coalesce(data::text, '') || ' ' || coalesce(pre_data::text, '') || ' ' || tags::text) gin_trgm_ops
  )`,
  `CREATE TABLE event_counts (
    scope text NOT NULL,
    shard smallint NOT NULL,
    count bigint NOT NULL,
    CONSTRAINT event_counts_pkey PRIMARY KEY (scope, shard)
  )`,
  `INSERT INTO event_counts (scope, shard, count) SELECT '*', 0, count(*) FROM events`,
  `INSERT INTO event_counts (scope, shard, count)
    SELECT 'project:' || project, 0, count(*) FROM events WHERE project IS NOT NULL GROUP BY project`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) {
    await sql.raw(statement).execute(db);
  }
}
