import { seededRandom } from './seeded-random.js';
import { hostname } from 'node:os';
import UnleashClientModule from 'unleash-client/lib/client.js';
import type { FeatureInterface } from 'unleash-client/lib/feature.js';
import { defaultStrategies } from 'unleash-client/lib/strategy/index.js';
import type { Segment } from 'unleash-client/lib/strategy/strategy.js';
import type { ClientFeature, ClientSegment, ClientStrategy } from '../../src/domain/client-features/environment-configuration.js';
import type { EvaluationContext } from '../../src/domain/evaluation/context.js';
import { engineFor, type FlagConfiguration } from '../../src/domain/evaluation/engine.js';
import { CONSTRAINT_OPERATORS, type Constraint, type Variant } from '../../src/domain/features/feature-views.js';

/**
 * Differential testing of Vexil's engine against the official Node SDK: seeded random configurations (every
 * strategy, operator, segment, variant and dependency kind) and seeded random contexts (bad ones included),
 * each flag's answer compared. `Math.random` is held at one value per context while both evaluate, so the
 * SDKs' random stickiness and random rollouts draw the same numbers on both sides.
 */

// CommonJS with an `exports.default` class: tsx hands over the class itself, Node's loader the module object.
type ClientClass = typeof UnleashClientModule.default;
const UnleashClient =
  (UnleashClientModule as unknown as { default?: ClientClass }).default ?? (UnleashClientModule as unknown as ClientClass);

