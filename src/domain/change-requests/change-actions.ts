import type { UnitOfWork } from '../../db/unit-of-work.js';
import { BadDataError, NotFoundError } from '../../shared/errors.js';
import type { Permission } from '../access/permissions.js';
import { validateConstraints } from '../features/constraints.js';
import { parentsOf, addDependency, removeAllDependencies, removeDependency, type DependencyInput } from '../features/dependencies.js';
import { getEnvironmentVariants, setEnvironmentVariants, setFeatureEnvironmentEnabled } from '../features/feature-environments.js';
import { findFeature } from '../features/feature-lookup.js';
import { loadStrategies, type VariantInput } from '../features/feature-views.js';
import {
  addStrategy,
  deleteStrategy,
  getStrategy,
  resolveStrategy,
  setStrategySortOrder,
  updateStrategy,
  type StrategyInput,
  type StrategyTarget,
} from '../features/strategies.js';
import { distributeWeights } from '../features/variants.js';
import { addPlan, archiveFlags, getPlan, removePlan, startMilestone } from '../release-plans/plans.js';
import { usableTemplate } from '../release-plans/templates.js';
import { deleteSegment, updateSegment, type UpsertSegmentInput, findSegment } from '../segments/segments.js';
import type { Db } from '../../db/database.js';

/** The actions of Unleash Enterprise's change requests; each stands for one direct route and its command. */
export const FEATURE_ACTIONS = [
  'updateEnabled',
  'addStrategy',
  'updateStrategy',
  'deleteStrategy',
  'reorderStrategy',
  'patchVariant',
  'archiveFeature',
  'addDependency',
  'deleteDependency',
  'addReleasePlan',
  'startMilestone',
  'deleteReleasePlan',
] as const;
export const SEGMENT_ACTIONS = ['updateSegment', 'deleteSegment'] as const;
export const CHANGE_ACTIONS = [...FEATURE_ACTIONS, ...SEGMENT_ACTIONS] as const;
export type ChangeAction = (typeof CHANGE_ACTIONS)[number];

export type FeatureChange =
  | { action: 'updateEnabled'; feature: string; payload: { enabled: boolean } }
  | { action: 'addStrategy'; feature: string; payload: StrategyInput }
  | { action: 'updateStrategy'; feature: string; payload: StrategyInput & { id: string } }
  | { action: 'deleteStrategy'; feature: string; payload: { id: string } }
  | { action: 'reorderStrategy'; feature: string; payload: Array<{ id: string; sortOrder: number }> }
  | { action: 'patchVariant'; feature: string; payload: { variants: VariantInput[] } }
  | { action: 'archiveFeature'; feature: string; payload?: Record<string, never> }
  | { action: 'addDependency'; feature: string; payload: DependencyInput }
  | { action: 'deleteDependency'; feature: string; payload?: { feature: string } }
  | { action: 'addReleasePlan'; feature: string; payload: { templateId: string } }
  | { action: 'startMilestone'; feature: string; payload: { planId: string; milestoneId: string } }
  | { action: 'deleteReleasePlan'; feature: string; payload: { planId: string } };

export type SegmentChange =
  | { action: 'updateSegment'; payload: UpsertSegmentInput & { id: number } }
  | { action: 'deleteSegment'; payload: { id: number } };

/** One change as the API takes it (Unleash's `changeRequestCreateSchema`). */
export type ChangeInput = FeatureChange | SegmentChange;

/** The project environment a change request belongs to. */
export interface ChangeRequestScope {
  project: string;
  environment: string;
}

export function isFeatureChange(change: ChangeInput): change is FeatureChange {
  return 'feature' in change;
}

/** The permission of the direct route a change stands for: proposing a change takes what making it would. */
export const ACTION_PERMISSIONS: Record<ChangeAction, Permission> = {
  updateEnabled: 'UPDATE_FEATURE_ENVIRONMENT',
  addStrategy: 'CREATE_FEATURE_STRATEGY',
  updateStrategy: 'UPDATE_FEATURE_STRATEGY',
  deleteStrategy: 'DELETE_FEATURE_STRATEGY',
  reorderStrategy: 'UPDATE_FEATURE_STRATEGY',
  patchVariant: 'UPDATE_FEATURE_ENVIRONMENT_VARIANTS',
  archiveFeature: 'DELETE_FEATURE',
  addDependency: 'UPDATE_FEATURE_DEPENDENCY',
  deleteDependency: 'UPDATE_FEATURE_DEPENDENCY',
  addReleasePlan: 'UPDATE_FEATURE_STRATEGY',
  startMilestone: 'UPDATE_FEATURE_STRATEGY',
  deleteReleasePlan: 'UPDATE_FEATURE_STRATEGY',
  updateSegment: 'UPDATE_SEGMENT',
  deleteSegment: 'DELETE_SEGMENT',
};

/**
 * What a change is about. A later change with the same key in the same request replaces the earlier one, as
 * in Unleash's drafts: turning a flag on and then off leaves one change, not two. Added strategies have none.
 */
