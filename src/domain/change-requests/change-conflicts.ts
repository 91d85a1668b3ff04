import { isDeepStrictEqual } from 'node:util';
import type { Dependency } from '../features/dependencies.js';
import { defaultStrategyOf, type ProjectDefaultStrategy } from '../features/project-environments.js';
import { loadStrategies, type StrategyView, type Variant } from '../features/feature-views.js';
import { normalizeStrategy } from '../features/strategies.js';
import { toSegmentView, type SegmentView } from '../segments/segments.js';
import { isFeatureChange, type ChangeInput, type ChangeRequestScope } from './change-actions.js';
import type { Db } from '../../db/database.js';

/** A change as stored, with the state it was made against. */
export interface StoredChange {
  id: number;
  change: ChangeInput;
  base: unknown;
}

/**
 * The live state of everything some changes touch, read in a fixed number of queries whatever their count,
 * so a list of change requests shows its conflicts without a query per change.
 */
export interface LiveState {
  features: Map<string, { project: string; archived: boolean }>;
  strategies: Map<string, StrategyView & { environment: string }>;
  /** Per flag and environment (`pair`): on or off, and the variants. */
  environments: Map<string, { enabled: boolean; variants: Variant[] }>;
  parents: Map<string, Dependency[]>;
  segments: Map<number, SegmentView>;
  projectEnvironments: Set<string>;
  /** Per project and environment (`pair`): the project's default strategy there, where it sets one. */
  defaultStrategies: Map<string, ProjectDefaultStrategy>;
}

const pair = (a: string, b: string) => `${a}\u0000${b}`;

export async function loadLiveState(tx: Db, requests: Array<{ scope: ChangeRequestScope; changes: StoredChange[] }>): Promise<LiveState> {
  const changes = requests.flatMap((request) => request.changes.map((stored) => stored.change));
  const flags = [...new Set(changes.filter(isFeatureChange).map((change) => change.feature))];
  const parentFlags = changes.flatMap((change) => (change.action === 'addDependency' ? [change.payload.feature] : []));
  const named = [...new Set([...flags, ...parentFlags])];
  const segmentIds = [...new Set(changes.flatMap(segmentsOf))];
  const projects = [...new Set(requests.map((request) => request.scope.project))];

  const [features, strategies, environments, dependencies, segments, projectEnvironments] = await Promise.all([
    named.length === 0 ? [] : tx.selectFrom('features').select(['name', 'project', 'archived_at']).where('name', 'in', named).execute(),
    loadStrategies(tx, flags),
    flags.length === 0
      ? []
      : tx
          .selectFrom('feature_environments')
          .select(['feature_name', 'environment', 'enabled', 'variants'])
          .where('feature_name', 'in', flags)
          .execute(),
    flags.length === 0 ? [] : tx.selectFrom('feature_dependencies').selectAll().where('child', 'in', flags).orderBy('parent').execute(),
    segmentIds.length === 0 ? [] : tx.selectFrom('segments').selectAll().where('id', 'in', segmentIds).execute(),
    projects.length === 0 ? [] : tx.selectFrom('project_environments').selectAll().where('project_id', 'in', projects).execute(),
  ]);

  const parents = new Map<string, Dependency[]>();
  for (const row of dependencies) {
    const dependency = { feature: row.parent, enabled: row.enabled, variants: row.variants as string[] };
    parents.set(row.child, [...(parents.get(row.child) ?? []), dependency]);
  }
  return {
    features: new Map(features.map((row) => [row.name, { project: row.project, archived: row.archived_at !== null }])),
    strategies: new Map(strategies.map((strategy) => [strategy.id, strategy])),
    environments: new Map(
      environments.map((row) => [pair(row.feature_name, row.environment), { enabled: row.enabled, variants: row.variants as Variant[] }]),
    ),
    parents,
    segments: new Map(segments.map((row) => [row.id, toSegmentView(row)])),
    projectEnvironments: new Set(projectEnvironments.map((row) => pair(row.project_id, row.environment_name))),
    defaultStrategies: new Map(
      projectEnvironments
        .filter((row) => row.default_strategy !== null)
        .map((row) => [pair(row.project_id, row.environment_name), row.default_strategy as ProjectDefaultStrategy]),
    ),
  };
}

/** The segments a change changes, or that the strategy it adds or updates uses. */
function segmentsOf(change: ChangeInput): number[] {
  if (!isFeatureChange(change)) return [change.payload.id];
  if (change.action === 'addStrategy' || change.action === 'updateStrategy') return change.payload.segments ?? [];
  return [];
}

function missingSegments(live: LiveState, change: ChangeInput): string | undefined {
  const missing = segmentsOf(change).filter((id) => !live.segments.has(id));
  if (missing.length === 0) return undefined;
  return `Segment ${missing.join(', ')} used by the strategy has been deleted ${SINCE}`;
}

/** Compares JSON as stored: jsonb drops undefined fields and reorders keys, which must not count as changes. */
function sameJson(a: unknown, b: unknown): boolean {
  return isDeepStrictEqual(JSON.parse(JSON.stringify(a ?? null)), JSON.parse(JSON.stringify(b ?? null)));
}

