import { sql } from 'kysely';
import type { Db, Tx } from '../../db/database.js';
import type { Clock } from '../../shared/clock.js';
import { PasswordMismatch } from '../../shared/errors.js';
import { hashPassword, hashToken, randomSecret, verifyPassword } from '../../shared/secrets.js';
import { toUserView, type UserView } from './user-view.js';

// Verified against when the user does not exist, so a wrong username costs as long as a wrong password and
// response times do not reveal which usernames exist.
const decoyHash = hashPassword(randomSecret());

/**
 * Checks a password login and opens a session. Returns the session id for the cookie; only its hash is
 * stored. Failed attempts are counted on the user, as Unleash shows them.
 */
export async function logIn(
  deps: { db: Db; clock: Clock },
  input: { username: string; password: string; sessionTtlHours: number },
): Promise<{ user: UserView; sessionId: string }> {
  const login = input.username.trim().toLowerCase();
  const row = await deps.db
    .selectFrom('users')
    .selectAll()
    .where((eb) => eb.or([eb(eb.fn('lower', ['username']), '=', login), eb(eb.fn('lower', ['email']), '=', login)]))
    .where('is_service', '=', false)
    .executeTakeFirst();
  const valid = await verifyPassword(input.password, row?.password_hash ?? (await decoyHash));
  if (!row?.password_hash || !valid) {
    if (row) {
      await deps.db.updateTable('users').set({ login_attempts: sql`login_attempts + 1` }).where('id', '=', row.id).execute();
    }
    throw new PasswordMismatch('Wrong username or password');
  }
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (tx) => {
    const sessionId = await openSession(tx, row.id, now, input.sessionTtlHours);
    return { user: toUserView(await markSignedIn(tx, row.id, now)), sessionId };
  });
}

/** Opens a session for the user and returns its id, for the cookie; only its hash is stored. */
export async function openSession(tx: Tx, userId: number, now: Date, ttlHours: number): Promise<string> {
  const sessionId = randomSecret();
  await tx
    .insertInto('user_sessions')
    .values({ id_hash: hashToken(sessionId), user_id: userId, created_at: now, expires_at: new Date(now.getTime() + ttlHours * 3_600_000) })
    .execute();
  // Expired sessions of this user go when the user next logs in, so the table does not grow without bound.
  await tx.deleteFrom('user_sessions').where('user_id', '=', userId).where('expires_at', '<=', now).execute();
  return sessionId;
}

/** A sign-in is when a user was last seen, and clears their count of failed attempts. */
export function markSignedIn(tx: Tx, userId: number, now: Date) {
  return tx.updateTable('users').set({ login_attempts: 0, seen_at: now }).where('id', '=', userId).returningAll().executeTakeFirstOrThrow();
}

export async function logOut(db: Db, sessionId: string): Promise<void> {
  await db.deleteFrom('user_sessions').where('id_hash', '=', hashToken(sessionId)).execute();
}
