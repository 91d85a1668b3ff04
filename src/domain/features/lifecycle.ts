import { sql } from 'kysely';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { LIFECYCLE_STAGES } from './feature-views.js';
import { recordFeatureEvent } from './feature-events.js';
import { findFeature } from './feature-lookup.js';
import type { Db } from '../../db/database.js';

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

export const COMPLETION_STATUSES = ['kept', 'discarded'] as const;

/** How a flag was completed (Unleash's `featureLifecycleCompletedSchema`): its code kept or discarded. */
export interface Completion {
  status: (typeof COMPLETION_STATUSES)[number];
  statusValue?: string;
}

async function currentCompletion(uow: UnitOfWork, name: string) {
  const row = await uow.tx
    .selectFrom('feature_lifecycles')
    .select(['status', 'status_value'])
    .where('feature_name', '=', name)
    .where('stage', '=', 'completed')
    .executeTakeFirst();
  return row ? { status: row.status, statusValue: row.status_value } : undefined;
}

/** The event data Unleash records for a completion, `kept` included for integrations that read it. */
const completionData = (completion: { status: string | null; statusValue: string | null }) => ({
  ...completion,
  kept: completion.status === 'kept',
});

/**
 * Moves an active flag into the `completed` stage with a status. Completing a completed flag again with another
 * status updates it (recording the change) and keeps the time it entered the stage; with the same status it
 * changes nothing and records nothing.
 */
export async function completeFeature(uow: UnitOfWork, project: string, name: string, completion: Completion): Promise<void> {
  await findFeature(uow.tx, project, name, { lock: true, archived: false });
  const before = await currentCompletion(uow, name);
  const after = { status: completion.status, statusValue: completion.statusValue ?? null };
  if (before && before.status === after.status && before.statusValue === after.statusValue) return;
  if (before) {
    await uow.tx
      .updateTable('feature_lifecycles')
      .set({ status: after.status, status_value: after.statusValue })
      .where('feature_name', '=', name)
      .where('stage', '=', 'completed')
      .execute();
  } else {
    await enterLifecycleStage(uow, name, 'completed', completion);
  }
  await recordFeatureEvent(uow, {
    type: 'feature-completed',
    featureName: name,
    project,
    data: completionData(after),
    preData: before && completionData(before),
  });
}

/** Takes an active flag out of `completed`, back to the stage it was in; a flag not completed changes nothing. */
export async function uncompleteFeature(uow: UnitOfWork, project: string, name: string): Promise<void> {
  await findFeature(uow.tx, project, name, { lock: true, archived: false });
  const before = await currentCompletion(uow, name);
  if (!before) return;
  await leaveLifecycleStage(uow, name, 'completed');
  await recordFeatureEvent(uow, {
    type: 'feature-uncompleted',
    featureName: name,
    project,
    preData: completionData(before),
  });
}

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

/** How many flags are in each stage of their lifecycle (the last they reached), as Unleash's `GET /api/admin/lifecycle/count`. */
export async function countFlagsByLifecycleStage(
  db: Db,
): Promise<{ initial: number; preLive: number; live: number; completed: number; archived: number }> {
  const order = sql.raw(`ARRAY[${LIFECYCLE_STAGES.map((stage) => `'${stage}'`).join(', ')}]`);
  const rows = await db
    .selectFrom((eb) =>
      eb
        .selectFrom('feature_lifecycles as fl')
        .innerJoin('features as f', 'f.name', 'fl.feature_name')
        .select(['fl.feature_name', sql<number>`max(array_position(${order}, fl.stage))`.as('reached')])
        .groupBy('fl.feature_name')
        .as('current'),
    )
    .select(['current.reached', sql<number>`count(*)::int`.as('flags')])
    .groupBy('current.reached')
    .execute();
  const count = (stage: (typeof LIFECYCLE_STAGES)[number]) =>
    rows.find((row) => row.reached === LIFECYCLE_STAGES.indexOf(stage) + 1)?.flags ?? 0;
  return {
    initial: count('initial'),
    preLive: count('pre-live'),
    live: count('live'),
    completed: count('completed'),
    archived: count('archived'),
  };
}
