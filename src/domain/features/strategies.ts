import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { BadDataError, NotFoundError, type ErrorDetail } from '../../shared/errors.js';
import { validateConstraints, normalizeConstraints } from './constraints.js';
import { recordFeatureEvent, recordFeatureEvents, type FeatureEventInput } from './feature-events.js';
import { lockFlagEnvironment, type FlagEnvironment } from './feature-lookup.js';
import { loadStrategies, type Constraint, type StrategyVariant, type StrategyView } from './feature-views.js';
import { distributeWeights } from './variants.js';
import { strategyDefinitionFor, type StrategyDefinitionView, type StrategyParameter } from '../strategies/strategy-definitions.js';
import type { Db } from '../../db/database.js';

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

export type StrategyTarget = FlagEnvironment;

/** Why a parameter value does not fit its declared type, or nothing when it does. */
function parameterProblem(type: StrategyParameter['type'], name: string, value: string): string | undefined {
  switch (type) {
    case 'percentage':
      return /^\d{1,3}$/.test(value) && Number(value) <= 100
        ? undefined
        : `${name} must be a whole percentage from 0 to 100 (got ${JSON.stringify(value)})`;
    case 'number':
      return value.trim() !== '' && Number.isFinite(Number(value)) ? undefined : `${name} must be a number (got ${JSON.stringify(value)})`;
    case 'boolean':
      return value === 'true' || value === 'false' ? undefined : `${name} must be true or false (got ${JSON.stringify(value)})`;
    default:
      return undefined;
  }
}

function normalizeParameters(
  input: StrategyInput,
  definition: Pick<StrategyDefinitionView, 'parameters'>,
  featureName: string,
  path: string,
): Record<string, string> {
  const parameters = Object.fromEntries(Object.entries(input.parameters ?? {}).map(([k, v]) => [k, String(v)]));
  if (input.name === 'flexibleRollout') {
    parameters.rollout ??= '100';
    parameters.stickiness ??= 'default';
    parameters.groupId ??= featureName;
  }
  const details: ErrorDetail[] = [];
  for (const parameter of definition.parameters) {
    const value = parameters[parameter.name];
    if (value === undefined || value.trim() === '') {
      if (parameter.required) {
        details.push({ path: `${path}/parameters/${parameter.name}`, message: `${input.name} needs the parameter "${parameter.name}"` });
      }
      continue;
    }
    const problem = parameterProblem(parameter.type, parameter.name, value);
    if (problem) details.push({ path: `${path}/parameters/${parameter.name}`, message: problem });
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

export interface NormalizedStrategy {
  name: string;
  title: string | null;
  disabled: boolean;
  constraints: Constraint[];
  variants: StrategyVariant[];
  parameters: Record<string, string>;
  segments: number[];
}

/**
 * Checks and completes a strategy against its definition's parameters (`resolveStrategy` reads the definition).
 * Vexil's own default strategy is normalized without one: its values are Vexil's, not a client's.
 */
export function normalizeStrategy(
  input: StrategyInput,
  featureName: string,
  definition: Pick<StrategyDefinitionView, 'parameters'> = { parameters: [] },
  path = '/body',
): NormalizedStrategy {
  validateConstraints(input.constraints ?? [], `${path}/constraints`);
  return {
    name: input.name,
    title: input.title ?? null,
    disabled: input.disabled ?? false,
    constraints: normalizeConstraints(input.constraints),
    variants: normalizeStrategyVariants(input, path),
    parameters: normalizeParameters(input, definition, featureName, path),
    segments: [...new Set(input.segments ?? [])].sort((a, b) => a - b),
  };
}

/**
 * Normalizes a strategy against the definition its name refers to. A strategy keeping the name of a deprecated
 * definition it already had is allowed; a new use of one is not.
 */
export async function resolveStrategy(
  db: Db,
  input: StrategyInput,
  featureName: string,
  path = '/body',
  options: { allowDeprecated: boolean } = { allowDeprecated: false },
): Promise<NormalizedStrategy> {
  const definition = await strategyDefinitionFor(db, input.name, path, options);
  return normalizeStrategy(input, featureName, definition, path);
}

async function setStrategySegments(uow: UnitOfWork, strategyId: string, segments: number[]): Promise<void> {
  await uow.tx.deleteFrom('feature_strategy_segments').where('strategy_id', '=', strategyId).execute();
  if (segments.length === 0) return;
  await uow.tx
    .insertInto('feature_strategy_segments')
    .values(segments.map((segmentId) => ({ strategy_id: strategyId, segment_id: segmentId })))
    .execute();
}

export async function getStrategy(db: Db, target: StrategyTarget, id: string): Promise<StrategyView> {
  const [strategy] = await loadStrategies(db, [target.featureName], id);
  if (!strategy || strategy.environment !== target.environment) {
    throw new NotFoundError(`Could not find strategy "${id}" of flag "${target.featureName}" in environment "${target.environment}"`);
  }
  const { environment: _environment, ...view } = strategy;
  return view;
}

export const strategyAddedEvent = (target: StrategyTarget, view: StrategyView): FeatureEventInput => ({
  ...target,
  type: 'feature-strategy-add',
  data: view,
});

export async function addStrategy(uow: UnitOfWork, target: StrategyTarget, input: StrategyInput): Promise<StrategyView> {
  await lockFlagEnvironment(uow, target);
  const view = await insertStrategy(uow, target, input);
  await recordFeatureEvents(uow, [strategyAddedEvent(target, view)]);
  return view;
}

/**
 * Adds a strategy to a flag environment the caller has locked (lockFlagEnvironment); records no event. A release
 * plan's strategies name the milestone they came from, so the plan can take them back when it moves on.
 */
export async function insertStrategy(
  uow: UnitOfWork,
  target: StrategyTarget,
  input: StrategyInput,
  milestoneId: string | null = null,
): Promise<StrategyView> {
  const strategy = await resolveStrategy(uow.tx, input, target.featureName);
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
      milestone_id: milestoneId,
    })
    .execute();
  await setStrategySegments(uow, id, strategy.segments);
  return getStrategy(uow.tx, target, id);
}

