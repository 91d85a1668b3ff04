import { sql, type Kysely } from 'kysely';

/**
 * Invite links (Unleash's public sign-up tokens): whoever has one may make themselves an account with its role until
 * it expires or an Admin turns it off. Only the secret's hash is kept, as for API tokens.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const statements = [
    `CREATE TABLE invite_links (
       id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
       secret_hash text NOT NULL UNIQUE,
       name text NOT NULL,
       root_role text NOT NULL DEFAULT 'Viewer',
       enabled boolean NOT NULL DEFAULT true,
       expires_at timestamptz NOT NULL,
       created_at timestamptz NOT NULL,
       created_by text NOT NULL
     )`,
    `CREATE TABLE invite_link_users (
       invite_link_id integer NOT NULL REFERENCES invite_links (id) ON DELETE CASCADE,
       user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
       PRIMARY KEY (invite_link_id, user_id)
     )`,
  ];
  for (const statement of statements) await sql.raw(statement).execute(db);
}
