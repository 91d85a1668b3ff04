import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { ClientFeature, ClientSegment } from '../../src/domain/client-features/environment-configuration.js';
import type { EvaluationContext } from '../../src/domain/evaluation/context.js';
import type { FlagConfiguration } from '../../src/domain/evaluation/engine.js';
import { Draw, randomConfiguration, randomContext, sdkClientOf } from '../helpers/engine-differential.js';
import { seededRandom } from '../helpers/seeded-random.js';
import { loadThroughFlagsFile } from '../helpers/flags-file-loader.js';
import { createSdkToken } from '../helpers/sdk-fixtures.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { CONSTRAINT_OPERATORS, validateConstraint } from '../../src/domain/features/constraints.js';
import type { Constraint } from '../../src/domain/features/feature-views.js';
import { normalizeStrategy, type StrategyInput } from '../../src/domain/features/strategies.js';
import type { StrategyDefinitionView as StrategyDefinition } from '../../src/domain/strategies/strategy-definitions.js';

/**
 * The frontend API's and OFREP's answers compared with the official Node SDK's over HTTP: seeded random
 * configurations written into Vexil (what it refuses to store is left out), the SDK given exactly what Vexil serves
 * on /api/client/features, and random contexts asked of all three. `Math.random` is held at one value per context
 * (the app runs in this process), so random stickiness draws alike on both sides.
 */
const seed = Number(process.env.ENGINE_DIFFERENTIAL_SEED ?? Math.floor(Math.random() * 2 ** 31));
const ENVIRONMENT = 'development';
let ctx: TestApp;

before(async () => {
  ctx = await startTestApp();
});
after(() => ctx.close());

/** The context as a browser or provider can send it: string values only. */
function sendable(context: EvaluationContext): EvaluationContext {
  const strings = (record: Record<string, unknown>) =>
    Object.fromEntries(
      Object.entries(record).filter(([name, value]) => typeof value === 'string' && value.length <= 1000 && !name.startsWith('extra')),
    );
  const { properties, currentTime, ...fields } = context;
  // An invalid `currentTime` is a 400 over HTTP (the bad-input tests show it), not a context.
  const time = typeof currentTime === 'string' && /^\d{4}-\d\d-\d\dT/.test(currentTime) ? { currentTime } : {};
  return { ...strings(fields), ...time, properties: strings(properties ?? {}) as Record<string, string> };
}

/** What `storable` left out of a configuration because Vexil refuses it as bad input, counted by kind. */
interface LeftOut {
  constraints: number;
  strategies: number;
  missingSegments: number;
  /** Parents that do not exist, beyond the first, or that depend on a flag themselves. */
  missingParents: number;
  dependencyVariants: number;
}

/**
 * What Vexil can store of a random configuration, decided by Vexil's own checks of what a request may write:
 * constraints and strategies it refuses as bad input (an unknown operator, a rollout of 150 %, an address list that is
 * no address) are left out, and counted. How the engine treats such values anyway is compared in memory (the unit
 * differential); here every flag must be stored. Variant weights are scaled to add up to 1000 and a flag keeps one
 * parent of those that exist, as in Unleash. (The SDK is given what Vexil serves, so nothing is compared against the
 * unscaled form.)
 */
function storable(
  configuration: FlagConfiguration,
  definitions: Map<string, StrategyDefinition>,
): { configuration: FlagConfiguration; leftOut: LeftOut } {
  const leftOut: LeftOut = { constraints: 0, strategies: 0, missingSegments: 0, missingParents: 0, dependencyVariants: 0 };
  const scaled = <V extends { weight: number }>(variants: V[]): V[] => {
    const total = variants.reduce((sum, v) => sum + v.weight, 0);
    if (variants.length === 0 || total === 0) return [];
    const weights = variants.map((v) => Math.floor((v.weight * 1000) / total));
    const last = weights.findLastIndex((weight) => weight > 0);
    weights[last]! += 1000 - weights.reduce((sum, weight) => sum + weight, 0);
    return variants.map((v, index) => ({ ...v, weight: weights[index]! }));
  };
  const valid = (constraints: Constraint[] = []) =>
    constraints.filter((constraint) => {
      try {
        // The request schema takes only the operators Vexil knows; the domain checks the values.
        if (!(CONSTRAINT_OPERATORS as readonly string[]).includes(constraint.operator)) throw new Error(constraint.operator);
        validateConstraint(constraint, '/constraint');
        return true;
      } catch {
        leftOut.constraints++;
        return false;
      }
    });
  const segments = new Map(
    [...configuration.segments].map(([id, segment]) => [id, { ...segment, constraints: valid(segment.constraints) }]),
  );
  const names = new Set(configuration.features.map((feature) => feature.name));
  const children = new Set<string>();
  return {
    leftOut,
    configuration: {
      segments,
      features: configuration.features.map((feature) => {
        const strategies = feature.strategies
          .map((strategy) => {
            const segmentIds = (strategy.segments ?? []).filter((id) => segments.has(id));
            leftOut.missingSegments += (strategy.segments ?? []).length - segmentIds.length;
            return { ...strategy, constraints: valid(strategy.constraints), segments: segmentIds, variants: scaled(strategy.variants) };
          })
          .filter((strategy) => {
            try {
              normalizeStrategy(strategy as StrategyInput, feature.name, definitions.get(strategy.name));
              return true;
            } catch {
              leftOut.strategies++;
              return false;
            }
          });
        // As Unleash: one parent, which exists and has no parent itself (flags come after the parents they name).
        const parents = (feature.dependencies ?? []).filter(
          (dependency) => names.has(dependency.feature) && !children.has(dependency.feature),
        );
        leftOut.missingParents += (feature.dependencies ?? []).length - Math.min(parents.length, 1);
        if (parents.length > 0) children.add(feature.name);
        // A dependency on a parent being off names no variants of it, as Unleash checks too.
        const [parent] = parents.map((dependency) => {
          if (dependency.enabled !== false || !dependency.variants) return dependency;
          leftOut.dependencyVariants++;
          const { variants: _refused, ...rest } = dependency;
          return rest;
        });
        return {
          ...feature,
          variants: scaled(feature.variants),
          strategies,
          ...(feature.dependencies ? { dependencies: parent ? [parent] : [] } : {}),
        };
      }),
    },
  };
}

