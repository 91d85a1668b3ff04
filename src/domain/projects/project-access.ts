import type { Db, Tx } from '../../db/database.js';
import type { ProjectRoleName } from '../../db/schema.js';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { BadDataError, NotFoundError } from '../../shared/errors.js';
import { PROJECT_ROLE_IDS, PROJECT_ROLES } from '../access/permissions.js';
import { recordEvent } from '../events/record-event.js';
import { toUserView, type UserView } from '../users/user-view.js';

/** Who holds a role in a project, as Unleash's project access answer lists them. */
export interface ProjectAccessView {
  users: Array<UserView & { roles: number[]; roleId: number }>;
  groups: Array<{ id: number; name: string; description: string | null; userCount: number; roles: number[]; roleId: number }>;
  roles: ProjectRoleView[];
}

export interface ProjectRoleView {
  id: number;
  name: ProjectRoleName;
  type: 'project';
  description: string;
}

const ROLE_DESCRIPTIONS: Record<ProjectRoleName, string> = {
  Owner: "Changes the project's flags, settings and environments, decides who has access, and may delete it",
  Member: "Creates and changes the project's flags, and approves and applies its change requests",
  Viewer: 'Sees the project and changes nothing in it',
};

export const PROJECT_ROLE_VIEWS: ProjectRoleView[] = PROJECT_ROLES.map((role) => ({
  id: PROJECT_ROLE_IDS[role],
  name: role,
  type: 'project',
  description: ROLE_DESCRIPTIONS[role],
}));

const roleById = new Map(PROJECT_ROLES.map((role) => [PROJECT_ROLE_IDS[role], role]));

/** Project role ids as the API takes them, each checked. */
export function resolveProjectRoles(ids: number[], path: string): ProjectRoleName[] {
  const details = ids.flatMap((id, index) =>
    roleById.has(id)
      ? []
      : [
          {
            path: `${path}/${index}`,
            message: `${id} is not a project role; use ${PROJECT_ROLE_VIEWS.map((r) => `${r.id} (${r.name})`).join(', ')}`,
          },
        ],
  );
  if (details.length > 0) throw new BadDataError('Unknown project role', details);
  return [...new Set(ids.map((id) => roleById.get(id)!))];
}

async function assertProject(db: Db, project: string): Promise<void> {
  const row = await db.selectFrom('projects').select('id').where('id', '=', project).executeTakeFirst();
  if (!row) throw new NotFoundError(`Could not find project "${project}"`);
}

export async function getProjectAccess(db: Db, project: string): Promise<ProjectAccessView> {
  await assertProject(db, project);
  const grants = await db.selectFrom('project_access').select(['user_id', 'group_id', 'role']).where('project_id', '=', project).execute();
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
      .map((grant) => PROJECT_ROLE_IDS[grant.role])
      .sort();
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
    roles: PROJECT_ROLE_VIEWS,
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
  input: { roles: ProjectRoleName[]; users: number[]; groups: number[] },
): Promise<void> {
  await assertProject(uow.tx, project);
  if (input.users.length === 0 && input.groups.length === 0) {
    throw new BadDataError('Name at least one user or group to give access to', [
      { path: '/body/users', message: 'users and groups are both empty' },
    ]);
  }
  await assertHolders(uow.tx, input.users, input.groups);
  const rows = input.roles.flatMap((role) => [
    ...input.users.map((userId) => ({ project_id: project, user_id: userId, group_id: null, role, created_at: uow.now })),
    ...input.groups.map((groupId) => ({ project_id: project, user_id: null, group_id: groupId, role, created_at: uow.now })),
  ]);
  await uow.tx
    .insertInto('project_access')
    .values(rows)
    .onConflict((conflict) => conflict.doNothing())
    .execute();
  await recordEvent(uow, {
    type: 'project-access-added',
    project,
    data: { roles: input.roles.map((role) => PROJECT_ROLE_IDS[role]), users: input.users, groups: input.groups },
  });
}

type Holder = { kind: 'user'; id: number } | { kind: 'group'; id: number };

async function rolesHeld(tx: Tx, project: string, holder: Holder): Promise<ProjectRoleName[]> {
  const rows = await tx
    .selectFrom('project_access')
    .select('role')
    .where('project_id', '=', project)
    .where(holder.kind === 'user' ? 'user_id' : 'group_id', '=', holder.id)
    .forUpdate()
    .execute();
  return rows.map((row) => row.role);
}

const EVENT_TYPES = {
  user: { updated: 'project-access-user-roles-updated', deleted: 'project-access-user-roles-deleted' },
  group: { updated: 'project-access-group-roles-updated', deleted: 'project-access-group-roles-deleted' },
} as const;

/** PUT …/users/:id/roles and …/groups/:id/roles: the holder's roles in the project become exactly these. */
export async function setProjectRoles(uow: UnitOfWork, project: string, holder: Holder, roles: ProjectRoleName[]): Promise<void> {
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
      .values(
        roles.map((role) => ({
          project_id: project,
          user_id: holder.kind === 'user' ? holder.id : null,
          group_id: holder.kind === 'group' ? holder.id : null,
          role,
          created_at: uow.now,
        })),
      )
      .execute();
  }
  const ids = (list: ProjectRoleName[]) => list.map((role) => PROJECT_ROLE_IDS[role]).sort();
  if (ids(before).join() === ids(roles).join()) return;
  await recordEvent(uow, {
    type: roles.length === 0 ? EVENT_TYPES[holder.kind].deleted : EVENT_TYPES[holder.kind].updated,
    project,
    data: roles.length === 0 ? undefined : { [`${holder.kind}Id`]: holder.id, roles: ids(roles) },
    preData: { [`${holder.kind}Id`]: holder.id, roles: ids(before) },
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
    .values({ project_id: project, user_id: userId, group_id: null, role: 'Owner', created_at: uow.now })
    .onConflict((conflict) => conflict.doNothing())
    .execute();
  await recordEvent(uow, { type: 'project-access-added', project, data: { roles: [PROJECT_ROLE_IDS.Owner], users: [userId], groups: [] } });
}
