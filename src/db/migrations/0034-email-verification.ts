import { sql, type Kysely } from 'kysely';

/**
 * Whether Vexil knows a person's email to be theirs: an Admin, an identity provider or SCIM vouched for it (true), or
 * the person typed it when signing up through an invite link (false). An identity provider's sign-in links only to an
 * account whose email is verified, so a link holder cannot make an account in someone else's name ahead of them.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE users ADD COLUMN email_verified boolean NOT NULL DEFAULT true`.execute(db);
  await sql`UPDATE users SET email_verified = false WHERE id IN (SELECT user_id FROM invite_link_users)`.execute(db);
}
