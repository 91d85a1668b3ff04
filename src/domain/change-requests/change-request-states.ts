import type { ChangeRequestState } from '../../db/schema.js';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { BadDataError, ConflictError, PermissionError } from '../../shared/errors.js';
import { actorIdentity } from '../access/actor.js';
import { actorMay, assertActorMay, type Permission } from '../access/permissions.js';
import { protectionOf } from '../protected-environments/protection.js';
import { applyChangeRequest } from './change-request-apply.js';
import { assertAuthorOrAdmin, assertOpen, isAdmin, isAuthor, recordChangeRequestEvent, setState } from './change-request-rules.js';
import { addComment } from './change-request-contents.js';
import { findChangeRequest, type ChangeRequestRow } from './change-request-views.js';

export interface StateChangeInput {
  state: ChangeRequestState;
  comment?: string;
  scheduledAt?: string;
}

/**
 * Where each open state may go. Approved → Approved adds one more approval; Scheduled → Scheduled moves the
 * schedule. Rejected and Cancelled are reachable from every open state; Applied, Rejected and Cancelled are
 * final, and nothing leads back to Draft.
 */
const TRANSITIONS: Partial<Record<ChangeRequestState, readonly ChangeRequestState[]>> = {
  Draft: ['In review', 'Cancelled', 'Rejected'],
  'In review': ['Approved', 'Cancelled', 'Rejected'],
  Approved: ['Approved', 'Applied', 'Scheduled', 'Cancelled', 'Rejected'],
  Scheduled: ['Applied', 'Scheduled', 'Cancelled', 'Rejected'],
};

/** Deciding on a request takes a permission; sending to review and cancelling belong to its author. */
const STATE_PERMISSIONS: Partial<Record<ChangeRequestState, Permission>> = {
  Approved: 'APPROVE_CHANGE_REQUEST',
  Rejected: 'APPROVE_CHANGE_REQUEST',
  Applied: 'APPLY_CHANGE_REQUEST',
  Scheduled: 'APPLY_CHANGE_REQUEST',
};

function assertTransition(row: ChangeRequestRow, to: ChangeRequestState): void {
  assertOpen(row);
  const allowed = TRANSITIONS[row.state] ?? [];
  if (!allowed.includes(to)) {
    throw new ConflictError(
      `Change request ${row.id} is ${row.state} and cannot move to ${to}; from ${row.state} it can move to ${allowed.join(', ')}`,
    );
  }
}

async function changeCount(uow: UnitOfWork, row: ChangeRequestRow): Promise<number> {
  const changes = await uow.tx.selectFrom('change_request_changes').select('id').where('change_request_id', '=', row.id).execute();
  return changes.length;
}

async function sendToReview(uow: UnitOfWork, row: ChangeRequestRow): Promise<void> {
  assertAuthorOrAdmin(uow.actor, row, 'send it to review');
  if ((await changeCount(uow, row)) === 0) throw new ConflictError(`Change request ${row.id} has no changes to review`);
  const updated = await setState(uow, row, 'In review');
  await recordChangeRequestEvent(uow, updated, 'change-request-sent-to-review', { state: updated.state }, { state: row.state });
}

/** One approval per reviewer; the request is Approved once it has as many as its environment requires. */
async function approve(uow: UnitOfWork, row: ChangeRequestRow): Promise<void> {
  if (isAuthor(uow.actor, row) && !isAdmin(uow.actor)) {
    throw new PermissionError(`You cannot approve your own change request ${row.id}; another user must review it`, [
      'APPROVE_CHANGE_REQUEST',
    ]);
  }
  const { createdBy, createdByUserId } = actorIdentity(uow.actor);
  const earlier = await uow.tx
    .selectFrom('change_request_reviews')
    .select('user_id')
    .where('change_request_id', '=', row.id)
    .where('decision', '=', 'approved')
    .execute();
  if (earlier.some((review) => review.user_id === createdByUserId)) {
    throw new ConflictError(`You have already approved change request ${row.id}; approvals must come from different users`);
  }
  await uow.tx
    .insertInto('change_request_reviews')
    .values({ change_request_id: row.id, decision: 'approved', user_id: createdByUserId, username: createdBy, created_at: uow.now })
    .execute();
  const approvals = earlier.length + 1;
  const { requiredApprovals: minApprovals } = await protectionOf(uow.tx, row.project, row.environment);
  await recordChangeRequestEvent(uow, row, 'change-request-approval-added', { approvals, minApprovals }, { approvals: earlier.length });
  if (row.state === 'In review' && approvals >= minApprovals) {
    const updated = await setState(uow, row, 'Approved');
    await recordChangeRequestEvent(uow, updated, 'change-request-approved', { state: updated.state, approvals }, { state: row.state });
  }
}

