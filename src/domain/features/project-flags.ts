import type { Db } from '../../db/database.js';
import { assertProject } from './feature-lookup.js';

/** What Unleash's project pages ask about a project's flags as a whole: who made them, and how they depend on each other. */

/** How a person is named where Unleash shows one: their name, else their username, else their email. */
export const personName = (row: { id: number; name: string | null; username: string | null; email: string | null }) =>
  row.name ?? row.username ?? row.email ?? `user ${row.id}`;

/** The people who made the project's flags, by name (Unleash's `GET …/flag-creators`). */
export async function listFlagCreators(db: Db, project: string): Promise<Array<{ id: number; name: string }>> {
  await assertProject(db, project);
  const rows = await db
    .selectFrom('features as f')
    .innerJoin('users as u', 'u.id', 'f.created_by_user_id')
    .select(['u.id', 'u.name', 'u.username', 'u.email'])
    .distinct()
    .where('f.project', '=', project)
    .where('f.archived_at', 'is', null)
    .orderBy('u.id')
    .execute();
  return rows.map((row) => ({ id: row.id, name: personName(row) }));
}

/**
 * The people who made flags not archived in any project, a page at a time (Unleash's `GET /api/admin/flag-creators`,
 * which its flag list's "created by" filter reads): `query` matches a name anywhere, a username or email at its start.
 */
export async function searchFlagCreators(
  db: Db,
  parameters: { query?: string; limit: number; offset: number },
): Promise<{ total: number; flagCreators: Array<{ id: number; name: string }> }> {
  const text = parameters.query?.trim();
  const escaped = text?.replace(/[\\%_]/g, (character) => `\\${character}`);
  let matching = db
    .selectFrom('users as u')
    .where(({ exists, selectFrom }) =>
      exists(selectFrom('features as f').select('f.name').whereRef('f.created_by_user_id', '=', 'u.id').where('f.archived_at', 'is', null)),
    );
  if (escaped) {
    matching = matching.where((eb) =>
      eb.or([eb('u.name', 'ilike', `%${escaped}%`), eb('u.username', 'ilike', `${escaped}%`), eb('u.email', 'ilike', `${escaped}%`)]),
    );
  }
  const [rows, total] = await Promise.all([
    matching
      .select(['u.id', 'u.name', 'u.username', 'u.email'])
      .orderBy('u.id')
      .limit(parameters.limit)
      .offset(parameters.offset)
      .execute(),
    matching.select((eb) => eb.fn.countAll<string>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return {
    total: Number(total.total),
    flagCreators: rows.map((row) => ({ id: row.id, name: personName(row) })),
  };
}

/** Whether any flag of the project depends on another (Unleash's `GET …/dependencies`). */
export async function projectHasDependencies(db: Db, project: string): Promise<boolean> {
  await assertProject(db, project);
  const row = await db
    .selectFrom('feature_dependencies as d')
    .innerJoin('features as f', 'f.name', 'd.child')
    .select('d.child')
    .where('f.project', '=', project)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * What archiving the flags would do to dependencies (Unleash's `POST …/archive/validate`): the parents among them whose
 * children stay (those children would lose their parent), and whether any of them has a dependency that would go.
 */
export async function validateArchive(
  db: Db,
  project: string,
  features: string[],
): Promise<{ parentsWithChildFeatures: string[]; hasDeletedDependencies: boolean }> {
  await assertProject(db, project);
  const names = [...new Set(features)];
  if (names.length === 0) return { parentsWithChildFeatures: [], hasDeletedDependencies: false };
  const dependencies = await db
    .selectFrom('feature_dependencies as d')
    .innerJoin('features as child', 'child.name', 'd.child')
    .select(['d.parent', 'd.child'])
    .where((eb) => eb.or([eb('d.parent', 'in', names), eb('d.child', 'in', names)]))
    .where('child.archived_at', 'is', null)
    .execute();
  const archived = new Set(names);
  const orphaning = dependencies.filter((row) => archived.has(row.parent) && !archived.has(row.child)).map((row) => row.parent);
  return { parentsWithChildFeatures: [...new Set(orphaning)].sort(), hasDeletedDependencies: dependencies.length > 0 };
}
