import { sql, type Kysely } from 'kysely';

/** Instance-wide settings changed through the admin API, one JSON document per name (Unleash's `settings`). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE TABLE settings (name text PRIMARY KEY, content jsonb NOT NULL)`.execute(db);
}
