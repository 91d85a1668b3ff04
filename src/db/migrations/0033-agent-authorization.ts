import { sql, type Kysely } from 'kysely';

/**
 * MCP's OAuth 2.1 authorization for agents: clients register themselves (public clients, PKCE only), a person signed
 * in to Vexil grants one a short-lived token for the MCP endpoint alone. Codes and tokens are kept as hashes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const statements = [
    `CREATE TABLE oauth_clients (
       id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
       client_id text NOT NULL UNIQUE,
       name text NOT NULL,
       redirect_uris jsonb NOT NULL,
       created_at timestamptz NOT NULL,
       authorized_at timestamptz
     )`,
    `CREATE TABLE oauth_authorization_codes (
       code_hash text PRIMARY KEY,
       client_id integer NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
       user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
       redirect_uri text NOT NULL,
       code_challenge text NOT NULL,
       expires_at timestamptz NOT NULL
     )`,
    `CREATE TABLE oauth_access_tokens (
       id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
       secret_hash text NOT NULL UNIQUE,
       client_id integer NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
       user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
       created_at timestamptz NOT NULL,
       expires_at timestamptz NOT NULL,
       seen_at timestamptz
     )`,
    'CREATE INDEX oauth_access_tokens_user_idx ON oauth_access_tokens (user_id)',
  ];
  for (const statement of statements) await sql.raw(statement).execute(db);
}
