import type { Db } from '../../db/database.js';
import { inUnitOfWork, type UnitOfWork } from '../../db/unit-of-work.js';
import type { Clock } from '../../shared/clock.js';
import { SYSTEM_ACTOR } from '../access/actor.js';
import { recordEvent } from '../events/record-event.js';
import { BECAME_READY_EVENT, type EnvironmentReadiness, removalReadiness } from './removal-readiness.js';

const isReady = (verdict: string) => verdict !== 'keep';

/**
 * Judges every live flag of a project with a production environment and keeps each verdict. A verdict that changed
 * to a ready one records BECAME_READY_EVENT in the same transaction as the verdict, and so the integrations'
 * deliveries with it; the row lock makes the change, and so the event, happen once however many instances watch. A
 * flag seen for the first time (a new flag, or every flag when the watch first runs) is kept without an event.
 */
export async function watchRemovalReadiness(deps: { db: Db; clock: Clock }): Promise<{ judged: number; becameReady: string[] }> {
  const flags = await deps.db
    .selectFrom('features as f')
    .select(['f.name', 'f.project'])
    .where('f.archived_at', 'is', null)
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('project_environments as pe')
          .innerJoin('environments as e', 'e.name', 'pe.environment_name')
          .select('pe.environment_name')
          .whereRef('pe.project_id', '=', 'f.project')
          .where('e.type', '=', 'production'),
      ),
    )
    .orderBy('f.name')
    .execute();
  const becameReady: string[] = [];
  for (const flag of flags) {
    const readiness = await removalReadiness(deps.db, SYSTEM_ACTOR, flag.project, flag.name, deps.clock.now());
    for (const judged of readiness.environments) {
      const announced = await inUnitOfWork(deps, SYSTEM_ACTOR, (uow) => keepVerdict(uow, flag, judged));
      if (announced) becameReady.push(`${flag.name}@${judged.environment}`);
    }
  }
  return { judged: flags.length, becameReady };
}

/** Stores one verdict; true when it is a change to a ready verdict (and the event was recorded). */
async function keepVerdict(uow: UnitOfWork, flag: { name: string; project: string }, judged: EnvironmentReadiness): Promise<boolean> {
  const row = {
    feature_name: flag.name,
    environment: judged.environment,
    verdict: judged.verdict,
    reasons: JSON.stringify(judged.reasons),
    judged_at: uow.now,
  };
  const key = { feature_name: flag.name, environment: judged.environment };
  const previous = await uow.tx
    .selectFrom('removal_readiness')
    .select('verdict')
    .where((eb) => eb.and(key))
    .forUpdate()
    .executeTakeFirst();
  if (!previous) {
    await uow.tx
      .insertInto('removal_readiness')
      .values(row)
      .onConflict((conflict) => conflict.columns(['feature_name', 'environment']).doNothing())
      .execute();
    return false;
  }
  await uow.tx
    .updateTable('removal_readiness')
    .set({ verdict: row.verdict, reasons: row.reasons, judged_at: row.judged_at })
    .where((eb) => eb.and(key))
    .execute();
  if (previous.verdict === judged.verdict || !isReady(judged.verdict)) return false;
  await recordEvent(uow, {
    type: BECAME_READY_EVENT,
    project: flag.project,
    environment: judged.environment,
    featureName: flag.name,
    data: { verdict: judged.verdict, reasons: judged.reasons, previousVerdict: previous.verdict },
  });
  return true;
}
