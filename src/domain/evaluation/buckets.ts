import type { Variant } from '../features/feature-views.js';
import { contextValue, type EvaluationContext } from './context.js';
import { GroupHash } from './group-hash.js';

// The SDKs' bucketing: murmurhash3 of `groupId:stickinessValue`, seeded differently for rollouts and variants
// so that the two are not correlated.
const STRATEGY_SEED = 0;
const VARIANT_SEED = 86028157;

const asText = (value: unknown): string => (typeof value === 'string' ? value : String(value));

/** A rollout group (a strategy's `groupId`): where a stickiness value falls in it, 1 to 100. */
export class RolloutGroup {
  private readonly hash: GroupHash;
  constructor(groupId: unknown) {
    this.hash = new GroupHash(`${groupId}:`, STRATEGY_SEED);
  }
  percentile(id: unknown): number {
    return (this.hash.of(asText(id)) % 100) + 1;
  }
}

/** What the SDKs hash when a context has no value to stick to: a new number each time. */
export const randomStickiness = (): string => String(Math.round(Math.random() * 100000));

const DEFAULT_STICKINESS_FIELDS = ['userId', 'sessionId', 'remoteAddress'] as const;

function seedOf(context: EvaluationContext, stickiness: string | undefined): string {
  if (stickiness !== undefined && stickiness !== 'default') {
    const value = contextValue(context, stickiness);
    return value ? value : randomStickiness();
  }
  for (const field of DEFAULT_STICKINESS_FIELDS) {
    const value = context[field];
    if (typeof value === 'string' && value !== '') return value;
  }
  return randomStickiness();
}

interface Override {
  contextName: string;
  values: Set<unknown>;
}

/**
 * Picks one of a list of variants for a context, as the SDKs do: an override naming the context's value wins,
 * else the weighted bucket of its stickiness value. Weights and overrides are read once, when compiled.
 */
export class VariantPicker {
  private readonly totalWeight: number;
  private readonly weights: number[];
  private readonly overrides: Array<{ index: number; overrides: Override[] }>;
  private readonly hash: GroupHash;

  constructor(
    variants: readonly Variant[],
    groupId: unknown,
    private readonly stickiness: string | undefined,
  ) {
    this.weights = variants.map((variant) => variant.weight);
    this.totalWeight = this.weights.reduce((sum, weight) => sum + weight, 0);
    this.overrides = variants.flatMap((variant, index) =>
      variant.overrides
        ? [{ index, overrides: variant.overrides.map((o) => ({ contextName: o.contextName, values: new Set<unknown>(o.values) })) }]
        : [],
    );
    this.hash = new GroupHash(`${groupId}:`, VARIANT_SEED);
  }

  /** The index of the chosen variant, or -1 when none is (no weight at all). */
  pick(context: EvaluationContext): number {
    if (this.totalWeight <= 0) return -1;
    for (const { index, overrides } of this.overrides) {
      for (const override of overrides) if (override.values.has(contextValue(context, override.contextName))) return index;
    }
    const target = (this.hash.of(seedOf(context, this.stickiness)) % this.totalWeight) + 1;
    let counter = 0;
    for (let index = 0; index < this.weights.length; index++) {
      const weight = this.weights[index]!;
      if (weight === 0) continue;
      counter += weight;
      if (counter >= target) return index;
    }
    return -1;
  }
}
