import type {
  ClientFeature,
  ClientSegment,
  ClientStrategy,
  EnvironmentConfiguration,
} from '../client-features/environment-configuration.js';
import type { VariantPayload } from '../features/feature-views.js';
import { VariantPicker } from './buckets.js';
import { compileConstraint, NEVER, type Predicate } from './constraints.js';
import type { EvaluationContext } from './context.js';
import { compileStrategyRule } from './strategies.js';

/**
 * Vexil's evaluation engine. Each flag of a configuration is compiled once into predicates (constraint values
 * parsed, rollout groups and variant weights read) and every answer it can give is built ahead, so evaluating
 * a context allocates nothing but its own strings. It answers as the official SDKs do, to the bucket: the
 * client specification and differential tests against `unleash-client` hold it to that.
 */

/** What an evaluation reads besides the flags asked about: every flag (their parents) and segment of the environment. */
export type FlagConfiguration = Pick<EnvironmentConfiguration, 'features' | 'segments'>;

export interface VariantAnswer {
  name: string;
  enabled: boolean;
  payload?: VariantPayload;
}

const DISABLED_VARIANT: VariantAnswer = Object.freeze({ name: 'disabled', enabled: false });

/**
 * One answer a flag can give, built once per flag: off, on through a strategy, or on with a variant. The wire
 * forms of the answer are kept on it by the APIs that send it, so each is serialised once per configuration.
 */
export class Outcome {
  /** This answer as a frontend API toggle, once serialised. */
  frontendJson?: string;
  /** This answer as an OFREP evaluation, once serialised. */
  ofrepJson?: string;

  constructor(
    readonly flag: CompiledFlag,
    readonly enabled: boolean,
    readonly variant: VariantAnswer,
    /** The strategy that turned the flag on (its index), or -1: off, no strategies, or a flag variant. */
    readonly strategy: number,
  ) {}
}

/** A segment as a strategy uses it: its constraints compiled, or one that never holds when the segment is gone. */
export interface CompiledSegment {
  id: number;
  segment: ClientSegment | undefined;
  constraints: Predicate[];
}

export class CompiledStrategy {
  readonly constraints: Predicate[];
  readonly segments: CompiledSegment[];
  /** Its own constraints, then every segment's, as the SDKs check them; `NEVER` stands for a missing segment. */
  readonly checks: Predicate[];
  /** The strategy's rule; `undefined` for a strategy the SDKs do not know (a custom one). */
  readonly rule: Predicate | undefined;
  readonly variants: VariantPicker | undefined;
  readonly variantOutcomes: Outcome[] = [];

  constructor(
    readonly source: ClientStrategy,
    segments: ReadonlyMap<number, ClientSegment>,
  ) {
    this.constraints = (source.constraints ?? []).map(compileConstraint);
    this.segments = (source.segments ?? []).map((id) => {
      const segment = segments.get(id);
      return { id, segment, constraints: segment ? (segment.constraints ?? []).map(compileConstraint) : [NEVER] };
    });
    this.checks = [...this.constraints, ...this.segments.flatMap((segment) => segment.constraints)];
    this.rule = compileStrategyRule(source);
    const variants = source.variants ?? [];
    this.variants =
      variants.length > 0
        ? new VariantPicker(variants, source.parameters?.groupId, variants[0]!.stickiness || source.parameters?.stickiness)
        : undefined;
  }

  /** Whether the strategy turns its flag on for the context (constraints first, as the SDKs check them). */
  isOn(context: EvaluationContext): boolean {
    if (!this.rule) return false;
    for (const check of this.checks) if (!check(context)) return false;
    return this.rule(context);
  }
}

export class CompiledFlag {
  readonly name: string;
  /** On in the environment (else off for every context). */
  readonly enabled: boolean;
  readonly dependencies: ClientFeature['dependencies'];
  readonly strategies: CompiledStrategy[];
  readonly variants: VariantPicker | undefined;
  readonly off: Outcome;
  /** On through strategy i at index i + 1; at 0, on with no strategy to thank (a flag without strategies). */
  readonly on: Outcome[];
  readonly variantOutcomes: Outcome[];
  /** The segment objects compiled in, to know when a new configuration needs this flag compiled again. */
  readonly segmentsRead: Array<ClientSegment | undefined>;

  constructor(
    readonly feature: ClientFeature,
    segments: ReadonlyMap<number, ClientSegment>,
  ) {
    this.name = feature.name;
    this.enabled = feature.enabled;
    this.dependencies = feature.dependencies && feature.dependencies.length > 0 ? feature.dependencies : undefined;
    this.strategies = (feature.strategies ?? []).map((strategy) => new CompiledStrategy(strategy, segments));
    this.segmentsRead = this.strategies.flatMap((strategy) => strategy.segments.map((segment) => segment.segment));
    const variants = feature.variants ?? [];
    this.variants = variants.length > 0 ? new VariantPicker(variants, feature.name, variants[0]!.stickiness ?? undefined) : undefined;
    this.off = new Outcome(this, false, DISABLED_VARIANT, -1);
    this.on = [-1, ...this.strategies.keys()].map((index) => new Outcome(this, true, DISABLED_VARIANT, index));
    this.variantOutcomes = variants.map((variant) => new Outcome(this, true, variantAnswer(variant), -1));
    this.strategies.forEach((strategy, index) => {
      strategy.variantOutcomes.push(
        ...(strategy.source.variants ?? []).map((variant) => new Outcome(this, true, variantAnswer(variant), index)),
      );
    });
  }

