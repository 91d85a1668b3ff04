import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/database.js';
import type { SafeguardAggregation } from '../../db/schema.js';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import type { Clock } from '../../shared/clock.js';
import { NotFoundError } from '../../shared/errors.js';
import type { FlagEnvironment } from '../features/feature-lookup.js';
import { aggregateMetric, minuteOf } from '../impact-metrics/impact-metrics.js';
import { getPlan, lockPlan, recordPlanEvent, toSafeguardView, type CrossedSafeguard, type SafeguardView } from './plans.js';

/** The windows Unleash names, in minutes; Vexil also takes any `windowMinutes` from 1 to a day. */
export const TIME_RANGE_MINUTES = { hour: 60, day: 1440, week: 10_080, month: 43_200 } as const;

export interface SafeguardInput {
  metricName: string;
  appName?: string | null;
  aggregationMode: SafeguardAggregation;
  labelSelectors: Record<string, string[]>;
  windowMinutes: number;
  operator: '>' | '<';
  threshold: number;
  rollback: boolean;
}

/** PUT …/release-plans/:id/safeguards: the plan's safeguard (one per plan), set or replaced, armed again. */
export async function setSafeguard(
  uow: UnitOfWork,
  target: FlagEnvironment,
  planId: string,
  input: SafeguardInput,
): Promise<SafeguardView> {
  // A safeguard decides when the flag is rolled back: a change to the flag environment, guarded like one.
  await lockPlan(uow, target, planId);
  const plan = await getPlan(uow.tx, target, planId);
  const values = {
    metric_name: input.metricName,
    app_name: input.appName ?? null,
    label_selectors: JSON.stringify(input.labelSelectors),
    aggregation: input.aggregationMode,
    window_minutes: input.windowMinutes,
    operator: input.operator,
    threshold: input.threshold,
    rollback: input.rollback,
    triggered_at: null,
    // Set (or set again after a trip), it counts from the current minute on.
    armed_at: minuteOf(uow.now),
  };
  const row = await uow.tx
    .insertInto('release_plan_safeguards')
    .values({ id: randomUUID(), release_plan_id: planId, created_at: uow.now, ...values })
    .onConflict((conflict) => conflict.columns(['release_plan_id']).doUpdateSet(values))
    .returningAll()
    .executeTakeFirstOrThrow();
  const safeguard = toSafeguardView(row);
  await recordPlanEvent(uow, target, {
    type: 'safeguard-changed',
    data: { planId, safeguard },
    ...(plan.safeguards[0] ? { preData: { planId, safeguard: plan.safeguards[0] } } : {}),
  });
  return safeguard;
}

export async function deleteSafeguard(uow: UnitOfWork, target: FlagEnvironment, planId: string, safeguardId: string): Promise<void> {
  await lockPlan(uow, target, planId);
  const row = await uow.tx
    .deleteFrom('release_plan_safeguards')
    .where('id', '=', safeguardId)
    .where('release_plan_id', '=', planId)
    .returningAll()
    .executeTakeFirst();
  if (!row) throw new NotFoundError(`Release plan ${planId} has no safeguard ${safeguardId}`);
  await recordPlanEvent(uow, target, {
    type: 'safeguard-deleted',
    preData: { planId, safeguard: toSafeguardView(row) },
  });
}

/** The safeguards a pass looks at: armed, on a started plan that is not paused; a bounded batch. */
const SAFEGUARD_BATCH = 200;

/**
 * Reads each armed safeguard's metric and answers those whose condition holds. Limited to an environment and
 * metric names when a report just brought those. One safeguard that fails is reported to `onError` and does not
 * keep the others from being evaluated.
 */
export async function crossedSafeguards(
  deps: { db: Db; clock: Clock },
  scope: { environment?: string; metricNames?: string[] },
  onError: (error: unknown, releasePlanId: string | undefined) => void,
): Promise<CrossedSafeguard[]> {
  let query = deps.db
    .selectFrom('release_plan_safeguards as s')
    .innerJoin('release_plans as p', 'p.id', 's.release_plan_id')
    .innerJoin('features as f', 'f.name', 'p.feature_name')
    .selectAll('s')
    .select('p.environment')
    .where('f.archived_at', 'is', null)
    .where('s.triggered_at', 'is', null)
    .where('p.paused_at', 'is', null)
    .where('p.active_milestone_id', 'is not', null)
    .limit(SAFEGUARD_BATCH);
  if (scope.environment) query = query.where('p.environment', '=', scope.environment);
  if (scope.metricNames) {
    if (scope.metricNames.length === 0) return [];
    query = query.where('s.metric_name', 'in', scope.metricNames);
  }
  const armed = await query.execute().catch((error: unknown) => {
    onError(error, undefined);
    return [];
  });
  const crossed: CrossedSafeguard[] = [];
  const now = deps.clock.now();
  for (const safeguard of armed) {
    try {
      const observed = await aggregateMetric(
        deps.db,
        {
          metricName: safeguard.metric_name,
          environment: safeguard.environment,
          appName: safeguard.app_name,
          labelSelectors: safeguard.label_selectors as Record<string, string[]>,
        },
        safeguard.aggregation,
        safeguard.window_minutes,
        now,
        safeguard.armed_at,
      );
      if (observed === undefined) continue;
      const holds = safeguard.operator === '>' ? observed > safeguard.threshold : observed < safeguard.threshold;
      if (!holds) continue;
      crossed.push({ releasePlanId: safeguard.release_plan_id, safeguardId: safeguard.id, observed });
    } catch (error) {
      onError(error, safeguard.release_plan_id);
    }
  }
  return crossed;
}
