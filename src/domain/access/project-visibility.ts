import type { Db } from '../../db/database.js';
import type { Actor } from '../../db/unit-of-work.js';
import { NotFoundError } from '../../shared/errors.js';

/**
 * Private projects (mode `private`) are seen only by their members (a role in the project, their own or a group's)
 * and Admins, as in Unleash. Tokens acting for the instance (admin tokens, the system) see every project.
 */
type RestrictedActor = Extract<Actor, { kind: 'user' }>;
export function isRestricted(actor: Actor): actor is RestrictedActor {
  return actor.kind === 'user' && actor.rootRole !== 'Admin';
}

/** The private projects `actor` is no member of: what every list and read leaves out for them. */
export async function projectsHiddenFrom(db: Db, actor: Actor): Promise<ReadonlySet<string>> {
  if (!isRestricted(actor)) return new Set();
  const rows = await db.selectFrom('projects').select('id').where('mode', '=', 'private').execute();
  return new Set(rows.map((row) => row.id).filter((id) => !actor.projects.has(id)));
}

/**
 * Refuses a private project (and its flags) `actor` is no member of as if it did not exist, so its name, flags and events are not
 * confirmed to someone who may not see them.
 */
export async function assertProjectVisible(db: Db, actor: Actor, project: string): Promise<void> {
  if (!isRestricted(actor) || actor.projects.has(project)) return;
  const row = await db.selectFrom('projects').select('mode').where('id', '=', project).executeTakeFirst();
  if (row?.mode === 'private') throw new NotFoundError(`Could not find project "${project}"`);
}
