import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { ClientFeature, ClientSegment } from '../../src/domain/client-features/environment-configuration.js';
import type { EvaluationContext } from '../../src/domain/evaluation/context.js';
import type { FlagConfiguration } from '../../src/domain/evaluation/engine.js';
import { Draw, randomConfiguration, randomContext, sdkClientOf, seededRandom } from '../helpers/engine-differential.js';
import { loadThroughFlagsFile } from '../helpers/flags-file-loader.js';
import { createSdkToken } from '../helpers/sdk-fixtures.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

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

/**
 * What Vexil can store of a random configuration: variant weights scaled to add up to 1000 and one parent per
 * flag, as in Unleash. (The SDK is then given what Vexil serves, so nothing is compared against the unscaled form.)
 */
function storable(configuration: FlagConfiguration): FlagConfiguration {
  const scaled = <V extends { weight: number }>(variants: V[]): V[] => {
    const total = variants.reduce((sum, v) => sum + v.weight, 0);
    if (variants.length === 0 || total === 0) return [];
    const weights = variants.map((v) => Math.floor((v.weight * 1000) / total));
    const last = weights.findLastIndex((weight) => weight > 0);
    weights[last]! += 1000 - weights.reduce((sum, weight) => sum + weight, 0);
    return variants.map((v, index) => ({ ...v, weight: weights[index]! }));
  };
  return {
    segments: configuration.segments,
    features: configuration.features.map((feature) => ({
      ...feature,
      variants: scaled(feature.variants),
      strategies: feature.strategies.map((strategy) => ({ ...strategy, variants: scaled(strategy.variants) })),
      ...(feature.dependencies ? { dependencies: feature.dependencies.slice(0, 1) } : {}),
    })),
  };
}

test(`the frontend API and OFREP answer as unleash-client, over HTTP (seed ${seed})`, async (t) => {
  const draw = new Draw(seededRandom(seed));
  const configuration = storable(randomConfiguration(draw, 100));
  const { loaded, refused } = await loadThroughFlagsFile(ctx, configuration, [ENVIRONMENT]);
  assert.ok(loaded.length >= 15, `${loaded.length} flags stored (refused: ${JSON.stringify([...refused])})`);
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
  t.diagnostic(`${served.features.length} flags served, ${compared} answers compared, ${refused.size} flags Vexil refused to store`);
  assert.deepEqual(differences.slice(0, 3), [], `seed ${seed}`);
  assert.ok(compared >= 2 * 60 * 15, `${compared} comparisons`);
});
