import { sql } from 'kysely';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { BadDataError, ConflictError, NotFoundError } from '../../shared/errors.js';
import { actorIdentity } from '../access/actor.js';
import { assertActorMay } from '../access/permissions.js';
import { assertProjectEnvironment } from '../features/feature-lookup.js';
import { isProtected } from '../protected-environments/protection.js';
import {
  ACTION_PERMISSIONS,
  changeKey,
  isFeatureChange,
  prepareChange,
  type ChangeInput,
  type ChangeRequestScope,
} from './change-actions.js';
import { assertAuthorOrAdmin, assertOpen, recordChangeRequestEvent, setState } from './change-request-rules.js';
import { findChangeRequest, isOpen, OPEN_STATES, scopeOf, toStoredChange, type ChangeRequestRow } from './change-request-views.js';

/** A change as its events show it. */
function changeRecord(id: number, change: ChangeInput) {
  return { id, ...change };
}

const featureOf = (change: ChangeInput) => (isFeatureChange(change) ? change.feature : null);

// The literal predicate of change_requests_one_open_key: PostgreSQL picks a partial index as the conflict
// target only when the statement's predicate implies the index's, which bound parameters do not.
const OPEN_PREDICATE = sql.raw<boolean>(`state IN (${OPEN_STATES.map((state) => `'${state}'`).join(', ')})`);

/** The caller's open change request in the project environment, locked; created as a Draft when there is none. */
async function openChangeRequestOf(uow: UnitOfWork, scope: ChangeRequestScope): Promise<ChangeRequestRow> {
  const { createdBy, createdByUserId } = actorIdentity(uow.actor);
  const created = await uow.tx
    .insertInto('change_requests')
    .values({
      project: scope.project,
      environment: scope.environment,
      title: null,
      state: 'Draft',
      created_by_user_id: createdByUserId,
      created_by: createdBy,
      created_at: uow.now,
    })
    .onConflict((oc) => oc.columns(['project', 'environment', 'created_by_user_id']).where(OPEN_PREDICATE).doNothing())
    .returningAll()
    .executeTakeFirst();
  if (created) {
    await recordChangeRequestEvent(uow, created, 'change-request-created', { state: created.state });
    return created;
  }
  return uow.tx
    .selectFrom('change_requests')
    .selectAll()
    .where('project', '=', scope.project)
    .where('environment', '=', scope.environment)
    .where('created_by_user_id', '=', createdByUserId)
    .where('state', 'in', OPEN_STATES)
    .forUpdate()
    .executeTakeFirstOrThrow();
}

/**
 * Any edit of a request under review, approved or scheduled withdraws the approvals (they approved something
 * else) and returns it to In review, dropping its schedule.
 */
async function returnToReview(uow: UnitOfWork, row: ChangeRequestRow): Promise<void> {
  if (row.state === 'Draft') return;
  const cleared = await uow.tx
    .deleteFrom('change_request_reviews')
    .where('change_request_id', '=', row.id)
    .where('decision', '=', 'approved')
    .executeTakeFirst();
  const approvalsCleared = Number(cleared.numDeletedRows);
  if (row.state === 'In review' && approvalsCleared === 0) return;
  const updated = await setState(uow, row, 'In review');
  await recordChangeRequestEvent(
    uow,
    updated,
    'change-request-sent-to-review',
    { state: updated.state, approvalsCleared },
    { state: row.state },
  );
}

async function assertEnabled(uow: UnitOfWork, scope: ChangeRequestScope): Promise<void> {
  if (!(await isProtected(uow.tx, scope.project, scope.environment))) {
    throw new BadDataError(
      `Change requests are not enabled for environment "${scope.environment}" in project "${scope.project}"; change it directly, or enable change requests for it first`,
    );
  }
}

/**
 * POST …/environments/:environment/change-requests: adds the changes to the caller's open change request of
 * the project environment, or to a new Draft. Each change is checked as its direct route would check it,
 * and needs the permission that route needs. Returns the request's id.
 */
