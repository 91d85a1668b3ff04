import type { UnitOfWork } from '../../db/unit-of-work.js';
import { assertActorMay } from '../access/permissions.js';
import { isProtected } from '../protected-environments/protection.js';
import { ACTION_PERMISSIONS, applyChange, type FeatureChange, type ChangeRequestScope } from './change-actions.js';
import { addChanges } from './change-request-contents.js';

/** What became of a change: made at once, or added to the caller's draft change request of a protected environment. */
export type ChangeOutcome = { kind: 'applied' } | { kind: 'proposed'; changeRequestId: number };

/**
 * One change to a flag in an environment, as a person would make it through the API or the admin UI: with the
 * permission its direct route needs, made at once where the environment takes direct changes, and added to the
 * caller's open change request (a new Draft when there is none) where it requires change requests. Nothing here
 * passes the guard of a protected environment: the change goes through review like any other.
 */
export async function changeOrPropose(uow: UnitOfWork, scope: ChangeRequestScope, change: FeatureChange): Promise<ChangeOutcome> {
  if (await isProtected(uow.tx, scope.project, scope.environment)) {
    const changeRequestId = await addChanges(uow, scope, [change], () => '/arguments');
    return { kind: 'proposed', changeRequestId };
  }
  assertActorMay(uow.actor, ACTION_PERMISSIONS[change.action], scope.project, scope.environment);
  await applyChange(uow, scope, change);
  return { kind: 'applied' };
}
