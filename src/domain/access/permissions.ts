import type { ProjectRoleName, RootRoleName } from '../../db/schema.js';
import { PermissionError } from '../../shared/errors.js';
import type { Actor, ProjectAccess } from '../../db/unit-of-work.js';
import { actorRootRole } from './actor.js';

/** What changing flags takes: their settings, strategies, variants and dependencies. */
const FLAG_PERMISSIONS = [
  'CREATE_FEATURE',
  'UPDATE_FEATURE',
  'DELETE_FEATURE',
  'UPDATE_FEATURE_ENVIRONMENT',
  'CREATE_FEATURE_STRATEGY',
  'UPDATE_FEATURE_STRATEGY',
  'DELETE_FEATURE_STRATEGY',
  'UPDATE_FEATURE_ENVIRONMENT_VARIANTS',
  'UPDATE_FEATURE_DEPENDENCY',
] as const;

/**
 * Instance set-up only Admins change: users, tokens, environments, deleting projects; and changing a
 * protected environment directly, around its change requests.
 */
const ADMIN_ONLY_PERMISSIONS = [
  'ADMIN',
  'SKIP_CHANGE_REQUEST',
  // Switching review off is itself a change four eyes must not depend on one Editor for.
  'UPDATE_CHANGE_REQUEST_CONFIG',
  'DELETE_PROJECT',
  'CREATE_ENVIRONMENT',
  'UPDATE_ENVIRONMENT',
  'DELETE_ENVIRONMENT',
  'READ_API_TOKEN',
  'CREATE_API_TOKEN',
  'DELETE_API_TOKEN',
  // Integrations send the instance's events to the outside world with stored credentials.
  'CREATE_ADDON',
  'UPDATE_ADDON',
  'DELETE_ADDON',
  // Who may change a project is decided by Admins, or by the project's Owners for their project.
  'PROJECT_USER_ACCESS_WRITE',
  'PROJECT_GROUP_ACCESS_WRITE',
] as const;

/**
 * Permissions a route can require: what Editors hold, then what only Admins do. Names follow Unleash's so a
 * PermissionError reads the same there and here. `READ` is any authenticated caller.
 */
export const PERMISSIONS = [
  'READ',
  'CREATE_PROJECT',
  'UPDATE_PROJECT',
  ...FLAG_PERMISSIONS,
  'CREATE_STRATEGY',
  'UPDATE_STRATEGY',
  'DELETE_STRATEGY',
  'CREATE_TAG_TYPE',
  'UPDATE_TAG_TYPE',
  'DELETE_TAG_TYPE',
  'CREATE_SEGMENT',
  'UPDATE_SEGMENT',
  'DELETE_SEGMENT',
  'CREATE_CONTEXT_FIELD',
  'UPDATE_CONTEXT_FIELD',
  'DELETE_CONTEXT_FIELD',
  'APPROVE_CHANGE_REQUEST',
  'APPLY_CHANGE_REQUEST',
  'CREATE_RELEASE_TEMPLATE',
  'UPDATE_RELEASE_TEMPLATE',
  'DELETE_RELEASE_TEMPLATE',
  // What experiments measure in an environment: the events SDKs may track there.
  'CREATE_EXPERIMENT_METRIC',
  'UPDATE_EXPERIMENT_METRIC',
  'DELETE_EXPERIMENT_METRIC',
  // What a repository's CI sends: where its code reads each flag (`vexil refs push`).
  'UPDATE_CODE_REFERENCES',
  // SDK tokens of one project, its members' own to hand out.
  'READ_PROJECT_API_TOKEN',
  'CREATE_PROJECT_API_TOKEN',
  'DELETE_PROJECT_API_TOKEN',
  ...ADMIN_ONLY_PERMISSIONS,
] as const;

const ADMIN_ONLY = new Set<Permission>(ADMIN_ONLY_PERMISSIONS);

export type Permission = (typeof PERMISSIONS)[number];

/** Admin holds every permission; Viewer only reads. Editors change projects and flags, not the instance's set-up. */
const ROLE_PERMISSIONS: Record<RootRoleName, ReadonlySet<Permission>> = {
  Admin: new Set(PERMISSIONS),
  Editor: new Set(PERMISSIONS.filter((permission) => !ADMIN_ONLY.has(permission))),
  Viewer: new Set<Permission>(['READ']),
};

/** Root role ids as Unleash numbers them; `rootRole` may be given as either. */
export const ROOT_ROLE_IDS: Record<RootRoleName, number> = { Admin: 1, Editor: 2, Viewer: 3 };
export const ROOT_ROLES = Object.keys(ROOT_ROLE_IDS) as RootRoleName[];

const ROOT_ROLE_DESCRIPTIONS: Record<RootRoleName, string> = {
  Admin: 'Users with the root role Admin can do anything',
  Editor: 'Users with the root role Editor can create and change projects and flags',
  Viewer: 'Users with the root role Viewer can only read',
};

