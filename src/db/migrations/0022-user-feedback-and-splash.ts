import { sql, type Kysely } from 'kysely';

/**
 * What Unleash's admin UI remembers per person: the feedback questionnaires they answered or declined, and the splash
 * screens they have seen. Gone with the person.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const statements = [
    `CREATE TABLE user_feedback (
       user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
       feedback_id text NOT NULL,
       given timestamptz,
       never_show boolean NOT NULL DEFAULT false,
       PRIMARY KEY (user_id, feedback_id)
     )`,
    `CREATE TABLE user_splash (
       user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
       splash_id text NOT NULL,
       seen boolean NOT NULL DEFAULT true,
       PRIMARY KEY (user_id, splash_id)
     )`,
  ];
  for (const statement of statements) await sql.raw(statement).execute(db);
}
