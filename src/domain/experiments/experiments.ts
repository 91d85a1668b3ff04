import type { Selectable } from 'kysely';
import type { Db, LockingHandle } from '../../db/database.js';
import type { ExperimentPhasesTable, ExperimentsTable } from '../../db/schema.js';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { iso } from '../../shared/dates.js';
import { BadDataError, ConflictError, NotFoundError, type ErrorDetail } from '../../shared/errors.js';
import { actorIdentity } from '../access/actor.js';
import { recordEvent, type EventInput } from '../events/record-event.js';
import { assertProjectEnvironment, findFeature } from '../features/feature-lookup.js';
import type { StrategyView } from '../features/feature-views.js';
import { getStrategy } from '../features/strategies.js';
import { changeOrPropose } from '../change-requests/change-or-propose.js';
import type { Correction } from './statistics/checks.js';
import { toMetricView, type MetricView } from './metrics.js';

/**
 * An experiment compares the variants of one strategy of a flag in one environment. It is drafted, started (which
 * freezes the variants' weights as phase 1), stopped, and decided by shipping a variant: the strategy then gives
 * that variant to everyone, through the ordinary strategy command, so protected environments, events and
 * integrations apply as to any change. A change of the variants' weights while it runs starts a new phase (units
 * would otherwise move between variants); analysis reads one phase.
 */
export type MetricRole = 'goal' | 'guardrail' | 'secondary';
export type ExperimentStatus = ExperimentsTable['status'];

export interface ExperimentInput {
  name: string;
  hypothesis?: string | null;
  featureName: string;
  environment: string;
  strategyId: string;
  metrics: Array<{ metric: string; role: MetricRole }>;
  engine?: ExperimentsTable['engine'];
  difference?: ExperimentsTable['difference'];
  alpha?: number;
  /** Confidence sequences (frequentist), tuned to the units at which one expects to decide. */
  sequential?: { tuning: number } | null;
  /** CUPED with the days before exposure as the covariate's window. */
  cuped?: { lookbackDays: number } | null;
  correction?: Correction;
  /** Analysed in a warehouse: the data source, and the key its assignments carry for this experiment. */
  dataSource?: { name: string; experimentKey: string } | null;
}

export interface PhaseVariant {
  name: string;
  weight: number;
}

export interface PhaseView {
  phase: number;
  startedAt: string;
  endedAt: string | null;
  groupId: string;
  stickiness: string;
  variants: PhaseVariant[];
  variantMismatches: number;
}

export interface ExperimentMetricView extends MetricView {
  role: MetricRole;
}

export interface ExperimentView {
  name: string;
  project: string;
  hypothesis: string | null;
  featureName: string;
  environment: string;
  strategyId: string | null;
  engine: ExperimentsTable['engine'];
  difference: ExperimentsTable['difference'];
  alpha: number;
  sequential: { tuning: number } | null;
  cuped: { lookbackDays: number } | null;
  correction: Correction;
  status: ExperimentStatus;
  shippedVariant: string | null;
  createdAt: string;
  startedAt: string | null;
  stoppedAt: string | null;
  metrics: ExperimentMetricView[];
  phases: PhaseView[];
  /** Where its exposures and events are read: Vexil's own tables (null), or a warehouse. */
  dataSource: { name: string; experimentKey: string } | null;
}

/** What the analysis and the exposure paths need besides the view: the row's id. */
export interface Experiment extends ExperimentView {
  id: number;
  dataSourceId: number | null;
}

function toPhaseView(row: Selectable<ExperimentPhasesTable>): PhaseView {
  return {
    phase: row.phase,
    startedAt: row.started_at.toISOString(),
    endedAt: iso(row.ended_at),
    groupId: row.group_id,
    stickiness: row.stickiness,
    variants: row.variants as PhaseVariant[],
    variantMismatches: Number(row.variant_mismatches),
  };
}

