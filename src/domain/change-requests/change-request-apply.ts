import type { UnitOfWork } from '../../db/unit-of-work.js';
import { ApiError, ConflictError } from '../../shared/errors.js';
import { actorIdentity } from '../access/actor.js';
import { applyChange, applyPhase, describeChange } from './change-actions.js';
import { changeConflict, loadLiveState } from './change-conflicts.js';
import { recordChangeRequestEvent, setState } from './change-request-rules.js';
import { scopeOf, toStoredChange, type ChangeRequestRow } from './change-request-views.js';

/**
 * Applies a locked, approved (or scheduled) change request: every change through the command of its direct
 * route, in the caller's unit of work, so all of them commit together or none does. The commands write their
 * usual events, which carry the request's id; the request records who applied it and when.
 */
export async function applyChangeRequest(uow: UnitOfWork, row: ChangeRequestRow): Promise<ChangeRequestRow> {
  if (uow.changeRequestId !== row.id) {
    throw new Error(`Change request ${row.id} must be applied in a unit of work opened for it (got ${uow.changeRequestId})`);
  }
  const scope = scopeOf(row);
  const changes = (
    await uow.tx.selectFrom('change_request_changes').selectAll().where('change_request_id', '=', row.id).orderBy('id').execute()
  ).map(toStoredChange);
  if (changes.length === 0) throw new ConflictError(`Change request ${row.id} has no changes to apply`);

  const live = await loadLiveState(uow.tx, [{ scope, changes }]);
  const conflicts = changes.flatMap((stored) => {
    const conflict = changeConflict(live, scope, stored);
    return conflict === undefined ? [] : [{ message: `Change ${stored.id} (${describeChange(stored.change)}): ${conflict}` }];
  });
  if (conflicts.length > 0) {
    throw new ConflictError(
      `Change request ${row.id} conflicts with the current state (${conflicts.length} change${conflicts.length === 1 ? '' : 's'}); edit or discard the conflicting changes first`,
      conflicts,
    );
  }

  const ordered = [...changes].sort((a, b) => applyPhase(a.change.action) - applyPhase(b.change.action) || a.id - b.id);
  for (const stored of ordered) {
    try {
      await applyChange(uow, scope, stored.change);
    } catch (error) {
      // The request was fine when approved; what fails now is the state it meets, hence a conflict.
      if (error instanceof ApiError) {
        throw new ConflictError(
          `Change request ${row.id} cannot be applied: change ${stored.id} (${describeChange(stored.change)}) failed: ${error.message}`,
          error.details,
        );
      }
      throw error;
    }
  }

  const { createdBy, createdByUserId } = actorIdentity(uow.actor);
  const applied = await setState(uow, row, 'Applied', { applied_at: uow.now, applied_by_user_id: createdByUserId, applied_by: createdBy });
  await recordChangeRequestEvent(
    uow,
    applied,
    'change-request-applied',
    { state: 'Applied', changes: changes.length },
    { state: row.state },
  );
  return applied;
}
