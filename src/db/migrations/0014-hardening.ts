import { sql, type Kysely } from 'kysely';

/**
 * A sign-in in progress no longer takes a row: its state travels sealed in the browser's cookie, under a key
 * every instance reads from `server_keys`, so an anonymous client can start as many as it likes and make Vexil
 * keep nothing. A safeguard remembers when it was armed (set, or its plan resumed): its window starts there, so
 * the errors that tripped it once do not trip it again. A delivery an Admin asked for again says so, so its
 * attempts are told apart from the original's.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const statements = [
    `DROP TABLE oidc_logins`,
    `CREATE TABLE server_keys (
       name text PRIMARY KEY,
       key text NOT NULL,
       created_at timestamptz NOT NULL
     )`,
    `ALTER TABLE release_plan_safeguards ADD COLUMN armed_at timestamptz`,
    `ALTER TABLE addon_deliveries ADD COLUMN redelivery boolean NOT NULL DEFAULT false`,
  ];
  for (const statement of statements) await sql.raw(statement).execute(db);
}
