import type { Db } from '../db/database.js';
import { inUnitOfWork, type UnitOfWork } from '../db/unit-of-work.js';
import type { Clock } from '../shared/clock.js';
import { RepeatingPass } from './repeating-pass.js';
import { ApiError } from '../shared/errors.js';
import { SYSTEM_ACTOR } from '../domain/access/actor.js';
import { applyChangeRequest } from '../domain/change-requests/change-request-apply.js';
import { recordChangeRequestEvent } from '../domain/change-requests/change-request-rules.js';

/** Where the scheduler reports what it could not do; pino's logger fits. */
export interface SchedulerLog {
  error(details: object, message: string): void;
}

export interface SchedulerPass {
  applied: number[];
  failed: number[];
}

// A pass takes at most this many due requests, so one pass never holds the process for long.
const BATCH = 100;

/**
 * Applies scheduled change requests when they are due. Safe with several instances on one PostgreSQL: each
 * request is claimed with `FOR UPDATE SKIP LOCKED` in the very transaction that applies it and marks it
 * Applied, so exactly one instance applies it and the others skip it. The server (`system`) applies it; the
 * request keeps who scheduled it.
 *
 * A request that cannot be applied (a conflict, a change the live state refuses) stays Scheduled with its
 * schedule marked failed and the reason, recorded as `change-request-scheduled-application-failure`; it is
 * not retried until someone schedules it again. An unexpected error (the database gone) is logged and the
 * request retried on the next pass.
 */
/**
 * The request, locked for this transaction, if it is still scheduled, waiting and due, and no other instance
 * holds it (SKIP LOCKED): the one check both applying and recording a failure start from.
 */
function claimDueRequest(uow: UnitOfWork, id: number) {
  return uow.tx
    .selectFrom('change_requests')
    .selectAll()
    .where('id', '=', id)
    .where('state', '=', 'Scheduled')
    .where('schedule_status', '=', 'pending')
    .where('scheduled_at', '<=', uow.now)
    .forUpdate()
    .skipLocked()
    .executeTakeFirst();
}

export class ChangeRequestScheduler {
  private readonly repeating: RepeatingPass;

  constructor(
    private readonly deps: { db: Db; clock: Clock },
    private readonly log: SchedulerLog,
    intervalMs = 10_000,
  ) {
    this.repeating = new RepeatingPass(
      () => this.runOnce(),
      (error) => this.log.error({ err: error }, 'A pass of the change request scheduler failed; trying again later'),
      intervalMs,
    );
  }

  /** One pass: applies every request due now, oldest schedule first. */
  async runOnce(): Promise<SchedulerPass> {
    const now = this.deps.clock.now();
    const due = await this.deps.db
      .selectFrom('change_requests')
      .select('id')
      .where('state', '=', 'Scheduled')
      .where('schedule_status', '=', 'pending')
      .where('scheduled_at', '<=', now)
      .orderBy('scheduled_at')
      .orderBy('id')
      .limit(BATCH)
      .execute();
    const pass: SchedulerPass = { applied: [], failed: [] };
    for (const { id } of due) {
      try {
        if (await this.apply(id)) pass.applied.push(id);
      } catch (error) {
        if (!(error instanceof ApiError)) {
          this.log.error(
            { err: error, changeRequestId: id },
            'Applying a scheduled change request failed unexpectedly; retrying on the next pass',
          );
          continue;
        }
        if (await this.recordFailure(id, error.message)) pass.failed.push(id);
      }
    }
    return pass;
  }

  /** Claims the request if it is still due and no other instance holds it, and applies it; false if not claimed. */
  private apply(id: number): Promise<boolean> {
    return inUnitOfWork(
      this.deps,
      SYSTEM_ACTOR,
      async (uow) => {
        const row = await claimDueRequest(uow, id);
        if (!row) return false;
        const applied = await applyChangeRequest(uow, row);
        await recordChangeRequestEvent(uow, applied, 'change-request-scheduled-application-success', {
          scheduledAt: row.scheduled_at!.toISOString(),
          scheduledBy: row.scheduled_by,
        });
        return true;
      },
      { changeRequestId: id },
    );
  }

  /**
   * Marks the schedule failed, in a transaction of its own (the applying one rolled back). Only a request
   * still waiting is marked: another instance may have recorded the failure, or someone rescheduled or
   * applied it meanwhile.
   */
  private recordFailure(id: number, reason: string): Promise<boolean> {
    return inUnitOfWork(this.deps, SYSTEM_ACTOR, async (uow) => {
      const row = await claimDueRequest(uow, id);
      if (!row) return false;
      const failed = await uow.tx
        .updateTable('change_requests')
        .set({ schedule_status: 'failed', schedule_failure_reason: reason })
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirstOrThrow();
      await recordChangeRequestEvent(uow, failed, 'change-request-scheduled-application-failure', {
        scheduledAt: row.scheduled_at!.toISOString(),
        reason,
      });
      return true;
    });
  }

  /** Runs a pass every interval until stopped; a pass never overlaps the next. */
  start(): void {
    this.repeating.start();
  }

  /** Stops the timer and waits for a pass in flight, so the database can be closed after. */
  stop(): Promise<void> {
    return this.repeating.stop();
  }
}
