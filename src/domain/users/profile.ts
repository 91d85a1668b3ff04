import type { Db } from '../../db/database.js';
import type { Actor } from '../../db/unit-of-work.js';
import { BadDataError } from '../../shared/errors.js';
import { listRoles, type RoleSummary } from '../roles/roles.js';
import { getUser } from './users.js';

/** A role a person holds, as Unleash's `roleSchema` shows it: a project role names its project. */
export interface HeldRole {
  id: number;
  type: string;
  name: string;
  description: string | null;
  project: string | null;
}

/** What Unleash's `GET /api/admin/user/profile` shows of the person signed in. */
export interface Profile {
  rootRole: HeldRole;
  /** The projects where they hold a role, their own or a group's. */
  projects: string[];
  groups: Array<{ id: number; name: string; description: string | null }>;
  /** Vexil sends no email reports. */
  subscriptions: string[];
  /** Deprecated in Unleash, always empty. */
  features: never[];
  canChangePassword: boolean;
}

const heldRole = (role: RoleSummary, project: string | null): HeldRole => ({
  id: role.id,
  type: role.type,
  name: role.name,
  description: role.description,
  project,
});

/** The signed-in person's id; a token (which is no person) asking for `what` is a 400. */
export function signedInPersonOf(actor: Actor, what = 'a profile and roles'): number {
  if (actor.kind !== 'user') throw new BadDataError(`Only a person signed in has ${what}; a token has none`);
  return actor.userId;
}

/** The groups the person is in. */
async function groupsOf(db: Db, userId: number) {
  return db
    .selectFrom('group_users as gu')
    .innerJoin('groups as g', 'g.id', 'gu.group_id')
    .select(['g.id', 'g.name', 'g.description'])
    .where('gu.user_id', '=', userId)
    .orderBy('g.name')
    .execute();
}

/** The project roles the person holds, their own and through their groups, in one project or all. */
async function projectGrantsOf(db: Db, userId: number, groupIds: number[], project?: string) {
  return db
    .selectFrom('project_access')
    .select(['project_id', 'role', 'custom_role_id'])
    .where((eb) => eb.or([eb('user_id', '=', userId), ...(groupIds.length > 0 ? [eb('group_id', 'in', groupIds)] : [])]))
    .$if(project !== undefined, (query) => query.where('project_id', '=', project!))
    .orderBy('project_id')
    .execute();
}

export async function getProfile(db: Db, actor: Actor, passwordSignIn: boolean): Promise<Profile> {
  const userId = signedInPersonOf(actor);
  const [user, roles, groups, passwordRow] = await Promise.all([
    getUser(db, userId),
    listRoles(db),
    groupsOf(db, userId),
    db.selectFrom('users').select('password_hash').where('id', '=', userId).executeTakeFirstOrThrow(),
  ]);
  const grants = await projectGrantsOf(
    db,
    userId,
    groups.map((group) => group.id),
  );
  const rootRole = roles.find((role) => role.id === user.rootRole)!;
  return {
    rootRole: heldRole(rootRole, null),
    projects: [...new Set(grants.map((grant) => grant.project_id))],
    groups,
    subscriptions: [],
    features: [],
    canChangePassword: passwordSignIn && passwordRow.password_hash !== null,
  };
}

/**
 * The roles the person holds, their own and through their groups: the root role and every project role, or only the
 * project roles of `project` when one is named (Unleash's `GET /api/admin/user/roles`).
 */
export async function getHeldRoles(db: Db, actor: Actor, project?: string): Promise<HeldRole[]> {
  const userId = signedInPersonOf(actor);
  const [user, roles, groups] = await Promise.all([getUser(db, userId), listRoles(db), groupsOf(db, userId)]);
  const grants = await projectGrantsOf(
    db,
    userId,
    groups.map((group) => group.id),
    project,
  );
  const byName = new Map(roles.filter((role) => role.type === 'project').map((role) => [role.name, role]));
  const byId = new Map(roles.map((role) => [role.id, role]));
  const held = new Map<string, HeldRole>();
  for (const grant of grants) {
    const role = grant.custom_role_id !== null ? byId.get(grant.custom_role_id) : byName.get(grant.role!);
    if (role) held.set(`${grant.project_id}\u0000${role.id}`, heldRole(role, grant.project_id));
  }
  const rootRole = byId.get(user.rootRole)!;
  return [...(project === undefined ? [heldRole(rootRole, null)] : []), ...held.values()];
}
