import { randomUUID } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { Db } from '../../db/database.js';
import type { ReleasePlanMilestonesTable, ReleasePlanSafeguardsTable, ReleasePlansTable } from '../../db/schema.js';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { BadDataError, ConflictError, NotFoundError } from '../../shared/errors.js';
import { actorIdentity } from '../access/actor.js';
import { recordEvent, type EventInput } from '../events/record-event.js';
import { setFeatureEnvironmentEnabled } from '../features/feature-environments.js';
import { archiveFeatures } from '../features/features.js';
import { recordFeatureEvents, type FeatureEventInput } from '../features/feature-events.js';
import { findFeature, lockFlagEnvironment, type FlagEnvironment } from '../features/feature-lookup.js';
import { insertStrategy, removeMilestoneStrategies, strategyAddedEvent, type StrategyInput } from '../features/strategies.js';
import { minuteOf } from '../impact-metrics/impact-metrics.js';
import { usableTemplate, type MilestoneView } from './templates.js';
import { iso } from '../../shared/dates.js';

export interface PlanMilestoneView {
  id: string;
  name: string;
  sortOrder: number;
  releasePlanDefinitionId: string;
  strategies: StrategyInput[];
  transitionCondition: { intervalMinutes: number } | null;
  startedAt: string | null;
  /** When the scheduler moves on from this milestone, while it is the active one. */
  progressAt: string | null;
}

export interface SafeguardView {
  id: string;
  impactMetric: {
    metricName: string;
    appName: string | null;
    aggregationMode: string;
    labelSelectors: Record<string, string[]>;
    windowMinutes: number;
  };
  triggerCondition: { operator: '>' | '<'; threshold: number };
  action: { id: string; type: 'pause' | 'pauseAndRollback' };
  triggeredAt: string | null;
}

/** A plan as Unleash's release plan schema shows it, with Vexil's pause. */
export interface PlanView {
  id: string;
  name: string;
  description: string | null;
  featureName: string;
  environment: string;
  releasePlanTemplateId: string | null;
  activeMilestoneId: string | null;
  pausedAt: string | null;
  pausedReason: string | null;
  createdAt: string;
  createdByUserId: number;
  milestones: PlanMilestoneView[];
  safeguards: SafeguardView[];
}

export function toSafeguardView(row: Selectable<ReleasePlanSafeguardsTable>): SafeguardView {
  return {
    id: row.id,
    impactMetric: {
      metricName: row.metric_name,
      appName: row.app_name,
      aggregationMode: row.aggregation,
      labelSelectors: row.label_selectors as Record<string, string[]>,
      windowMinutes: row.window_minutes,
    },
    triggerCondition: { operator: row.operator, threshold: row.threshold },
    action: { id: row.release_plan_id, type: row.rollback ? 'pauseAndRollback' : 'pause' },
    triggeredAt: iso(row.triggered_at),
  };
}

function toView(
  plan: Selectable<ReleasePlansTable>,
  milestones: Selectable<ReleasePlanMilestonesTable>[],
  safeguards: Selectable<ReleasePlanSafeguardsTable>[],
): PlanView {
  return {
    id: plan.id,
    name: plan.name,
    description: plan.description,
    featureName: plan.feature_name,
    environment: plan.environment,
    releasePlanTemplateId: plan.template_id,
    activeMilestoneId: plan.active_milestone_id,
    pausedAt: iso(plan.paused_at),
    pausedReason: plan.paused_reason,
    createdAt: plan.created_at.toISOString(),
    createdByUserId: plan.created_by_user_id,
    milestones: milestones
      .filter((milestone) => milestone.release_plan_id === plan.id)
      .map((milestone) => ({
        id: milestone.id,
        name: milestone.name,
        sortOrder: milestone.sort_order,
        releasePlanDefinitionId: plan.id,
        strategies: milestone.strategies as StrategyInput[],
        transitionCondition:
          milestone.transition_interval_minutes === null ? null : { intervalMinutes: milestone.transition_interval_minutes },
        startedAt: iso(milestone.started_at),
        progressAt: iso(milestone.progress_at),
      })),
    safeguards: safeguards.filter((safeguard) => safeguard.release_plan_id === plan.id).map(toSafeguardView),
  };
}

