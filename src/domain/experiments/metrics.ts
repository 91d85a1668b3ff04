import type { Selectable } from 'kysely';
import type { Db } from '../../db/database.js';
import type { ExperimentMetricsTable } from '../../db/schema.js';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { BadDataError, ConflictError, NotFoundError } from '../../shared/errors.js';
import { recordEvent } from '../events/record-event.js';

/**
 * A metric is what an experiment measures: events SDKs track in an environment, turned into one value per unit.
 *
 * - proportion: 1 when the unit tracked the event in its window, else 0 (converted or not);
 * - mean: the sum of the events' values (`sum`) or their number (`count`) per unit;
 * - ratio: that of one event over that of another (revenue per order), summed over units before dividing.
 *
 * The window runs from the unit's first exposure (none: to the end of the phase); a cap limits each unit's value (a
 * whale buying 10,000 items counts as `cap`). The events of the 14 days before exposure are the CUPED covariate.
 */
export type MetricKind = 'proportion' | 'mean' | 'ratio';
export type Aggregation = 'sum' | 'count';

export interface MetricInput {
  name: string;
  description?: string | null;
  kind: MetricKind;
  event: string;
  aggregation?: Aggregation;
  denominatorEvent?: string | null;
  denominatorAggregation?: Aggregation | null;
  windowHours?: number | null;
  cap?: number | null;
  lowerIsBetter?: boolean;
}

export interface MetricView {
  id: number;
  environment: string;
  name: string;
  description: string | null;
  kind: MetricKind;
  event: string;
  aggregation: Aggregation;
  denominatorEvent: string | null;
  denominatorAggregation: Aggregation | null;
  windowHours: number | null;
  cap: number | null;
  lowerIsBetter: boolean;
  createdAt: string;
}

/** The conversion window when a metric names none: 72 hours from first exposure (GrowthBook's default). */
export const DEFAULT_WINDOW_HOURS = 72;

export function toMetricView(row: Selectable<ExperimentMetricsTable>): MetricView {
  return {
    id: row.id,
    environment: row.environment,
    name: row.name,
    description: row.description,
    kind: row.kind,
    event: row.event,
    aggregation: row.aggregation,
    denominatorEvent: row.denominator_event,
    denominatorAggregation: row.denominator_aggregation,
    windowHours: row.window_hours,
    cap: row.cap,
    lowerIsBetter: row.lower_is_better,
    createdAt: row.created_at.toISOString(),
  };
}

export async function listMetrics(db: Db, environment: string): Promise<MetricView[]> {
  await assertEnvironment(db, environment);
  const rows = await db.selectFrom('experiment_metrics').selectAll().where('environment', '=', environment).orderBy('name').execute();
  return rows.map(toMetricView);
}

export async function getMetric(db: Db, environment: string, name: string): Promise<MetricView> {
  const row = await db
    .selectFrom('experiment_metrics')
    .selectAll()
    .where('environment', '=', environment)
    .where('name', '=', name)
    .executeTakeFirst();
  if (!row) throw new NotFoundError(`Could not find metric "${name}" in environment "${environment}"`);
  return toMetricView(row);
}

async function assertEnvironment(db: Db, environment: string): Promise<void> {
  const row = await db.selectFrom('environments').select('name').where('name', '=', environment).executeTakeFirst();
  if (!row) throw new NotFoundError(`Could not find environment "${environment}"`);
}

/** The business rules the schema cannot state: a ratio names its denominator, a proportion aggregates nothing. */
function checked(input: MetricInput): Omit<Selectable<ExperimentMetricsTable>, 'id' | 'environment' | 'created_at'> {
  const isRatio = input.kind === 'ratio';
  if (isRatio && !input.denominatorEvent) {
    throw new BadDataError('A ratio metric needs a denominator event', [
      { path: '/body/denominatorEvent', message: 'name the event to divide by' },
    ]);
  }
  if (!isRatio && input.denominatorEvent) {
    throw new BadDataError(`A ${input.kind} metric has no denominator event`, [
      { path: '/body/denominatorEvent', message: 'only a ratio metric divides by an event' },
    ]);
  }
  if (input.kind === 'proportion' && input.cap != null) {
    throw new BadDataError('A proportion metric is 0 or 1 per unit: it has no cap', [{ path: '/body/cap', message: 'leave the cap out' }]);
  }
  return {
    name: input.name,
    description: input.description ?? null,
    kind: input.kind,
    event: input.event,
    aggregation: input.aggregation ?? 'sum',
    denominator_event: isRatio ? (input.denominatorEvent ?? null) : null,
    denominator_aggregation: isRatio ? (input.denominatorAggregation ?? 'count') : null,
    window_hours: input.windowHours ?? null,
    cap: input.cap ?? null,
    lower_is_better: input.lowerIsBetter ?? false,
  };
}

export async function createMetric(uow: UnitOfWork, environment: string, input: MetricInput): Promise<MetricView> {
  await assertEnvironment(uow.tx, environment);
  const row = await uow.tx
    .insertInto('experiment_metrics')
    .values({ ...checked(input), environment, created_at: uow.now })
    .returningAll()
    .executeTakeFirstOrThrow();
  const view = toMetricView(row);
  await recordEvent(uow, { type: 'experiment-metric-created', environment, data: view });
  return view;
}

export async function updateMetric(uow: UnitOfWork, environment: string, name: string, input: MetricInput): Promise<MetricView> {
  const before = await getMetric(uow.tx, environment, name);
  const row = await uow.tx
    .updateTable('experiment_metrics')
    .set(checked(input))
    .where('id', '=', before.id)
    .returningAll()
    .executeTakeFirstOrThrow();
  const after = toMetricView(row);
  await recordEvent(uow, { type: 'experiment-metric-updated', environment, data: after, preData: before });
  return after;
}

export async function deleteMetric(uow: UnitOfWork, environment: string, name: string): Promise<void> {
  const before = await getMetric(uow.tx, environment, name);
  const used = await uow.tx
    .selectFrom('experiment_metric_roles as r')
    .innerJoin('experiments as e', 'e.id', 'r.experiment_id')
    .select(['e.project', 'e.name'])
    .where('r.metric_id', '=', before.id)
    .orderBy('e.name')
    .execute();
  if (used.length > 0) {
    throw new ConflictError(
      `Metric "${name}" is measured by ${used.map((experiment) => `"${experiment.name}" (project "${experiment.project}")`).join(', ')}; remove it from them first`,
    );
  }
  await uow.tx.deleteFrom('experiment_metrics').where('id', '=', before.id).execute();
  await recordEvent(uow, { type: 'experiment-metric-deleted', environment, preData: before });
}

/** The event names SDKs may track in an environment: those its metrics measure. */
export async function trackedEventNames(db: Db, environment: string): Promise<Set<string>> {
  const rows = await db
    .selectFrom('experiment_metrics')
    .select(['event', 'denominator_event'])
    .where('environment', '=', environment)
    .execute();
  return new Set(rows.flatMap((row) => (row.denominator_event ? [row.event, row.denominator_event] : [row.event])));
}

/** Event names SDKs tracked in the environment that no metric measures: dropped, counted. */
export async function unknownTrackedEvents(
  db: Db,
  environment: string,
): Promise<Array<{ event: string; dropped: number; lastSeenAt: string }>> {
  const rows = await db
    .selectFrom('tracked_event_drops')
    .selectAll()
    .where('environment', '=', environment)
    .orderBy('last_seen_at', 'desc')
    .limit(100)
    .execute();
  return rows.map((row) => ({ event: row.event, dropped: Number(row.dropped), lastSeenAt: row.last_seen_at.toISOString() }));
}
