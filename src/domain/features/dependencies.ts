import { isDeepStrictEqual } from 'node:util';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { BadDataError, ConflictError, NotFoundError } from '../../shared/errors.js';
import { guardDirectChange } from '../protected-environments/guard.js';
import { recordFeatureEvent } from './feature-events.js';
import { findFeature } from './feature-lookup.js';
import type { Db } from '../../db/database.js';

export interface DependencyInput {
  feature: string;
  enabled?: boolean;
  variants?: string[];
}

const quoted = (names: string[]) => names.map((name) => `"${name}"`).join(', ');

/**
 * Locks the child and the parent in one statement, in name order, so that requests touching the same flags
 * run one after the other (without deadlocking): two concurrent requests could otherwise each pass the
 * one-level check and together build a grandchild or a cycle.
 */
async function lockPair(uow: UnitOfWork, child: string, parent: string) {
  const rows = await uow.tx.selectFrom('features').selectAll().where('name', 'in', [child, parent]).orderBy('name').forUpdate().execute();
  return { childRow: rows.find((row) => row.name === child), parentRow: rows.find((row) => row.name === parent) };
}

/**
 * Makes `child` depend on `input.feature`, or updates `enabled`/`variants` of an existing dependency. Rules as
 * Unleash's: the parent is an active flag of the same project, and dependencies are one level deep (a parent
 * has no parents, a child has no children), which also rules out cycles.
 */
export async function addDependency(uow: UnitOfWork, project: string, child: string, input: DependencyInput): Promise<void> {
  await guardDirectChange(uow, { kind: 'flag', project, featureName: child });
  const parent = input.feature;
  const { childRow, parentRow } = await lockPair(uow, child, parent);
  if (!childRow || childRow.project !== project) throw new NotFoundError(`Could not find flag "${child}" in project "${project}"`);
  if (childRow.archived_at) throw new BadDataError(`Flag "${child}" is archived; revive it first`);

  const enabled = input.enabled ?? true;
  const variants = input.variants ?? [];
  if (!enabled && variants.length > 0) {
    throw new BadDataError('Variants can only be required of a parent that must be enabled', [
      { path: '/body/variants', message: `variants must be empty when enabled is false (got ${JSON.stringify(variants)})` },
    ]);
  }
  const onParent = (message: string) => [{ path: '/body/feature', message }];
  if (parent === child) {
    throw new BadDataError('A flag cannot depend on itself', onParent(`feature must name another flag (got "${parent}")`));
  }
  if (!parentRow) {
    throw new NotFoundError(`Could not find flag "${parent}"`, onParent(`no flag is named "${parent}"`));
  }
  if (parentRow.project !== project) {
    throw new BadDataError(
      `Flag "${parent}" is in project "${parentRow.project}"; a flag can only depend on flags of its own project`,
      onParent(`"${parent}" is not in project "${project}"`),
    );
  }
  if (parentRow.archived_at) {
    throw new BadDataError(`Flag "${parent}" is archived; a flag can only depend on an active flag`, onParent(`"${parent}" is archived`));
  }

  const [childsChildren, parentsParents] = await Promise.all([childrenOf(uow.tx, child), parentsOf(uow.tx, parent)]);
  if (childsChildren.includes(parent)) {
    throw new ConflictError(
      `Flag "${parent}" already depends on "${child}"; depending on it in turn would make a cycle`,
      onParent(`"${parent}" is a child of "${child}"`),
    );
  }
  if (childsChildren.length > 0) {
    throw new ConflictError(
      `Flag "${child}" cannot depend on another flag because other flags depend on it (${quoted(childsChildren)}); dependencies are one level deep`,
      onParent(`"${child}" already has children`),
    );
  }
  if (parentsParents.length > 0) {
    throw new ConflictError(
      `Flag "${parent}" cannot be a parent because it depends on other flags itself (${quoted(parentsParents.map((d) => d.feature))}); dependencies are one level deep`,
      onParent(`"${parent}" is a child of another flag`),
    );
  }

  const before = (await parentsOf(uow.tx, child)).find((dependency) => dependency.feature === parent);
  const after: Dependency = { feature: parent, enabled, variants };
  if (before && isDeepStrictEqual(before, after)) return;
  await uow.tx
    .insertInto('feature_dependencies')
    .values({ parent, child, enabled, variants: JSON.stringify(variants) })
    .onConflict((oc) => oc.columns(['parent', 'child']).doUpdateSet({ enabled, variants: JSON.stringify(variants) }))
    .execute();
  await recordFeatureEvent(uow, { type: 'feature-dependency-added', featureName: child, project, data: after, preData: before });
}

/** Removes the child's dependency on `parent`; one that does not exist is a 404. */
export async function removeDependency(uow: UnitOfWork, project: string, child: string, parent: string): Promise<void> {
  await guardDirectChange(uow, { kind: 'flag', project, featureName: child });
  await findFeature(uow.tx, project, child, { lock: true, archived: false });
  const dependency = (await parentsOf(uow.tx, child)).find((d) => d.feature === parent);
  if (!dependency) throw new NotFoundError(`Flag "${child}" does not depend on "${parent}"`);
  await uow.tx.deleteFrom('feature_dependencies').where('child', '=', child).where('parent', '=', parent).execute();
  // `data.feature` names the parent as Unleash's event does; preData keeps what was removed.
  await recordFeatureEvent(uow, {
    type: 'feature-dependency-removed',
    featureName: child,
    project,
    data: { feature: parent },
    preData: dependency,
  });
}

/** Removes all of the child's dependencies; a child without any changes nothing and records nothing. */
export async function removeAllDependencies(uow: UnitOfWork, project: string, child: string): Promise<void> {
  await guardDirectChange(uow, { kind: 'flag', project, featureName: child });
  await findFeature(uow.tx, project, child, { lock: true, archived: false });
  const dependencies = await parentsOf(uow.tx, child);
  if (dependencies.length === 0) return;
  await uow.tx.deleteFrom('feature_dependencies').where('child', '=', child).execute();
  await recordFeatureEvent(uow, {
    type: 'feature-dependencies-removed',
    featureName: child,
    project,
    preData: { dependencies },
  });
}

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
