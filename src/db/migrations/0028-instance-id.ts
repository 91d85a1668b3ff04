import { sql, type Kysely } from 'kysely';

/** The instance's id, made once: what Unleash's instance statistics name the installation by, shared by every Vexil on the database. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`INSERT INTO settings (name, content) VALUES ('instance.id', jsonb_build_object('id', gen_random_uuid()::text))
    ON CONFLICT (name) DO NOTHING`.execute(db);
}
