import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { BadDataError, NotFoundError, type ErrorDetail } from '../../shared/errors.js';
import { guardDirectChange } from '../change-requests/change-request-guard.js';
import { validateConstraints, normalizeConstraints } from './constraints.js';
import { recordFeatureEvent } from './feature-events.js';
import { assertProjectEnvironment, findFeature } from './feature-lookup.js';
import { loadStrategies, type Constraint, type StrategyVariant, type StrategyView } from './feature-views.js';
import { distributeWeights } from './variants.js';

/** Built-in strategies and the parameters each understands. */
export const BUILT_IN_STRATEGIES = {
  default: { description: 'On for everyone', parameters: [] },
  flexibleRollout: {
    description: 'Gradual rollout to a percentage of users, sticky on a context field',
    parameters: [
      { name: 'rollout', type: 'percentage', required: false },
      { name: 'stickiness', type: 'string', required: false },
      { name: 'groupId', type: 'string', required: false },
    ],
  },
  userWithId: {
    description: 'On for the listed user ids',
    parameters: [{ name: 'userIds', type: 'list', required: true }],
  },
  remoteAddress: {
    description: 'On for the listed IP addresses',
    parameters: [{ name: 'IPs', type: 'list', required: true }],
  },
  applicationHostname: {
    description: 'On for the listed host names',
    parameters: [{ name: 'hostNames', type: 'list', required: true }],
  },
} as const;

export type StrategyName = keyof typeof BUILT_IN_STRATEGIES;

export interface StrategyInput {
  name: string;
  title?: string | null;
  disabled?: boolean | null;
  sortOrder?: number;
  constraints?: Constraint[];
  variants?: Array<Omit<StrategyVariant, 'weightType' | 'stickiness'> & Partial<Pick<StrategyVariant, 'weightType' | 'stickiness'>>>;
  parameters?: Record<string, string | number>;
  segments?: number[];
}

export interface StrategyTarget {
  project: string;
  featureName: string;
  environment: string;
}

function normalizeParameters(input: StrategyInput, featureName: string, path: string): Record<string, string> {
  const definition = BUILT_IN_STRATEGIES[input.name as StrategyName];
  if (!definition) {
    throw new BadDataError(`Unknown strategy "${input.name}"`, [
      { path: `${path}/name`, message: `name must be one of ${Object.keys(BUILT_IN_STRATEGIES).join(', ')} (got ${JSON.stringify(input.name)})` },
    ]);
  }
  const parameters = Object.fromEntries(Object.entries(input.parameters ?? {}).map(([k, v]) => [k, String(v)]));
  const details: ErrorDetail[] = [];
  for (const parameter of definition.parameters) {
    const value = parameters[parameter.name];
    if (parameter.required && (value === undefined || value.trim() === '')) {
      details.push({ path: `${path}/parameters/${parameter.name}`, message: `${input.name} needs the parameter "${parameter.name}"` });
    }
  }
  if (input.name === 'flexibleRollout') {
    parameters.rollout ??= '100';
    parameters.stickiness ??= 'default';
    parameters.groupId ??= featureName;
    const rollout = Number(parameters.rollout);
    if (!/^\d{1,3}$/.test(parameters.rollout) || rollout > 100) {
      details.push({ path: `${path}/parameters/rollout`, message: `rollout must be a whole percentage from 0 to 100 (got ${JSON.stringify(parameters.rollout)})` });
    }
  }
  if (details.length > 0) throw new BadDataError('The strategy parameters are invalid', details);
  return parameters;
}

function normalizeStrategyVariants(input: StrategyInput, path: string): StrategyVariant[] {
  const variants = (input.variants ?? []).map((variant) => ({
    ...variant,
    weightType: variant.weightType ?? ('variable' as const),
    stickiness: variant.stickiness ?? 'default',
  }));
  return distributeWeights(variants, `${path}/variants`);
}

interface NormalizedStrategy {
  name: string;
  title: string | null;
  disabled: boolean;
  constraints: Constraint[];
  variants: StrategyVariant[];
  parameters: Record<string, string>;
  segments: number[];
}

export function normalizeStrategy(input: StrategyInput, featureName: string, path = '/body'): NormalizedStrategy {
  validateConstraints(input.constraints ?? [], `${path}/constraints`);
  return {
    name: input.name,
    title: input.title ?? null,
    disabled: input.disabled ?? false,
    constraints: normalizeConstraints(input.constraints),
    variants: normalizeStrategyVariants(input, path),
    parameters: normalizeParameters(input, featureName, path),
    segments: [...new Set(input.segments ?? [])].sort((a, b) => a - b),
  };
}

async function setStrategySegments(uow: UnitOfWork, strategyId: string, segments: number[]): Promise<void> {
  await uow.tx.deleteFrom('feature_strategy_segments').where('strategy_id', '=', strategyId).execute();
  if (segments.length === 0) return;
  await uow.tx
    .insertInto('feature_strategy_segments')
    .values(segments.map((segmentId) => ({ strategy_id: strategyId, segment_id: segmentId })))
    .execute();
}