export function changeKey(change: ChangeInput): string | null {
  const flag = isFeatureChange(change) ? `flag:${change.feature}` : '';
  switch (change.action) {
    case 'updateEnabled':
      return `${flag}:enabled`;
    case 'patchVariant':
      return `${flag}:variants`;
    case 'reorderStrategy':
      return `${flag}:strategy-order`;
    case 'archiveFeature':
      return `${flag}:archive`;
    case 'updateStrategy':
    case 'deleteStrategy':
      return `${flag}:strategy:${change.payload.id}`;
    case 'addDependency':
      return `${flag}:dependency:${change.payload.feature}`;
    case 'deleteDependency':
      return change.payload ? `${flag}:dependency:${change.payload.feature}` : `${flag}:dependencies`;
    case 'updateSegment':
    case 'deleteSegment':
      return `segment:${change.payload.id}`;
    case 'addReleasePlan':
      return `${flag}:release-plan`;
    case 'startMilestone':
      return `${flag}:release-plan:${change.payload.planId}:milestone`;
    case 'deleteReleasePlan':
      return `${flag}:release-plan:${change.payload.planId}`;
    case 'addStrategy':
      return null;
  }
}

async function assertSegmentsExist(tx: Db, ids: number[] | undefined, path: string): Promise<void> {
  if (!ids || ids.length === 0) return;
  const rows = await tx.selectFrom('segments').select('id').where('id', 'in', ids).execute();
  const known = new Set(rows.map((row) => row.id));
  const missing = ids.filter((id) => !known.has(id));
  if (missing.length > 0) {
    throw new NotFoundError(`Could not find segment ${missing.join(', ')}`, [
      { path: `${path}/segments`, message: `no segment has id ${missing.join(', ')}` },
    ]);
  }
}

/** A change request of project P may change global segments and P's own, not another project's. */
function assertSegmentInScope(segmentProject: string | null, scope: ChangeRequestScope, what: string, path: string): void {
  if (segmentProject !== null && segmentProject !== scope.project) {
    throw new BadDataError(`${what} belongs to project "${segmentProject}"; propose it in a change request of that project`, [
      { path, message: `not a segment of project "${scope.project}"` },
    ]);
  }
}

async function prepareDependency(tx: Db, scope: ChangeRequestScope, child: string, input: DependencyInput, path: string): Promise<void> {
  const onParent = (message: string) => [{ path: `${path}/payload/feature`, message }];
  if (input.feature === child) {
    throw new BadDataError('A flag cannot depend on itself', onParent(`feature must name another flag (got "${child}")`));
  }
  if (input.enabled === false && (input.variants ?? []).length > 0) {
    throw new BadDataError('Variants can only be required of a parent that must be enabled', [
      { path: `${path}/payload/variants`, message: 'variants must be empty when enabled is false' },
    ]);
  }
  const parent = await tx.selectFrom('features').select(['project', 'archived_at']).where('name', '=', input.feature).executeTakeFirst();
  if (!parent) throw new NotFoundError(`Could not find flag "${input.feature}"`, onParent(`no flag is named "${input.feature}"`));
  if (parent.project !== scope.project) {
    throw new BadDataError(
      `Flag "${input.feature}" is in project "${parent.project}"; a flag can only depend on flags of its own project`,
      onParent(`"${input.feature}" is not in project "${scope.project}"`),
    );
  }
  if (parent.archived_at) {
    throw new BadDataError(
      `Flag "${input.feature}" is archived; a flag can only depend on an active flag`,
      onParent(`"${input.feature}" is archived`),
    );
  }
}

/**
 * Checks a change as its direct route would check the same request (unknown flag, strategy or segment: 404;
 * invalid strategy, constraints or variants: 400, at `path`) and returns the state it is made against: what
 * conflict detection later compares with the live state.
 */