export class Draw {
  constructor(readonly next: () => number) {}
  int(max: number): number {
    return Math.floor(this.next() * max);
  }
  chance(probability: number): boolean {
    return this.next() < probability;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
  some<T>(items: readonly T[], max: number): T[] {
    return Array.from({ length: this.int(max + 1) }, () => this.pick(items));
  }
}

const FIELDS = [
  'userId',
  'sessionId',
  'remoteAddress',
  'appName',
  'environment',
  'plan',
  'customField',
  'version',
  'amount',
  'ip',
  'email',
];
const STRINGS = ['u1', 'u2', 'u13', 'U1', 'pro', 'Pro', 'free', 'app-a', 'production', 'a@example.com', 'x', '', ' pro ', 'ÆØÅ', '😀'];
const NUMBERS = ['0', '1', '2.5', '-3', '42', '1e3', 'abc', '', ' 7 '];
const VERSIONS = ['1.2.3', '1.2.3-beta.1', '1.2.3-alpha', 'v1.0.0', '2.0.0', '1.10.0', '1.2', 'not-a-version', '1.2.3+build.5'];
const DATES = ['2024-01-01T00:00:00.000Z', '2030-06-01T12:00:00Z', '2026-11-26', 'not-a-date', ''];
const ADDRESSES = ['10.0.0.1', '10.1.2.3', '192.168.1.5', '127.0.0.1', '::1', '2001:db8::1', '2001:db8:0:0:0:0:0:1', 'not-an-ip', ''];
const RANGES = ['10.0.0.0/8', '192.168.1.0/24', '127.0.0.1', '2001:db8::/32', '::1/128', '10.0.0.1/33', 'garbage', '0.0.0.0/0'];
/** Every operator Vexil stores, and one no SDK knows (never holds, inverted or not). */
const OPERATORS = [...CONSTRAINT_OPERATORS, 'UNKNOWN_OPERATOR'];
const PATTERNS = ['^u\\d+$', 'pro', '^(a|b)+$', '[', '.*@example\\.com$', 'ÆØ'];
const STICKINESS = ['default', 'userId', 'sessionId', 'random', 'customField', 'plan', 'remoteAddress', ''];

function constraintOf(draw: Draw): Constraint {
  const operator = draw.pick(OPERATORS);
  const pool = operator.startsWith('NUM')
    ? NUMBERS
    : operator.startsWith('DATE')
      ? DATES
      : operator.startsWith('SEMVER')
        ? VERSIONS
        : operator === 'IN_CIDR'
          ? RANGES
          : operator === 'REGEX'
            ? PATTERNS
            : STRINGS;
  return {
    contextName: draw.pick(operator === 'IN_CIDR' ? ['remoteAddress', 'ip'] : FIELDS),
    operator: operator as Constraint['operator'],
    ...(draw.chance(0.3) ? { inverted: true } : {}),
    ...(draw.chance(0.3) ? { caseInsensitive: true } : {}),
    values: draw.some(pool, 3),
    value: draw.pick(pool),
  };
}

function weightedVariants(draw: Draw, withOverrides: boolean): Variant[] {
  return Array.from({ length: 1 + draw.int(4) }, (_, index) => ({
    name: `v${index}`,
    weight: draw.chance(0.1) ? 0 : draw.pick([1, 50, 333, 1000]),
    weightType: 'variable' as const,
    stickiness: draw.pick(STICKINESS),
    ...(draw.chance(0.6)
      ? { payload: { type: draw.pick(['string', 'json', 'number'] as const), value: draw.pick(['a', '{"b":1}', '7']) } }
      : {}),
    ...(withOverrides && draw.chance(0.3) ? { overrides: [{ contextName: draw.pick(FIELDS), values: draw.some(STRINGS, 3) }] } : {}),
  }));
}

function parametersOf(draw: Draw, name: string): Record<string, string> {
  const groupId: Record<string, string> = draw.chance(0.8) ? { groupId: draw.pick(['g1', 'flag', 'Feature.A', 'ÆØ']) } : {};
  const percentage = String(draw.pick([0, 1, 13, 50, 99, 100, 150, -5]));
  switch (name) {
    case 'flexibleRollout':
      return { rollout: draw.chance(0.1) ? 'x' : percentage, stickiness: draw.pick(STICKINESS), ...groupId };
    case 'gradualRolloutUserId':
    case 'gradualRolloutSessionId':
    case 'gradualRolloutRandom':
      return { percentage, ...groupId };
    case 'userWithId':
      return { userIds: draw.some(['u1', 'u2', 'u13', ' u3', 'U1'], 4).join(draw.pick([',', ', ', ' ,'])) };
    case 'remoteAddress':
      return { IPs: draw.some([...ADDRESSES, ...RANGES], 3).join(draw.pick([',', ', '])) };
    case 'applicationHostname':
      return { hostNames: draw.some([hostname(), hostname().toUpperCase(), 'other-host', 'localhost'], 3).join(', ') };
    default:
      return { anything: 'x' };
  }
}

const STRATEGIES = [
  'default',
  'flexibleRollout',
  'flexibleRollout',
  'userWithId',
  'gradualRolloutUserId',
  'gradualRolloutSessionId',
  'gradualRolloutRandom',
  'remoteAddress',
  'applicationHostname',
  'myCustomStrategy',
];

function strategyOf(draw: Draw, index: number, segmentIds: number[]): ClientStrategy {
  const name = draw.pick(STRATEGIES);
  return {
    id: `s${index}`,
    name,
    sortOrder: index,
    constraints: Array.from({ length: draw.int(3) }, () => constraintOf(draw)),
    parameters: parametersOf(draw, name),
    ...(draw.chance(0.3) ? { segments: draw.some([...segmentIds, 999], 2) } : {}),
    variants: draw.chance(0.3)
      ? weightedVariants(draw, false).map((variant) => ({ ...variant, weightType: 'variable' as const, stickiness: variant.stickiness! }))
      : [],
  };
}

/** A random configuration of `flags` flags over a few segments. */
export function randomConfiguration(draw: Draw, flags: number): FlagConfiguration {
  const segments = new Map<number, ClientSegment>();
  for (let id = 1; id <= 4; id++) {
    segments.set(id, { id, name: `segment-${id}`, constraints: Array.from({ length: draw.int(3) }, () => constraintOf(draw)) });
  }
  const features: ClientFeature[] = [];
  for (let index = 0; index < flags; index++) {
    const name = `flag-${index}`;
    const parents = features.length > 0 && draw.chance(0.3) ? draw.some(features, 2) : [];
    features.push({
      name,
      type: 'release',
      description: null,
      project: 'default',
      enabled: draw.chance(0.85),
      stale: false,
      impressionData: draw.chance(0.2),
      strategies: Array.from({ length: draw.int(4) }, (_, strategy) => strategyOf(draw, strategy, [...segments.keys()])),
      variants: draw.chance(0.4) ? weightedVariants(draw, true) : [],
      ...(parents.length > 0 || draw.chance(0.05)
        ? {
            dependencies: [
              ...parents.map((parent) => ({
                feature: parent.name,
                enabled: draw.chance(0.8),
                ...(draw.chance(0.3) ? { variants: draw.some(['v0', 'v1', 'v2', 'disabled'], 2) } : {}),
              })),
              ...(draw.chance(0.05) ? [{ feature: 'no-such-flag', enabled: true }] : []),
            ],
          }
        : {}),
    });
  }
  return { features, segments };
}

/** A random context, now and then a hostile one: long values, many properties, numbers and objects for strings. */
export function randomContext(draw: Draw): EvaluationContext {
  const context: EvaluationContext = {};
  const maybe = (field: string, pool: readonly string[]) => {
    if (draw.chance(0.6)) context[field] = draw.pick(pool);
  };
  maybe('userId', ['u1', 'u2', 'u13', 'U1', ...Array.from({ length: 20 }, (_, i) => `user-${i}`), '']);
  maybe('sessionId', ['s1', 's2', '123', '']);
  maybe('remoteAddress', ADDRESSES);
  maybe('appName', ['app-a', 'app-b']);
  maybe('environment', ['production', 'development']);
  if (draw.chance(0.3)) context.currentTime = draw.pick(DATES);
  const properties: Record<string, unknown> = {};
  for (const field of ['plan', 'customField', 'version', 'amount', 'ip', 'email']) {
    if (draw.chance(0.5)) properties[field] = draw.pick([...STRINGS, ...NUMBERS, ...VERSIONS, ...ADDRESSES]);
  }
  if (draw.chance(0.05)) properties.plan = 'p'.repeat(10_000);
  if (draw.chance(0.05)) for (let i = 0; i < 500; i++) properties[`extra${i}`] = String(i);
  if (draw.chance(0.05)) context.userId = draw.pick([42, { id: 1 }, ['u1'], true, null]) as never;
  if (draw.chance(0.05)) properties.amount = draw.pick([7, 2.5, { n: 1 }, null, true]);
  if (draw.chance(0.03)) context.featureToggle = 'flag-3';
  context.properties = properties;
  return context;
}

/** The SDK's client over a configuration held in memory, with its built-in strategies. */
export function sdkClientOf(configuration: FlagConfiguration) {
  const byName = new Map(configuration.features.map((feature) => [feature.name, feature]));
  const repository = {
    getToggle: (name: string) => byName.get(name) as unknown as FeatureInterface | undefined,
    getToggles: () => [...byName.values()] as unknown as FeatureInterface[],
    getSegment: (id: number) => configuration.segments.get(id) as unknown as Segment | undefined,
  };
  return new UnleashClient(repository as never, defaultStrategies);
}

export interface Difference {
  seed: number;
  flag: string;
  context: EvaluationContext;
  engine: unknown;
  sdk: unknown;
}

/**
 * Compares the engine's and the SDK's answers for `comparisons` (flag, context) pairs from `seed`, returning the
 * differences found (at most `keep` of them) and how many comparisons were made.
 */
export function compareWithSdk(seed: number, comparisons: number, keep = 5): { compared: number; differences: Difference[] } {
  const draw = new Draw(seededRandom(seed));
  const differences: Difference[] = [];
  const realRandom = Math.random;
  let compared = 0;
  try {
    while (compared < comparisons) {
      const configuration = randomConfiguration(draw, 10 + draw.int(40));
      const engine = engineFor(configuration);
      const sdk = sdkClientOf(configuration);
      for (let round = 0; round < 50 && compared < comparisons; round++) {
        const context = randomContext(draw);
        const held = draw.next();
        Math.random = () => held;
        for (const feature of configuration.features) {
          const outcome = engine.evaluate(engine.flag(feature.name)!, context);
          const expected = sdk.getVariant(feature.name, context as never);
          const same =
            outcome.enabled === expected.feature_enabled &&
            outcome.variant.name === expected.name &&
            outcome.variant.enabled === expected.enabled &&
            JSON.stringify(outcome.variant.payload) === JSON.stringify(expected.payload);
          compared++;
          if (!same && differences.length < keep) {
            differences.push({
              seed,
              flag: feature.name,
              context,
              engine: { featureEnabled: outcome.enabled, variant: outcome.variant },
              sdk: expected,
            });
          }
        }
        Math.random = realRandom;
      }
    }
  } finally {
    Math.random = realRandom;
  }
  return { compared, differences };
}
