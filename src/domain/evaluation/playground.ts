import type { Context } from 'unleash-client/lib/context.js';
import type { Constraint as SdkConstraint } from 'unleash-client/lib/strategy/strategy.js';
import type { ClientFeature } from '../client-features/environment-configuration.js';
import type { Constraint } from '../features/feature-views.js';
import { evaluateAll, sdkEngine, type FlagConfiguration } from './evaluate.js';

/** Unleash's playgroundFeatureSchema: the outcome of one flag, and why, strategy by strategy. */
export interface PlaygroundFeature {
  name: string;
  projectId: string;
  isEnabled: boolean;
  isEnabledInCurrentEnvironment: boolean;
  hasUnsatisfiedDependency: boolean;
  variant: { name: string; enabled: boolean; payload?: { type: string; value: string } };
  variants: ClientFeature['variants'];
  strategies: { result: boolean | 'unknown'; data: PlaygroundStrategy[] };
}

export interface PlaygroundStrategy {
  id: string;
  name: string;
  title?: string;
  disabled: false;
  parameters: Record<string, string>;
  result: { enabled: boolean | 'unknown'; evaluationStatus: 'complete' | 'incomplete' };
  constraints: Array<Constraint & { result: boolean }>;
  segments: Array<{ id: number; name: string; result: boolean; constraints: Array<Constraint & { result: boolean }> }>;
}

/**
 * Evaluates every flag for the context and explains each strategy: its constraints, its segments and its own
 * parameters. The outcome comes from the SDK's client (dependencies and variants included); the explanation
 * uses the same strategy objects, so the two cannot disagree. A strategy the SDK does not know is `unknown`.
 */
export async function playground(
  features: ClientFeature[],
  configuration: FlagConfiguration,
  context: Context,
): Promise<PlaygroundFeature[]> {
  const { strategies } = await sdkEngine();
  const outcomes = new Map((await evaluateAll(features, configuration, context)).map((toggle) => [toggle.name, toggle]));
  return features.map((feature) => {
    const outcome = outcomes.get(feature.name)!;
    const data = feature.strategies.map((strategy): PlaygroundStrategy => {
      const implementation = strategies.get(strategy.name);
      const check = (constraint: Constraint) => ({
        ...constraint,
        result: implementation ? implementation.checkConstraint(constraint as unknown as SdkConstraint, context) : false,
      });
      const constraints = strategy.constraints.map(check);
      const usedSegments = (strategy.segments ?? []).map((id) => {
        const segment = configuration.segments.get(id);
        const checked = (segment?.constraints ?? []).map(check);
        return {
          id,
          name: segment?.name ?? `#${id}`,
          result: segment !== undefined && checked.every((c) => c.result),
          constraints: checked,
        };
      });
      const enabled = implementation
        ? constraints.every((c) => c.result) &&
          usedSegments.every((s) => s.result) &&
          implementation.isEnabled(strategy.parameters, context)
        : ('unknown' as const);
      return {
        id: strategy.id,
        name: strategy.name,
        ...(strategy.title ? { title: strategy.title } : {}),
        disabled: false,
        parameters: strategy.parameters,
        result: { enabled, evaluationStatus: implementation ? 'complete' : 'incomplete' },
        constraints,
        segments: usedSegments,
      };
    });
    const anyOn = data.some((strategy) => strategy.result.enabled === true);
    const anyUnknown = data.some((strategy) => strategy.result.enabled === 'unknown');
    const strategyResult: boolean | 'unknown' = data.length === 0 ? true : anyOn ? true : anyUnknown ? 'unknown' : false;
    const dependenciesMet = outcome.enabled || !feature.enabled || strategyResult !== true;
    return {
      name: feature.name,
      projectId: feature.project,
      isEnabled: outcome.enabled,
      isEnabledInCurrentEnvironment: feature.enabled,
      hasUnsatisfiedDependency: (feature.dependencies?.length ?? 0) > 0 && !dependenciesMet,
      variant: {
        name: outcome.variant.name,
        enabled: outcome.variant.enabled,
        ...(outcome.variant.payload ? { payload: outcome.variant.payload } : {}),
      },
      variants: feature.variants,
      strategies: { result: strategyResult, data },
    };
  });
}