export async function getStrategy(db: Kysely<Database>, target: StrategyTarget, id: string): Promise<StrategyView> {
  const [strategy] = await loadStrategies(db, [target.featureName], id);
  if (!strategy || strategy.environment !== target.environment) {
    throw new NotFoundError(`Could not find strategy "${id}" of flag "${target.featureName}" in environment "${target.environment}"`);
  }
  const { environment: _environment, ...view } = strategy;
  return view;
}

/**
 * Guards a protected environment, locks the flag and checks the environment belongs to its project: the
 * common start of every change.
 */
async function lockTarget(uow: UnitOfWork, target: StrategyTarget): Promise<void> {
  await guardDirectChange(uow, { kind: 'flag-environment', ...target });
  await findFeature(uow.tx, target.project, target.featureName, { lock: true, archived: false });
  await assertProjectEnvironment(uow.tx, target.project, target.environment);
}

export async function addStrategy(uow: UnitOfWork, target: StrategyTarget, input: StrategyInput): Promise<StrategyView> {
  await lockTarget(uow, target);
  const strategy = normalizeStrategy(input, target.featureName);
  const sortOrder =
    input.sortOrder ??
    (
      await uow.tx
        .selectFrom('feature_strategies')
        .select(sql<number>`coalesce(max(sort_order) + 1, 0)`.as('next'))
        .where('feature_name', '=', target.featureName)
        .where('environment', '=', target.environment)
        .executeTakeFirstOrThrow()
    ).next;
  const id = randomUUID();
  await uow.tx
    .insertInto('feature_strategies')
    .values({
      id,
      feature_name: target.featureName,
      environment: target.environment,
      strategy_name: strategy.name,
      title: strategy.title,
      disabled: strategy.disabled,
      sort_order: sortOrder,
      parameters: JSON.stringify(strategy.parameters),
      constraints: JSON.stringify(strategy.constraints),
      variants: JSON.stringify(strategy.variants),
      created_at: uow.now,
    })
    .execute();
  await setStrategySegments(uow, id, strategy.segments);
  const view = await getStrategy(uow.tx, target, id);
  await recordFeatureEvent(uow, { ...target, type: 'feature-strategy-add', data: view });
  return view;
}

export async function updateStrategy(uow: UnitOfWork, target: StrategyTarget, id: string, input: StrategyInput): Promise<StrategyView> {
  await lockTarget(uow, target);
  const before = await getStrategy(uow.tx, target, id);
  const strategy = normalizeStrategy(input, target.featureName);
  await uow.tx
    .updateTable('feature_strategies')
    .set({
      strategy_name: strategy.name,
      title: strategy.title,
      disabled: strategy.disabled,
      sort_order: input.sortOrder ?? before.sortOrder,
      parameters: JSON.stringify(strategy.parameters),
      constraints: JSON.stringify(strategy.constraints),
      variants: JSON.stringify(strategy.variants),
    })
    .where('id', '=', id)
    .execute();
  await setStrategySegments(uow, id, strategy.segments);
  const after = await getStrategy(uow.tx, target, id);
  await recordFeatureEvent(uow, { ...target, type: 'feature-strategy-update', data: after, preData: before });
  return after;
}

export async function deleteStrategy(uow: UnitOfWork, target: StrategyTarget, id: string): Promise<void> {
  await lockTarget(uow, target);
  const before = await getStrategy(uow.tx, target, id);
  await uow.tx.deleteFrom('feature_strategies').where('id', '=', id).execute();
  await recordFeatureEvent(uow, { ...target, type: 'feature-strategy-remove', preData: before });
}

/** Sets the order of strategies; every id must be one of this flag's strategies in this environment. */
export async function setStrategySortOrder(
  uow: UnitOfWork,
  target: StrategyTarget,
  order: Array<{ id: string; sortOrder: number }>,
): Promise<void> {
  await lockTarget(uow, target);
  const current = (await loadStrategies(uow.tx, [target.featureName])).filter((s) => s.environment === target.environment);
  const known = new Set(current.map((s) => s.id));
  const unknown = order.filter((entry) => !known.has(entry.id));
  if (unknown.length > 0) {
    throw new NotFoundError(`Could not find strategy ${unknown.map((u) => `"${u.id}"`).join(', ')} of flag "${target.featureName}" in environment "${target.environment}"`);
  }
  for (const entry of order) {
    await uow.tx.updateTable('feature_strategies').set({ sort_order: entry.sortOrder }).where('id', '=', entry.id).execute();
  }
  const after = (await loadStrategies(uow.tx, [target.featureName])).filter((s) => s.environment === target.environment);
  await recordFeatureEvent(uow, {
    ...target,
    type: 'strategy-order-changed',
    data: after.map((s) => ({ id: s.id, sortOrder: s.sortOrder })),
    preData: current.map((s) => ({ id: s.id, sortOrder: s.sortOrder })),
  });
}