/** What no change of a flag can be applied through: the flag gone, moved, archived, or its environment gone. */
export function flagConflict(live: LiveState, scope: ChangeRequestScope, flag: string): string | undefined {
  const feature = live.features.get(flag);
  if (!feature) return `Flag "${flag}" no longer exists`;
  if (feature.project !== scope.project) return `Flag "${flag}" has moved to project "${feature.project}"`;
  if (feature.archived) return `Flag "${flag}" has been archived since this change was made`;
  if (!live.projectEnvironments.has(pair(scope.project, scope.environment))) {
    return `Environment "${scope.environment}" is no longer enabled in project "${scope.project}"`;
  }
  return undefined;
}

/** Strategy fields a change is made against; its place in the order is the business of reordering. */
function strategyContent(strategy: unknown): unknown {
  const { sortOrder: _sortOrder, environment: _environment, ...content } = strategy as StrategyView & { environment?: string };
  return content;
}

function segmentContent(segment: SegmentView): unknown {
  return { name: segment.name, description: segment.description, project: segment.project, constraints: segment.constraints };
}

const SINCE = 'since this change was made';

/**
 * Why a change can no longer be applied as it was made, in one sentence; undefined when it still can. The
 * change was checked against the state it remembers (`base`) when it was made: a strategy or segment edited
 * or deleted since, variants changed since, a parent flag gone, all show here.
 */
export function changeConflict(live: LiveState, scope: ChangeRequestScope, stored: StoredChange): string | undefined {
  const { change, base } = stored;
  if (!isFeatureChange(change)) {
    const segment = live.segments.get(change.payload.id);
    const name = (base as SegmentView).name;
    if (!segment) return `Segment "${name}" has been deleted ${SINCE}`;
    if (change.action === 'updateSegment' && !sameJson(segmentContent(segment), segmentContent(base as SegmentView))) {
      return `Segment "${name}" has been changed ${SINCE}; edit this change to build on its current content`;
    }
    return undefined;
  }
  const flagLevel = flagConflict(live, scope, change.feature);
  if (flagLevel) return flagLevel;
  switch (change.action) {
    case 'updateStrategy':
    case 'deleteStrategy': {
      const strategy = live.strategies.get(change.payload.id);
      const label = `Strategy "${(base as StrategyView).name}" (${change.payload.id})`;
      if (!strategy || strategy.featureName !== change.feature || strategy.environment !== scope.environment) {
        return `${label} has been deleted ${SINCE}`;
      }
      if (!sameJson(strategyContent(strategy), strategyContent(base))) {
        return `${label} has been changed ${SINCE}; edit this change to build on its current configuration`;
      }
      return missingSegments(live, change);
    }
    case 'reorderStrategy': {
      const gone = change.payload.filter((entry) => {
        const strategy = live.strategies.get(entry.id);
        return !strategy || strategy.featureName !== change.feature || strategy.environment !== scope.environment;
      });
      return gone.length > 0 ? `Strategy ${gone.map((entry) => `"${entry.id}"`).join(', ')} has been deleted ${SINCE}` : undefined;
    }
    case 'patchVariant':
      return sameJson(live.environments.get(pair(change.feature, scope.environment))?.variants ?? [], base)
        ? undefined
        : `The variants of flag "${change.feature}" in "${scope.environment}" have changed ${SINCE}`;
    case 'addDependency': {
      const parent = live.features.get(change.payload.feature);
      if (!parent) return `Parent flag "${change.payload.feature}" no longer exists`;
      if (parent.archived) return `Parent flag "${change.payload.feature}" has been archived ${SINCE}`;
      if (parent.project !== scope.project) return `Parent flag "${change.payload.feature}" has moved to project "${parent.project}"`;
      return undefined;
    }
    case 'deleteDependency': {
      const parent = change.payload?.feature;
      if (parent === undefined) return undefined;
      const depends = (live.parents.get(change.feature) ?? []).some((dependency) => dependency.feature === parent);
      return depends ? undefined : `Flag "${change.feature}" no longer depends on "${parent}"`;
    }
    case 'addStrategy':
      return missingSegments(live, change);
    case 'updateEnabled':
    case 'archiveFeature':
    // A plan or milestone that is gone by then refuses the change when it is applied, naming what is missing.
    case 'addReleasePlan':
    case 'startMilestone':
    case 'deleteReleasePlan':
      return undefined;
  }
}

/**
 * Unleash's `defaultChange`: turning a flag on where it will have no strategy adds the default strategy in the
 * background (setFeatureEnvironmentEnabled does it), so the request shows it before it is applied.
 */
export function defaultChangeFor(
  live: LiveState,
  scope: ChangeRequestScope,
  flag: string,
  changes: ChangeInput[],
): { action: 'addStrategy'; payload: unknown } | undefined {
  const enables = changes.some((change) => change.action === 'updateEnabled' && change.payload.enabled);
  if (!enables || live.environments.get(pair(flag, scope.environment))?.enabled) return undefined;
  const deleted = new Set(changes.flatMap((change) => (change.action === 'deleteStrategy' ? [change.payload.id] : [])));
  const remaining = [...live.strategies.values()].filter(
    (strategy) => strategy.featureName === flag && strategy.environment === scope.environment && !deleted.has(strategy.id),
  );
  const added = changes.filter((change) => change.action === 'addStrategy').length;
  if (remaining.length + added > 0) return undefined;
  const projectDefault = live.defaultStrategies.get(pair(scope.project, scope.environment));
  return { action: 'addStrategy', payload: normalizeStrategy(defaultStrategyOf(projectDefault, flag), flag) };
}
