import { sql, type Kysely } from 'kysely';

/**
 * Projects a user has marked as favorites. A favorite goes with its user and its project: deleting either is
 * never blocked by someone's favorite.
 */
const statements = [
  `CREATE TABLE favorite_projects (
    user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    project text NOT NULL REFERENCES projects (id) ON DELETE CASCADE ON UPDATE CASCADE,
    created_at timestamptz NOT NULL,
    CONSTRAINT favorite_projects_pkey PRIMARY KEY (user_id, project)
  )`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) {
    await sql.raw(statement).execute(db);
  }
}