export async function addChanges(
  uow: UnitOfWork,
  scope: ChangeRequestScope,
  changes: ChangeInput[],
  pathOf: (index: number) => string,
): Promise<number> {
  await assertProjectEnvironment(uow.tx, scope.project, scope.environment);
  await assertEnabled(uow, scope);
  const prepared = [];
  for (const [index, change] of changes.entries()) {
    assertActorMay(uow.actor, ACTION_PERMISSIONS[change.action], scope.project, scope.environment);
    prepared.push({ change, base: await prepareChange(uow.tx, scope, change, pathOf(index)), key: changeKey(change) });
  }
  const row = await openChangeRequestOf(uow, scope);
  const { createdBy, createdByUserId } = actorIdentity(uow.actor);
  for (const { change, base, key } of prepared) {
    const values = {
      action: change.action,
      feature_name: featureOf(change),
      segment_id: isFeatureChange(change) ? null : change.payload.id,
      change_key: key,
      payload: change.payload === undefined ? null : JSON.stringify(change.payload),
      base: JSON.stringify(base),
    };
    const replaced =
      key === null
        ? undefined
        : await uow.tx
            .selectFrom('change_request_changes')
            .selectAll()
            .where('change_request_id', '=', row.id)
            .where('change_key', '=', key)
            .executeTakeFirst();
    if (replaced) {
      await uow.tx.updateTable('change_request_changes').set(values).where('id', '=', replaced.id).execute();
      await recordChangeRequestEvent(
        uow,
        row,
        'change-edited',
        { change: changeRecord(replaced.id, change) },
        { change: changeRecord(replaced.id, toStoredChange(replaced).change) },
        featureOf(change),
      );
    } else {
      const inserted = await uow.tx
        .insertInto('change_request_changes')
        .values({ ...values, change_request_id: row.id, created_by_user_id: createdByUserId, created_by: createdBy, created_at: uow.now })
        .returning('id')
        .executeTakeFirstOrThrow();
      await recordChangeRequestEvent(uow, row, 'change-added', { change: changeRecord(inserted.id, change) }, undefined, featureOf(change));
    }
  }
  await returnToReview(uow, row);
  return row.id;
}

async function findChange(uow: UnitOfWork, row: ChangeRequestRow, changeId: number) {
  const change = await uow.tx
    .selectFrom('change_request_changes')
    .selectAll()
    .where('id', '=', changeId)
    .where('change_request_id', '=', row.id)
    .executeTakeFirst();
  if (!change) throw new NotFoundError(`Could not find change ${changeId} in change request ${row.id}`);
  return change;
}

/** The open request, locked, that the caller may edit. */
async function editableChangeRequest(uow: UnitOfWork, project: string, id: number, what: string): Promise<ChangeRequestRow> {
  const row = await findChangeRequest(uow.tx, project, id, true);
  assertOpen(row);
  assertAuthorOrAdmin(uow.actor, row, what);
  return row;
}

const targetOf = (change: ChangeInput) => (isFeatureChange(change) ? `flag "${change.feature}"` : `segment ${change.payload.id}`);

