import type { UnitOfWork } from '../../db/unit-of-work.js';
import { BadDataError } from '../../shared/errors.js';
import { addDependency } from './dependencies.js';
import { setEnvironmentVariants } from './feature-environments.js';
import type { FeatureType } from './feature-types.js';
import { createFeature, getFeature, validateFeatureName } from './features.js';
import { addStrategy } from './strategies.js';

export interface CloneInput {
  name: string;
  /** Whether strategies' `groupId` becomes the new name (so the copy buckets users afresh); true unless false. */
  replaceGroupId?: boolean;
}

/**
 * Makes a new flag in the same project from an active one, as Unleash's clone does: its type, description and
 * impression data, each environment's variants and strategies, and its parents; not its tags nor whether it is
 * on (the copy starts off everywhere). Strategies a release plan put there stay with the plan. Every step is the
 * command a person would run, so each is guarded and recorded as theirs.
 */
export async function cloneFeature(uow: UnitOfWork, project: string, sourceName: string, input: CloneInput): Promise<void> {
  const source = await getFeature(uow.tx, project, sourceName, uow.actor);
  if (source.archived) throw new BadDataError(`Flag "${sourceName}" is archived; revive it before cloning it`);
  const fromPlans = new Set(
    (
      await uow.tx
        .selectFrom('feature_strategies')
        .select('id')
        .where('feature_name', '=', sourceName)
        .where('milestone_id', 'is not', null)
        .execute()
    ).map((row) => row.id),
  );
  await validateFeatureName(uow.tx, input.name);
  await createFeature(uow, {
    project,
    name: input.name,
    type: source.type as FeatureType,
    description: source.description,
    impressionData: source.impressionData,
  });
  for (const environment of source.environments) {
    const target = { project, featureName: input.name, environment: environment.name };
    if (environment.variants.length > 0) await setEnvironmentVariants(uow, target, environment.variants);
    for (const { id, featureName: _source, parameters, ...strategy } of environment.strategies) {
      if (fromPlans.has(id)) continue;
      const regrouped = input.replaceGroupId !== false && 'groupId' in parameters;
      await addStrategy(uow, target, { ...strategy, parameters: regrouped ? { ...parameters, groupId: input.name } : parameters });
    }
  }
  for (const dependency of source.dependencies) await addDependency(uow, project, input.name, dependency);
}