async function planViews(db: Db, plans: Selectable<ReleasePlansTable>[]): Promise<PlanView[]> {
  if (plans.length === 0) return [];
  const ids = plans.map((plan) => plan.id);
  const [milestones, safeguards] = await Promise.all([
    db.selectFrom('release_plan_milestones').selectAll().where('release_plan_id', 'in', ids).orderBy('sort_order').execute(),
    db.selectFrom('release_plan_safeguards').selectAll().where('release_plan_id', 'in', ids).execute(),
  ]);
  return plans.map((plan) => toView(plan, milestones, safeguards));
}

/** The plans of a flag in an environment (at most one), checking the flag is the project's. */
export async function listPlans(db: Db, target: FlagEnvironment): Promise<PlanView[]> {
  await findFeature(db, target.project, target.featureName);
  const plans = await db
    .selectFrom('release_plans')
    .selectAll()
    .where('feature_name', '=', target.featureName)
    .where('environment', '=', target.environment)
    .execute();
  return planViews(db, plans);
}

export async function getPlan(db: Db, target: FlagEnvironment, id: string): Promise<PlanView> {
  const [plan] = (await listPlans(db, target)).filter((candidate) => candidate.id === id);
  if (!plan) throw new NotFoundError(`Flag "${target.featureName}" has no release plan ${id} in environment "${target.environment}"`);
  return plan;
}

/** A plan's milestones in order. */
function milestonesOf(db: Db, planId: string) {
  return db.selectFrom('release_plan_milestones').selectAll().where('release_plan_id', '=', planId).orderBy('sort_order').execute();
}

/** When a milestone started now moves on by itself: after its interval, if it has one and a milestone follows. */
function progressAtOf(
  milestones: Selectable<ReleasePlanMilestonesTable>[],
  milestone: Selectable<ReleasePlanMilestonesTable>,
  now: Date,
): Date | null {
  const hasNext = milestones.some((candidate) => candidate.sort_order > milestone.sort_order);
  return hasNext && milestone.transition_interval_minutes !== null
    ? new Date(now.getTime() + milestone.transition_interval_minutes * 60_000)
    : null;
}

/** The plan row locked for this transaction, after the flag environment (the order every change takes). */
export async function lockPlan(uow: UnitOfWork, target: FlagEnvironment, id: string) {
  await lockFlagEnvironment(uow, target);
  const plan = await uow.tx
    .selectFrom('release_plans')
    .selectAll()
    .where('id', '=', id)
    .where('feature_name', '=', target.featureName)
    .where('environment', '=', target.environment)
    .forUpdate()
    .executeTakeFirst();
  if (!plan) throw new NotFoundError(`Flag "${target.featureName}" has no release plan ${id} in environment "${target.environment}"`);
  return plan;
}

async function viewOf(uow: UnitOfWork, id: string): Promise<PlanView> {
  const plan = await uow.tx.selectFrom('release_plans').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  return (await planViews(uow.tx, [plan]))[0]!;
}