async function reject(uow: UnitOfWork, row: ChangeRequestRow, comment: string | undefined): Promise<void> {
  if (isAuthor(uow.actor, row) && !isAdmin(uow.actor)) {
    throw new PermissionError(`You cannot reject your own change request ${row.id}; cancel it instead`, ['APPROVE_CHANGE_REQUEST']);
  }
  const { createdBy, createdByUserId } = actorIdentity(uow.actor);
  await uow.tx
    .insertInto('change_request_reviews')
    .values({ change_request_id: row.id, decision: 'rejected', user_id: createdByUserId, username: createdBy, created_at: uow.now })
    .execute();
  const updated = await setState(uow, row, 'Rejected');
  await recordChangeRequestEvent(
    uow,
    updated,
    'change-request-rejected',
    { state: updated.state, ...(comment ? { comment } : {}) },
    { state: row.state },
  );
}

async function cancel(uow: UnitOfWork, row: ChangeRequestRow): Promise<void> {
  assertAuthorOrAdmin(uow.actor, row, 'cancel it');
  const updated = await setState(uow, row, 'Cancelled');
  await recordChangeRequestEvent(uow, updated, 'change-request-cancelled', { state: updated.state }, { state: row.state });
}

async function schedule(uow: UnitOfWork, row: ChangeRequestRow, scheduledAt: string | undefined): Promise<void> {
  if (scheduledAt === undefined) {
    throw new BadDataError('Scheduling needs the time to apply the change request at', [
      { path: '/body/scheduledAt', message: '"scheduledAt" is required when state is Scheduled' },
    ]);
  }
  const at = new Date(scheduledAt);
  if (at.getTime() <= uow.now.getTime()) {
    throw new BadDataError(`scheduledAt must be in the future (it is now ${uow.now.toISOString()})`, [
      { path: '/body/scheduledAt', message: `"scheduledAt" must be later than now (got ${JSON.stringify(scheduledAt)})` },
    ]);
  }
  if ((await changeCount(uow, row)) === 0) throw new ConflictError(`Change request ${row.id} has no changes to schedule`);
  const { createdBy, createdByUserId } = actorIdentity(uow.actor);
  const updated = await setState(uow, row, 'Scheduled', {
    scheduled_at: at,
    schedule_status: 'pending',
    schedule_failure_reason: null,
    scheduled_by_user_id: createdByUserId,
    scheduled_by: createdBy,
  });
  await recordChangeRequestEvent(
    uow,
    updated,
    'change-request-scheduled',
    { state: updated.state, scheduledAt: at.toISOString() },
    { state: row.state, ...(row.scheduled_at ? { scheduledAt: row.scheduled_at.toISOString() } : {}) },
  );
}

/**
 * PUT …/change-requests/:id/state. The permission needed depends on the state asked for, so it is checked
 * here rather than by the route. To apply, the unit of work must be opened for this change request.
 */
export async function changeChangeRequestState(uow: UnitOfWork, project: string, id: number, input: StateChangeInput): Promise<void> {
  if (input.scheduledAt !== undefined && input.state !== 'Scheduled') {
    throw new BadDataError('scheduledAt goes only with the state Scheduled', [
      { path: '/body/scheduledAt', message: `"scheduledAt" is not allowed with state ${input.state}` },
    ]);
  }
  const permission = STATE_PERMISSIONS[input.state];
  // A role may review in some environments only: the request's environment decides, read only when it has to.
  if (permission && !actorMay(uow.actor, permission, project)) {
    assertActorMay(uow.actor, permission, project, (await findChangeRequest(uow.tx, project, id, false)).environment);
  }
  const row = await findChangeRequest(uow.tx, project, id, true);
  assertTransition(row, input.state);
  switch (input.state) {
    case 'In review':
      await sendToReview(uow, row);
      break;
    case 'Approved':
      await approve(uow, row);
      break;
    case 'Rejected':
      await reject(uow, row, input.comment);
      break;
    case 'Cancelled':
      await cancel(uow, row);
      break;
    case 'Scheduled':
      await schedule(uow, row, input.scheduledAt);
      break;
    case 'Applied':
      await applyChangeRequest(uow, row);
      break;
  }
  if (input.comment) await addComment(uow, project, id, input.comment);
}