  /** Still valid for a configuration whose segments are these. */
  readsSame(segments: ReadonlyMap<number, ClientSegment>): boolean {
    let index = 0;
    for (const strategy of this.strategies) {
      for (const segment of strategy.segments) if (segments.get(segment.id) !== this.segmentsRead[index++]) return false;
    }
    return true;
  }
}

function variantAnswer(variant: { name: string; payload?: VariantPayload }): VariantAnswer {
  return Object.freeze(
    variant.payload ? { name: variant.name, enabled: true, payload: variant.payload } : { name: variant.name, enabled: true },
  );
}

/** Compiled flags by the flag object they were compiled from: a flag unchanged by a new configuration is not compiled again. */
const compiledFlags = new WeakMap<ClientFeature, CompiledFlag>();

/** One configuration's flags, compiled, and the evaluation of a context against them. */
export class Engine {
  private readonly flags = new Map<string, CompiledFlag>();
  private readonly lists = new WeakMap<readonly ClientFeature[], CompiledFlag[]>();
  private readonly segments: ReadonlyMap<number, ClientSegment>;

  constructor(configuration: FlagConfiguration) {
    this.segments = configuration.segments;
    for (const feature of configuration.features) {
      let flag = compiledFlags.get(feature);
      if (!flag?.readsSame(configuration.segments)) {
        flag = new CompiledFlag(feature, configuration.segments);
        compiledFlags.set(feature, flag);
      }
      this.flags.set(feature.name, flag);
    }
  }

  flag(name: string): CompiledFlag | undefined {
    return this.flags.get(name);
  }

  /** The compiled form of a list of this configuration's flags (a scope's), kept as long as the list is. */
  compiledList(features: readonly ClientFeature[]): CompiledFlag[] {
    let list = this.lists.get(features);
    if (!list) {
      // Every caller passes flags of this configuration; one it lacks is compiled on its own rather than dropped.
      list = features.map((feature) => this.flags.get(feature.name) ?? new CompiledFlag(feature, this.segments));
      this.lists.set(features, list);
    }
    return list;
  }

  /** The flag's answer for the context, as an SDK's `getVariant` gives it. */
  evaluate(flag: CompiledFlag, context: EvaluationContext): Outcome {
    // The SDKs check the parents first; for a flag that is off the answer is the same, and cheaper this way.
    if (!flag.enabled || (flag.dependencies !== undefined && !this.dependenciesHold(flag.dependencies, context))) return flag.off;
    let strategyIndex = -1;
    const { strategies } = flag;
    if (strategies.length > 0) {
      for (let index = 0; index < strategies.length; index++) {
        const strategy = strategies[index]!;
        if (!strategy.isOn(context)) continue;
        if (strategy.variants) {
          const picked = strategy.variants.pick(context);
          if (picked >= 0) return strategy.variantOutcomes[picked]!;
        }
        strategyIndex = index;
        break;
      }
      if (strategyIndex < 0) return flag.off;
    }
    if (flag.variants) {
      const picked = flag.variants.pick(context);
      if (picked >= 0) return flag.variantOutcomes[picked]!;
    }
    return flag.on[strategyIndex + 1]!;
  }

  /**
   * The SDKs' dependency rule: every parent exists, has no parents of its own, and is on (with one of the
   * listed variants, when some are listed) or, for `enabled: false`, off.
   */
  private dependenciesHold(dependencies: NonNullable<ClientFeature['dependencies']>, context: EvaluationContext): boolean {
    for (const dependency of dependencies) {
      const parent = this.flags.get(dependency.feature);
      if (!parent || parent.dependencies !== undefined) return false;
      const outcome = this.evaluate(parent, context);
      if (dependency.enabled === false) {
        if (outcome.enabled) return false;
      } else if (dependency.variants?.length) {
        if (!outcome.enabled || !dependency.variants.includes(outcome.variant.name)) return false;
      } else if (!outcome.enabled) return false;
    }
    return true;
  }
}

/** One engine per configuration, built on its first evaluation and shared until the configuration is replaced. */
const engines = new WeakMap<readonly ClientFeature[], Engine>();

export function engineFor(configuration: FlagConfiguration): Engine {
  let engine = engines.get(configuration.features);
  if (!engine) {
    engine = new Engine(configuration);
    engines.set(configuration.features, engine);
  }
  return engine;
}
