import type { Db, Tx } from '../../db/database.js';
import type { ProjectRoleName, RootRoleName } from '../../db/schema.js';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { BadDataError, ConflictError, NameExistsError, NotFoundError } from '../../shared/errors.js';
import { actorIdentity } from '../access/actor.js';
import {
  ENVIRONMENT_PERMISSIONS,
  isEnvironmentPermission,
  PERMISSIONS,
  type Permission,
  PROJECT_PERMISSIONS,
  PROJECT_ROLE_IDS,
  PROJECT_ROLE_VIEWS,
  PROJECT_ROLES,
  projectRolePermissions,
  ROOT_PERMISSIONS,
  ROOT_ROLE_IDS,
  ROOT_ROLE_VIEWS,
  ROOT_ROLES,
  rootRolePermissions,
} from '../access/permissions.js';
import { recordEvent } from '../events/record-event.js';

/**
 * Roles as Unleash names their kinds: built-in root (`root`) and project (`project`) roles, defined in code, and
 * custom ones made of named permissions (`root-custom`, `custom`), stored. All are listed, read and assigned alike.
 */
export type RoleType = 'root' | 'root-custom' | 'project' | 'custom';

export interface RoleSummary {
  id: number;
  name: string;
  type: RoleType;
  description: string | null;
  project: null;
}

/** A permission of a role; `environment` only for an environment permission limited to one environment. */
export interface RolePermission {
  name: string;
  environment?: string;
}

export interface RoleView extends RoleSummary {
  permissions: RolePermission[];
}

export interface RoleInput {
  name: string;
  description?: string | null;
  type: 'root-custom' | 'custom';
  /** Each by its name, or by its id in the catalogue (`GET /api/admin/permissions`). */
  permissions: Array<{ id?: number; name?: string; environment?: string | null }>;
}

/** A permission's id in the catalogue: its place in the list of permissions (Unleash numbers its permissions too). */
const permissionId = (permission: Permission) => PERMISSIONS.indexOf(permission) + 1;

const BUILT_IN_ROLES: RoleView[] = [
  ...ROOT_ROLE_VIEWS.map((role) => ({
    ...role,
    type: 'root' as const,
    project: null,
    permissions: rootRolePermissions(role.name).map((name) => ({ name })),
  })),
  ...PROJECT_ROLE_VIEWS.map((role) => ({
    ...role,
    type: 'project' as const,
    project: null,
    permissions: projectRolePermissions(role.name).map((name) => ({ name })),
  })),
];

const summary = ({ permissions: _permissions, ...role }: RoleView): RoleSummary => role;

/** At most this many custom roles: an instance has a handful; the bound keeps every list short. */
export const MAX_CUSTOM_ROLES = 500;

async function customRoles(db: Db, type?: 'root-custom' | 'custom'): Promise<RoleSummary[]> {
  const rows = await db
    .selectFrom('roles')
    .select(['id', 'name', 'type', 'description'])
    .$if(type !== undefined, (select) => select.where('type', '=', type!))
    .orderBy('id')
    .limit(MAX_CUSTOM_ROLES)
    .execute();
  return rows.map((row) => ({ ...row, project: null }));
}

/** Every role, built-in first, then the custom ones in the order they were made. */
export async function listRoles(db: Db): Promise<RoleSummary[]> {
  return [...BUILT_IN_ROLES.map(summary), ...(await customRoles(db))];
}

/** The root roles a user or group may be given: the built-in ones and the custom root roles. */
export async function rootRoleChoices(db: Db): Promise<RoleSummary[]> {
  return [...BUILT_IN_ROLES.filter((role) => role.type === 'root').map(summary), ...(await customRoles(db, 'root-custom'))];
}

/** The roles a project grant may name: the built-in project roles and the custom ones. */
export async function projectRoleChoices(db: Db): Promise<RoleSummary[]> {
  return [...BUILT_IN_ROLES.filter((role) => role.type === 'project').map(summary), ...(await customRoles(db, 'custom'))];
}

