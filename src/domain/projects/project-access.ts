import type { Db, Tx } from '../../db/database.js';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { BadDataError, NotFoundError } from '../../shared/errors.js';
import { assertActorMay, PROJECT_ROLE_IDS } from '../access/permissions.js';
import { type ProjectRoleRef, projectRoleChoices, projectRoleId, type RoleSummary } from '../roles/roles.js';
import { recordEvent } from '../events/record-event.js';
import { toUserView, type UserView } from '../users/user-view.js';

/** Who holds a role in a project, as Unleash's project access answer lists them, with the roles there are. */
export interface ProjectAccessView {
  users: Array<UserView & { roles: number[]; roleId: number }>;
  groups: Array<{ id: number; name: string; description: string | null; userCount: number; roles: number[]; roleId: number }>;
  roles: RoleSummary[];
}

async function assertProject(db: Db, project: string): Promise<void> {
  const row = await db.selectFrom('projects').select('id').where('id', '=', project).executeTakeFirst();
  if (!row) throw new NotFoundError(`Could not find project "${project}"`);
}

export async function getProjectAccess(db: Db, project: string): Promise<ProjectAccessView> {
  await assertProject(db, project);
  const grants = await db
    .selectFrom('project_access')
    .select(['user_id', 'group_id', 'role', 'custom_role_id as customRoleId'])
    .where('project_id', '=', project)
    .execute();
  const userIds = [...new Set(grants.flatMap((grant) => (grant.user_id === null ? [] : [grant.user_id])))];
  const groupIds = [...new Set(grants.flatMap((grant) => (grant.group_id === null ? [] : [grant.group_id])))];
  const [users, groups] = await Promise.all([
    userIds.length === 0 ? [] : db.selectFrom('users').selectAll().where('id', 'in', userIds).orderBy('id').execute(),
    groupIds.length === 0
      ? []
      : db
          .selectFrom('groups as g')
          .select((eb) => [
            'g.id',
            'g.name',
            'g.description',
            eb.selectFrom('group_users').select(eb.fn.countAll<string>().as('n')).whereRef('group_id', '=', 'g.id').as('user_count'),
          ])
          .where('g.id', 'in', groupIds)
          .orderBy('g.name')
          .execute(),
  ]);
  const rolesOf = (holder: 'user_id' | 'group_id', id: number) =>
    grants
      .filter((grant) => grant[holder] === id)
      .map(projectRoleId)
      .sort((a, b) => a - b);
  return {
    users: users.map((row) => {
      const roles = rolesOf('user_id', row.id);
      return { ...toUserView(row), roles, roleId: roles[0]! };
    }),
    groups: groups.map((group) => {
      const roles = rolesOf('group_id', group.id);
      return {
        id: group.id,
        name: group.name,
        description: group.description,
        userCount: Number(group.user_count ?? 0),
        roles,
        roleId: roles[0]!,
      };
    }),
    roles: await projectRoleChoices(db),
  };
}

async function assertHolders(tx: Tx, users: number[], groups: number[]): Promise<void> {
  const [foundUsers, foundGroups] = await Promise.all([
    users.length === 0 ? [] : tx.selectFrom('users').select('id').where('id', 'in', users).execute(),
    groups.length === 0 ? [] : tx.selectFrom('groups').select('id').where('id', 'in', groups).execute(),
  ]);
  const knownUsers = new Set(foundUsers.map((row) => row.id));
  const knownGroups = new Set(foundGroups.map((row) => row.id));
  const details = [
    ...users.flatMap((id, index) =>
      knownUsers.has(id) ? [] : [{ path: `/body/users/${index}`, message: `there is no user with id ${id}` }],
    ),
    ...groups.flatMap((id, index) =>
      knownGroups.has(id) ? [] : [{ path: `/body/groups/${index}`, message: `there is no group with id ${id}` }],
    ),
  ];
  if (details.length > 0) throw new BadDataError('Unknown users or groups', details);
}