/** The root roles as the API lists them (Unleash's `roleSchema`). */
export const ROOT_ROLE_VIEWS = ROOT_ROLES.map((role) => ({
  id: ROOT_ROLE_IDS[role],
  name: role,
  type: 'root',
  description: ROOT_ROLE_DESCRIPTIONS[role],
}));

const ROOT_ROLE_RANK: Record<RootRoleName, number> = { Viewer: 0, Editor: 1, Admin: 2 };

/** The role that grants the most, of a user's own and their groups'. */
export function strongestRootRole(roles: Iterable<RootRoleName>): RootRoleName {
  let strongest: RootRoleName = 'Viewer';
  for (const role of roles) if (ROOT_ROLE_RANK[role] > ROOT_ROLE_RANK[strongest]) strongest = role;
  return strongest;
}

/**
 * Permissions a project role may hold in one environment (or in all): changing a flag there and reviewing its
 * change requests. Checked with the environment the request acts in.
 */
export const ENVIRONMENT_PERMISSIONS = [
  'CREATE_FEATURE_STRATEGY',
  'UPDATE_FEATURE_STRATEGY',
  'DELETE_FEATURE_STRATEGY',
  'UPDATE_FEATURE_ENVIRONMENT',
  'UPDATE_FEATURE_ENVIRONMENT_VARIANTS',
  'APPROVE_CHANGE_REQUEST',
  'APPLY_CHANGE_REQUEST',
] as const satisfies readonly Permission[];

/** Permissions a project role may hold in its whole project. */
export const PROJECT_PERMISSIONS = [
  'CREATE_FEATURE',
  'UPDATE_FEATURE',
  'DELETE_FEATURE',
  'UPDATE_FEATURE_DEPENDENCY',
  'UPDATE_PROJECT',
  'DELETE_PROJECT',
  'PROJECT_USER_ACCESS_WRITE',
  'PROJECT_GROUP_ACCESS_WRITE',
  'READ_PROJECT_API_TOKEN',
  'CREATE_PROJECT_API_TOKEN',
  'DELETE_PROJECT_API_TOKEN',
] as const satisfies readonly Permission[];

/** Permissions a custom root role may hold: any but `READ`, which every caller has. */
export const ROOT_PERMISSIONS = PERMISSIONS.filter((permission) => permission !== 'READ');

const ENVIRONMENT_PERMISSION_SET = new Set<string>(ENVIRONMENT_PERMISSIONS);

export function isEnvironmentPermission(permission: string): boolean {
  return ENVIRONMENT_PERMISSION_SET.has(permission);
}

/** What changing one project's flags takes: a Member holds it in that project, in every environment. */
const PROJECT_MEMBER_PERMISSIONS: Permission[] = [
  ...FLAG_PERMISSIONS,
  'APPROVE_CHANGE_REQUEST',
  'APPLY_CHANGE_REQUEST',
  'READ_PROJECT_API_TOKEN',
  'CREATE_PROJECT_API_TOKEN',
  'DELETE_PROJECT_API_TOKEN',
];

/**
 * Project roles grant permissions in their project only. An Owner also runs the project (its settings, its
 * environments, who has access, deleting it); a Viewer is listed among the project's people and changes nothing.
 */
const PROJECT_ROLE_PERMISSIONS: Record<ProjectRoleName, ReadonlySet<Permission>> = {
  Owner: new Set<Permission>([
    ...PROJECT_MEMBER_PERMISSIONS,
    'UPDATE_PROJECT',
    'DELETE_PROJECT',
    'PROJECT_USER_ACCESS_WRITE',
    'PROJECT_GROUP_ACCESS_WRITE',
  ]),
  Member: new Set(PROJECT_MEMBER_PERMISSIONS),
  Viewer: new Set<Permission>(),
};

/** Project role ids, following Unleash's built-in Owner (4) and Member (5). */
export const PROJECT_ROLE_IDS: Record<ProjectRoleName, number> = { Owner: 4, Member: 5, Viewer: 6 };
export const PROJECT_ROLES = Object.keys(PROJECT_ROLE_IDS) as ProjectRoleName[];

const PROJECT_ROLE_DESCRIPTIONS: Record<ProjectRoleName, string> = {
  Owner: "Changes the project's flags, settings and environments, decides who has access, and may delete it",
  Member: "Creates and changes the project's flags, and approves and applies its change requests",
  Viewer: 'Sees the project and changes nothing in it',
};

/** The built-in project roles as the API lists them. */
export const PROJECT_ROLE_VIEWS = PROJECT_ROLES.map((role) => ({
  id: PROJECT_ROLE_IDS[role],
  name: role,
  type: 'project',
  description: PROJECT_ROLE_DESCRIPTIONS[role],
}));