export async function getRole(db: Db, id: number): Promise<RoleView> {
  const builtIn = BUILT_IN_ROLES.find((role) => role.id === id);
  if (builtIn) return builtIn;
  const row = await db.selectFrom('roles').select(['id', 'name', 'type', 'description']).where('id', '=', id).executeTakeFirst();
  if (!row) throw new NotFoundError(`Could not find role ${id}`);
  const permissions = await db
    .selectFrom('role_permissions')
    .select(['permission', 'environment'])
    .where('role_id', '=', id)
    .orderBy('permission')
    .orderBy('environment')
    .execute();
  return {
    ...row,
    project: null,
    permissions: permissions.map(({ permission, environment }) =>
      environment === null ? { name: permission } : { name: permission, environment },
    ),
  };
}

/** What permissions there are, for the role editor: root ones, project ones, and each environment's (Unleash's shape). */
export async function permissionCatalogue(db: Db) {
  const environments = await db.selectFrom('environments').select('name').orderBy('sort_order').orderBy('name').execute();
  const entry = (permission: Permission, type: 'root' | 'project' | 'environment') => ({
    id: permissionId(permission),
    name: permission,
    displayName: permission
      .toLowerCase()
      .replaceAll('_', ' ')
      .replace(/^./, (first) => first.toUpperCase()),
    type,
  });
  return {
    root: ROOT_PERMISSIONS.map((permission) => entry(permission, 'root')),
    project: PROJECT_PERMISSIONS.map((permission) => entry(permission, 'project')),
    environments: environments.map(({ name }) => ({
      name,
      permissions: ENVIRONMENT_PERMISSIONS.map((permission) => ({ ...entry(permission, 'environment'), environment: name })),
    })),
  };
}

/**
 * The permissions of a role to store, each checked: it exists and suits the role's type (a root role holds root
 * permissions; a project role project and environment permissions), an environment is named only for an
 * environment permission, and that environment exists. Repeats are dropped.
 */
async function checkedPermissions(tx: Tx, input: RoleInput): Promise<Array<{ permission: Permission; environment: string | null }>> {
  const allowed = new Set<string>(input.type === 'root-custom' ? ROOT_PERMISSIONS : [...PROJECT_PERMISSIONS, ...ENVIRONMENT_PERMISSIONS]);
  const environments = new Set((await tx.selectFrom('environments').select('name').execute()).map((row) => row.name));
  const checked = input.permissions.map((entry, index) => {
    const path = `/body/permissions/${index}`;
    const permission = entry.name ?? PERMISSIONS[(entry.id ?? 0) - 1];
    if (permission === undefined || !allowed.has(permission)) {
      const what = entry.name === undefined ? `id ${entry.id}` : `"${entry.name}"`;
      const kind = input.type === 'root-custom' ? 'a root role' : 'a project role';
      throw new BadDataError(`The permission ${what} is not one ${kind} can hold`, [
        { path, message: `${what} is not a permission of ${kind}; GET /api/admin/permissions lists them` },
      ]);
    }
    const environment = entry.environment ?? null;
    if (environment !== null && !isEnvironmentPermission(permission)) {
      throw new BadDataError(`${permission} holds in a whole project, not in one environment`, [
        { path: `${path}/environment`, message: `${permission} takes no environment` },
      ]);
    }
    if (environment !== null && !environments.has(environment)) {
      throw new BadDataError(`There is no environment "${environment}"`, [
        { path: `${path}/environment`, message: `no environment "${environment}"` },
      ]);
    }
    return { permission: permission as Permission, environment };
  });
  const unique = new Map(checked.map((entry) => [`${entry.permission} ${entry.environment ?? ''}`, entry]));
  return [...unique.values()];
}

