import type { ClientFeature } from '../client-features/environment-configuration.js';
import type { EvaluationContext } from './context.js';
import { engineFor, type FlagConfiguration, type Outcome } from './engine.js';
import { recordSampledEvaluation } from './ofrep.js';

/** A flag as the frontend API lists it (Unleash's frontendApiFeatureSchema). */
function toggleJson(outcome: Outcome): string {
  outcome.frontendJson ??= JSON.stringify({
    name: outcome.flag.name,
    enabled: outcome.enabled,
    variant: { ...outcome.variant, feature_enabled: outcome.enabled, featureEnabled: outcome.enabled },
    impressionData: outcome.flag.feature.impressionData,
  });
  return outcome.frontendJson;
}

/**
 * The frontend API's answer for one context, serialised: only the flags on for it, as Unleash sends them (a
 * browser learns nothing of the others), or with `all` every flag of `features`, off ones as off (the `/all` paths
 * of Unleash Edge). Each toggle's JSON is made once per configuration and reused.
 */
export function frontendAnswer(
  features: readonly ClientFeature[],
  configuration: FlagConfiguration,
  context: EvaluationContext,
  { all = false }: { all?: boolean } = {},
): string {
  const engine = engineFor(configuration);
  const parts: string[] = [];
  for (const flag of engine.compiledList(features)) {
    const outcome = engine.evaluate(flag, context);
    recordSampledEvaluation(outcome);
    if (outcome.enabled || all) parts.push(toggleJson(outcome));
  }
  // One join: growing the string toggle by toggle costs more than the evaluations.
  return `{"toggles":[${parts.join(',')}]}`;
}
