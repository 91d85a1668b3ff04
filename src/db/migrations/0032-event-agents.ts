import { sql, type Kysely } from 'kysely';

/**
 * The agent a change came through (an MCP client's name and version, as it introduced itself), beside the identity
 * it acted as; null for a change made any other way. Event search filters on it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE events ADD COLUMN via text`.execute(db);
  await sql`CREATE INDEX events_via_idx ON events (created_at DESC, id DESC) WHERE via IS NOT NULL`.execute(db);
}
