import { sql, type Kysely } from 'kysely';

/**
 * Links that let a person choose a new password: made by an Admin or asked for by email, valid for a day and once.
 * Only the token's hash is kept, as for API tokens.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const statements = [
    `CREATE TABLE password_reset_tokens (
       token_hash text PRIMARY KEY,
       user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
       created_at timestamptz NOT NULL,
       expires_at timestamptz NOT NULL,
       used_at timestamptz,
       created_by text NOT NULL
     )`,
    'CREATE INDEX password_reset_tokens_user_idx ON password_reset_tokens (user_id)',
  ];
  for (const statement of statements) await sql.raw(statement).execute(db);
}
