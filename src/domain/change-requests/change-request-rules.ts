import type { ChangeRequestState } from '../../db/schema.js';
import type { UnitOfWork, Actor } from '../../db/unit-of-work.js';
import { ConflictError, PermissionError } from '../../shared/errors.js';
import { actorIdentity, actorRootRole } from '../access/actor.js';
import type { EventType } from '../events/event-types.js';
import { recordEvent } from '../events/record-event.js';
import { loadFeatureTags } from '../features/feature-views.js';
import { isOpen, type ChangeRequestRow } from './change-request-views.js';

/** Admin tokens share one identity (-42), so for authorship they count as one author. */
export function isAuthor(actor: Actor, row: ChangeRequestRow): boolean {
  return actorIdentity(actor).createdByUserId === row.created_by_user_id;
}

export const isAdmin = (actor: Actor) => actorRootRole(actor) === 'Admin';

/** Editing, sending to review and cancelling belong to the author; Admins may step in. */
export function assertAuthorOrAdmin(actor: Actor, row: ChangeRequestRow, what: string): void {
  if (!isAuthor(actor, row) && !isAdmin(actor)) {
    throw new PermissionError(`Only the author of change request ${row.id} (${row.created_by}) or an Admin may ${what}`);
  }
}

export function assertOpen(row: ChangeRequestRow): void {
  if (!isOpen(row.state)) {
    throw new ConflictError(`Change request ${row.id} is ${row.state}, which is final: it can no longer change`);
  }
}

/**
 * A change request's event: its project and environment, and `data.changeRequestId` always set, so all events
 * of one request can be found by it. An event about one flag's change names the flag and carries its tags,
 * as every flag event does.
 */
export async function recordChangeRequestEvent(
  uow: UnitOfWork,
  row: ChangeRequestRow,
  type: EventType,
  data: Record<string, unknown>,
  preData?: Record<string, unknown>,
  featureName?: string | null,
): Promise<void> {
  const tags = featureName ? ((await loadFeatureTags(uow.tx, [featureName])).get(featureName) ?? []) : [];
  await recordEvent(uow, {
    type,
    project: row.project,
    environment: row.environment,
    featureName: featureName ?? null,
    data: { changeRequestId: row.id, ...data },
    preData: preData === undefined ? undefined : { changeRequestId: row.id, ...preData },
    tags,
  });
}

/** Moves the request to `state` and returns its row as it now is. */
export async function setState(
  uow: UnitOfWork,
  row: ChangeRequestRow,
  state: ChangeRequestState,
  extra: Partial<
    Pick<
      ChangeRequestRow,
      | 'scheduled_at'
      | 'schedule_status'
      | 'schedule_failure_reason'
      | 'scheduled_by_user_id'
      | 'scheduled_by'
      | 'applied_at'
      | 'applied_by_user_id'
      | 'applied_by'
    >
  > = {},
): Promise<ChangeRequestRow> {
  // Leaving Scheduled drops the schedule; scheduling sets a new one in `extra`.
  const schedule =
    state === 'Scheduled'
      ? {}
      : { scheduled_at: null, schedule_status: null, schedule_failure_reason: null, scheduled_by_user_id: null, scheduled_by: null };
  return uow.tx
    .updateTable('change_requests')
    .set({ state, ...schedule, ...extra })
    .where('id', '=', row.id)
    .returningAll()
    .executeTakeFirstOrThrow();
}