async function experimentsOf(db: Db, rows: Selectable<ExperimentsTable>[]): Promise<Experiment[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((row) => row.id);
  const sourceIds = [...new Set(rows.flatMap((row) => (row.data_source_id === null ? [] : [row.data_source_id])))];
  const [metrics, phases, sources] = await Promise.all([
    db
      .selectFrom('experiment_metric_roles as r')
      .innerJoin('experiment_metrics as m', 'm.id', 'r.metric_id')
      .selectAll('m')
      .select(['r.experiment_id', 'r.role'])
      .where('r.experiment_id', 'in', ids)
      .orderBy('r.position')
      .execute(),
    db.selectFrom('experiment_phases').selectAll().where('experiment_id', 'in', ids).orderBy('phase').execute(),
    sourceIds.length === 0 ? [] : db.selectFrom('experiment_data_sources').select(['id', 'name']).where('id', 'in', sourceIds).execute(),
  ]);
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    project: row.project,
    hypothesis: row.hypothesis,
    featureName: row.feature_name,
    environment: row.environment,
    strategyId: row.strategy_id,
    engine: row.engine,
    difference: row.difference,
    alpha: row.alpha,
    sequential: row.sequential_tuning === null ? null : { tuning: row.sequential_tuning },
    cuped: row.cuped_lookback_days === null ? null : { lookbackDays: row.cuped_lookback_days },
    correction: row.correction,
    status: row.status,
    shippedVariant: row.shipped_variant,
    createdAt: row.created_at.toISOString(),
    startedAt: iso(row.started_at),
    stoppedAt: iso(row.stopped_at),
    metrics: metrics
      .filter((metric) => metric.experiment_id === row.id)
      .map(({ experiment_id: _id, role, ...metric }) => ({ ...toMetricView(metric), role })),
    phases: phases.filter((phase) => phase.experiment_id === row.id).map(toPhaseView),
    dataSourceId: row.data_source_id,
    dataSource:
      row.data_source_id === null
        ? null
        : { name: sources.find((source) => source.id === row.data_source_id)?.name ?? '', experimentKey: row.experiment_key ?? '' },
  }));
}

export function toExperimentView({ id: _id, dataSourceId: _source, ...view }: Experiment): ExperimentView {
  return view;
}

export async function listExperiments(db: Db, project: string): Promise<Experiment[]> {
  const rows = await db
    .selectFrom('experiments')
    .selectAll()
    .where('project', '=', project)
    .orderBy('created_at', 'desc')
    .orderBy('name')
    .execute();
  return experimentsOf(db, rows);
}

export async function getExperiment<Lock extends boolean = false>(
  db: LockingHandle<Lock>,
  project: string,
  name: string,
  options: { lock?: Lock } = {},
): Promise<Experiment> {
  let query = db.selectFrom('experiments').selectAll().where('project', '=', project).where('name', '=', name);
  if (options.lock) query = query.forUpdate();
  const [experiment] = await experimentsOf(db, await query.execute());
  if (!experiment) throw new NotFoundError(`Could not find experiment "${name}" in project "${project}"`);
  return experiment;
}

/** The running experiments of some environments' flags, for the exposure paths. */
export async function runningExperiments(db: Db): Promise<Experiment[]> {
  return experimentsOf(db, await db.selectFrom('experiments').selectAll().where('status', '=', 'running').execute());
}

/** The strategy's stickiness for its variants, as the engine reads it: the first variant's, else the strategy's. */
export function variantStickinessOf(strategy: StrategyView): string {
  return strategy.variants[0]?.stickiness || strategy.parameters.stickiness || 'default';
}

export function groupIdOf(strategy: StrategyView): string {
  return strategy.parameters.groupId || strategy.featureName;
}

/** A stickiness the SDKs may replace by a random number for a context that lacks it: no unit to count. */
const MAY_FALL_BACK_TO_RANDOM = new Set(['default', 'random', '']);

