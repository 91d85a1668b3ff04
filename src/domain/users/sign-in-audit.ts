import type { Db } from '../../db/database.js';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { recordEvent } from '../events/record-event.js';
import { personByLogin, type SessionOrigin, storedOrigin } from './sessions.js';

/** How a person signed in, or tried to. */
export type AuthType = 'password' | 'oidc' | 'saml';

export interface SignInAttempt {
  authType: AuthType;
  /** What they signed in as: the username or email typed, or the provider's email. */
  username: string | undefined;
  origin: SessionOrigin;
}

// A client sends what it likes as a username; the audit keeps enough to read.
const MAX_USERNAME_LENGTH = 255;

function row(uow: UnitOfWork, attempt: SignInAttempt) {
  return {
    created_at: uow.now,
    username: attempt.username?.slice(0, MAX_USERNAME_LENGTH) ?? null,
    auth_type: attempt.authType,
    ...storedOrigin(attempt.origin),
  };
}

/** A sign-in, recorded in the unit of work that opens its session, and as a `user-signed-in` event. */
export async function recordSignIn(uow: UnitOfWork, attempt: SignInAttempt, userId: number): Promise<void> {
  const entry = { ...row(uow, attempt), user_id: userId, successful: true };
  await uow.tx.insertInto('signons').values(entry).execute();
  await recordEvent(uow, {
    type: 'user-signed-in',
    data: { id: userId, username: entry.username, authType: attempt.authType, address: entry.address },
  });
}

/**
 * A refused sign-in, and why, as a `user-sign-in-refused` event too. Recorded in a unit of work of its own: the
 * refusal that follows must not roll it back. What was typed as the username stays in the sign-in audit (Admins
 * only): people type passwords there. The event names only the account it matched, if any.
 */
export async function recordRefusedSignIn(uow: UnitOfWork, attempt: SignInAttempt, reason: string): Promise<void> {
  const user = attempt.username ? await personByLogin(uow.tx, attempt.username) : undefined;
  const entry = { ...row(uow, attempt), user_id: user?.id ?? null, successful: false, failure_reason: reason };
  await uow.tx.insertInto('signons').values(entry).execute();
  await recordEvent(uow, {
    type: 'user-sign-in-refused',
    data: { username: user?.username ?? user?.email ?? null, authType: attempt.authType, address: entry.address, reason },
  });
}

/** A sign-in or refusal as the audit shows it. */
export interface SignOnView {
  id: number;
  createdAt: string;
  userId: number | null;
  username: string | null;
  authType: AuthType;
  successful: boolean;
  failureReason: string | null;
  ip: string | null;
  userAgent: string | null;
}

/** The audit, newest first, a page at a time; one user's alone when `userId` is given. */
export async function listSignIns(
  db: Db,
  query: { offset: number; limit: number; userId?: number },
): Promise<{ signons: SignOnView[]; total: number }> {
  const filtered = db.selectFrom('signons').$if(query.userId !== undefined, (select) => select.where('user_id', '=', query.userId!));
  const [rows, count] = await Promise.all([
    filtered.selectAll().orderBy('id', 'desc').offset(query.offset).limit(query.limit).execute(),
    filtered.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return {
    signons: rows.map((entry) => ({
      id: entry.id,
      createdAt: entry.created_at.toISOString(),
      userId: entry.user_id,
      username: entry.username,
      authType: entry.auth_type,
      successful: entry.successful,
      failureReason: entry.failure_reason,
      ip: entry.address,
      userAgent: entry.user_agent,
    })),
    total: Number(count.total),
  };
}
