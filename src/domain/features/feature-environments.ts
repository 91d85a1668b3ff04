import type { Operation } from 'fast-json-patch';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { recordFeatureEvent, recordFeatureEvents, type FeatureEventInput } from './feature-events.js';
import { assertProjectEnvironment, findFeature, lockFlagEnvironmentState } from './feature-lookup.js';
import type { Variant, VariantInput } from './feature-views.js';
import { applyPatch } from './features.js';
import { enterLifecycleStage } from './lifecycle.js';
import { defaultStrategyFor } from './project-environments.js';
import { insertStrategy, strategyAddedEvent, type StrategyTarget } from './strategies.js';
import { normalizeEnvironmentVariants } from './variants.js';
import type { Db } from '../../db/database.js';

/**
 * Turns a flag on or off in one environment. Turning on an environment without strategies first adds the
 * project's default strategy there (a 100% flexible rollout when it sets none), as Unleash does. Only a real
 * change records `feature-environment-enabled/disabled`; the first enabling moves the lifecycle on.
 */
export async function setFeatureEnvironmentEnabled(uow: UnitOfWork, target: StrategyTarget, enabled: boolean): Promise<void> {
  const { environmentType, enabled: wasEnabled, hasStrategies } = await lockFlagEnvironmentState(uow, target);
  if (wasEnabled === enabled) return;
  const events: FeatureEventInput[] = [];
  if (enabled && !hasStrategies) {
    events.push(strategyAddedEvent(target, await insertStrategy(uow, target, await defaultStrategyFor(uow.tx, target))));
  }
  await uow.tx
    .insertInto('feature_environments')
    .values({ feature_name: target.featureName, environment: target.environment, enabled, variants: '[]' })
    .onConflict((oc) => oc.columns(['feature_name', 'environment']).doUpdateSet({ enabled }))
    .execute();
  if (enabled) {
    await enterLifecycleStage(uow, target.featureName, environmentType === 'production' ? 'live' : 'pre-live');
  }
  events.push({
    ...target,
    type: enabled ? 'feature-environment-enabled' : 'feature-environment-disabled',
    data: { enabled },
    preData: { enabled: !enabled },
  });
  await recordFeatureEvents(uow, events);
}

/** Turns flags of one project on or off in one environment, all or none: a flag that is not found changes none. */
export async function setFeaturesEnvironmentEnabled(
  uow: UnitOfWork,
  target: { project: string; environment: string },
  featureNames: string[],
  enabled: boolean,
): Promise<void> {
  for (const featureName of new Set(featureNames)) await setFeatureEnvironmentEnabled(uow, { ...target, featureName }, enabled);
}

export async function getEnvironmentVariants(db: Db, target: StrategyTarget): Promise<Variant[]> {
  await findFeature(db, target.project, target.featureName);
  await assertProjectEnvironment(db, target.project, target.environment);
  const state = await db
    .selectFrom('feature_environments')
    .select('variants')
    .where('feature_name', '=', target.featureName)
    .where('environment', '=', target.environment)
    .executeTakeFirst();
  return (state?.variants ?? []) as Variant[];
}

/** Replaces the variants of one environment, weights distributed to 1000. */
export async function setEnvironmentVariants(
  uow: UnitOfWork,
  target: StrategyTarget,
  variants: VariantInput[],
  path = '/body',
): Promise<Variant[]> {
  const { variants: before } = await lockFlagEnvironmentState(uow, target);
  const after = normalizeEnvironmentVariants(variants, path);
  await uow.tx
    .insertInto('feature_environments')
    .values({ feature_name: target.featureName, environment: target.environment, enabled: false, variants: JSON.stringify(after) })
    .onConflict((oc) => oc.columns(['feature_name', 'environment']).doUpdateSet({ variants: JSON.stringify(after) }))
    .execute();
  await recordFeatureEvent(uow, {
    ...target,
    type: 'feature-environment-variants-updated',
    data: { variants: after },
    preData: { variants: before },
  });
  return after;
}

/** The variant list with a JSON Patch applied; callers validate it and store it with setEnvironmentVariants. */
export async function patchedEnvironmentVariants(
  uow: UnitOfWork,
  target: StrategyTarget,
  operations: Operation[],
): Promise<VariantInput[]> {
  const current = await getEnvironmentVariants(uow.tx, target);
  return applyPatch<VariantInput[]>(current, operations);
}