async function checkedInput(uow: UnitOfWork, project: string, input: ExperimentInput) {
  await findFeature(uow.tx, project, input.featureName, { archived: false });
  await assertProjectEnvironment(uow.tx, project, input.environment);
  await getStrategy(uow.tx, { project, featureName: input.featureName, environment: input.environment }, input.strategyId).catch(() => {
    throw new BadDataError(`Flag "${input.featureName}" has no strategy ${input.strategyId} in environment "${input.environment}"`, [
      { path: '/body/strategyId', message: 'name a strategy of the flag in that environment' },
    ]);
  });
  const details: ErrorDetail[] = [];
  const seen = new Set<string>();
  input.metrics.forEach((entry, index) => {
    if (seen.has(entry.metric)) details.push({ path: `/body/metrics/${index}/metric`, message: `metric "${entry.metric}" is named twice` });
    seen.add(entry.metric);
  });
  const metrics = await uow.tx
    .selectFrom('experiment_metrics')
    .select(['id', 'name'])
    .where('environment', '=', input.environment)
    .where('name', 'in', input.metrics.length > 0 ? input.metrics.map((entry) => entry.metric) : [''])
    .execute();
  const idOf = new Map(metrics.map((metric) => [metric.name, metric.id]));
  input.metrics.forEach((entry, index) => {
    if (!idOf.has(entry.metric)) {
      details.push({
        path: `/body/metrics/${index}/metric`,
        message: `environment "${input.environment}" has no metric "${entry.metric}"`,
      });
    }
  });
  let dataSourceId: number | null = null;
  if (input.dataSource) {
    const source = await uow.tx
      .selectFrom('experiment_data_sources')
      .select('id')
      .where('name', '=', input.dataSource.name)
      .executeTakeFirst();
    if (!source) details.push({ path: '/body/dataSource/name', message: `there is no data source "${input.dataSource.name}"` });
    else dataSourceId = source.id;
  }
  if (details.length > 0) throw new BadDataError(details[0]!.message, details);
  return {
    roles: input.metrics.map((entry, position) => ({ metric_id: idOf.get(entry.metric)!, role: entry.role, position })),
    dataSourceId,
  };
}

function columnsOf(input: ExperimentInput, dataSourceId: number | null) {
  return {
    data_source_id: dataSourceId,
    experiment_key: dataSourceId === null ? null : (input.dataSource?.experimentKey ?? null),
    name: input.name,
    hypothesis: input.hypothesis ?? null,
    feature_name: input.featureName,
    environment: input.environment,
    strategy_id: input.strategyId,
    engine: input.engine ?? 'bayesian',
    difference: input.difference ?? 'relative',
    alpha: input.alpha ?? 0.05,
    sequential_tuning: input.sequential?.tuning ?? null,
    cuped_lookback_days: input.cuped?.lookbackDays ?? null,
    correction: input.correction ?? 'none',
  };
}

const eventOf = (type: EventInput['type'], experiment: ExperimentView, extra: Partial<EventInput> = {}): EventInput => ({
  type,
  project: experiment.project,
  environment: experiment.environment,
  featureName: experiment.featureName,
  ...extra,
});

