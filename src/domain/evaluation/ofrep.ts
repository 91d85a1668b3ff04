import type { ClientFeature, ClientStrategy } from '../client-features/environment-configuration.js';
import type { EvaluationContext } from './context.js';
import type { EvaluationCounter } from '../usage/usage-tally.js';
import { type Engine, engineFor, type FlagConfiguration, type Outcome } from './engine.js';
import { flagEvaluationEventsOn, flagEvaluationSampled, recordFlagEvaluation } from '../../shared/flag-evaluation-events.js';

/**
 * OpenFeature's Remote Evaluation Protocol (OFREP) over Vexil's flags: each flag evaluated by Vexil's engine,
 * answered as OpenFeature sees flags.
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
function unconditional(strategy: ClientStrategy): boolean {
  if ((strategy.constraints?.length ?? 0) > 0 || (strategy.segments?.length ?? 0) > 0) return false;
  return strategy.name === 'default' || (strategy.name === 'flexibleRollout' && Number(strategy.parameters.rollout) >= 100);
}

/** An answer of the engine as OpenFeature sees it: the reason says how the value came about. */
export function ofrepEvaluation(outcome: Outcome): OfrepEvaluation {
  const { feature } = outcome.flag;
  const metadata = { project: feature.project, flagType: feature.type };
  const key = feature.name;
  if (!feature.enabled) return { key, value: false, reason: 'DISABLED', variant: 'off', metadata };
  if (!outcome.enabled) return { key, value: false, reason: 'DEFAULT', variant: 'off', metadata };
  const { variant } = outcome;
  if (variant.enabled) {
    return { key, value: variant.payload ? payloadValue(variant.payload) : variant.name, reason: 'SPLIT', variant: variant.name, metadata };
  }
  const strategies = feature.strategies;
  const matched = outcome.strategy >= 0 ? strategies[outcome.strategy] : undefined;
  const reason: OfrepReason =
    (feature.dependencies?.length ?? 0) === 0 && (strategies.length === 0 || strategies.some(unconditional))
      ? 'STATIC'
      : matched?.name === 'flexibleRollout' && (matched.constraints?.length ?? 0) === 0 && (matched.segments?.length ?? 0) === 0
        ? 'SPLIT'
        : 'TARGETING_MATCH';
  return { key, value: true, reason, variant: 'on', metadata };
}

/** An evaluation recorded as a telemetry event when it is among the sampled (every server-side evaluation calls it). */
export function recordSampledEvaluation(outcome: Outcome): void {
  if (!flagEvaluationSampled()) return;
  const { key, value, reason, variant, metadata } = ofrepEvaluation(outcome);
  recordFlagEvaluation({ key, project: metadata.project, variant, value, reason });
}

/** The evaluation serialised, once per answer and configuration. */
function ofrepJson(outcome: Outcome): string {
  outcome.ofrepJson ??= JSON.stringify(ofrepEvaluation(outcome));
  return outcome.ofrepJson;
}

/** One flag evaluated for the context, serialised. */
export function evaluateOneForOpenFeature(
  feature: ClientFeature,
  configuration: FlagConfiguration,
  context: EvaluationContext,
  counter: EvaluationCounter,
): string {
  const engine = engineFor(configuration);
  const outcome = engine.evaluate(engine.flag(feature.name)!, context);
  counter.evaluated(feature.name, outcome.enabled);
  recordSampledEvaluation(outcome);
  return ofrepJson(outcome);
}

/** A scope's flags split for bulk answers: those off in the environment answer the same to every context. */
interface BulkParts {
  /** The flags off in the environment, serialised together once: the same bytes in every answer. */
  offJson: Buffer;
  offNames: string[];
  on: ClientFeature[];
}

const bulkParts = new WeakMap<readonly ClientFeature[], BulkParts>();

function bulkPartsOf(features: readonly ClientFeature[], engine: Engine): BulkParts {
  let parts = bulkParts.get(features);
  if (!parts) {
    const off = features.filter((feature) => !feature.enabled);
    parts = {
      offJson: Buffer.from(off.map((feature) => ofrepJson(engine.flag(feature.name)!.off)).join(',')),
      offNames: off.map((feature) => feature.name),
      on: features.filter((feature) => feature.enabled),
    };
    bulkParts.set(features, parts);
  }
  return parts;
}

/**
 * The flags evaluated for a context, serialised as the members of a JSON array (without brackets): those off in
 * the environment, the same bytes for every context and kept for as long as the configuration, and then those on,
 * evaluated for this context (each answer's JSON is kept with the answer).
 */
export interface BulkEvaluation {
  off: Buffer;
  on: string;
}

/** Each of `features` evaluated for the context; only the flags that are on are evaluated per request. */
export function evaluateForOpenFeature(
  features: readonly ClientFeature[],
  configuration: FlagConfiguration,
  context: EvaluationContext,
  counter: EvaluationCounter,
): BulkEvaluation {
  const engine = engineFor(configuration);
  const { offJson, offNames, on } = bulkPartsOf(features, engine);
  counter.allOff(offNames);
  if (flagEvaluationEventsOn()) for (const name of offNames) recordSampledEvaluation(engine.flag(name)!.off);
  const flags = engine.compiledList(on);
  const parts = new Array<string>(flags.length);
  for (let index = 0; index < flags.length; index++) {
    const outcome = engine.evaluate(flags[index]!, context);
    counter.evaluated(outcome.flag.name, outcome.enabled);
    recordSampledEvaluation(outcome);
    parts[index] = ofrepJson(outcome);
  }
  return { off: offJson, on: parts.join(',') };
}