async function assertNameFree(tx: Db, name: string, exceptId?: number): Promise<void> {
  const builtIn = BUILT_IN_ROLES.some((role) => role.name.toLowerCase() === name.toLowerCase());
  const clash =
    builtIn ||
    (await tx
      .selectFrom('roles')
      .select('id')
      .where((eb) => eb(eb.fn('lower', ['name']), '=', name.toLowerCase()))
      .$if(exceptId !== undefined, (select) => select.where('id', '!=', exceptId!))
      .executeTakeFirst()) !== undefined;
  if (clash) throw new NameExistsError(`A role named "${name}" already exists`);
}

/** POST /api/admin/roles/validate: a 409 when the name is taken (built-in roles included). */
export async function validateRoleName(db: Db, name: string): Promise<void> {
  await assertNameFree(db, name.trim());
}

async function writePermissions(
  uow: UnitOfWork,
  roleId: number,
  permissions: Array<{ permission: Permission; environment: string | null }>,
) {
  await uow.tx.deleteFrom('role_permissions').where('role_id', '=', roleId).execute();
  if (permissions.length === 0) return;
  await uow.tx
    .insertInto('role_permissions')
    .values(permissions.map(({ permission, environment }) => ({ role_id: roleId, permission, environment })))
    .execute();
}

