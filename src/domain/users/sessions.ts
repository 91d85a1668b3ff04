import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { PasswordMismatch } from '../../shared/errors.js';
import { hashPassword, hashToken, randomSecret, verifyPassword } from '../../shared/secrets.js';
import { toUserView, type UserView } from './user-view.js';

// Verified against when the user does not exist, so a wrong username costs as long as a wrong password and
// response times do not reveal which usernames exist.
const decoyHash = hashPassword(randomSecret());

/**
 * Checks a password login and answers the user's id. A failed attempt is counted on the user, as Unleash shows
 * them, at once and outside any unit of work: the refusal that follows must not roll the count back.
 */
export async function verifyPasswordLogin(db: Db, input: { username: string; password: string }): Promise<number> {
  const login = input.username.trim().toLowerCase();
  const row = await db
    .selectFrom('users')
    .selectAll()
    .where((eb) => eb.or([eb(eb.fn('lower', ['username']), '=', login), eb(eb.fn('lower', ['email']), '=', login)]))
    .where('is_service', '=', false)
    .executeTakeFirst();
  const valid = await verifyPassword(input.password, row?.password_hash ?? (await decoyHash));
  if (!row?.password_hash || !valid) {
    if (row) {
      await db.updateTable('users').set({ login_attempts: sql`login_attempts + 1` }).where('id', '=', row.id).execute();
    }
    throw new PasswordMismatch('Wrong username or password');
  }
  return row.id;
}

/**
 * Opens a session for a user who just signed in and marks them seen; answers the user and the session's id,
 * for the cookie (only its hash is stored).
 */
export async function startSession(uow: UnitOfWork, userId: number, ttlHours: number): Promise<{ user: UserView; sessionId: string }> {
  const { tx, now } = uow;
  const sessionId = randomSecret();
  await tx
    .insertInto('user_sessions')
    .values({ id_hash: hashToken(sessionId), user_id: userId, created_at: now, expires_at: new Date(now.getTime() + ttlHours * 3_600_000) })
    .execute();
  // Expired sessions of this user go when the user next logs in, so the table does not grow without bound.
  await tx.deleteFrom('user_sessions').where('user_id', '=', userId).where('expires_at', '<=', now).execute();
  // A sign-in is when a user was last seen, and clears their count of failed attempts.
  const user = await tx
    .updateTable('users')
    .set({ login_attempts: 0, seen_at: now })
    .where('id', '=', userId)
    .returningAll()
    .executeTakeFirstOrThrow();
  return { user: toUserView(user), sessionId };
}

export async function logOut(db: Db, sessionId: string): Promise<void> {
  await db.deleteFrom('user_sessions').where('id_hash', '=', hashToken(sessionId)).execute();
}
