import type { RootRoleName } from '../../db/schema.js';
import { PermissionError } from '../../shared/errors.js';
import type { Actor } from '../../db/unit-of-work.js';
import { actorRootRole } from './actor.js';

/**
 * Permissions a route can require. Names follow Unleash's so a PermissionError reads the same there and here.
 * `READ` is any authenticated caller.
 */
export const PERMISSIONS = [
  'ADMIN',
  'READ',
  'CREATE_PROJECT',
  'UPDATE_PROJECT',
  'DELETE_PROJECT',
  'CREATE_ENVIRONMENT',
  'UPDATE_ENVIRONMENT',
  'DELETE_ENVIRONMENT',
  'READ_API_TOKEN',
  'CREATE_API_TOKEN',
  'DELETE_API_TOKEN',
  'CREATE_FEATURE',
  'UPDATE_FEATURE',
  'DELETE_FEATURE',
  'UPDATE_FEATURE_ENVIRONMENT',
  'CREATE_FEATURE_STRATEGY',
  'UPDATE_FEATURE_STRATEGY',
  'DELETE_FEATURE_STRATEGY',
  'UPDATE_FEATURE_ENVIRONMENT_VARIANTS',
  'UPDATE_FEATURE_DEPENDENCY',
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
  'CREATE_ADDON',
  'UPDATE_ADDON',
  'DELETE_ADDON',
  'APPROVE_CHANGE_REQUEST',
  'APPLY_CHANGE_REQUEST',
  'SKIP_CHANGE_REQUEST',
  'UPDATE_CHANGE_REQUEST_CONFIG',
] as const;

/**
 * Instance set-up only Admins change: users, tokens, environments, deleting projects; and changing a
 * protected environment directly, around its change requests.
 */
const ADMIN_ONLY = new Set<Permission>([
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
]);

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

export function roleHasPermission(role: RootRoleName, permission: Permission): boolean {
  return ROLE_PERMISSIONS[role].has(permission);
}

export function permissionsOfRole(role: RootRoleName): Permission[] {
  return [...ROLE_PERMISSIONS[role]];
}

/**
 * The 403 of a missing permission. Routes check their declared permission with it; commands check with it
 * the permissions that depend on what a request carries (a change request's action, the state asked for).
 */
export function assertActorMay(actor: Actor, permission: Permission): void {
  const role = actorRootRole(actor);
  if (!roleHasPermission(role, permission)) {
    throw new PermissionError(`You need the ${permission} permission to do this; your role ${role} does not have it`, [permission]);
  }
}