export async function updateStrategy(uow: UnitOfWork, target: StrategyTarget, id: string, input: StrategyInput): Promise<StrategyView> {
  await lockFlagEnvironment(uow, target);
  const before = await getStrategy(uow.tx, target, id);
  const strategy = await resolveStrategy(uow.tx, input, target.featureName, '/body', { allowDeprecated: input.name === before.name });
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
  await lockFlagEnvironment(uow, target);
  const before = await getStrategy(uow.tx, target, id);
  await uow.tx.deleteFrom('feature_strategies').where('id', '=', id).execute();
  await recordFeatureEvent(uow, { ...target, type: 'feature-strategy-remove', preData: before });
}

/**
 * Takes away the strategies release plan milestones put on a flag environment the caller has locked; records no
 * event but answers the removals, for the plan to record with its own move.
 */
export async function removeMilestoneStrategies(
  uow: UnitOfWork,
  target: StrategyTarget,
  milestoneIds: string[],
): Promise<FeatureEventInput[]> {
  if (milestoneIds.length === 0) return [];
  const rows = await uow.tx
    .selectFrom('feature_strategies')
    .select('id')
    .where('milestone_id', 'in', milestoneIds)
    .where('feature_name', '=', target.featureName)
    .where('environment', '=', target.environment)
    .orderBy('sort_order')
    .execute();
  const events: FeatureEventInput[] = [];
  for (const { id } of rows) {
    const before = await getStrategy(uow.tx, target, id);
    await uow.tx.deleteFrom('feature_strategies').where('id', '=', id).execute();
    events.push({ ...target, type: 'feature-strategy-remove', preData: before });
  }
  return events;
}

/** Sets the order of strategies; every id must be one of this flag's strategies in this environment. */
export async function setStrategySortOrder(
  uow: UnitOfWork,
  target: StrategyTarget,
  order: Array<{ id: string; sortOrder: number }>,
): Promise<void> {
  await lockFlagEnvironment(uow, target);
  const current = (await loadStrategies(uow.tx, [target.featureName])).filter((s) => s.environment === target.environment);
  const known = new Set(current.map((s) => s.id));
  const unknown = order.filter((entry) => !known.has(entry.id));
  if (unknown.length > 0) {
    throw new NotFoundError(
      `Could not find strategy ${unknown.map((u) => `"${u.id}"`).join(', ')} of flag "${target.featureName}" in environment "${target.environment}"`,
    );
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

/**
 * Where a strategy is, found by its id alone (Unleash's `POST /api/admin/segments/strategies` names it so); a 404 when
 * the project and environment the caller named are not its own, so no one reaches a strategy through another project.
 */
export async function locateStrategy(db: Db, id: string, claimed: { project: string; environment: string }): Promise<StrategyTarget> {
  const row = await db
    .selectFrom('feature_strategies as s')
    .innerJoin('features as f', 'f.name', 's.feature_name')
    .select(['f.project', 's.feature_name', 's.environment'])
    .where('s.id', '=', id)
    .where('f.archived_at', 'is', null)
    .executeTakeFirst();
  if (!row || row.project !== claimed.project || row.environment !== claimed.environment) {
    throw new NotFoundError(`Could not find strategy ${id} in environment "${claimed.environment}" of project "${claimed.project}"`);
  }
  return { project: row.project, featureName: row.feature_name, environment: row.environment };
}

/** Replaces the segments a strategy uses and nothing else: an update of the strategy, guarded and recorded as one. */
export async function setStrategySegmentsOnly(
  uow: UnitOfWork,
  target: StrategyTarget,
  id: string,
  segments: number[],
): Promise<StrategyView> {
  const { id: _id, featureName: _featureName, ...current } = await getStrategy(uow.tx, target, id);
  return updateStrategy(uow, target, id, { ...current, segments });
}
