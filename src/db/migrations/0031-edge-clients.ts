import { sql, type Kysely } from 'kysely';

/**
 * Edge clients (Unleash Enterprise Edge's `POST /edge/issue-token`): an Edge signs its requests with a secret derived
 * from EDGE_MASTER_SECRET and its client id, and is issued client tokens for the environments and projects it asks
 * for. Neither the client's secret nor a token's is stored: both are derived again when needed. A token an Admin
 * deleted is issued anew with another secret (its generation counts up). Nonces stop a signed request being replayed.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const statements = [
    `CREATE TABLE edge_clients (
       client_id text PRIMARY KEY,
       name text NOT NULL,
       salt text NOT NULL,
       created_at timestamptz NOT NULL,
       created_by text NOT NULL
     )`,
    `CREATE TABLE edge_client_tokens (
       client_id text NOT NULL REFERENCES edge_clients (client_id) ON DELETE CASCADE,
       scope text NOT NULL,
       generation integer NOT NULL,
       PRIMARY KEY (client_id, scope)
     )`,
    `CREATE TABLE edge_request_nonces (
       client_id text NOT NULL REFERENCES edge_clients (client_id) ON DELETE CASCADE,
       nonce text NOT NULL,
       expires_at timestamptz NOT NULL,
       PRIMARY KEY (client_id, nonce)
     )`,
    'CREATE INDEX edge_request_nonces_expiry_idx ON edge_request_nonces (expires_at)',
  ];
  for (const statement of statements) await sql.raw(statement).execute(db);
}
