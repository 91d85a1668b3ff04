import type { UnitOfWork } from '../../db/unit-of-work.js';
import { recordEvent } from '../events/record-event.js';
import { assertProjectEnvironment } from '../features/feature-lookup.js';

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
  const before = await uow.tx
    .selectFrom('change_request_settings')
    .select(['enabled', 'required_approvals'])
    .where('project', '=', project)
    .where('environment', '=', environment)
    .forUpdate()
    .executeTakeFirst();
  const after = {
    enabled: input.changeRequestsEnabled,
    required_approvals: input.requiredApprovals ?? before?.required_approvals ?? 1,
  };
  await uow.tx
    .insertInto('change_request_settings')
    .values({ project, environment, ...after })
    .onConflict((oc) => oc.columns(['project', 'environment']).doUpdateSet(after))
    .execute();
  const view = (settings: typeof after) => ({ changeRequestsEnabled: settings.enabled, requiredApprovals: settings.required_approvals });
  await recordEvent(uow, {
    type: 'change-request-configuration-updated',
    project,
    environment,
    data: view(after),
    preData: view(before ?? { enabled: false, required_approvals: 1 }),
  });
}
