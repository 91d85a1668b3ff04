import type { Db } from '../db/database.js';
import { maintenanceModeIn } from '../db/maintenance-gate.js';
import { inUnitOfWork } from '../db/unit-of-work.js';
import type { Clock } from '../shared/clock.js';
import { RepeatingWorker } from './repeating-pass.js';
import { ApiError } from '../shared/errors.js';
import { SYSTEM_ACTOR } from '../domain/access/actor.js';
import { applyDueChangeRequest, dueChangeRequestIds, recordScheduleFailure } from '../domain/change-requests/scheduled-application.js';

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
export class ChangeRequestScheduler extends RepeatingWorker<SchedulerPass> {
  constructor(
    private readonly deps: { db: Db; clock: Clock },
    private readonly log: SchedulerLog,
    intervalMs = 10_000,
  ) {
    super('change request scheduler', log, intervalMs);
  }

  /** One pass: applies every request due now, oldest schedule first. */
  async runOnce(): Promise<SchedulerPass> {
    const now = this.deps.clock.now();
    const pass: SchedulerPass = { applied: [], failed: [] };
    // Maintenance mode stops every write: a due request waits for the first pass after it ends.
    if (await maintenanceModeIn(this.deps.db)) return pass;
    for (const id of await dueChangeRequestIds(this.deps.db, now, BATCH)) {
      try {
        if (await inUnitOfWork(this.deps, SYSTEM_ACTOR, (uow) => applyDueChangeRequest(uow, id), { changeRequestId: id })) {
          pass.applied.push(id);
        }
      } catch (error) {
        if (!(error instanceof ApiError)) {
          this.log.error(
            { err: error, changeRequestId: id },
            'Applying a scheduled change request failed unexpectedly; retrying on the next pass',
          );
          continue;
        }
        const reason = error.message;
        if (await inUnitOfWork(this.deps, SYSTEM_ACTOR, (uow) => recordScheduleFailure(uow, id, reason))) pass.failed.push(id);
      }
    }
    return pass;
  }
}
