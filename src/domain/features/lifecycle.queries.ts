import { findFeature } from './feature-lookup.js';
import { LIFECYCLE_STAGES } from './feature-views.js';
import type { LifecycleStage } from './lifecycle.js';
import type { Db } from '../../db/database.js';

/** One stage a flag has reached, as Unleash's `featureLifecycleSchema` lists it; `status` only where set. */
export interface LifecycleStageView {
  stage: LifecycleStage;
  status?: string;
  enteredStageAt: string;
}

/** The stages the flag has reached, in stage order, so the last one is its current stage. */
export async function getFeatureLifecycle(db: Db, project: string, name: string): Promise<LifecycleStageView[]> {
  await findFeature(db, project, name);
  const rows = await db
    .selectFrom('feature_lifecycles')
    .select(['stage', 'status', 'created_at'])
    .where('feature_name', '=', name)
    .execute();
  return rows
    .map((row) => ({ ...row, stage: row.stage as LifecycleStage }))
    .sort((a, b) => LIFECYCLE_STAGES.indexOf(a.stage) - LIFECYCLE_STAGES.indexOf(b.stage))
    .map((row) => ({
      stage: row.stage,
      ...(row.status === null ? {} : { status: row.status }),
      enteredStageAt: row.created_at.toISOString(),
    }));
}
