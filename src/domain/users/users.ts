import { revokeAllMcpTokensOf } from '../agent-authorization/agent-authorization.js';
import { removeAllUsersTokens } from '../personal-access-tokens/personal-access-tokens.js';
import { sql } from 'kysely';
import type { RootRoleName } from '../../db/schema.js';
import type { UnitOfWork, Actor } from '../../db/unit-of-work.js';
import { BadDataError, ConflictError, NotFoundError } from '../../shared/errors.js';
import { likePattern } from '../../shared/filters.js';
import { hashPassword, hashToken, verifyPassword } from '../../shared/secrets.js';
import { recordEvent } from '../events/record-event.js';
import { assertStrongPassword } from './password-policy.js';
import type { RootRoleRef } from '../roles/roles.js';
import { toUserView, type UserView, adminTokenUserView } from './user-view.js';
import type { Db } from '../../db/database.js';

/**
 * Checks the policy and hashes. Callers do this before opening the unit of work: the key derivation takes tens
 * of milliseconds that no transaction should wait for.
 */
export async function hashNewPassword(password: string, path: string): Promise<string> {
  assertStrongPassword(password, path);
  return hashPassword(password);
}

export interface CreateUserInput {
  username?: string;
  email?: string;
  name?: string;
  rootRole: RootRoleName;
  /** A custom root role held instead of `rootRole`. */
  customRootRoleId?: number | null;
  passwordHash?: string;
  /** False when the person typed the email themselves (an invite sign-up): no identity provider links to it. */
  emailVerified?: boolean;
}