export async function createExperiment(uow: UnitOfWork, project: string, input: ExperimentInput): Promise<ExperimentView> {
  const { roles, dataSourceId } = await checkedInput(uow, project, input);
  const row = await uow.tx
    .insertInto('experiments')
    .values({
      ...columnsOf(input, dataSourceId),
      project,
      status: 'draft',
      created_at: uow.now,
      created_by_user_id: actorIdentity(uow.actor).createdByUserId,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  if (roles.length > 0)
    await uow.tx
      .insertInto('experiment_metric_roles')
      .values(roles.map((role) => ({ ...role, experiment_id: row.id })))
      .execute();
  const view = toExperimentView(await getExperiment(uow.tx, project, input.name));
  await recordEvent(uow, eventOf('experiment-created', view, { data: view }));
  return view;
}

/** What may change once an experiment has started: not what it compares (flag, environment, strategy). */
export async function updateExperiment(uow: UnitOfWork, project: string, name: string, input: ExperimentInput): Promise<ExperimentView> {
  const before = await getExperiment(uow.tx, project, name, { lock: true });
  if (before.status !== 'draft') {
    const moved = (['featureName', 'environment', 'strategyId'] as const).filter((field) => input[field] !== before[field]);
    if ((input.dataSource?.name ?? null) !== (before.dataSource?.name ?? null)) moved.push('dataSource' as never);
    if (moved.length > 0) {
      throw new ConflictError(
        `Experiment "${name}" is ${before.status}: its ${moved.join(', ')} cannot change; make a new experiment instead`,
      );
    }
    if (input.name !== name) throw new ConflictError(`Experiment "${name}" is ${before.status}: it keeps its name`);
  }
  const { roles, dataSourceId } = await checkedInput(uow, project, input);
  await uow.tx.updateTable('experiments').set(columnsOf(input, dataSourceId)).where('id', '=', before.id).execute();
  await uow.tx.deleteFrom('experiment_metric_roles').where('experiment_id', '=', before.id).execute();
  if (roles.length > 0)
    await uow.tx
      .insertInto('experiment_metric_roles')
      .values(roles.map((role) => ({ ...role, experiment_id: before.id })))
      .execute();
  const after = toExperimentView(await getExperiment(uow.tx, project, input.name));
  await recordEvent(uow, eventOf('experiment-updated', after, { data: after, preData: toExperimentView(before) }));
  return after;
}

export async function deleteExperiment(uow: UnitOfWork, project: string, name: string): Promise<void> {
  const before = await getExperiment(uow.tx, project, name, { lock: true });
  if (before.status === 'running') throw new ConflictError(`Experiment "${name}" is running; stop it before deleting it`);
  await uow.tx.deleteFrom('experiments').where('id', '=', before.id).execute();
  await recordEvent(uow, eventOf('experiment-deleted', toExperimentView(before), { preData: toExperimentView(before) }));
}

async function strategyOf(db: Db, experiment: ExperimentView): Promise<StrategyView | undefined> {
  if (!experiment.strategyId) return undefined;
  const target = { project: experiment.project, featureName: experiment.featureName, environment: experiment.environment };
  return getStrategy(db, target, experiment.strategyId).catch(() => undefined);
}

/** What a phase freezes of the strategy: who is bucketed how, into which variants with which weights. */
function phaseOf(strategy: StrategyView): { groupId: string; stickiness: string; variants: PhaseVariant[] } {
  return {
    groupId: groupIdOf(strategy),
    stickiness: variantStickinessOf(strategy),
    variants: strategy.variants.map((variant) => ({ name: variant.name, weight: variant.weight })),
  };
}

type FrozenPhase = ReturnType<typeof phaseOf>;

const phaseRow = (experimentId: number, phase: number, startedAt: Date, frozen: FrozenPhase) => ({
  experiment_id: experimentId,
  phase,
  started_at: startedAt,
  group_id: frozen.groupId,
  stickiness: frozen.stickiness,
  variants: JSON.stringify(frozen.variants),
});

export async function startExperiment(uow: UnitOfWork, project: string, name: string): Promise<ExperimentView> {
  const experiment = await getExperiment(uow.tx, project, name, { lock: true });
  if (experiment.status !== 'draft') throw new ConflictError(`Experiment "${name}" is ${experiment.status}; only a draft starts`);
  const strategy = await strategyOf(uow.tx, experiment);
  if (!strategy) throw new ConflictError(`The strategy experiment "${name}" compares is gone; choose another`);
  const weighted = strategy.variants.filter((variant) => variant.weight > 0);
  if (weighted.length < 2) {
    throw new ConflictError(
      `The strategy of experiment "${name}" gives ${weighted.length} variant(s) any weight; an experiment compares two or more`,
    );
  }
  const frozen = phaseOf(strategy);
  if (MAY_FALL_BACK_TO_RANDOM.has(frozen.stickiness)) {
    throw new ConflictError(
      `The strategy's variants stick to "${frozen.stickiness}", which falls back to a random value when a context lacks userId, sessionId and remoteAddress: set its stickiness to userId, sessionId or a custom field so every unit keeps its variant`,
    );
  }
  if (!experiment.metrics.some((metric) => metric.role === 'goal')) {
    throw new ConflictError(`Experiment "${name}" has no goal metric; give it one before starting`);
  }
  await uow.tx.updateTable('experiments').set({ status: 'running', started_at: uow.now }).where('id', '=', experiment.id).execute();
  await uow.tx
    .insertInto('experiment_phases')
    .values(phaseRow(experiment.id, 1, uow.now, frozen))
    .execute();
  const after = toExperimentView(await getExperiment(uow.tx, project, name));
  await recordEvent(uow, eventOf('experiment-started', after, { data: after }));
  return after;
}

/**
 * Starts a new phase when the strategy of a running experiment no longer buckets as its current phase froze: a
 * weight, a variant, the group id or the stickiness changed. Safe to call from any instance at any time (it locks
 * the experiment); returns whether a phase started.
 */
export async function followStrategyChanges(uow: UnitOfWork, experimentId: number): Promise<boolean> {
  const row = await uow.tx.selectFrom('experiments').selectAll().where('id', '=', experimentId).forUpdate().executeTakeFirst();
  if (row?.status !== 'running') return false;
  const [experiment] = await experimentsOf(uow.tx, [row]);
  const current = experiment!.phases.at(-1);
  const strategy = await strategyOf(uow.tx, experiment!);
  if (!current || !strategy) return false;
  const now = phaseOf(strategy);
  const same =
    now.groupId === current.groupId &&
    now.stickiness === current.stickiness &&
    JSON.stringify(now.variants) === JSON.stringify(current.variants);
  if (same) return false;
  await uow.tx
    .updateTable('experiment_phases')
    .set({ ended_at: uow.now })
    .where('experiment_id', '=', experimentId)
    .where('phase', '=', current.phase)
    .execute();
  await uow.tx
    .insertInto('experiment_phases')
    .values(phaseRow(experimentId, current.phase + 1, uow.now, now))
    .execute();
  const after = toExperimentView(await getExperiment(uow.tx, row.project, row.name));
  await recordEvent(uow, eventOf('experiment-phase-started', after, { data: { name: after.name, phase: current.phase + 1, ...now } }));
  return true;
}

/** Ends the experiment's open phase now: nothing more is counted in it. */
function endOpenPhase(uow: UnitOfWork, experimentId: number) {
  return uow.tx
    .updateTable('experiment_phases')
    .set({ ended_at: uow.now })
    .where('experiment_id', '=', experimentId)
    .where('ended_at', 'is', null)
    .execute();
}

export async function stopExperiment(uow: UnitOfWork, project: string, name: string): Promise<ExperimentView> {
  const before = await getExperiment(uow.tx, project, name, { lock: true });
  if (before.status !== 'running') throw new ConflictError(`Experiment "${name}" is ${before.status}; only a running one stops`);
  await uow.tx.updateTable('experiments').set({ status: 'stopped', stopped_at: uow.now }).where('id', '=', before.id).execute();
  await endOpenPhase(uow, before.id);
  const after = toExperimentView(await getExperiment(uow.tx, project, name));
  await recordEvent(uow, eventOf('experiment-stopped', after, { data: after }));
  return after;
}

/**
 * Decides the experiment: the strategy gives `variant` to everyone (its weight all, the others' none), as a person
 * would change it, with their permission to change strategies there: at once, or, where the environment requires
 * change requests, as a change added to the caller's draft (whose id the answer carries).
 */
export async function shipVariant(
  uow: UnitOfWork,
  project: string,
  name: string,
  variant: string,
): Promise<ExperimentView & { changeRequestId?: number }> {
  const before = await getExperiment(uow.tx, project, name, { lock: true });
  if (before.status !== 'running' && before.status !== 'stopped') {
    throw new ConflictError(`Experiment "${name}" is ${before.status}; only a running or stopped one ships a variant`);
  }
  const strategy = await strategyOf(uow.tx, before);
  if (!strategy) throw new ConflictError(`The strategy experiment "${name}" compared is gone; change the flag directly`);
  const winner = strategy.variants.find((candidate) => candidate.name === variant);
  if (!winner) {
    throw new BadDataError(`The strategy of experiment "${name}" has no variant "${variant}"`, [
      { path: '/body/variant', message: `one of ${strategy.variants.map((candidate) => `"${candidate.name}"`).join(', ')}` },
    ]);
  }
  const outcome = await changeOrPropose(
    uow,
    { project, environment: before.environment },
    {
      action: 'updateStrategy',
      feature: before.featureName,
      payload: {
        id: strategy.id,
        name: strategy.name,
        title: strategy.title,
        disabled: strategy.disabled,
        sortOrder: strategy.sortOrder,
        constraints: strategy.constraints,
        parameters: strategy.parameters,
        segments: strategy.segments,
        variants: [{ ...winner, weight: 1000, weightType: 'fix' }],
      },
    },
  );
  await uow.tx
    .updateTable('experiments')
    .set({ status: 'shipped', shipped_variant: variant, stopped_at: before.stoppedAt ? new Date(before.stoppedAt) : uow.now })
    .where('id', '=', before.id)
    .execute();
  await endOpenPhase(uow, before.id);
  const after = toExperimentView(await getExperiment(uow.tx, project, name));
  const changeRequestId = outcome.kind === 'proposed' ? outcome.changeRequestId : undefined;
  await recordEvent(
    uow,
    eventOf('experiment-shipped', after, { data: { name, variant, changeRequestId }, preData: { status: before.status } }),
  );
  return changeRequestId === undefined ? after : { ...after, changeRequestId };
}