export async function createRole(uow: UnitOfWork, input: RoleInput): Promise<RoleView> {
  const name = input.name.trim();
  await assertNameFree(uow.tx, name);
  const count = await uow.tx
    .selectFrom('roles')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  if (Number(count.n) >= MAX_CUSTOM_ROLES) throw new BadDataError(`At most ${MAX_CUSTOM_ROLES} custom roles`);
  const permissions = await checkedPermissions(uow.tx, input);
  const row = await uow.tx
    .insertInto('roles')
    .values({
      name,
      description: input.description ?? null,
      type: input.type,
      created_by: actorIdentity(uow.actor).createdBy,
      created_at: uow.now,
      updated_at: null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await writePermissions(uow, row.id, permissions);
  const role = await getRole(uow.tx, row.id);
  await recordEvent(uow, { type: 'role-created', data: role });
  return role;
}

async function lockCustomRole(uow: UnitOfWork, id: number) {
  if (BUILT_IN_ROLES.some((role) => role.id === id)) {
    throw new BadDataError(`Role ${id} is built in; it cannot be changed or deleted. Make a custom role instead`);
  }
  const row = await uow.tx.selectFrom('roles').select(['id', 'type']).where('id', '=', id).forUpdate().executeTakeFirst();
  if (!row) throw new NotFoundError(`Could not find role ${id}`);
  return row;
}

/** Changes a custom role's name, description and permissions; its type stays (it may be held where only that type fits). */
export async function updateRole(uow: UnitOfWork, id: number, input: RoleInput): Promise<RoleView> {
  const row = await lockCustomRole(uow, id);
  if (row.type !== input.type) {
    throw new BadDataError(`Role ${id} is a ${row.type === 'root-custom' ? 'root' : 'project'} role; its type cannot change`, [
      { path: '/body/type', message: `must stay ${row.type}` },
    ]);
  }
  const name = input.name.trim();
  await assertNameFree(uow.tx, name, id);
  const permissions = await checkedPermissions(uow.tx, input);
  const before = await getRole(uow.tx, id);
  await uow.tx
    .updateTable('roles')
    .set({ name, description: input.description ?? null, updated_at: uow.now })
    .where('id', '=', id)
    .execute();
  await writePermissions(uow, id, permissions);
  const role = await getRole(uow.tx, id);
  await recordEvent(uow, { type: 'role-updated', data: role, preData: before });
  return role;
}

/** Who holds a custom role: users, service accounts and groups as their root role, and grants in projects. */
async function holdersOf(tx: Tx, id: number): Promise<string[]> {
  const [users, groups, grants] = await Promise.all([
    tx
      .selectFrom('users')
      .select(['username', 'email', 'is_service'])
      .where('custom_root_role_id', '=', id)
      .orderBy('id')
      .limit(11)
      .execute(),
    tx.selectFrom('groups').select('name').where('custom_root_role_id', '=', id).orderBy('id').limit(11).execute(),
    tx
      .selectFrom('project_access as pa')
      .leftJoin('users as u', 'u.id', 'pa.user_id')
      .leftJoin('groups as g', 'g.id', 'pa.group_id')
      .select(['pa.project_id', 'u.username', 'u.email', 'g.name as group_name'])
      .where('pa.custom_role_id', '=', id)
      .orderBy('pa.id')
      .limit(11)
      .execute(),
  ]);
  return [
    ...users.map((user) => `${user.is_service ? 'service account' : 'user'} ${user.username ?? user.email}`),
    ...groups.map((group) => `group ${group.name}`),
    ...grants.map(
      (grant) =>
        `${grant.group_name === null ? `user ${grant.username ?? grant.email}` : `group ${grant.group_name}`} in project ${grant.project_id}`,
    ),
  ];
}

/** Deletes a custom role no one holds; one that is held is refused with a 409 naming who holds it. */
export async function deleteRole(uow: UnitOfWork, id: number): Promise<void> {
  await lockCustomRole(uow, id);
  const holders = await holdersOf(uow.tx, id);
  if (holders.length > 0) {
    const named = holders.slice(0, 10).join(', ') + (holders.length > 10 ? ' and more' : '');
    throw new ConflictError(`The role is in use and cannot be deleted: ${named}. Give them another role first`);
  }
  const before = await getRole(uow.tx, id);
  await uow.tx.deleteFrom('roles').where('id', '=', id).execute();
  await recordEvent(uow, { type: 'role-deleted', preData: before });
}

/** A root role as stored: a built-in one, or a custom one held over the built-in Viewer. */
export interface RootRoleRef {
  role: RootRoleName;
  customRoleId: number | null;
}

/** `rootRole` as the API takes it (a built-in or custom root role, by id or name), checked. */
export async function resolveRootRoleRef(db: Db, value: string | number, path: string): Promise<RootRoleRef> {
  const text = String(value).trim().toLowerCase();
  const builtIn = ROOT_ROLES.find((role) => role.toLowerCase() === text || String(ROOT_ROLE_IDS[role]) === text);
  if (builtIn) return { role: builtIn, customRoleId: null };
  const custom = (await customRoles(db, 'root-custom')).find((role) => role.name.toLowerCase() === text || String(role.id) === text);
  if (custom) return { role: 'Viewer', customRoleId: custom.id };
  const choices = (await rootRoleChoices(db)).map((role) => `${role.name} (${role.id})`).join(', ');
  throw new BadDataError(`Unknown root role ${JSON.stringify(value)}`, [
    { path, message: `rootRole must be one of ${choices} (got ${JSON.stringify(value)})` },
  ]);
}

/** A project role as stored: a built-in one or a custom one. */
export type ProjectRoleRef = { role: ProjectRoleName; customRoleId: null } | { role: null; customRoleId: number };

/** The role id a project grant shows. */
export function projectRoleId(ref: { role: ProjectRoleName | null; customRoleId: number | null }): number {
  return ref.role === null ? ref.customRoleId! : PROJECT_ROLE_IDS[ref.role];
}

/** Project role ids as the API takes them (built-in or custom project roles), each checked; repeats dropped. */
export async function resolveProjectRoles(db: Db, ids: number[], path: string): Promise<ProjectRoleRef[]> {
  const custom = new Set((await customRoles(db, 'custom')).map((role) => role.id));
  const byId = new Map(PROJECT_ROLES.map((role) => [PROJECT_ROLE_IDS[role], role]));
  const details = ids.flatMap((id, index) =>
    byId.has(id) || custom.has(id)
      ? []
      : [{ path: `${path}/${index}`, message: `${id} is not a project role; GET /api/admin/roles lists them` }],
  );
  if (details.length > 0) throw new BadDataError('Unknown project role', details);
  return [...new Set(ids)].map((id) => (byId.has(id) ? { role: byId.get(id)!, customRoleId: null } : { role: null, customRoleId: id }));
}