/** POST …/access: gives each of the users and groups each of the roles, keeping the roles they already hold. */
export async function addProjectAccess(
  uow: UnitOfWork,
  project: string,
  input: { roles: ProjectRoleRef[]; users: number[]; groups: number[] },
): Promise<void> {
  await assertProject(uow.tx, project);
  if (input.users.length === 0 && input.groups.length === 0) {
    throw new BadDataError('Name at least one user or group to give access to', [
      { path: '/body/users', message: 'users and groups are both empty' },
    ]);
  }
  // The route asks for PROJECT_USER_ACCESS_WRITE; groups, which may hold many people, take their own permission.
  if (input.groups.length > 0) assertActorMay(uow.actor, 'PROJECT_GROUP_ACCESS_WRITE', project);
  await assertHolders(uow.tx, input.users, input.groups);
  const rows = input.roles.flatMap((ref) => [
    ...input.users.map((userId) => grantRow(project, { kind: 'user', id: userId }, ref, uow.now)),
    ...input.groups.map((groupId) => grantRow(project, { kind: 'group', id: groupId }, ref, uow.now)),
  ]);
  await uow.tx
    .insertInto('project_access')
    .values(rows)
    .onConflict((conflict) => conflict.doNothing())
    .execute();
  await recordEvent(uow, {
    type: 'project-access-added',
    project,
    data: { roles: input.roles.map(projectRoleId), users: input.users, groups: input.groups },
  });
}

type Holder = { kind: 'user'; id: number } | { kind: 'group'; id: number };

/** A project grant's row: the holder and the role, built-in or custom. */
function grantRow(project: string, holder: Holder, ref: ProjectRoleRef, now: Date) {
  return {
    project_id: project,
    user_id: holder.kind === 'user' ? holder.id : null,
    group_id: holder.kind === 'group' ? holder.id : null,
    role: ref.role,
    custom_role_id: ref.customRoleId,
    created_at: now,
  };
}

/** The ids of the roles the holder has in the project, in order. */
async function rolesHeld(tx: Tx, project: string, holder: Holder): Promise<number[]> {
  const rows = await tx
    .selectFrom('project_access')
    .select(['role', 'custom_role_id as customRoleId'])
    .where('project_id', '=', project)
    .where(holder.kind === 'user' ? 'user_id' : 'group_id', '=', holder.id)
    .forUpdate()
    .execute();
  return rows.map(projectRoleId).sort((a, b) => a - b);
}

const EVENT_TYPES = {
  user: { updated: 'project-access-user-roles-updated', deleted: 'project-access-user-roles-deleted' },
  group: { updated: 'project-access-group-roles-updated', deleted: 'project-access-group-roles-deleted' },
} as const;

/** PUT …/users/:id/roles and …/groups/:id/roles: the holder's roles in the project become exactly these. */
export async function setProjectRoles(uow: UnitOfWork, project: string, holder: Holder, roles: ProjectRoleRef[]): Promise<void> {
  await assertProject(uow.tx, project);
  const exists = await uow.tx
    .selectFrom(holder.kind === 'user' ? 'users' : 'groups')
    .select('id')
    .where('id', '=', holder.id)
    .executeTakeFirst();
  if (!exists) throw new NotFoundError(`Could not find ${holder.kind} ${holder.id}`);
  const column = holder.kind === 'user' ? 'user_id' : 'group_id';
  const before = await rolesHeld(uow.tx, project, holder);
  await uow.tx.deleteFrom('project_access').where('project_id', '=', project).where(column, '=', holder.id).execute();
  if (roles.length > 0) {
    await uow.tx
      .insertInto('project_access')
      .values(roles.map((ref) => grantRow(project, holder, ref, uow.now)))
      .execute();
  }
  const after = roles.map(projectRoleId).sort((a, b) => a - b);
  if (before.join() === after.join()) return;
  await recordEvent(uow, {
    type: roles.length === 0 ? EVENT_TYPES[holder.kind].deleted : EVENT_TYPES[holder.kind].updated,
    project,
    data: roles.length === 0 ? undefined : { [`${holder.kind}Id`]: holder.id, roles: after },
    preData: { [`${holder.kind}Id`]: holder.id, roles: before },
  });
}

/** DELETE …/users/:id/roles and …/groups/:id/roles: the holder has no role in the project any more. */
export async function removeProjectAccess(uow: UnitOfWork, project: string, holder: Holder): Promise<void> {
  await assertProject(uow.tx, project);
  const before = await rolesHeld(uow.tx, project, holder);
  if (before.length === 0) throw new NotFoundError(`The ${holder.kind} ${holder.id} has no role in project "${project}"`);
  await setProjectRoles(uow, project, holder, []);
}

/** A user who creates a project owns it, so an Editor can decide who else works in it. */
export async function makeOwner(uow: UnitOfWork, project: string, userId: number): Promise<void> {
  await uow.tx
    .insertInto('project_access')
    .values(grantRow(project, { kind: 'user', id: userId }, { role: 'Owner', customRoleId: null }, uow.now))
    .onConflict((conflict) => conflict.doNothing())
    .execute();
  await recordEvent(uow, { type: 'project-access-added', project, data: { roles: [PROJECT_ROLE_IDS.Owner], users: [userId], groups: [] } });
}
