import type { Db } from '../../db/database.js';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { applyChangeRequest } from './change-request-apply.js';
import { recordChangeRequestEvent } from './change-request-rules.js';

/** The scheduled change requests due at `now` (oldest schedule first), at most `limit` of them. */
export async function dueChangeRequestIds(db: Db, now: Date, limit: number): Promise<number[]> {
  const rows = await db
    .selectFrom('change_requests')
    .select('id')
    .where('state', '=', 'Scheduled')
    .where('schedule_status', '=', 'pending')
    .where('scheduled_at', '<=', now)
    .orderBy('scheduled_at')
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map((row) => row.id);
}

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

/**
 * Applies a due request in the caller's unit of work (made for that change request, as the server), when this
 * instance claims it; false when it is no longer due or another instance holds it.
 */
export async function applyDueChangeRequest(uow: UnitOfWork, id: number): Promise<boolean> {
  const row = await claimDueRequest(uow, id);
  if (!row) return false;
  const applied = await applyChangeRequest(uow, row);
  await recordChangeRequestEvent(uow, applied, 'change-request-scheduled-application-success', {
    scheduledAt: row.scheduled_at!.toISOString(),
    scheduledBy: row.scheduled_by,
  });
  return true;
}

/**
 * Marks the schedule failed, in a unit of work of its own (the applying one rolled back). Only a request still
 * waiting is marked: another instance may have recorded the failure, or someone rescheduled or applied it meanwhile.
 */
export async function recordScheduleFailure(uow: UnitOfWork, id: number, reason: string): Promise<boolean> {
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
}