/** POST …/release-plans: a copy of the template's milestones on the flag environment, none started yet. */
export async function addPlan(uow: UnitOfWork, target: FlagEnvironment, templateId: string): Promise<PlanView> {
  await lockFlagEnvironment(uow, target);
  const template = await usableTemplate(uow.tx, templateId, '/body/templateId');
  const id = randomUUID();
  await uow.tx
    .insertInto('release_plans')
    .values({
      id,
      template_id: template.id,
      name: template.name,
      description: template.description,
      feature_name: target.featureName,
      environment: target.environment,
      active_milestone_id: null,
      paused_at: null,
      paused_reason: null,
      created_by_user_id: actorIdentity(uow.actor).createdByUserId,
      created_at: uow.now,
    })
    .execute();
  await uow.tx
    .insertInto('release_plan_milestones')
    .values(
      template.milestones.map((milestone: MilestoneView) => ({
        id: randomUUID(),
        release_plan_id: id,
        name: milestone.name,
        sort_order: milestone.sortOrder,
        strategies: JSON.stringify(milestone.strategies),
        transition_interval_minutes: milestone.transitionCondition?.intervalMinutes ?? null,
        started_at: null,
        progress_at: null,
      })),
    )
    .execute();
  const plan = await viewOf(uow, id);
  await recordPlanEvent(uow, target, {
    type: 'release-plan-added',
    data: plan,
  });
  return plan;
}

/** An event about a plan, on its flag environment. */
export function recordPlanEvent(
  uow: UnitOfWork,
  target: FlagEnvironment,
  input: Omit<EventInput, 'project' | 'environment' | 'featureName'>,
) {
  return recordEvent(uow, { ...input, project: target.project, environment: target.environment, featureName: target.featureName });
}

/** Takes away the strategies the plan's milestones put on the flag, with their events. */
async function removePlanStrategies(uow: UnitOfWork, target: FlagEnvironment, planId: string): Promise<FeatureEventInput[]> {
  const milestones = await uow.tx.selectFrom('release_plan_milestones').select('id').where('release_plan_id', '=', planId).execute();
  return removeMilestoneStrategies(
    uow,
    target,
    milestones.map((milestone) => milestone.id),
  );
}

/** Who or what moved a plan, for its events: a person or token through the API, or the schedule or a safeguard. */
export type PlanCause = 'request' | 'schedule' | 'safeguard';

/**
 * Makes the milestone the plan's active one: the strategies of the previous milestone go, this one's come (the
 * SDKs see them with the commit), and a milestone with a transition is due to move on after its interval.
 * Starting a plan again resumes it. The caller has locked the plan.
 */
async function activate(
  uow: UnitOfWork,
  target: FlagEnvironment,
  planId: string,
  milestoneId: string,
  cause: PlanCause,
): Promise<PlanView> {
  const milestones = await milestonesOf(uow.tx, planId);
  const milestone = milestones.find((candidate) => candidate.id === milestoneId);
  if (!milestone) throw new NotFoundError(`Release plan ${planId} has no milestone ${milestoneId}`);
  const events = await removePlanStrategies(uow, target, planId);
  for (const strategy of milestone.strategies as StrategyInput[]) {
    events.push(strategyAddedEvent(target, await insertStrategy(uow, target, strategy, milestone.id)));
  }
  const progressAt = progressAtOf(milestones, milestone, uow.now);
  await uow.tx.updateTable('release_plan_milestones').set({ progress_at: null }).where('release_plan_id', '=', planId).execute();
  await uow.tx
    .updateTable('release_plan_milestones')
    .set({ started_at: uow.now, progress_at: progressAt })
    .where('id', '=', milestone.id)
    .execute();
  await uow.tx
    .updateTable('release_plans')
    .set({ active_milestone_id: milestone.id, paused_at: null, paused_reason: null })
    .where('id', '=', planId)
    .execute();
  await recordFeatureEvents(uow, events);
  const plan = await viewOf(uow, planId);
  await recordPlanEvent(uow, target, {
    type: 'release-plan-milestone-started',
    data: { planId, milestoneId: milestone.id, milestoneName: milestone.name, cause },
  });
  return plan;
}

/** POST …/milestones/:milestoneId/start. */
export async function startMilestone(uow: UnitOfWork, target: FlagEnvironment, planId: string, milestoneId: string): Promise<PlanView> {
  await lockPlan(uow, target, planId);
  return activate(uow, target, planId, milestoneId, 'request');
}

