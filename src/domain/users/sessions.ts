import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { NotFoundError, PasswordMismatch, UnauthorizedError } from '../../shared/errors.js';
import { recordEvent } from '../events/record-event.js';
import { lockUser } from './users.js';
import { hashPassword, hashToken, randomSecret, verifyPassword } from '../../shared/secrets.js';
import { toUserView, type UserView } from './user-view.js';

// Verified against when the user does not exist, so a wrong username costs as long as a wrong password and
// response times do not reveal which usernames exist.
const decoyHash = hashPassword(randomSecret());

/** Why a deactivated person is refused at sign-in, by password or by an identity provider. */
export const ACCOUNT_DEACTIVATED = 'This account is deactivated; ask an administrator to reactivate it';

/**
 * Checks a password login and answers the user's id. A failed attempt is counted on the user, as Unleash shows
 * them, at once and outside any unit of work: the refusal that follows must not roll the count back.
 */
export async function verifyPasswordLogin(db: Db, input: { username: string; password: string }): Promise<number> {
  const row = await personByLogin(db, input.username);
  const valid = await verifyPassword(input.password, row?.password_hash ?? (await decoyHash));
  if (!row?.password_hash || !valid) {
    if (row) {
      await db.updateTable('users').set({ login_attempts: sql`login_attempts + 1` }).where('id', '=', row.id).execute();
    }
    throw new PasswordMismatch('Wrong username or password');
  }
  // Said only to whoever knows the password, so it tells nobody else that the account exists.
  if (row.deactivated_at !== null) throw new UnauthorizedError(ACCOUNT_DEACTIVATED);
  return row.id;
}

/** The person (not a service account) a sign-in names, by username or email in any case. */
export function personByLogin(db: Db, username: string) {
  const login = username.trim().toLowerCase();
  return db
    .selectFrom('users')
    .selectAll()
    .where((eb) => eb.or([eb(eb.fn('lower', ['username']), '=', login), eb(eb.fn('lower', ['email']), '=', login)]))
    .where('is_service', '=', false)
    .executeTakeFirst();
}

/** Where a sign-in came from, kept with its session so that its owner can tell their sessions apart. */
export interface SessionOrigin {
  address: string;
  userAgent: string | undefined;
}

// Browsers send a few hundred characters at most; a client may send anything.
const MAX_USER_AGENT_LENGTH = 512;
const MAX_ADDRESS_LENGTH = 64;

/** The origin as it is stored, with a sign-in's session and in the sign-in audit: cut to lengths worth reading. */
export function storedOrigin(origin: SessionOrigin): { address: string; user_agent: string | null } {
  return {
    address: origin.address.slice(0, MAX_ADDRESS_LENGTH),
    user_agent: origin.userAgent ? origin.userAgent.slice(0, MAX_USER_AGENT_LENGTH) : null,
  };
}

/**
 * Opens a session for a user who just signed in and marks them seen; answers the user and the session's id,
 * for the cookie (only its hash is stored).
 */
export async function startSession(
  uow: UnitOfWork,
  userId: number,
  ttlHours: number,
  origin: SessionOrigin,
): Promise<{ user: UserView; sessionId: string }> {
  const { tx, now } = uow;
  const sessionId = randomSecret();
  await tx
    .insertInto('user_sessions')
    .values({
      id_hash: hashToken(sessionId),
      user_id: userId,
      created_at: now,
      expires_at: new Date(now.getTime() + ttlHours * 3_600_000),
      seen_at: now,
      ...storedOrigin(origin),
    })
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

/** A session as its owner and Admins see it; never its cookie or the cookie's hash. */
export interface SessionView {
  id: number;
  createdAt: string;
  /** When it was last used, to the minute. */
  seenAt: string;
  expiresAt: string;
  address: string | null;
  userAgent: string | null;
  /** The session the request listing them came with. */
  current: boolean;
}

/** The user's open sessions, last used first; `currentSessionId` (the cookie of the request) marks its own. */
export async function listSessions(db: Db, userId: number, now: Date, currentSessionId: string | undefined): Promise<SessionView[]> {
  const currentHash = currentSessionId ? hashToken(currentSessionId) : undefined;
  const rows = await db
    .selectFrom('user_sessions')
    .select(['id', 'id_hash', 'created_at', 'seen_at', 'expires_at', 'address', 'user_agent'])
    .where('user_id', '=', userId)
    .where('expires_at', '>', now)
    .orderBy(sql`coalesce(seen_at, created_at)`, 'desc')
    .orderBy('id', 'desc')
    .execute();
  return rows.map((row) => ({
    id: row.id,
    createdAt: row.created_at.toISOString(),
    seenAt: (row.seen_at ?? row.created_at).toISOString(),
    expiresAt: row.expires_at.toISOString(),
    address: row.address,
    userAgent: row.user_agent,
    current: row.id_hash === currentHash,
  }));
}

/** The last-seen stamp of a session, written at most once a minute (access decides when). */
export async function stampSessionUse(db: Db, id: number, now: Date): Promise<void> {
  await db.updateTable('user_sessions').set({ seen_at: now }).where('id', '=', id).execute();
}

/**
 * Ends sessions of a user: the one named by `sessionId` (a 404 when the user has no such open session), or all of
 * them but `keepSessionId` (the cookie of the request, when a person ends their other sessions). Recorded as
 * `user-sessions-ended` with how many ended; the user is locked so that a sign-in does not interleave.
 */
export async function endSessions(
  uow: UnitOfWork,
  userId: number,
  which: { sessionId: number } | { allBut: string | undefined },
): Promise<number> {
  const user = await lockUser(uow, userId);
  let ending = uow.tx.deleteFrom('user_sessions').where('user_id', '=', userId);
  if ('sessionId' in which) ending = ending.where('id', '=', which.sessionId);
  else if (which.allBut !== undefined) ending = ending.where('id_hash', '!=', hashToken(which.allBut));
  const ended = await ending.returning(['id', 'expires_at']).execute();
  const open = ended.filter((session) => session.expires_at > uow.now);
  if ('sessionId' in which && open.length === 0) {
    throw new NotFoundError(`User ${userId} has no open session ${which.sessionId}`);
  }
  if (open.length > 0) {
    await recordEvent(uow, {
      type: 'user-sessions-ended',
      data: { id: user.id, username: user.username, email: user.email, sessions: open.length },
    });
  }
  return open.length;
}
