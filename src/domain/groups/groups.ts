import { sql, type Selectable } from 'kysely';
import type { Db, Tx } from '../../db/database.js';
import type { GroupsTable } from '../../db/schema.js';
import type { RootRoleRef } from '../roles/roles.js';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { BadDataError, NotFoundError } from '../../shared/errors.js';
import { actorIdentity } from '../access/actor.js';
import { ROOT_ROLE_IDS } from '../access/permissions.js';
import { recordEvent } from '../events/record-event.js';
import { iso } from '../../shared/dates.js';
import { toUserView, type UserView } from '../users/user-view.js';

/** A group as Unleash's `groupSchema` shows it. */
export interface GroupView {
  id: number;
  name: string;
  description: string | null;
  mappingsSSO: string[];
  rootRole: number | null;
  createdBy: string | null;
  createdAt: string | null;
  /** `fromSso`: added by a sign-in from the provider's groups claim, and removed by one without it. */
  users: Array<{ joinedAt: string; createdBy: string | null; fromSso: boolean; user: UserView }>;
  projects: string[];
  userCount: number;
}

export interface GroupInput {
  name: string;
  description?: string | null;
  mappingsSSO?: string[];
  /** A built-in or custom root role, or none. */
  rootRole: RootRoleRef | null;
  /** The members an administrator manages; members a sign-in added from the provider's claim stay. */
  userIds: number[];
}

/** An instance has tens of groups; this bounds what one listing reads. */
export const GROUP_LIST_LIMIT = 1000;

async function groupViews(db: Db, groups: Selectable<GroupsTable>[]): Promise<GroupView[]> {
  if (groups.length === 0) return [];
  const ids = groups.map((group) => group.id);
  const [members, projects] = await Promise.all([
    db
      .selectFrom('group_users as gu')
      .innerJoin('users as u', 'u.id', 'gu.user_id')
      .selectAll('u')
      .select(['gu.group_id', 'gu.joined_at', 'gu.created_by as added_by', 'gu.source'])
      .where('gu.group_id', 'in', ids)
      .orderBy('u.id')
      .execute(),
    db
      .selectFrom('project_access')
      .select(['group_id', 'project_id'])
      .distinct()
      .where('group_id', 'in', ids)
      .orderBy('project_id')
      .execute(),
  ]);
  return groups.map((group) => {
    const users = members
      .filter((member) => member.group_id === group.id)
      .map(({ group_id: _groupId, joined_at, added_by, source, ...user }) => ({
        joinedAt: joined_at.toISOString(),
        createdBy: added_by,
        fromSso: source === 'sso',
        user: toUserView(user),
      }));
    return {
      id: group.id,
      name: group.name,
      description: group.description,
      mappingsSSO: group.mappings_sso,
      rootRole: group.custom_root_role_id ?? (group.root_role === null ? null : ROOT_ROLE_IDS[group.root_role]),
      createdBy: group.created_by,
      createdAt: iso(group.created_at),
      users,
      projects: projects.filter((row) => row.group_id === group.id).map((row) => row.project_id),
      userCount: users.length,
    };
  });
}

export async function listGroups(db: Db): Promise<GroupView[]> {
  const groups = await db.selectFrom('groups').selectAll().orderBy('name').limit(GROUP_LIST_LIMIT).execute();
  return groupViews(db, groups);
}

export async function getGroup(db: Db, id: number): Promise<GroupView> {
  const group = await db.selectFrom('groups').selectAll().where('id', '=', id).executeTakeFirst();
  if (!group) throw new NotFoundError(`Could not find group ${id}`);
  return (await groupViews(db, [group]))[0]!;
}

/** Members must be people: service accounts act through their own root role and project access. */
async function assertUsersExist(tx: Tx, userIds: number[]): Promise<void> {
  if (userIds.length === 0) return;
  const found = await tx.selectFrom('users').select('id').where('id', 'in', userIds).where('is_service', '=', false).execute();
  const known = new Set(found.map((row) => row.id));
  const details = userIds.flatMap((id, index) =>
    known.has(id) ? [] : [{ path: `/body/users/${index}/user/id`, message: `there is no user with id ${id}` }],
  );
  if (details.length > 0) throw new BadDataError(`Unknown user ${details.length === 1 ? 'id' : 'ids'} in the group's members`, details);
}