/** DELETE …/release-plans/:id: the plan and the strategies it put on the flag go. */
export async function removePlan(uow: UnitOfWork, target: FlagEnvironment, planId: string): Promise<void> {
  await lockPlan(uow, target, planId);
  const before = await viewOf(uow, planId);
  const events = await removePlanStrategies(uow, target, planId);
  await uow.tx.deleteFrom('release_plans').where('id', '=', planId).execute();
  await recordFeatureEvents(uow, events);
  await recordPlanEvent(uow, target, {
    type: 'release-plan-removed',
    preData: before,
  });
}

/**
 * POST …/release-plans/:id/resume: a paused plan's schedule runs again from now, and its safeguard is armed
 * again with a window that starts at the next whole minute (what it measured before the resume no longer counts).
 */
export async function resumePlan(uow: UnitOfWork, target: FlagEnvironment, planId: string): Promise<PlanView> {
  const plan = await lockPlan(uow, target, planId);
  if (!plan.paused_at) throw new ConflictError(`Release plan ${planId} is not paused`);
  if (!plan.active_milestone_id) throw new ConflictError(`Release plan ${planId} has not started`);
  const milestones = await milestonesOf(uow.tx, planId);
  const milestone = milestones.find((candidate) => candidate.id === plan.active_milestone_id)!;
  await uow.tx
    .updateTable('release_plan_milestones')
    .set({ progress_at: progressAtOf(milestones, milestone, uow.now) })
    .where('id', '=', milestone.id)
    .execute();
  await uow.tx.updateTable('release_plans').set({ paused_at: null, paused_reason: null }).where('id', '=', planId).execute();
  // The safeguard's window starts again with the next whole minute: the values that tripped it, kept per minute,
  // must not trip it a second time.
  await uow.tx
    .updateTable('release_plan_safeguards')
    .set({ triggered_at: null, armed_at: new Date(minuteOf(uow.now).getTime() + 60_000) })
    .where('release_plan_id', '=', planId)
    .execute();
  const view = await viewOf(uow, planId);
  await recordPlanEvent(uow, target, {
    type: 'release-plan-progressions-resumed',
    data: { planId },
  });
  return view;
}

/** The plan on the flag environment that holds the milestone, locked, and its milestones in order. */
async function lockPlanOfMilestone(uow: UnitOfWork, target: FlagEnvironment, milestoneId: string) {
  const owner = await uow.tx
    .selectFrom('release_plan_milestones as m')
    .innerJoin('release_plans as p', 'p.id', 'm.release_plan_id')
    .select('p.id')
    .where('m.id', '=', milestoneId)
    .where('p.feature_name', '=', target.featureName)
    .where('p.environment', '=', target.environment)
    .executeTakeFirst();
  if (!owner) {
    throw new NotFoundError(
      `Flag "${target.featureName}" has no release plan milestone ${milestoneId} in environment "${target.environment}"`,
    );
  }
  const plan = await lockPlan(uow, target, owner.id);
  const milestones = await milestonesOf(uow.tx, plan.id);
  return { plan, milestones, milestone: milestones.find((candidate) => candidate.id === milestoneId)! };
}

/**
 * PUT …/progressions/:milestoneId (Unleash's milestone progression): the milestone moves on to the next one after
 * `intervalMinutes`, counted from when it started. Vexil's plans move in order, so the target is the next milestone.
 */
