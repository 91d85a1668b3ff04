import type { Selectable } from 'kysely';
import type { Db, LockingHandle } from '../../db/database.js';
import type { PersonalAccessTokensTable, UsersTable } from '../../db/schema.js';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { ConflictError, NotFoundError } from '../../shared/errors.js';
import { recordEvent } from '../events/record-event.js';
import type { RootRoleRef } from '../roles/roles.js';
import { insertPat, removeUsersToken, toPatView } from '../personal-access-tokens/personal-access-tokens.js';
import { iso } from '../../shared/dates.js';
import { toUserView, type UserView } from './user-view.js';
import { rootRoleColumns, unchanged } from './users.js';

/**
 * Service accounts: identities for automation, with a root role and tokens of their own, so a pipeline does not
 * borrow a person's token and the log says which automation did what. They are users that cannot sign in.
 */

export interface ServiceAccountTokenView {
  id: number;
  description: string;
  expiresAt: string;
  createdAt: string;
  seenAt: string | null;
}

/** A service account as listed: the user, its tokens, and when any of them was last used. */
export interface ServiceAccountView extends UserView {
  tokens: ServiceAccountTokenView[];
}

/** A personal access token's view without its owner, whom the service account around it names. */
function toTokenView(row: Selectable<PersonalAccessTokensTable>): ServiceAccountTokenView {
  const { userId: _owner, ...token } = toPatView(row);
  return token;
}

function toServiceAccountView(row: Selectable<UsersTable>, tokens: Selectable<PersonalAccessTokensTable>[]): ServiceAccountView {
  const lastUse = tokens.reduce<Date | null>(
    (last, token) => (token.seen_at && (!last || token.seen_at > last) ? token.seen_at : last),
    null,
  );
  return { ...toUserView(row), seenAt: iso(lastUse), tokens: tokens.map(toTokenView) };
}

/** At most this many service accounts are listed; an instance needs far fewer. */
export const SERVICE_ACCOUNT_LIST_LIMIT = 1000;

export async function listServiceAccounts(db: Db): Promise<ServiceAccountView[]> {
  const rows = await db
    .selectFrom('users')
    .selectAll()
    .where('is_service', '=', true)
    .orderBy('id')
    .limit(SERVICE_ACCOUNT_LIST_LIMIT)
    .execute();
  if (rows.length === 0) return [];
  const tokens = await db
    .selectFrom('personal_access_tokens')
    .selectAll()
    .where(
      'user_id',
      'in',
      rows.map((row) => row.id),
    )
    .orderBy('id')
    .execute();
  return rows.map((row) =>
    toServiceAccountView(
      row,
      tokens.filter((token) => token.user_id === row.id),
    ),
  );
}

async function findServiceAccount<Lock extends boolean>(db: LockingHandle<Lock>, id: number, lock: Lock) {
  const row = await db
    .selectFrom('users')
    .selectAll()
    .where('id', '=', id)
    .where('is_service', '=', true)
    .$if(lock === true, (query) => query.forUpdate())
    .executeTakeFirst();
  if (!row) throw new NotFoundError(`Could not find service account ${id}`);
  return row;
}

export async function getServiceAccount(db: Db, id: number): Promise<ServiceAccountView> {
  const row = await findServiceAccount(db, id, false);
  const tokens = await db.selectFrom('personal_access_tokens').selectAll().where('user_id', '=', id).orderBy('id').execute();
  return toServiceAccountView(row, tokens);
}

export async function createServiceAccount(
  uow: UnitOfWork,
  input: { username: string; name?: string; rootRole: RootRoleRef },
): Promise<ServiceAccountView> {
  const row = await uow.tx
    .insertInto('users')
    .values({
      username: input.username,
      email: null,
      name: input.name ?? input.username,
      image_url: null,
      password_hash: null,
      root_role: input.rootRole.role,
      custom_root_role_id: input.rootRole.customRoleId,
      is_service: true,
      created_at: uow.now,
      seen_at: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  const account = toServiceAccountView(row, []);
  await recordEvent(uow, { type: 'service-account-created', data: toUserView(row) });
  return account;
}

export async function updateServiceAccount(
  uow: UnitOfWork,
  id: number,
  input: { name?: string; rootRole?: RootRoleRef },
): Promise<ServiceAccountView> {
  const before = await findServiceAccount(uow.tx, id, true);
  const changes = { name: input.name ?? before.name, ...rootRoleColumns(input.rootRole, before) };
  const after = unchanged(changes, before)
    ? before
    : await uow.tx.updateTable('users').set(changes).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
  if (after !== before) {
    await recordEvent(uow, { type: 'service-account-updated', data: toUserView(after), preData: toUserView(before) });
  }
  const tokens = await uow.tx.selectFrom('personal_access_tokens').selectAll().where('user_id', '=', id).orderBy('id').execute();
  return toServiceAccountView(after, tokens);
}

export async function deleteServiceAccount(uow: UnitOfWork, id: number): Promise<void> {
  const before = await findServiceAccount(uow.tx, id, true);
  // Action sets act as their service account; deleting it would take them away without a word.
  const actionSets = await uow.tx
    .selectFrom('action_sets')
    .select(['id', 'name', 'project'])
    .where('actor_id', '=', id)
    .orderBy('id')
    .execute();
  if (actionSets.length > 0) {
    const names = actionSets.map((set) => `"${set.name}" (project "${set.project}", id ${set.id})`).join(', ');
    throw new ConflictError(
      `Service account "${before.username}" runs the action sets ${names}; give them another service account or delete them first`,
    );
  }
  await uow.tx.deleteFrom('users').where('id', '=', id).execute();
  await recordEvent(uow, { type: 'service-account-deleted', preData: toUserView(before) });
}

/** A token for the service account; its secret is in this answer only. */
export async function createServiceAccountToken(
  uow: UnitOfWork,
  id: number,
  input: { description: string; expiresAt: Date },
): Promise<ServiceAccountTokenView & { secret: string }> {
  const account = await findServiceAccount(uow.tx, id, true);
  const { row, secret } = await insertPat(uow, id, input);
  const token = toTokenView(row);
  await recordEvent(uow, { type: 'pat-created', data: { ...token, userId: id, serviceAccount: account.username } });
  return { ...token, secret };
}

export async function deleteServiceAccountToken(uow: UnitOfWork, id: number, tokenId: number): Promise<void> {
  const account = await findServiceAccount(uow.tx, id, true);
  const row = await removeUsersToken(uow, id, tokenId);
  if (!row) throw new NotFoundError(`Service account ${id} has no token ${tokenId}`);
  await recordEvent(uow, { type: 'pat-deleted', preData: { ...toTokenView(row), userId: id, serviceAccount: account.username } });
}