export async function prepareChange(tx: Db, scope: ChangeRequestScope, change: ChangeInput, path: string): Promise<unknown> {
  if (!isFeatureChange(change)) {
    const segment = await findSegment(tx, change.payload.id);
    assertSegmentInScope(segment.project, scope, `Segment "${segment.name}"`, `${path}/payload/id`);
    if (change.action === 'updateSegment') {
      validateConstraints(change.payload.constraints, `${path}/payload/constraints`);
      assertSegmentInScope(change.payload.project ?? null, scope, `The segment's new project`, `${path}/payload/project`);
    }
    return segment;
  }

  await findFeature(tx, scope.project, change.feature, { archived: false });
  const target: StrategyTarget = { ...scope, featureName: change.feature };
  switch (change.action) {
    case 'updateEnabled':
    case 'archiveFeature':
      return null;
    case 'addStrategy':
      await resolveStrategy(tx, change.payload, change.feature, `${path}/payload`);
      await assertSegmentsExist(tx, change.payload.segments, `${path}/payload`);
      return null;
    case 'updateStrategy': {
      const { id, ...input } = change.payload;
      const current = await getStrategy(tx, target, id);
      await resolveStrategy(tx, input, change.feature, `${path}/payload`, { allowDeprecated: input.name === current.name });
      await assertSegmentsExist(tx, input.segments, `${path}/payload`);
      return current;
    }
    case 'deleteStrategy':
      return getStrategy(tx, target, change.payload.id);
    case 'reorderStrategy': {
      const known = new Set(
        (await loadStrategies(tx, [change.feature])).filter((s) => s.environment === scope.environment).map((s) => s.id),
      );
      const unknown = change.payload.filter((entry) => !known.has(entry.id)).map((entry) => `"${entry.id}"`);
      if (unknown.length > 0) {
        throw new NotFoundError(
          `Could not find strategy ${unknown.join(', ')} of flag "${change.feature}" in environment "${scope.environment}"`,
        );
      }
      return null;
    }
    case 'patchVariant':
      distributeWeights(
        change.payload.variants.map((variant) => ({ ...variant, stickiness: variant.stickiness ?? 'default' })),
        `${path}/payload/variants`,
      );
      return getEnvironmentVariants(tx, target);
    case 'addDependency':
      await prepareDependency(tx, scope, change.feature, change.payload, path);
      return null;
    case 'deleteDependency': {
      if (!change.payload) return null;
      const parent = change.payload.feature;
      const dependency = (await parentsOf(tx, change.feature)).find((d) => d.feature === parent);
      if (!dependency) throw new NotFoundError(`Flag "${change.feature}" does not depend on "${parent}"`);
      return dependency;
    }
    case 'addReleasePlan':
      await usableTemplate(tx, change.payload.templateId, `${path}/payload/templateId`);
      return null;
    case 'startMilestone': {
      const plan = await getPlan(tx, target, change.payload.planId);
      if (!plan.milestones.some((milestone) => milestone.id === change.payload.milestoneId)) {
        throw new NotFoundError(`Release plan ${plan.id} has no milestone ${change.payload.milestoneId}`, [
          { path: `${path}/payload/milestoneId`, message: 'not a milestone of this plan' },
        ]);
      }
      return null;
    }
    case 'deleteReleasePlan':
      await getPlan(tx, target, change.payload.planId);
      return null;
  }
}

/**
 * The order changes are applied in: segment updates first (strategies may rely on them), then each flag's
 * strategies, variants and dependencies, then on/off (so enabling sees the strategies the request adds and
 * adds the default one only when it must), then archiving, and segment deletions last (once the request's
 * strategies have let go of them). Within a phase, the order the changes were made in.
 */
export function applyPhase(action: ChangeAction): number {
  switch (action) {
    case 'updateSegment':
      return 0;
    case 'updateEnabled':
      return 2;
    case 'archiveFeature':
      return 3;
    case 'deleteSegment':
      return 4;
    default:
      return 1;
  }
}

/** Runs the change through the command of its direct route, in the applying unit of work. */
export async function applyChange(uow: UnitOfWork, scope: ChangeRequestScope, change: ChangeInput): Promise<void> {
  if (!isFeatureChange(change)) {
    if (change.action === 'deleteSegment') return deleteSegment(uow, change.payload.id);
    const { id, ...input } = change.payload;
    await updateSegment(uow, id, input);
    return;
  }
  const target: StrategyTarget = { ...scope, featureName: change.feature };
  switch (change.action) {
    case 'updateEnabled':
      return setFeatureEnvironmentEnabled(uow, target, change.payload.enabled);
    case 'addStrategy':
      await addStrategy(uow, target, change.payload);
      return;
    case 'updateStrategy': {
      const { id, ...input } = change.payload;
      await updateStrategy(uow, target, id, input);
      return;
    }
    case 'deleteStrategy':
      return deleteStrategy(uow, target, change.payload.id);
    case 'reorderStrategy':
      return setStrategySortOrder(uow, target, change.payload);
    case 'patchVariant':
      await setEnvironmentVariants(uow, target, change.payload.variants);
      return;
    case 'archiveFeature':
      return archiveFlags(uow, scope.project, [change.feature]);
    case 'addDependency':
      return addDependency(uow, scope.project, change.feature, change.payload);
    case 'deleteDependency':
      return change.payload
        ? removeDependency(uow, scope.project, change.feature, change.payload.feature)
        : removeAllDependencies(uow, scope.project, change.feature);
    case 'addReleasePlan':
      await addPlan(uow, target, change.payload.templateId);
      return;
    case 'startMilestone':
      await startMilestone(uow, target, change.payload.planId, change.payload.milestoneId);
      return;
    case 'deleteReleasePlan':
      return removePlan(uow, target, change.payload.planId);
  }
}

/** "updateStrategy on flag "x"", "deleteSegment of segment 3": how messages name a change. */
export function describeChange(change: ChangeInput): string {
  return isFeatureChange(change) ? `${change.action} on flag "${change.feature}"` : `${change.action} of segment ${change.payload.id}`;
}