export async function setProgression(
  uow: UnitOfWork,
  target: FlagEnvironment,
  milestoneId: string,
  input: { targetMilestone: string; intervalMinutes: number },
): Promise<PlanView> {
  const { plan, milestones, milestone } = await lockPlanOfMilestone(uow, target, milestoneId);
  const next = milestones.find((candidate) => candidate.sort_order > milestone.sort_order);
  if (!next || next.id !== input.targetMilestone) {
    throw new BadDataError('A milestone moves on to the one after it', [
      {
        path: '/body/targetMilestone',
        message: next
          ? `must be ${next.id} ("${next.name}"), the milestone after "${milestone.name}"`
          : `"${milestone.name}" is the last milestone`,
      },
    ]);
  }
  const before = milestone.transition_interval_minutes;
  if (before === input.intervalMinutes) return viewOf(uow, plan.id);
  const active = plan.active_milestone_id === milestone.id && milestone.started_at !== null && !plan.paused_at;
  await uow.tx
    .updateTable('release_plan_milestones')
    .set({
      transition_interval_minutes: input.intervalMinutes,
      ...(active ? { progress_at: new Date(milestone.started_at!.getTime() + input.intervalMinutes * 60_000) } : {}),
    })
    .where('id', '=', milestone.id)
    .execute();
  const change = (intervalMinutes: number | null) => ({
    planId: plan.id,
    milestoneId: milestone.id,
    milestoneName: milestone.name,
    targetMilestone: next.id,
    transitionCondition: intervalMinutes === null ? null : { intervalMinutes },
  });
  await recordPlanEvent(uow, target, {
    type: 'release-plan-progression-changed',
    data: change(input.intervalMinutes),
    preData: change(before),
  });
  return viewOf(uow, plan.id);
}

/** DELETE …/progressions/:milestoneId: the milestone no longer moves on by itself; someone starts the next one. */
export async function deleteProgression(uow: UnitOfWork, target: FlagEnvironment, milestoneId: string): Promise<PlanView> {
  const { plan, milestone } = await lockPlanOfMilestone(uow, target, milestoneId);
  if (milestone.transition_interval_minutes === null) {
    throw new NotFoundError(`Milestone "${milestone.name}" has no progression to remove`);
  }
  await uow.tx
    .updateTable('release_plan_milestones')
    .set({ transition_interval_minutes: null, progress_at: null })
    .where('id', '=', milestone.id)
    .execute();
  await recordPlanEvent(uow, target, {
    type: 'release-plan-progression-deleted',
    preData: {
      planId: plan.id,
      milestoneId: milestone.id,
      milestoneName: milestone.name,
      transitionCondition: { intervalMinutes: milestone.transition_interval_minutes },
    },
  });
  return viewOf(uow, plan.id);
}

/** The flag environment a plan is on, with the flag's current project. */
export async function planTarget(db: Db, planId: string): Promise<FlagEnvironment | undefined> {
  const row = await db
    .selectFrom('release_plans as p')
    .innerJoin('features as f', 'f.name', 'p.feature_name')
    .select(['f.project', 'p.feature_name', 'p.environment'])
    .where('p.id', '=', planId)
    .executeTakeFirst();
  return row && { project: row.project, featureName: row.feature_name, environment: row.environment };
}

/** The active milestones whose time is up at `now` (soonest first, at most `limit`), of plans running on live flags. */
export function dueMilestones(db: Db, now: Date, limit: number): Promise<Array<{ planId: string; milestoneId: string }>> {
  return db
    .selectFrom('release_plan_milestones as m')
    .innerJoin('release_plans as p', 'p.active_milestone_id', 'm.id')
    .innerJoin('features as f', 'f.name', 'p.feature_name')
    .select(['p.id as planId', 'm.id as milestoneId'])
    .where('m.progress_at', '<=', now)
    .where('f.archived_at', 'is', null)
    .where('p.paused_at', 'is', null)
    .orderBy('m.progress_at')
    .limit(limit)
    .execute();
}

/**
 * The scheduler's step: when the plan's active milestone is still `milestoneId` and due, not paused, starts the
 * next milestone. Checked under the plan's lock, so a step runs once however many instances try it.
 */
export async function progressIfDue(uow: UnitOfWork, planId: string, milestoneId: string): Promise<boolean> {
  const target = await planTarget(uow.tx, planId);
  if (!target) return false;
  const plan = await lockPlan(uow, target, planId);
  const milestones = await milestonesOf(uow.tx, planId);
  const active = milestones.find((milestone) => milestone.id === plan.active_milestone_id);
  if (plan.paused_at || !active || active.id !== milestoneId || !active.progress_at || active.progress_at > uow.now) return false;
  const next = milestones.find((milestone) => milestone.sort_order > active.sort_order);
  if (!next) return false;
  await activate(uow, target, planId, next.id, 'schedule');
  return true;
}