/**
 * The strategies a random configuration names, as this Vexil lists them: the built-in ones, and the others defined
 * first as custom strategies (the SDK evaluates the gradual rollouts Unleash 5 removed as built-ins, and anything
 * else as unknown, off), so that every strategy can be stored.
 */
async function strategyDefinitions(): Promise<Map<string, StrategyDefinition>> {
  for (const name of ['gradualRolloutUserId', 'gradualRolloutSessionId', 'gradualRolloutRandom', 'myCustomStrategy']) {
    const parameters = [
      { name: 'percentage', type: 'percentage', description: '', required: false },
      { name: 'groupId', type: 'string', description: '', required: false },
    ];
    const created = await ctx.admin.post('/api/admin/strategies', { name, parameters });
    assert.ok([201, 409].includes(created.statusCode), created.body);
  }
  const listed = (await ctx.admin.get('/api/admin/strategies')).json() as { strategies: StrategyDefinition[] };
  return new Map(listed.strategies.map((definition) => [definition.name, definition]));
}

test(`the frontend API and OFREP answer as unleash-client, over HTTP (seed ${seed})`, async (t) => {
  const draw = new Draw(seededRandom(seed));
  const { configuration, leftOut } = storable(randomConfiguration(draw, 100), await strategyDefinitions());
  const { loaded, refused } = await loadThroughFlagsFile(ctx, configuration, [ENVIRONMENT]);
  // Every flag is stored: a storage error is a failure here, never a smaller comparison.
  assert.deepEqual([...refused], []);
  assert.equal(loaded.length, 100);
  const client = await createSdkToken(ctx, 'client', ENVIRONMENT);
  const frontend = await createSdkToken(ctx, 'frontend', ENVIRONMENT);
  const served = (await ctx.as(client).get('/api/client/features')).json() as { features: ClientFeature[]; segments: ClientSegment[] };
  const sdk = sdkClientOf({ features: served.features, segments: new Map(served.segments.map((segment) => [segment.id, segment])) });
  const realRandom = Math.random;
  let compared = 0;
  const differences: unknown[] = [];
  try {
    for (let round = 0; round < 60; round++) {
      const context = sendable(randomContext(draw));
      const held = draw.next();
      Math.random = () => held;
      const frontendResponse = await ctx.as(frontend).post('/api/frontend', { context });
      assert.equal(frontendResponse.statusCode, 200, frontendResponse.body);
      const viaFrontend = frontendResponse.json() as {
        toggles: Array<{ name: string; variant: { name: string; enabled: boolean; payload?: unknown } }>;
      };
      const { properties, ...fields } = context;
      const viaOfrep = await ctx.as(client).post('/ofrep/v1/evaluate/flags', { context: { ...fields, ...properties } });
      assert.equal(viaOfrep.statusCode, 200, viaOfrep.body);
      const ofrepFlags = new Map(
        (viaOfrep.json() as { flags: Array<{ key: string; reason: string; variant: string }> }).flags.map((f) => [f.key, f]),
      );
      // Over HTTP the caller's address stands in for a missing one, and the token names the environment.
      const sdkContext = { ...context, remoteAddress: context.remoteAddress ?? '127.0.0.1', environment: ENVIRONMENT };
      for (const feature of served.features) {
        const expected = sdk.getVariant(feature.name, sdkContext as never);
        const toggle = viaFrontend.toggles.find((candidate) => candidate.name === feature.name);
        const frontendAnswer = toggle
          ? { enabled: true, name: toggle.variant.name, variantEnabled: toggle.variant.enabled, payload: toggle.variant.payload }
          : { enabled: false, name: 'disabled', variantEnabled: false, payload: undefined };
        const sdkAnswer = {
          enabled: expected.feature_enabled,
          name: expected.name,
          variantEnabled: expected.enabled,
          payload: expected.payload,
        };
        const ofrep = ofrepFlags.get(feature.name)!;
        const ofrepEnabled = ofrep.reason !== 'DISABLED' && ofrep.reason !== 'DEFAULT';
        const ofrepVariant = ofrepEnabled && ofrep.variant !== 'on' ? ofrep.variant : 'disabled';
        compared += 2;
        if (
          JSON.stringify(frontendAnswer) !== JSON.stringify(sdkAnswer) ||
          ofrepEnabled !== expected.feature_enabled ||
          ofrepVariant !== expected.name
        ) {
          differences.push({ flag: feature.name, context, frontend: frontendAnswer, ofrep, sdk: sdkAnswer });
        }
      }
      Math.random = realRandom;
    }
  } finally {
    Math.random = realRandom;
  }
  t.diagnostic(`${served.features.length} flags served, ${compared} answers compared; left out as bad input: ${JSON.stringify(leftOut)}`);
  assert.deepEqual(differences.slice(0, 3), [], `seed ${seed}`);
  assert.equal(served.features.length, 100);
  assert.equal(compared, 2 * 60 * 100);
});
