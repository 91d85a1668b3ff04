import type { UnitOfWork } from '../../db/unit-of-work.js';
import { BadDataError, NotFoundError } from '../../shared/errors.js';
import { guardDirectChange } from '../protected-environments/guard.js';
import type { FeatureRow, Variant } from './feature-views.js';
import type { Db, LockingHandle } from '../../db/database.js';

/**
 * The flag `name` of `project`, locked for the caller's transaction when asked. A flag that exists in another
 * project is not found here: paths name both, as in Unleash.
 */
export async function findFeature<Lock extends boolean = false>(
  tx: LockingHandle<Lock>,
  project: string,
  name: string,
  options: { lock?: Lock; archived?: boolean } = {},
): Promise<FeatureRow> {
  let query = tx.selectFrom('features').selectAll().where('name', '=', name).where('project', '=', project);
  if (options.lock) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  if (!row) throw new NotFoundError(`Could not find flag "${name}" in project "${project}"`);
  if (options.archived === false && row.archived_at) {
    throw new BadDataError(`Flag "${name}" is archived; revive it first`);
  }
  return row;
}

/** The project of the flag called `name`, or undefined when there is none (its route then answers 404). */
export async function projectOfFlag(db: Db, name: string): Promise<string | undefined> {
  const row = await db.selectFrom('features').select('project').where('name', '=', name).executeTakeFirst();
  return row?.project;
}

/** The project must exist: a 404 naming it otherwise. */
export async function assertProject(db: Db, project: string): Promise<void> {
  const row = await db.selectFrom('projects').select('id').where('id', '=', project).executeTakeFirst();
  if (!row) throw new NotFoundError(`Could not find project "${project}"`);
}

/** The environment must exist and be enabled in the flag's project. */
export async function assertProjectEnvironment(tx: Db, project: string, environment: string): Promise<string> {
  const row = await tx
    .selectFrom('environments as e')
    .leftJoin('project_environments as pe', (join) => join.onRef('pe.environment_name', '=', 'e.name').on('pe.project_id', '=', project))
    .select(['e.name', 'e.type', 'pe.project_id'])
    .where('e.name', '=', environment)
    .executeTakeFirst();
  if (!row) throw new NotFoundError(`Could not find environment "${environment}"`);
  if (!row.project_id) throw new NotFoundError(`Environment "${environment}" is not enabled in project "${project}"`);
  return row.type;
}

/** A flag in one environment of its project: what turning on and off, strategies and variants change. */
export interface FlagEnvironment {
  project: string;
  featureName: string;
  environment: string;
}

/**
 * The start of every change to a flag in one environment, done once per change: refused where the environment
 * requires change requests, the flag locked for the transaction, the environment checked to be the project's.
 * Returns the environment's type.
 */
export async function lockFlagEnvironment(uow: UnitOfWork, target: FlagEnvironment): Promise<string> {
  await guardDirectChange(uow, { kind: 'flag-environment', ...target });
  await findFeature(uow.tx, target.project, target.featureName, { lock: true, archived: false });
  return assertProjectEnvironment(uow.tx, target.project, target.environment);
}

/** A flag in one environment as its changes start from: the environment's type, and the flag's state there. */
export interface LockedFlagEnvironment {
  environmentType: string;
  enabled: boolean;
  variants: Variant[];
  hasStrategies: boolean;
}

/** `lockFlagEnvironment`, then the flag's state in the environment, read under the lock in one query. */
export async function lockFlagEnvironmentState(uow: UnitOfWork, target: FlagEnvironment): Promise<LockedFlagEnvironment> {
  const environmentType = await lockFlagEnvironment(uow, target);
  const row = await uow.tx
    .selectNoFrom((eb) => [
      eb
        .selectFrom('feature_environments')
        .select('enabled')
        .where('feature_name', '=', target.featureName)
        .where('environment', '=', target.environment)
        .as('enabled'),
      eb
        .selectFrom('feature_environments')
        .select('variants')
        .where('feature_name', '=', target.featureName)
        .where('environment', '=', target.environment)
        .as('variants'),
      eb
        .exists(
          eb
            .selectFrom('feature_strategies')
            .select('id')
            .where('feature_name', '=', target.featureName)
            .where('environment', '=', target.environment),
        )
        .as('has_strategies'),
    ])
    .executeTakeFirstOrThrow();
  return {
    environmentType,
    enabled: row.enabled ?? false,
    variants: (row.variants ?? []) as Variant[],
    hasStrategies: Boolean(row.has_strategies),
  };
}
