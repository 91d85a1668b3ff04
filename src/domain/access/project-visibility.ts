import { type Expression, type SqlBool, sql } from 'kysely';
import type { Db } from '../../db/database.js';
import type { Actor } from '../../db/unit-of-work.js';
import { NotFoundError } from '../../shared/errors.js';

/**
 * Private projects (mode `private`) are seen only by their members (a role in the project, their own or a group's)
 * and Admins, as in Unleash. Tokens acting for the instance (admin tokens, the system) see every project.
 */
type RestrictedActor = Extract<Actor, { kind: 'user' }>;
export function isRestricted(actor: Actor): actor is RestrictedActor {
  return actor.kind === 'user' && !actor.rootPermissions.has('ADMIN');
}

/** The private projects `actor` is no member of: what every list and read leaves out for them. */
export async function projectsHiddenFrom(db: Db, actor: Actor): Promise<ReadonlySet<string>> {
  if (!isRestricted(actor)) return new Set();
  const rows = await db.selectFrom('projects').select('id').where('mode', '=', 'private').execute();
  return new Set(rows.map((row) => row.id).filter((id) => !actor.projects.has(id)));
}

/**
 * A condition for a read's `where`: the row's project (`column`, which may be null for what belongs to no project) is
 * one `actor` may see. Every read that returns or names flags, strategies, change requests, fields or usage of
 * projects takes it, so a private project is left out where the data is read rather than route by route.
 */
export function inProjectVisibleTo(actor: Actor, column: string): Expression<SqlBool> {
  if (!isRestricted(actor)) return sql<SqlBool>`true`;
  const memberOf = [...actor.projects.keys()];
  const hidden = sql`select p.id from projects p where p.mode = 'private'${
    memberOf.length > 0 ? sql` and p.id not in (${sql.join(memberOf)})` : sql``
  }`;
  return sql<SqlBool>`(${sql.ref(column)} is null or ${sql.ref(column)} not in (${hidden}))`;
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
