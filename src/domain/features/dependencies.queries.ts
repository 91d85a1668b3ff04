import { findFeature } from './feature-lookup.js';
import type { Db } from '../../db/database.js';

/** A child's dependency on a parent flag, as Unleash shows it (`dependentFeatureSchema`). */
export interface Dependency {
  feature: string;
  enabled: boolean;
  variants: string[];
}

/** The flags `child` depends on, by parent name. */
export async function parentsOf(tx: Db, child: string): Promise<Dependency[]> {
  const rows = await tx
    .selectFrom('feature_dependencies')
    .select(['parent', 'enabled', 'variants'])
    .where('child', '=', child)
    .orderBy('parent')
    .execute();
  return rows.map((row) => ({ feature: row.parent, enabled: row.enabled, variants: row.variants as string[] }));
}

/** The names of the flags that depend on `parent`. */
export async function childrenOf(tx: Db, parent: string): Promise<string[]> {
  const rows = await tx.selectFrom('feature_dependencies').select('child').where('parent', '=', parent).orderBy('child').execute();
  return rows.map((row) => row.child);
}

/**
 * Flags `child` could depend on, by name: active flags of its project that are not children themselves. A flag
 * that others depend on cannot become a child, so it has none (Unleash lists options it would then refuse).
 */
export async function listPossibleParents(db: Db, project: string, child: string): Promise<string[]> {
  await findFeature(db, project, child);
  if ((await childrenOf(db, child)).length > 0) return [];
  const rows = await db
    .selectFrom('features as f')
    .select('f.name')
    .where('f.project', '=', project)
    .where('f.name', '<>', child)
    .where('f.archived_at', 'is', null)
    .where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom('feature_dependencies as d').select('d.child').whereRef('d.child', '=', 'f.name'))),
    )
    .orderBy('f.name')
    .execute();
  return rows.map((row) => row.name);
}

/** Variant names a child may require of `parent`: those of its strategies and of its environments, sorted. */
export async function listParentVariants(db: Db, project: string, parent: string): Promise<string[]> {
  await findFeature(db, project, parent);
  const [strategies, environments] = await Promise.all([
    db.selectFrom('feature_strategies').select('variants').where('feature_name', '=', parent).execute(),
    db.selectFrom('feature_environments').select('variants').where('feature_name', '=', parent).execute(),
  ]);
  const names = [...strategies, ...environments].flatMap((row) => (row.variants as Array<{ name: string }>).map((v) => v.name));
  return [...new Set(names)].sort();
}
