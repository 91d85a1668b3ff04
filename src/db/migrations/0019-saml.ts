import { sql, type Kysely } from 'kysely';

/**
 * SAML 2.0 sign-in. A started sign-in stores nothing (its request id is sealed, so anyone may start sign-ins
 * without end); an answer accepted for a request is remembered until the request would have expired, so that
 * no answer signs anyone in twice, whichever instance it reaches. The sign-in audit names `saml` sign-ins.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const statements = [
    `CREATE TABLE saml_answered_requests (
       request_id text PRIMARY KEY,
       expires_at timestamptz NOT NULL
     )`,
    `CREATE INDEX saml_answered_requests_expires_idx ON saml_answered_requests (expires_at)`,
    `ALTER TABLE signons DROP CONSTRAINT signons_auth_type_check`,
    `ALTER TABLE signons ADD CONSTRAINT signons_auth_type_check CHECK (auth_type IN ('password', 'oidc', 'saml'))`,
  ];
  for (const statement of statements) await sql.raw(statement).execute(db);
}
