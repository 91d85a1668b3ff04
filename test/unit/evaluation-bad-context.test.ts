import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ClientFeature, ClientStrategy } from '../../src/domain/client-features/environment-configuration.js';
import type { EvaluationContext } from '../../src/domain/evaluation/context.js';
import { engineFor, type FlagConfiguration } from '../../src/domain/evaluation/engine.js';
import type { Constraint } from '../../src/domain/features/feature-views.js';
import { sdkClientOf } from '../helpers/engine-differential.js';

/** One flag per operator (and per stickiness), so a bad value meets every way a context is read. */
const OPERATORS: Array<[Constraint['operator'], Partial<Constraint>]> = [
  ['IN', { values: ['pro', '42'] }],
  ['NOT_IN', { values: ['pro'] }],
  ['STR_STARTS_WITH', { values: ['p'], caseInsensitive: true }],
  ['STR_ENDS_WITH', { values: ['o'] }],
  ['STR_CONTAINS', { values: ['object'] }],
  ['NUM_EQ', { value: '42' }],
  ['NUM_GT', { value: '1' }],
  ['NUM_LTE', { value: '100' }],
  ['DATE_AFTER', { value: '2020-01-01T00:00:00Z' }],
  ['DATE_BEFORE', { value: '2999-01-01T00:00:00Z' }],
  ['SEMVER_GT', { value: '1.0.0' }],
  ['SEMVER_EQ', { value: '1.2.3' }],
  ['REGEX', { value: '^p' }],
  ['IN_CIDR', { values: ['10.0.0.0/8'] }],
];

const strategy = (name: string, parameters: Record<string, string>, constraints: Constraint[] = []): ClientStrategy => ({
  id: name,
  name,
  sortOrder: 0,
  parameters,
  constraints,
  variants: [],
});

const flag = (name: string, strategies: ClientStrategy[], extra: Partial<ClientFeature> = {}): ClientFeature => ({
  name,
  type: 'release',
  description: null,
  project: 'default',
  enabled: true,
  stale: false,
  impressionData: false,
  strategies,
  variants: [],
  ...extra,
});

const configuration: FlagConfiguration = {
  segments: new Map(),
  features: [
    ...['userId', 'plan', 'version', 'ip'].flatMap((field) =>
      OPERATORS.map(([operator, rest]) =>
        flag(`${field}-${operator}`, [strategy('default', {}, [{ contextName: field, operator, ...rest }])]),
      ),
    ),
    ...['default', 'userId', 'plan'].map((stickiness) =>
      flag(`rollout-${stickiness}`, [strategy('flexibleRollout', { rollout: '50', stickiness, groupId: 'g' })], {
        variants: [
          { name: 'a', weight: 500, stickiness, overrides: [{ contextName: 'plan', values: ['pro'] }] },
          { name: 'b', weight: 500, stickiness },
        ],
      }),
    ),
    flag('user-list', [strategy('userWithId', { userIds: '42, u1' })]),
    flag('address', [strategy('remoteAddress', { IPs: '10.0.0.1, 192.168.0.0/16' })]),
  ],
};

/** The engine's and the SDK's answers for every flag, with `Math.random` held so both draw alike. */
function bothAnswers(context: EvaluationContext) {
  const engine = engineFor(configuration);
  const sdk = sdkClientOf(configuration);
  const realRandom = Math.random;
  Math.random = () => 0.42;
  try {
    return configuration.features.map((feature) => {
      const outcome = engine.evaluate(engine.flag(feature.name)!, context);
      const expected = sdk.getVariant(feature.name, context as never);
      return {
        flag: feature.name,
        engine: [outcome.enabled, outcome.variant.name],
        sdk: [expected.feature_enabled, expected.name],
      };
    });
  } finally {
    Math.random = realRandom;
  }
}

function assertSameAsSdk(context: EvaluationContext) {
  const answers = bothAnswers(context);
  for (const { flag: name, engine, sdk } of answers) assert.deepEqual(engine, sdk, name);
  // The contexts are chosen so that some flags are on and some off: the comparison means something.
  assert.ok(answers.some((answer) => answer.sdk[0] === true) && answers.some((answer) => answer.sdk[0] === false));
}

describe('bad contexts: the engine answers as the SDK, and throws nothing', () => {
  test('very long values', () => {
    assertSameAsSdk({ userId: 'u'.repeat(100_000), properties: { plan: `p${'o'.repeat(100_000)}`, version: '1'.repeat(10_000) } });
  });

  test('ten thousand properties', () => {
    const properties = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`field${i}`, String(i)]));
    assertSameAsSdk({ userId: 'u1', properties: { ...properties, plan: 'pro' } });
  });

  test('numbers and booleans where strings belong', () => {
    assertSameAsSdk({ userId: 42 as never, sessionId: 7 as never, properties: { plan: 42, version: 1.2, ip: true } });
  });

  test('objects, arrays and null where strings belong', () => {
    assertSameAsSdk({ userId: { id: 'u1' } as never, properties: { plan: { object: true }, version: ['1.2.3'], ip: null } });
    assertSameAsSdk({ userId: ['u1'] as never, properties: null as never });
    assertSameAsSdk({ userId: 'u1', properties: 'plan' as never });
  });

  test('invalid dates', () => {
    for (const currentTime of ['not-a-date', '', '2026-13-45T99:99:99Z', new Date(Number.NaN), 12345 as never]) {
      assertSameAsSdk({ userId: 'u1', currentTime, properties: { plan: 'pro' } });
    }
  });

  test('invalid versions and addresses', () => {
    for (const version of ['v1.2.3', '1.2', '', 'x'.repeat(300), '1.2.3-', ' 1.2.3 ']) {
      assertSameAsSdk({ userId: 'u1', remoteAddress: 'not-an-address', properties: { version, ip: '999.1.1.1', plan: 'pro' } });
    }
  });
});
