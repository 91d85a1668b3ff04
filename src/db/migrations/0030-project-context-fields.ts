import { sql, type Kysely } from 'kysely';

/**
 * A context field may belong to one project (Unleash's project context fields): listed and managed there, its name
 * still unique across the instance. Deleting the project deletes its fields first, each with its event.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE context_fields ADD COLUMN project text REFERENCES projects (id) ON UPDATE CASCADE`.execute(db);
  await sql`CREATE INDEX context_fields_project_idx ON context_fields (project) WHERE project IS NOT NULL`.execute(db);
}
