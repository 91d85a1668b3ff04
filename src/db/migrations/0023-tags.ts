import { sql, type Kysely } from 'kysely';

/**
 * Tags made on their own (Unleash's `POST /api/admin/tags`), before any flag carries them: the instance's tags are
 * these and those flags carry. Gone with their type.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql
    .raw(
      `CREATE TABLE tags (
         type text NOT NULL REFERENCES tag_types (name) ON DELETE CASCADE,
         value text NOT NULL,
         created_at timestamptz NOT NULL,
         PRIMARY KEY (type, value)
       )`,
    )
    .execute(db);
}
