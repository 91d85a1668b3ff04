import type { Selectable } from 'kysely';
import type { Db } from '../../db/database.js';
import type { PersonalAccessTokensTable } from '../../db/schema.js';
import type { UnitOfWork, Actor } from '../../db/unit-of-work.js';
import { BadDataError, NotFoundError, PermissionError } from '../../shared/errors.js';
import { hashToken, randomSecret } from '../../shared/secrets.js';
import { PAT_PREFIX } from '../access/authenticate.js';
import { recordEvent } from '../events/record-event.js';
import { iso } from '../../shared/dates.js';

/** A personal access token as listed (Unleash's `patSchema` without the secret). */
export interface PatView {
  id: number;
  description: string;
  expiresAt: string;
  createdAt: string;
  seenAt: string | null;
  userId: number;
}

export function toPatView(row: Selectable<PersonalAccessTokensTable>): PatView {
  return {
    id: row.id,
    description: row.description,
    expiresAt: row.expires_at.toISOString(),
    createdAt: row.created_at.toISOString(),
    seenAt: iso(row.seen_at),
    userId: row.user_id,
  };
}

/** Personal access tokens belong to users; an admin API token has no user to own one. */
function ownerOf(actor: Actor): number {
  if (actor.kind !== 'user') {
    throw new PermissionError('Personal access tokens belong to users: log in or use a personal access token');
  }
  return actor.userId;
}

export async function listPats(db: Db, actor: Actor): Promise<PatView[]> {
  const rows = await db.selectFrom('personal_access_tokens').selectAll().where('user_id', '=', ownerOf(actor)).orderBy('id').execute();
  return rows.map(toPatView);
}

/**
 * Stores a new token of the user (a person, or a service account) and returns its row and secret; the secret is
 * kept only as its hash. The expiry must be in the future.
 */
export async function insertPat(uow: UnitOfWork, userId: number, input: { description: string; expiresAt: Date }) {
  if (input.expiresAt.getTime() <= uow.now.getTime()) {
    throw new BadDataError('The expiry date must be in the future', [
      { path: '/body/expiresAt', message: `expiresAt must be later than now (got ${input.expiresAt.toISOString()})` },
    ]);
  }
  const secret = `${PAT_PREFIX}${randomSecret()}`;
  const row = await uow.tx
    .insertInto('personal_access_tokens')
    .values({
      user_id: userId,
      description: input.description,
      secret_hash: hashToken(secret),
      expires_at: input.expiresAt,
      created_at: uow.now,
      seen_at: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return { row, secret };
}

/** The longest a personal access token may live: a leaked one stops working within a year at most. */
export const MAX_PAT_LIFETIME_DAYS = 366;

export async function createPat(uow: UnitOfWork, input: { description: string; expiresAt: Date }): Promise<PatView & { secret: string }> {
  const owner = ownerOf(uow.actor);
  const latest = uow.now.getTime() + MAX_PAT_LIFETIME_DAYS * 86_400_000;
  if (input.expiresAt.getTime() > latest) {
    throw new BadDataError(`A personal access token lives at most ${MAX_PAT_LIFETIME_DAYS} days`, [
      { path: '/body/expiresAt', message: `must be no later than ${new Date(latest).toISOString()}` },
    ]);
  }
  const { row, secret } = await insertPat(uow, owner, input);
  const pat = toPatView(row);
  await recordEvent(uow, { type: 'pat-created', data: pat });
  return { ...pat, secret };
}

export async function deletePat(uow: UnitOfWork, id: number): Promise<void> {
  const row = await removeUsersToken(uow, ownerOf(uow.actor), id);
  if (!row) throw new NotFoundError(`Could not find personal access token ${id}`);
  await recordEvent(uow, { type: 'pat-deleted', preData: toPatView(row) });
}

/** Deletes one of a user's tokens (a person's or a service account's); answers it, or undefined when it has none of that id. */
export function removeUsersToken(uow: UnitOfWork, userId: number, tokenId: number) {
  return uow.tx
    .deleteFrom('personal_access_tokens')
    .where('id', '=', tokenId)
    .where('user_id', '=', userId)
    .returningAll()
    .executeTakeFirst();
}

/** Deletes every token of a user (when they are deactivated); answers how many there were. */
export async function removeAllUsersTokens(uow: UnitOfWork, userId: number): Promise<number> {
  const removed = await uow.tx.deleteFrom('personal_access_tokens').where('user_id', '=', userId).returning('id').execute();
  return removed.length;
}

/** Stamps when a personal access token was last used (authentication says when one is due). */
export async function stampPatUse(db: Db, id: number, now: Date): Promise<void> {
  await db.updateTable('personal_access_tokens').set({ seen_at: now }).where('id', '=', id).execute();
}