export async function createUser(uow: UnitOfWork, input: CreateUserInput): Promise<UserView> {
  // Vouched for by whoever makes the account (an Admin, an identity provider, SCIM), unless the input says not.
  if (!input.username && !input.email) {
    throw new BadDataError('A user needs a username or an email', [
      { path: '/body/username', message: 'Give a username, an email, or both' },
    ]);
  }
  const row = await uow.tx
    .insertInto('users')
    .values({
      username: input.username ?? null,
      email: input.email ?? null,
      name: input.name ?? null,
      image_url: null,
      password_hash: input.passwordHash ?? null,
      email_verified: input.emailVerified ?? true,
      root_role: input.rootRole,
      custom_root_role_id: input.customRootRoleId ?? null,
      created_at: uow.now,
      seen_at: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  const user = toUserView(row);
  await recordEvent(uow, { type: 'user-created', data: user });
  return user;
}

export async function lockUser(uow: UnitOfWork, id: number) {
  const row = await uow.tx
    .selectFrom('users')
    .selectAll()
    .where('id', '=', id)
    .where('is_service', '=', false)
    .forUpdate()
    .executeTakeFirst();
  if (!row) throw new NotFoundError(`Could not find user ${id}`);
  return row;
}

/** The role columns of a user or service account after an update that may give it another root role. */
export function rootRoleColumns(
  ref: RootRoleRef | undefined,
  before: { root_role: RootRoleName; custom_root_role_id: number | null },
): { root_role: RootRoleName; custom_root_role_id: number | null } {
  return ref === undefined
    ? { root_role: before.root_role, custom_root_role_id: before.custom_root_role_id }
    : { root_role: ref.role, custom_root_role_id: ref.customRoleId };
}

/** Whether an update's columns are all as they were: then nothing is written or recorded. */
export function unchanged<Row>(changes: Partial<Row>, before: Row): boolean {
  return (Object.keys(changes) as Array<keyof Row>).every((column) => changes[column] === before[column]);
}

export interface UpdateUserInput {
  name?: string;
  email?: string;
  rootRole?: RootRoleRef;
}

/**
 * A root role (built-in, or custom by id) that grants `ADMIN`: the built-in Admin, or a custom root role holding the
 * permission. Decided by what the role allows, not by its name.
 */
function grantsAdmin(builtIn: string, custom: string) {
  return sql<boolean>`(${sql.ref(builtIn)} = 'Admin' or ${sql.ref(custom)} in (select rp.role_id from role_permissions rp where rp.permission = 'ADMIN'))`;
}

/**
 * People whose roles grant `ADMIN`, their own or a group's, built-in or custom: what the last-Admin rule and SCIM look
 * at.
 */
function adminRoleHolders(db: Db) {
  return db
    .selectFrom('users as u')
    .select('u.id')
    .where('u.is_service', '=', false)
    .where((eb) =>
      eb.or([
        grantsAdmin('u.root_role', 'u.custom_root_role_id'),
        eb.exists(
          eb
            .selectFrom('group_users as gu')
            .innerJoin('groups as g', 'g.id', 'gu.group_id')
            .select('gu.user_id')
            .whereRef('gu.user_id', '=', 'u.id')
            .where(grantsAdmin('g.root_role', 'g.custom_root_role_id')),
        ),
      ]),
    );
}

async function roleGrantsAdmin(db: Db, role: { root_role: string | null; custom_root_role_id: number | null }): Promise<boolean> {
  if (role.root_role === 'Admin') return true;
  if (role.custom_root_role_id === null) return false;
  const row = await db
    .selectFrom('role_permissions')
    .select('role_id')
    .where('role_id', '=', role.custom_root_role_id)
    .where('permission', '=', 'ADMIN')
    .executeTakeFirst();
  return row !== undefined;
}

/** Whether a group's root role, built-in or custom, grants `ADMIN`: anyone joining it would hold it. */
export async function groupGrantsAdmin(db: Db, groupId: number): Promise<boolean> {
  const row = await db
    .selectFrom('groups as g')
    .select('g.id')
    .where('g.id', '=', groupId)
    .where(grantsAdmin('g.root_role', 'g.custom_root_role_id'))
    .executeTakeFirst();
  return row !== undefined;
}

export async function holdsAdminRole(db: Db, id: number): Promise<boolean> {
  return (await adminRoleHolders(db).where('u.id', '=', id).executeTakeFirst()) !== undefined;
}

/**
 * Refuses what would leave no active person holding the Admin root role (deleting, deactivating or demoting the
 * last one), by any path: the API, the UI or SCIM. Nobody could then manage the server without its database.
 */
export async function assertNotLastAdmin(
  uow: UnitOfWork,
  id: number,
  what: string,
  newRole?: { root_role: string | null; custom_root_role_id: number | null },
): Promise<void> {
  if (!(await holdsAdminRole(uow.tx, id))) return;
  // A new root role that still grants ADMIN leaves the person an Admin.
  if (newRole && (await roleGrantsAdmin(uow.tx, newRole))) return;
  const other = await adminRoleHolders(uow.tx).where('u.id', '!=', id).where('u.deactivated_at', 'is', null).limit(1).executeTakeFirst();
  if (!other) throw new ConflictError(`User ${id} is the last active Admin and cannot be ${what}; make someone else an Admin first`);
}

export async function updateUser(uow: UnitOfWork, id: number, input: UpdateUserInput): Promise<UserView> {
  const before = await lockUser(uow, id);
  const changes = {
    name: input.name ?? before.name,
    email: input.email ?? before.email,
    ...rootRoleColumns(input.rootRole, before),
  };
  if (unchanged(changes, before)) {
    return toUserView(before);
  }
  if (changes.root_role !== before.root_role || changes.custom_root_role_id !== before.custom_root_role_id) {
    await assertNotLastAdmin(uow, id, 'given another root role', changes);
  }
  const after = await uow.tx.updateTable('users').set(changes).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
  const user = toUserView(after);
  await recordEvent(uow, { type: 'user-updated', data: user, preData: toUserView(before) });
  return user;
}

/** Links the user to the identity a sign-in provider knows them by, for their later sign-ins. */
export async function linkSignInIdentity(uow: UnitOfWork, id: number, issuer: string, subject: string): Promise<void> {
  await uow.tx.updateTable('users').set({ oidc_issuer: issuer, oidc_subject: subject }).where('id', '=', id).execute();
}

export async function deleteUser(uow: UnitOfWork, id: number): Promise<void> {
  if (uow.actor.kind === 'user' && uow.actor.userId === id) {
    throw new BadDataError('You cannot delete your own user; ask another admin');
  }
  const before = await lockUser(uow, id);
  await assertNotLastAdmin(uow, id, 'deleted');
  await uow.tx.deleteFrom('users').where('id', '=', id).execute();
  await recordEvent(uow, { type: 'user-deleted', preData: toUserView(before) });
}

/** A user changing their own password proves they know the current one, so a borrowed session cannot. */
export async function assertCurrentPassword(uow: UnitOfWork, id: number, password: string): Promise<void> {
  const row = await uow.tx.selectFrom('users').select('password_hash').where('id', '=', id).executeTakeFirst();
  if (!row?.password_hash || !(await verifyPassword(password, row.password_hash))) {
    const message = '"oldPassword" is not your current password';
    throw new BadDataError(message, [{ message, path: '/body/oldPassword' }]);
  }
}

/**
 * Sets a user's password and ends their sessions, all but `keepSessionId` when the user changes their own
 * password in the session they are using.
 */
export async function changeUserPassword(uow: UnitOfWork, id: number, passwordHash: string, keepSessionId?: string): Promise<void> {
  const user = await lockUser(uow, id);
  await uow.tx.updateTable('users').set({ password_hash: passwordHash, login_attempts: 0 }).where('id', '=', id).execute();
  await uow.tx
    .deleteFrom('user_sessions')
    .where('user_id', '=', id)
    .$if(keepSessionId !== undefined, (query) => query.where('id_hash', '!=', hashToken(keepSessionId!)))
    .execute();
  // A reset (no browser of theirs kept) is for a password someone else may have had: nothing minted with it survives.
  if (keepSessionId === undefined) {
    await removeAllUsersTokens(uow, id);
    await revokeAllMcpTokensOf(uow, id);
  }
  await recordEvent(uow, {
    type: 'user-password-changed',
    data: { id: user.id, username: user.username, email: user.email },
  });
}

export async function listUsers(db: Db): Promise<UserView[]> {
  // Service accounts are listed on their own page, as Unleash lists them.
  const rows = await db.selectFrom('users').selectAll().where('is_service', '=', false).orderBy('id').execute();
  return rows.map(toUserView);
}

/** A search answers at most this many people, the first by id: enough to pick one, bounded for any term. */
export const MAX_USER_SEARCH_RESULTS = 100;

/** People (not service accounts) whose name, username or email contains `term`, case-insensitively. */
export async function searchUsers(db: Db, term: string): Promise<UserView[]> {
  const pattern = likePattern(term, '/query/q');
  const rows = await db
    .selectFrom('users')
    .selectAll()
    .where('is_service', '=', false)
    .where((eb) => eb.or([eb('name', 'ilike', pattern), eb('username', 'ilike', pattern), eb('email', 'ilike', pattern)]))
    .orderBy('id')
    .limit(MAX_USER_SEARCH_RESULTS)
    .execute();
  return rows.map(toUserView);
}

export async function getUser(db: Db, id: number): Promise<UserView> {
  const row = await db.selectFrom('users').selectAll().where('id', '=', id).where('is_service', '=', false).executeTakeFirst();
  if (!row) throw new NotFoundError(`Could not find user ${id}`);
  return toUserView(row);
}

/** The caller as a user: their own record, or the built-in identity of an admin token. */
export async function getActingUser(db: Db, actor: Actor): Promise<UserView> {
  switch (actor.kind) {
    case 'user':
      return getUser(db, actor.userId);
    case 'admin-token':
      return adminTokenUserView(actor.tokenName);
    case 'system':
    case 'identity-provider':
      throw new Error(`The ${actor.kind} actor does not make requests`);
  }
}

/** How many Admins the instance has, by how they sign in (Unleash's `GET /api/admin/user-admin/admin-count`). */
export async function countAdmins(db: Db): Promise<{ password: number; noPassword: number; service: number }> {
  const rows = await db
    .selectFrom('users')
    .select(['is_service', (eb) => eb.fn.countAll<number>().as('n'), sql<boolean>`password_hash IS NOT NULL`.as('has_password')])
    .where('root_role', '=', 'Admin')
    .where('custom_root_role_id', 'is', null)
    .where('deactivated_at', 'is', null)
    .groupBy(['is_service', sql`password_hash IS NOT NULL`])
    .execute();
  const sum = (match: (row: (typeof rows)[number]) => boolean) => rows.filter(match).reduce((total, row) => total + Number(row.n), 0);
  return {
    password: sum((row) => !row.is_service && row.has_password),
    noPassword: sum((row) => !row.is_service && !row.has_password),
    service: sum((row) => row.is_service),
  };
}

/** People not seen for this long are inactive (Unleash's 180 days); service accounts are never. */
export const INACTIVE_AFTER_DAYS = 180;

export interface InactiveUserView {
  id: number;
  name: string | null;
  email: string | null;
  username: string | null;
  seenAt: string | null;
  createdAt: string;
}

/** People who have not signed in for INACTIVE_AFTER_DAYS (or never, since being made that long ago), oldest first. */
export async function listInactiveUsers(db: Db, now: Date): Promise<InactiveUserView[]> {
  const cutoff = new Date(now.getTime() - INACTIVE_AFTER_DAYS * 86_400_000);
  const rows = await db
    .selectFrom('users')
    .select(['id', 'name', 'email', 'username', 'seen_at', 'created_at'])
    .where('is_service', '=', false)
    .where((eb) => eb.or([eb('seen_at', '<', cutoff), eb.and([eb('seen_at', 'is', null), eb('created_at', '<', cutoff)])]))
    .orderBy(sql`coalesce(seen_at, created_at)`)
    .orderBy('id')
    .limit(10_000)
    .execute();
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    email: row.email,
    username: row.username,
    seenAt: row.seen_at?.toISOString() ?? null,
    createdAt: row.created_at.toISOString(),
  }));
}

/**
 * Deletes the given people if they are still inactive, each as deleting one would (never yourself, never the last
 * Admin); an id that is not an inactive person is left alone, as Unleash does.
 */
export async function deleteInactiveUsers(uow: UnitOfWork, ids: number[]): Promise<number[]> {
  const inactive = new Set((await listInactiveUsers(uow.tx, uow.now)).map((user) => user.id));
  const deleted: number[] = [];
  for (const id of [...new Set(ids)].sort((a, b) => a - b)) {
    if (!inactive.has(id)) continue;
    await deleteUser(uow, id);
    deleted.push(id);
  }
  return deleted;
}

/** Deletes every person an identity provider manages over SCIM (Unleash's `DELETE /api/admin/user-admin/scim-users`). */
export async function deleteScimUsers(uow: UnitOfWork): Promise<number> {
  const rows = await uow.tx.selectFrom('users').select('id').where('scim_managed', '=', true).orderBy('id').execute();
  for (const row of rows) await deleteUser(uow, row.id);
  return rows.length;
}
