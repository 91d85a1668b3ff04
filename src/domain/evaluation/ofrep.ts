import type { ClientFeature } from '../client-features/environment-configuration.js';
import type { EvaluationContext, FlagConfiguration } from './evaluate.js';
import { playground, type PlaygroundFeature } from './playground.js';

/**
 * OpenFeature's Remote Evaluation Protocol (OFREP) over Vexil's flags: each flag evaluated by the SDK's own engine
 * (the playground's, so the outcome and its explanation cannot disagree), answered as OpenFeature sees flags.
 */

/** OpenFeature resolution reasons, as they happened. */
export type OfrepReason = 'STATIC' | 'TARGETING_MATCH' | 'SPLIT' | 'DISABLED' | 'DEFAULT';

export interface OfrepEvaluation {
  key: string;
  /** The flag's state (boolean), or, for a flag with variants, its variant's payload (or name when it has none). */
  value: boolean | string | number | Record<string, unknown> | unknown[];
  reason: OfrepReason;
  variant: string;
  metadata: { project: string; flagType: string };
}

/** A context attribute OFREP may send that SDK contexts cannot hold (an object, an array, null). */
export class InvalidContextError extends Error {}

const STANDARD_FIELDS = new Set(['userId', 'sessionId', 'remoteAddress', 'appName', 'currentTime']);

/**
 * OFREP's context as an SDK context: `targetingKey` is the user id (`userId` wins when both are given), the
 * standard Unleash fields keep their meaning, and every other attribute is a property. Numbers and booleans
 * become strings, as SDK properties are; the environment is the token's, whatever the context says.
 */
export function sdkContextOf(context: Record<string, unknown>, environment: string, remoteAddress: string): EvaluationContext {
  const properties: Record<string, string> = {};
  const fields: Record<string, string> = {};
  for (const [name, value] of Object.entries(context)) {
    if (name === 'targetingKey' || name === 'environment') continue;
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
      throw new InvalidContextError(`The context attribute "${name}" must be a string, a number or a boolean`);
    }
    if (STANDARD_FIELDS.has(name)) fields[name] = String(value);
    else properties[name] = String(value);
  }
  if (fields.currentTime !== undefined && Number.isNaN(Date.parse(fields.currentTime))) {
    throw new InvalidContextError('The context attribute "currentTime" must be a date-time');
  }
  const userId = fields.userId ?? (typeof context.targetingKey === 'string' ? context.targetingKey : undefined);
  return {
    ...fields,
    ...(userId !== undefined ? { userId } : {}),
    environment,
    remoteAddress: fields.remoteAddress ?? remoteAddress,
    ...(fields.currentTime !== undefined ? { currentTime: new Date(fields.currentTime) } : {}),
    properties,
  } as EvaluationContext;
}

/** A variant payload as the value it stands for: numbers as numbers, JSON as what it holds. */
function payloadValue(payload: { type: string; value: string }): OfrepEvaluation['value'] {
  if (payload.type === 'number') {
    const number = Number(payload.value);
    return Number.isFinite(number) ? number : payload.value;
  }
  if (payload.type === 'json') {
    try {
      return JSON.parse(payload.value) as Record<string, unknown>;
    } catch {
      return payload.value;
    }
  }
  return payload.value;
}

/** A strategy that turns the flag on for every context. */
function unconditional(strategy: PlaygroundFeature['strategies']['data'][number]): boolean {
  if (strategy.constraints.length > 0 || strategy.segments.length > 0) return false;
  return strategy.name === 'default' || (strategy.name === 'flexibleRollout' && Number(strategy.parameters.rollout) >= 100);
}

function asOfrep(feature: ClientFeature, outcome: PlaygroundFeature): OfrepEvaluation {
  const metadata = { project: feature.project, flagType: feature.type };
  if (!outcome.isEnabledInCurrentEnvironment) return { key: feature.name, value: false, reason: 'DISABLED', variant: 'off', metadata };
  if (!outcome.isEnabled) return { key: feature.name, value: false, reason: 'DEFAULT', variant: 'off', metadata };
  if (outcome.variant.enabled) {
    const value = outcome.variant.payload ? payloadValue(outcome.variant.payload) : outcome.variant.name;
    return { key: feature.name, value, reason: 'SPLIT', variant: outcome.variant.name, metadata };
  }
  const strategies = outcome.strategies.data;
  const matched = strategies.find((strategy) => strategy.result.enabled === true);
  const reason: OfrepReason =
    (feature.dependencies?.length ?? 0) === 0 && (strategies.length === 0 || strategies.some(unconditional))
      ? 'STATIC'
      : matched?.name === 'flexibleRollout' && matched.constraints.length === 0 && matched.segments.length === 0
        ? 'SPLIT'
        : 'TARGETING_MATCH';
  return { key: feature.name, value: true, reason, variant: 'on', metadata };
}

/** Each of `features` evaluated for the context; `all` holds their parents. */
export async function evaluateForOpenFeature(
  features: ClientFeature[],
  configuration: FlagConfiguration,
  context: EvaluationContext,
): Promise<OfrepEvaluation[]> {
  // A flag that is off in the environment is off for every context: only those that are on need the engine.
  const on = features.filter((feature) => feature.enabled);
  const outcomes = new Map((await playground(on, configuration, context)).map((outcome) => [outcome.name, outcome]));
  return features.map((feature) =>
    feature.enabled
      ? asOfrep(feature, outcomes.get(feature.name)!)
      : {
          key: feature.name,
          value: false,
          reason: 'DISABLED' as const,
          variant: 'off',
          metadata: { project: feature.project, flagType: feature.type },
        },
  );
}