/** PUT …/change-requests/:id/changes/:changeId: replaces one change by another of the same action and target. */
export async function editChange(uow: UnitOfWork, project: string, id: number, changeId: number, change: ChangeInput): Promise<void> {
  const row = await editableChangeRequest(uow, project, id, 'edit its changes');
  const existing = await findChange(uow, row, changeId);
  const before = toStoredChange(existing).change;
  if (change.action !== before.action || targetOf(change) !== targetOf(before)) {
    throw new BadDataError(`Change ${changeId} is ${before.action} of ${targetOf(before)}; an edit keeps its action and target`, [
      {
        path: '/body',
        message: `expected action "${before.action}" on ${targetOf(before)} (got "${change.action}" on ${targetOf(change)})`,
      },
    ]);
  }
  assertActorMay(uow.actor, ACTION_PERMISSIONS[change.action], project, row.environment);
  const base = await prepareChange(uow.tx, scopeOf(row), change, '/body');
  const key = changeKey(change);
  if (key !== null) {
    const other = await uow.tx
      .selectFrom('change_request_changes')
      .select('id')
      .where('change_request_id', '=', row.id)
      .where('change_key', '=', key)
      .where('id', '<>', changeId)
      .executeTakeFirst();
    if (other) throw new ConflictError(`Change ${other.id} of change request ${row.id} already makes this change; edit that one instead`);
  }
  await uow.tx
    .updateTable('change_request_changes')
    .set({ change_key: key, payload: change.payload === undefined ? null : JSON.stringify(change.payload), base: JSON.stringify(base) })
    .where('id', '=', changeId)
    .execute();
  await recordChangeRequestEvent(
    uow,
    row,
    'change-edited',
    { change: changeRecord(changeId, change) },
    { change: changeRecord(changeId, before) },
    featureOf(change),
  );
  await returnToReview(uow, row);
}

/** DELETE …/change-requests/:id/changes/:changeId. */
export async function discardChange(uow: UnitOfWork, project: string, id: number, changeId: number): Promise<void> {
  const row = await editableChangeRequest(uow, project, id, 'discard its changes');
  const existing = await findChange(uow, row, changeId);
  const change = toStoredChange(existing).change;
  await uow.tx.deleteFrom('change_request_changes').where('id', '=', changeId).execute();
  await recordChangeRequestEvent(uow, row, 'change-discarded', { changeId }, { change: changeRecord(changeId, change) }, featureOf(change));
  await returnToReview(uow, row);
}

/** DELETE …/change-requests/:id: a Draft is discarded with its changes; a request under review is cancelled instead. */
export async function discardChangeRequest(uow: UnitOfWork, project: string, id: number): Promise<void> {
  const row = await findChangeRequest(uow.tx, project, id, true);
  assertAuthorOrAdmin(uow.actor, row, 'discard it');
  if (row.state !== 'Draft') {
    const instead = isOpen(row.state) ? ': cancel it instead' : '';
    throw new ConflictError(`Only a Draft can be discarded; change request ${id} is ${row.state}${instead}`);
  }
  const changes = await uow.tx.selectFrom('change_request_changes').select('id').where('change_request_id', '=', id).execute();
  await recordChangeRequestEvent(uow, row, 'change-request-discarded', { state: row.state, changes: changes.length });
  await uow.tx.deleteFrom('change_requests').where('id', '=', id).execute();
}

/** PUT …/change-requests/:id/title: what the request is about; it does not change what is applied. */
export async function updateTitle(uow: UnitOfWork, project: string, id: number, title: string): Promise<void> {
  const row = await editableChangeRequest(uow, project, id, 'change its title');
  if (row.title === title) return;
  await uow.tx.updateTable('change_requests').set({ title }).where('id', '=', id).execute();
  await recordChangeRequestEvent(uow, row, 'change-request-title-updated', { title }, { title: row.title });
}

/** POST …/change-requests/:id/comments: anyone who can read the request may discuss it, in any state. */
export async function addComment(uow: UnitOfWork, project: string, id: number, text: string): Promise<void> {
  const row = await findChangeRequest(uow.tx, project, id);
  const { createdBy, createdByUserId } = actorIdentity(uow.actor);
  const comment = await uow.tx
    .insertInto('change_request_comments')
    .values({ change_request_id: id, text, created_by_user_id: createdByUserId, created_by: createdBy, created_at: uow.now })
    .returning('id')
    .executeTakeFirstOrThrow();
  await recordChangeRequestEvent(uow, row, 'change-request-comment-added', { commentId: comment.id, text });
}