/** An armed safeguard whose condition holds: its plan is to be paused (`tripSafeguard`, in a unit of work each). */
export interface CrossedSafeguard {
  releasePlanId: string;
  safeguardId: string;
  observed: number;
}

/**
 * A tripped safeguard: the plan pauses, and with a rollback its flag goes back to the milestone before the
 * active one (or, from the first, is turned off in the environment). Recorded as `safeguard-triggered` and
 * `release-plan-progressions-paused`, which integrations receive like any event.
 */
export async function tripSafeguard(uow: UnitOfWork, { releasePlanId: planId, safeguardId, observed }: CrossedSafeguard): Promise<boolean> {
  const target = await planTarget(uow.tx, planId);
  if (!target) return false;
  const plan = await lockPlan(uow, target, planId);
  const safeguard = await uow.tx
    .selectFrom('release_plan_safeguards')
    .selectAll()
    .where('id', '=', safeguardId)
    .forUpdate()
    .executeTakeFirst();
  if (!safeguard || safeguard.triggered_at || plan.paused_at || !plan.active_milestone_id) return false;
  const reason = `${safeguard.metric_name} ${safeguard.aggregation} over ${safeguard.window_minutes} min was ${observed} (${safeguard.operator} ${safeguard.threshold})`;
  await uow.tx.updateTable('release_plan_safeguards').set({ triggered_at: uow.now }).where('id', '=', safeguardId).execute();
  await recordPlanEvent(uow, target, {
    type: 'safeguard-triggered',
    data: { planId, safeguard: toSafeguardView({ ...safeguard, triggered_at: uow.now }), observed, reason },
  });
  if (safeguard.rollback) {
    const milestones = await milestonesOf(uow.tx, planId);
    const active = milestones.find((milestone) => milestone.id === plan.active_milestone_id)!;
    const previous = milestones.filter((milestone) => milestone.sort_order < active.sort_order).at(-1);
    if (previous) await activate(uow, target, planId, previous.id, 'safeguard');
    else await setFeatureEnvironmentEnabled(uow, target, false);
  }
  await pausePlan(uow, target, planId, reason, safeguard.rollback);
  return true;
}

/** Stops a plan's schedule where it stands, recorded as `release-plan-progressions-paused`; the caller holds its lock. */
async function pausePlan(uow: UnitOfWork, target: FlagEnvironment, planId: string, reason: string, rolledBack: boolean): Promise<void> {
  await uow.tx.updateTable('release_plan_milestones').set({ progress_at: null }).where('release_plan_id', '=', planId).execute();
  await uow.tx.updateTable('release_plans').set({ paused_at: uow.now, paused_reason: reason }).where('id', '=', planId).execute();
  await recordPlanEvent(uow, target, {
    type: 'release-plan-progressions-paused',
    data: { planId, reason, rolledBack },
  });
}

/**
 * Archives flags of one project, and pauses the running release plans on them (recorded): a plan must not go on
 * changing a flag SDKs no longer get. Reviving a flag leaves its plans paused until someone resumes them.
 */
export async function archiveFlags(uow: UnitOfWork, project: string, names: string[]): Promise<void> {
  await archiveFeatures(uow, project, names);
  const running = await uow.tx
    .selectFrom('release_plans')
    .select(['id', 'feature_name', 'environment'])
    .where('feature_name', 'in', names)
    .where('paused_at', 'is', null)
    .where('active_milestone_id', 'is not', null)
    .orderBy('id')
    .forUpdate()
    .execute();
  for (const plan of running) {
    const target = { project, featureName: plan.feature_name, environment: plan.environment };
    await pausePlan(uow, target, plan.id, 'The flag was archived', false);
  }
}
