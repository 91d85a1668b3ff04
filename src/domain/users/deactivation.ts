import type { UnitOfWork } from '../../db/unit-of-work.js';
import { recordEvent } from '../events/record-event.js';
import { removeAllUsersTokens } from '../personal-access-tokens/personal-access-tokens.js';
import { revokeAllMcpTokensOf } from '../agent-authorization/agent-authorization.js';
import { endSessions } from './sessions.js';
import { assertNotLastAdmin, lockUser } from './users.js';

/**
 * Deactivates a person (they keep their record, groups and history, but may neither sign in nor use a token) or
 * lets them in again. Deactivating ends their sessions and deletes their personal access tokens in the same unit of
 * work, so nothing they hold works a moment longer; reactivating gives neither back. Answers whether it changed.
 */
export async function setUserActive(uow: UnitOfWork, id: number, active: boolean): Promise<boolean> {
  const user = await lockUser(uow, id);
  if ((user.deactivated_at === null) === active) return false;
  if (!active) await assertNotLastAdmin(uow, id, 'deactivated');
  await uow.tx
    .updateTable('users')
    .set({ deactivated_at: active ? null : uow.now, updated_at: uow.now })
    .where('id', '=', id)
    .execute();
  const who = { id: user.id, username: user.username, email: user.email };
  if (active) {
    await recordEvent(uow, { type: 'user-reactivated', data: who });
    return true;
  }
  const { sessions, tokens } = await endCredentials(uow, id);
  await recordEvent(uow, { type: 'user-deactivated', data: { ...who, sessionsEnded: sessions, tokensDeleted: tokens } });
  return true;
}

/**
 * Ends everything a person holds, but `keepSessionId` (the browser changing its own password): sessions, personal
 * access tokens and agent tokens. What a password reset, a deactivation and a new sign-in link do, so that someone who
 * once held a session keeps nothing minted from it.
 */
export async function endCredentials(
  uow: UnitOfWork,
  userId: number,
  keepSessionId?: string,
): Promise<{ sessions: number; tokens: number }> {
  const sessions = await endSessions(uow, userId, { allBut: keepSessionId });
  if (keepSessionId !== undefined) return { sessions, tokens: 0 };
  const tokens = (await removeAllUsersTokens(uow, userId)) + (await revokeAllMcpTokensOf(uow, userId));
  return { sessions, tokens };
}
