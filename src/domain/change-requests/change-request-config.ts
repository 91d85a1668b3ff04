import type { UnitOfWork } from '../../db/unit-of-work.js';
import { recordEvent } from '../events/record-event.js';
import { assertProjectEnvironment } from '../features/feature-lookup.js';
import { setProtection } from '../protected-environments/protection.js';

export interface ChangeRequestConfigInput {
  changeRequestsEnabled: boolean;
  /** Kept as it was (1 at first) when left out. */
  requiredApprovals?: number;
}

/**
 * PUT …/environments/:environment/change-requests/config. Records `change-request-configuration-updated`
 * with the old and new configuration; sending the current one records nothing. Open change requests stay
 * open when change requests are disabled: they can still be decided on and applied, but take no new changes.
 */
export async function updateChangeRequestConfig(
  uow: UnitOfWork,
  project: string,
  environment: string,
  input: ChangeRequestConfigInput,
): Promise<void> {
  await assertProjectEnvironment(uow.tx, project, environment);
  const { before, after } = await setProtection(uow, project, environment, input);
  await recordEvent(uow, {
    type: 'change-request-configuration-updated',
    project,
    environment,
    data: after,
    preData: before,
  });
}
