import type { UnitOfWork } from '../../db/unit-of-work.js';
import type { LIFECYCLE_STAGES } from './feature-views.js';

export type LifecycleStage = (typeof LIFECYCLE_STAGES)[number];

/** Records that a flag entered a stage; entering a stage it already reached changes nothing. */
export async function enterLifecycleStage(
  uow: UnitOfWork,
  featureName: string,
  stage: LifecycleStage,
  status: { status?: string; statusValue?: string } = {},
): Promise<void> {
  await uow.tx
    .insertInto('feature_lifecycles')
    .values({
      feature_name: featureName,
      stage,
      status: status.status ?? null,
      status_value: status.statusValue ?? null,
      created_at: uow.now,
    })
    .onConflict((oc) => oc.columns(['feature_name', 'stage']).doNothing())
    .execute();
}

export async function leaveLifecycleStage(uow: UnitOfWork, featureName: string, stage: LifecycleStage): Promise<void> {
  await uow.tx.deleteFrom('feature_lifecycles').where('feature_name', '=', featureName).where('stage', '=', stage).execute();
}