/** The permissions a built-in root role holds (`READ` aside), as a role's permission list shows them. */
export function rootRolePermissions(role: RootRoleName): Permission[] {
  return [...ROLE_PERMISSIONS[role]].filter((permission) => permission !== 'READ');
}

/** The permissions a built-in project role holds, each in every environment. */
export function projectRolePermissions(role: ProjectRoleName): Permission[] {
  return [...PROJECT_ROLE_PERMISSIONS[role]];
}

export function roleHasPermission(role: RootRoleName, permission: Permission): boolean {
  return ROLE_PERMISSIONS[role].has(permission);
}

/** What non-user actors (admin tokens, the system, an identity provider) may do: everything. */
const EVERYTHING: ReadonlySet<string> = ROLE_PERMISSIONS.Admin;

function rootPermissionsOf(actor: Actor): ReadonlySet<string> {
  return actor.kind === 'user' ? actor.rootPermissions : EVERYTHING;
}

/**
 * What a user's roles add up to: the built-in root roles' permissions with the custom root roles' (`customRoot`),
 * and per project the permissions of each role held there, built-in or custom, environment permissions of custom
 * roles limited to their environment.
 */
export function accessOf(
  rootRoles: RootRoleName[],
  customRoot: Array<{ permission: string }>,
  projectGrants: Array<{
    project: string;
    role: ProjectRoleName | null;
    grants: Array<{ permission: string; environment: string | null }>;
  }>,
): { rootPermissions: ReadonlySet<string>; projects: ReadonlyMap<string, ProjectAccess> } {
  const rootPermissions = new Set<string>();
  for (const role of rootRoles) for (const permission of ROLE_PERMISSIONS[role]) rootPermissions.add(permission);
  for (const { permission } of customRoot) rootPermissions.add(permission);
  const projects = new Map<string, { permissions: Set<string>; byEnvironment: Map<string, Set<string>> }>();
  for (const grant of projectGrants) {
    const access = projects.get(grant.project) ?? { permissions: new Set<string>(), byEnvironment: new Map<string, Set<string>>() };
    projects.set(grant.project, access);
    if (grant.role !== null) for (const permission of PROJECT_ROLE_PERMISSIONS[grant.role]) access.permissions.add(permission);
    for (const { permission, environment } of grant.grants) {
      if (environment === null) access.permissions.add(permission);
      else {
        const inEnvironment = access.byEnvironment.get(environment) ?? new Set<string>();
        inEnvironment.add(permission);
        access.byEnvironment.set(environment, inEnvironment);
      }
    }
  }
  return { rootPermissions, projects };
}

/**
 * Every permission the actor holds: those of its root roles (no project) and those its project roles add, with the
 * environment an environment-limited one holds in.
 */
export function permissionsOfActor(actor: Actor): Array<{ permission: string; project?: string; environment?: string }> {
  const root = rootPermissionsOf(actor);
  const entries: Array<{ permission: string; project?: string; environment?: string }> = [...root].map((permission) => ({ permission }));
  if (actor.kind !== 'user') return entries;
  for (const [project, access] of actor.projects) {
    for (const permission of access.permissions) if (!root.has(permission)) entries.push({ permission, project });
    for (const [environment, permissions] of access.byEnvironment) {
      for (const permission of permissions) {
        if (!root.has(permission) && !access.permissions.has(permission)) entries.push({ permission, project, environment });
      }
    }
  }
  return entries;
}

/**
 * Whether the actor holds the permission: through its root roles, or, for a project, a role in that project (an
 * environment permission limited to one environment counts only when the request acts in that environment).
 */
export function actorMay(actor: Actor, permission: Permission, project?: string, environment?: string): boolean {
  if (rootPermissionsOf(actor).has(permission)) return true;
  if (project === undefined || actor.kind !== 'user') return false;
  const access = actor.projects.get(project);
  if (!access) return false;
  if (access.permissions.has(permission)) return true;
  return environment !== undefined && (access.byEnvironment.get(environment)?.has(permission) ?? false);
}

/**
 * The 403 of a missing permission. Routes check their declared permission with it (in the project and environment
 * the request names, when the route says which); commands check with it the permissions that depend on what a
 * request carries (a change request's action, the state asked for, the project a flag moves to).
 */
export function assertActorMay(actor: Actor, permission: Permission, project?: string, environment?: string): void {
  if (actorMay(actor, permission, project, environment)) return;
  const role = actor.kind === 'user' ? actor.rootRoleName : actorRootRole(actor);
  const where =
    project === undefined ? '' : ` nor a role in project ${project} that has it${environment === undefined ? '' : ` in ${environment}`}`;
  throw new PermissionError(`You need the ${permission} permission to do this; your role ${role} does not have it${where}`, [permission]);
}
