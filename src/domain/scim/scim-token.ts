import type { Db } from '../../db/database.js';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { NotFoundError } from '../../shared/errors.js';
import { hashToken, randomSecret } from '../../shared/secrets.js';
import { actorIdentity } from '../access/actor.js';
import { recordEvent } from '../events/record-event.js';

/** Whether provisioning is on, and since when and by whom; never the token. */
export interface ScimTokenStatus {
  enabled: boolean;
  createdAt: string | null;
  createdBy: string | null;
  seenAt: string | null;
}

/**
 * Makes the token an identity provider provisions with, replacing the one before (rotation: the old one stops at
 * once). Answers it this once; only its hash is kept, and the event says only that one was made.
 */
export async function createScimToken(uow: UnitOfWork): Promise<{ token: string }> {
  const token = `scim:${randomSecret()}`;
  const replaced = await uow.tx.deleteFrom('scim_tokens').returning('id').execute();
  await uow.tx
    .insertInto('scim_tokens')
    .values({ secret_hash: hashToken(token), created_by: actorIdentity(uow.actor).createdBy, created_at: uow.now, seen_at: null })
    .execute();
  await recordEvent(uow, { type: 'scim-token-created', data: { replaced: replaced.length > 0 } });
  return { token };
}

/** Deletes the token, which turns provisioning off: `/scim/v2` then refuses every request. */
export async function deleteScimToken(uow: UnitOfWork): Promise<void> {
  const deleted = await uow.tx.deleteFrom('scim_tokens').returning('id').execute();
  if (deleted.length === 0) throw new NotFoundError('There is no SCIM token; provisioning is off');
  await recordEvent(uow, { type: 'scim-token-deleted', preData: { enabled: true } });
}

export async function scimTokenStatus(db: Db): Promise<ScimTokenStatus> {
  const row = await db.selectFrom('scim_tokens').select(['created_at', 'created_by', 'seen_at']).executeTakeFirst();
  return {
    enabled: row !== undefined,
    createdAt: row?.created_at.toISOString() ?? null,
    createdBy: row?.created_by ?? null,
    seenAt: row?.seen_at?.toISOString() ?? null,
  };
}

/** Stamps when the token was last used (authentication says when one is due). */
export async function stampScimTokenUse(db: Db, id: number, now: Date): Promise<void> {
  await db.updateTable('scim_tokens').set({ seen_at: now }).where('id', '=', id).execute();
}
