import type { Db } from '../db/database.js';
import { maintenanceModeIn } from '../db/maintenance-gate.js';
import { inUnitOfWork } from '../db/unit-of-work.js';
import type { Clock } from '../shared/clock.js';
import { RepeatingWorker } from './repeating-pass.js';
import { SYSTEM_ACTOR } from '../domain/access/actor.js';
import { deleteOldImpactMetrics } from '../domain/impact-metrics/impact-metrics.js';
import { dueMilestones, progressIfDue, tripSafeguard } from '../domain/release-plans/plans.js';
import { crossedSafeguards } from '../domain/release-plans/safeguards.js';

export interface ReleasePlanSchedulerLog {
  error(details: object, message: string): void;
}

export interface ReleasePlanPass {
  /** The plans that moved on to their next milestone. */
  progressed: string[];
  /** The plans a safeguard paused. */
  paused: string[];
}

// A pass takes at most this many due milestones, so one pass never holds the process for long.
const BATCH = 100;
const HOUR_MS = 3_600_000;

/**
 * Moves release plans on when their active milestone's time is up, and trips safeguards whose metric crossed
 * their threshold. Safe with several instances on one PostgreSQL and across restarts (kill -9 included): each
 * step is decided under the plan's row lock from what is stored (the active milestone and when it is due), in
 * the transaction that makes it, so a step is made once, and one that was due while no instance ran is made at
 * the next pass. A plan moves one milestone per step, each new milestone's time counted from when it started,
 * so none is skipped. The server (`system`) makes the steps; each event says it was the schedule or a safeguard.
 */
export class ReleasePlanScheduler extends RepeatingWorker<ReleasePlanPass> {
  private lastRetention = 0;

  constructor(
    private readonly deps: { db: Db; clock: Clock; impactMetricsRetentionDays: number },
    private readonly log: ReleasePlanSchedulerLog,
    intervalMs = 10_000,
  ) {
    super('release plan scheduler', log, intervalMs);
  }

  async runOnce(): Promise<ReleasePlanPass> {
    const now = this.deps.clock.now();
    const pass: ReleasePlanPass = { progressed: [], paused: [] };
    // Maintenance mode stops every write: a due milestone and a crossed safeguard wait for the first pass after it.
    if (await maintenanceModeIn(this.deps.db)) return pass;
    for (const { planId, milestoneId } of await dueMilestones(this.deps.db, now, BATCH)) {
      try {
        if (await inUnitOfWork(this.deps, SYSTEM_ACTOR, (uow) => progressIfDue(uow, planId, milestoneId))) pass.progressed.push(planId);
      } catch (error) {
        this.log.error(
          { err: error, releasePlanId: planId },
          'Moving a release plan to its next milestone failed; trying again on the next pass',
        );
      }
    }
    const onError = (error: unknown, releasePlanId: string | undefined) =>
      this.log.error({ err: error, releasePlanId }, 'Evaluating a safeguard failed; trying again on the next pass');
    for (const crossed of await crossedSafeguards(this.deps, {}, onError)) {
      try {
        if (await inUnitOfWork(this.deps, SYSTEM_ACTOR, (uow) => tripSafeguard(uow, crossed))) pass.paused.push(crossed.releasePlanId);
      } catch (error) {
        onError(error, crossed.releasePlanId);
      }
    }
    if (now.getTime() - this.lastRetention >= HOUR_MS) {
      this.lastRetention = now.getTime();
      await deleteOldImpactMetrics(this.deps.db, this.deps.impactMetricsRetentionDays, now);
    }
    return pass;
  }
}
