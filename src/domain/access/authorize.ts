import type { Db } from '../../db/database.js';
import type { Actor } from '../../db/unit-of-work.js';
import { actorMay, assertActorMay, type Permission } from './permissions.js';
import { assertProjectVisible, isRestricted } from './project-visibility.js';

/** What a caller asks to do: a permission, in a project and environment when it acts in one. */
export interface AccessRequest {
  permission: Permission;
  /** The project it acts in (from the path, or named in the body). */
  project?: string | undefined;
  environment?: string | undefined;
  /** Every other project its input names (the project a flag moves to): each must be visible and grant `permission`. */
  alsoIn?: { permission: Permission; projects: readonly string[] } | undefined;
}

/**
 * The one decision every door takes (REST routes through their declarations, MCP tools, SCIM and signals through the
 * routes they are, workers through the actor they act as): a project the caller may not see answers as if it did not
 * exist (404), then a missing permission is a 403. Maintenance mode is decided where writes happen, by the unit of
 * work.
 */
export async function authorize(db: Db, actor: Actor, request: AccessRequest): Promise<void> {
  const projects = [request.project, ...(request.alsoIn?.projects ?? [])].filter((project) => project !== undefined);
  for (const project of projects) await assertProjectVisible(db, actor, project);
  assertActorMay(actor, request.permission, request.project, request.environment);
  for (const project of request.alsoIn?.projects ?? []) assertActorMay(actor, request.alsoIn!.permission, project);
}

/** Whether the decision needs to know the project: the root roles alone do not settle it, or visibility is at stake. */
export function needsProject(actor: Actor, permission: Permission): boolean {
  return isRestricted(actor) || !actorMay(actor, permission);
}