function normalisedMappings(mappings: string[] | undefined): string[] {
  return [...new Set((mappings ?? []).map((mapping) => mapping.trim()).filter((mapping) => mapping !== ''))];
}

async function setManualMembers(uow: UnitOfWork, groupId: number, userIds: number[]): Promise<void> {
  const { createdBy } = actorIdentity(uow.actor);
  await uow.tx.deleteFrom('group_users').where('group_id', '=', groupId).where('source', '=', 'manual').execute();
  if (userIds.length === 0) return;
  await uow.tx
    .insertInto('group_users')
    .values(
      userIds.map((userId) => ({
        group_id: groupId,
        user_id: userId,
        source: 'manual' as const,
        created_by: createdBy,
        joined_at: uow.now,
      })),
    )
    // A member a sign-in added becomes one the administrator manages.
    .onConflict((conflict) => conflict.columns(['group_id', 'user_id']).doUpdateSet({ source: 'manual', created_by: createdBy }))
    .execute();
}

/** A group's root role as stored: a built-in one, or a custom one (with no built-in beside it). */
function rootRoleColumns(ref: RootRoleRef | null) {
  return { root_role: ref === null || ref.customRoleId !== null ? null : ref.role, custom_root_role_id: ref?.customRoleId ?? null };
}

export async function createGroup(uow: UnitOfWork, input: GroupInput): Promise<GroupView> {
  const userIds = [...new Set(input.userIds)];
  await assertUsersExist(uow.tx, input.userIds);
  const row = await uow.tx
    .insertInto('groups')
    .values({
      name: input.name.trim(),
      description: input.description ?? null,
      mappings_sso: normalisedMappings(input.mappingsSSO),
      ...rootRoleColumns(input.rootRole),
      created_by: actorIdentity(uow.actor).createdBy,
      created_at: uow.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  await setManualMembers(uow, row.id, userIds);
  const group = (await groupViews(uow.tx, [row]))[0]!;
  await recordEvent(uow, { type: 'group-created', data: groupEventData(group) });
  return group;
}

/** Events name members by id and username; the full user records stay out of the log. */
function groupEventData(group: GroupView) {
  const { users, ...rest } = group;
  return { ...rest, users: users.map(({ user }) => ({ id: user.id, username: user.username ?? user.email })) };
}

export async function updateGroup(uow: UnitOfWork, id: number, input: GroupInput): Promise<GroupView> {
  const before = await uow.tx.selectFrom('groups').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
  if (!before) throw new NotFoundError(`Could not find group ${id}`);
  await assertUsersExist(uow.tx, input.userIds);
  const beforeView = (await groupViews(uow.tx, [before]))[0]!;
  const row = await uow.tx
    .updateTable('groups')
    .set({
      name: input.name.trim(),
      description: input.description ?? null,
      mappings_sso: normalisedMappings(input.mappingsSSO),
      ...rootRoleColumns(input.rootRole),
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
  await setManualMembers(uow, id, [...new Set(input.userIds)]);
  const group = (await groupViews(uow.tx, [row]))[0]!;
  await recordEvent(uow, { type: 'group-updated', data: groupEventData(group), preData: groupEventData(beforeView) });
  return group;
}

export async function deleteGroup(uow: UnitOfWork, id: number): Promise<void> {
  const before = await uow.tx.selectFrom('groups').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
  if (!before) throw new NotFoundError(`Could not find group ${id}`);
  const view = (await groupViews(uow.tx, [before]))[0]!;
  await uow.tx.deleteFrom('groups').where('id', '=', id).execute();
  await recordEvent(uow, { type: 'group-deleted', preData: groupEventData(view) });
}

/** A group as an identity provider manages it over SCIM, already checked. */
export interface ProvisionedGroup {
  name: string;
  /** The provider's own id for the group. */
  externalId: string | null;
  memberIds: number[];
}

/**
 * A group the provider pushes: no root role and no project access until an Admin gives it some; its members follow
 * the provider. Recorded as `group-created` and a `group-user-added` per member. Answers its id.
 */
export async function createProvisionedGroup(uow: UnitOfWork, group: ProvisionedGroup): Promise<number> {
  const row = await uow.tx
    .insertInto('groups')
    .values({
      name: group.name,
      description: null,
      mappings_sso: [],
      root_role: null,
      created_by: actorIdentity(uow.actor).createdBy,
      created_at: uow.now,
      scim_managed: true,
      scim_external_id: group.externalId,
      updated_at: uow.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  await recordEvent(uow, { type: 'group-created', data: groupEventData((await groupViews(uow.tx, [row]))[0]!) });
  await setProvisionedMembers(uow, row, group.memberIds);
  return row.id;
}

/**
 * Replaces the group's name, externalId and members as the provider sends them (from then on it manages the
 * group). A rename is recorded as `group-updated`, membership changes one by one; access follows at the members'
 * next request.
 */
export async function replaceProvisionedGroup(uow: UnitOfWork, id: number, group: ProvisionedGroup): Promise<void> {
  const before = await uow.tx.selectFrom('groups').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
  if (!before) throw new NotFoundError(`Could not find group ${id}`);
  const renamed = before.name !== group.name || before.scim_external_id !== group.externalId || !before.scim_managed;
  const beforeView = renamed ? (await groupViews(uow.tx, [before]))[0]! : undefined;
  const after = await uow.tx
    .updateTable('groups')
    .set({ name: group.name, scim_managed: true, scim_external_id: group.externalId, updated_at: uow.now })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
  if (beforeView) {
    const afterView = (await groupViews(uow.tx, [after]))[0]!;
    await recordEvent(uow, { type: 'group-updated', data: groupEventData(afterView), preData: groupEventData(beforeView) });
  }
  await setProvisionedMembers(uow, after, group.memberIds);
}

/**
 * Makes the group's members exactly `userIds`, as an identity provider pushes them over SCIM: whoever is not listed
 * leaves (however they joined), whoever is new joins as a `scim` member. Each change is recorded as
 * `group-user-added` or `group-user-removed`.
 */
async function setProvisionedMembers(uow: UnitOfWork, group: { id: number; name: string }, userIds: number[]): Promise<void> {
  const wanted = [...new Set(userIds)];
  await assertUsersExist(uow.tx, wanted);
  const current = await uow.tx
    .selectFrom('group_users as gu')
    .innerJoin('users as u', 'u.id', 'gu.user_id')
    .select(['u.id', 'u.username', 'u.email'])
    .where('gu.group_id', '=', group.id)
    .execute();
  const currentIds = new Set(current.map((member) => member.id));
  const leaving = current.filter((member) => !wanted.includes(member.id));
  const joining = wanted.filter((id) => !currentIds.has(id));
  if (leaving.length > 0) {
    await uow.tx
      .deleteFrom('group_users')
      .where('group_id', '=', group.id)
      .where(
        'user_id',
        'in',
        leaving.map((member) => member.id),
      )
      .execute();
  }
  for (const member of leaving) {
    await recordEvent(uow, {
      type: 'group-user-removed',
      preData: { groupId: group.id, group: group.name, userId: member.id, user: member.username ?? member.email },
    });
  }
  if (joining.length === 0) return;
  const { createdBy } = actorIdentity(uow.actor);
  const joined = await uow.tx
    .insertInto('group_users')
    .values(
      joining.map((userId) => ({
        group_id: group.id,
        user_id: userId,
        source: 'scim' as const,
        created_by: createdBy,
        joined_at: uow.now,
      })),
    )
    .returning('user_id')
    .execute();
  const people = await uow.tx.selectFrom('users').select(['id', 'username', 'email']).where('id', 'in', joining).execute();
  for (const { user_id } of joined) {
    const person = people.find((candidate) => candidate.id === user_id)!;
    await recordEvent(uow, {
      type: 'group-user-added',
      data: { groupId: group.id, group: group.name, userId: user_id, user: person.username ?? person.email },
    });
  }
}

/**
 * Makes the user's membership of SSO-mapped groups follow the groups claim of this sign-in: added to each group
 * one of whose `mappingsSSO` the claim names, removed from those a previous sign-in added and the claim no longer
 * names. Members an administrator added are left alone.
 */
export async function syncSsoGroups(uow: UnitOfWork, user: { id: number; username: string }, claimed: string[]): Promise<void> {
  const mapped =
    claimed.length === 0
      ? []
      : await uow.tx
          .selectFrom('groups')
          .select(['id', 'name'])
          .where(sql<boolean>`mappings_sso && ARRAY[${sql.join(claimed)}]::text[]`)
          .execute();
  const current = await uow.tx
    .selectFrom('group_users as gu')
    .innerJoin('groups as g', 'g.id', 'gu.group_id')
    .select(['g.id', 'g.name', 'gu.source'])
    .where('gu.user_id', '=', user.id)
    .execute();
  const currentIds = new Set(current.map((row) => row.id));
  const mappedIds = new Set(mapped.map((group) => group.id));
  const { createdBy } = actorIdentity(uow.actor);
  for (const group of mapped.filter((candidate) => !currentIds.has(candidate.id))) {
    await uow.tx
      .insertInto('group_users')
      .values({ group_id: group.id, user_id: user.id, source: 'sso', created_by: createdBy, joined_at: uow.now })
      .execute();
    await recordEvent(uow, {
      type: 'group-user-added',
      data: { groupId: group.id, group: group.name, userId: user.id, user: user.username },
    });
  }
  for (const group of current.filter((row) => row.source === 'sso' && !mappedIds.has(row.id))) {
    await uow.tx.deleteFrom('group_users').where('group_id', '=', group.id).where('user_id', '=', user.id).execute();
    await recordEvent(uow, {
      type: 'group-user-removed',
      preData: { groupId: group.id, group: group.name, userId: user.id, user: user.username },
    });
  }
}

/** Whom a project's access can be given to, as Unleash's access dialogs list them. */
export interface AccessCandidates {
  users: Array<{ id: number; name: string | null; username: string | null; email: string | null; imageUrl: string | null }>;
  groups: Array<{ id: number; name: string; description: string | null; userCount: number }>;
}

/**
 * The people (active, not service accounts) and groups a project's access can name (Unleash's
 * `GET /api/admin/user-admin/access`). Unleash shows everyone's email to anyone signed in; here only an Admin sees them.
 */
export async function listAccessCandidates(db: Db, withEmails: boolean): Promise<AccessCandidates> {
  const [users, groups] = await Promise.all([
    db
      .selectFrom('users')
      .select(['id', 'name', 'username', 'email', 'image_url'])
      .where('is_service', '=', false)
      .where('deactivated_at', 'is', null)
      .orderBy('id')
      .limit(GROUP_LIST_LIMIT * 10)
      .execute(),
    db
      .selectFrom('groups as g')
      .select([
        'g.id',
        'g.name',
        'g.description',
        (eb) =>
          eb.selectFrom('group_users as gu').select(eb.fn.countAll<number>().as('n')).whereRef('gu.group_id', '=', 'g.id').as('user_count'),
      ])
      .orderBy('g.name')
      .limit(GROUP_LIST_LIMIT)
      .execute(),
  ]);
  return {
    users: users.map((user) => ({
      id: user.id,
      name: user.name,
      username: user.username,
      email: withEmails ? user.email : null,
      imageUrl: user.image_url,
    })),
    groups: groups.map((group) => ({
      id: group.id,
      name: group.name,
      description: group.description,
      userCount: Number(group.user_count ?? 0),
    })),
  };
}
