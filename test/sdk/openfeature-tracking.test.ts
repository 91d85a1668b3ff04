import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { EventSource } from 'eventsource';
import { OFREPProvider } from '@openfeature/ofrep-provider';
import { OFREPWebProvider } from '@openfeature/ofrep-web-provider';
import { OpenFeature as ServerOpenFeature } from '@openfeature/server-sdk';
import { OpenFeature as WebOpenFeature } from '@openfeature/web-sdk';
import { vexilExposureHook, withVexilTracking } from '../../src/client/openfeature-tracking.js';
import { expectStatus } from '../helpers/assertions.js';
import { createExperiment, unitsExposed } from '../helpers/experiments.js';
import { uniqueName } from '../helpers/fixtures.js';
import { createFlag } from '../helpers/projects.js';
import { createSdkToken } from '../helpers/sdk-fixtures.js';
import { useTestApp } from '../helpers/test-app.js';

/**
 * OpenFeature's `track()` from the real server and web SDKs (npm), their OFREP providers wrapped by
 * `withVexilTracking`: the events reach Vexil's track endpoints, and an experiment's results read them, the lift a
 * test planted recovered inside its interval.
 */
let baseUrl: string;
const ctx = useTestApp({}, async (app) => {
  baseUrl = await app.app.listen({ port: 0, host: '127.0.0.1' });
});

interface Results {
  exposures: Array<{ variant: string; units: number }>;
  metrics: Array<{
    name: string;
    variants: Array<{ variant: string; value: number; comparison?: { estimate: number; interval: number[] } }>;
  }>;
}

describe("OpenFeature's track() against Vexil", () => {
  test('the server SDK: events with values from track() feed an experiment whose known lift the results recover', async () => {
    const variants = ['a', 'b'].map((name) => ({ name, weight: 500, weightType: 'variable', stickiness: 'userId' }));
    const flag = await createFlag(ctx, 'default', {
      name: uniqueName('of-exp'),
      strategies: [{ name: 'flexibleRollout', parameters: { rollout: '100', stickiness: 'userId', groupId: 'of-exp' }, variants }],
    });
    const { path } = await createExperiment(ctx, flag, { goal: { kind: 'mean', event: 'spend' }, settings: { engine: 'frequentist' } });
    const token = await createSdkToken(ctx, 'client', 'development');
    const provider = withVexilTracking(new OFREPProvider({ baseUrl, headers: [['Authorization', token]] }), { url: baseUrl, token });
    await ServerOpenFeature.setProviderAndWait(provider);
    const client = ServerOpenFeature.getClient();
    // Each user's variant as OpenFeature evaluates it through OFREP, then the exposure, then what they spent:
    // b spends 20 % more, on a noisy amount.
    const users = Array.from({ length: 2000 }, (_, i) => `of-user-${i}`);
    const variantOf = new Map<string, string>();
    for (const userId of users)
      variantOf.set(userId, (await client.getStringDetails(flag, 'none', { targetingKey: userId })).variant ?? 'none');
    assert.deepEqual(new Set(variantOf.values()), new Set(['a', 'b']));
    expectStatus(
      await ctx
        .as(token)
        .post('/api/client/exposures', { exposures: users.slice(0, 1000).map((userId) => ({ featureName: flag, context: { userId } })) }),
      202,
    );
    expectStatus(
      await ctx
        .as(token)
        .post('/api/client/exposures', { exposures: users.slice(1000).map((userId) => ({ featureName: flag, context: { userId } })) }),
      202,
    );
    ctx.clock.advance(60_000);
    let seed = 11;
    const noise = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    for (const userId of users) {
      const amount = 50 * (variantOf.get(userId) === 'b' ? 1.2 : 1) * (0.5 + noise());
      client.track('spend', { targetingKey: userId }, { value: amount });
    }
    await provider.tracker.flush();
    ctx.clock.advance(60_000);
    const refreshed = await ctx.admin.post(`${path}/results`);
    expectStatus(refreshed, 200);
    const results = refreshed.json() as Results;
    assert.equal(
      results.exposures.reduce((sum, arm) => sum + arm.units, 0),
      2000,
    );
    const comparison = results.metrics[0]!.variants[1]!.comparison!;
    assert.ok(comparison.interval[0]! < 0.2 && 0.2 < comparison.interval[1]!, `the true lift of 20 % is inside ${comparison.interval}`);
    assert.ok(comparison.interval[0]! > 0, 'and the test sees it');
    await ServerOpenFeature.close();
  });

  test("the exposure hook: the web SDK's reads of an experiment's flag become exposures, once per unit; other flags send none", async () => {
    const variants = ['a', 'b'].map((name) => ({ name, weight: 500, weightType: 'variable', stickiness: 'userId' }));
    const flag = await createFlag(ctx, 'default', {
      name: uniqueName('hooked'),
      strategies: [{ name: 'flexibleRollout', parameters: { rollout: '100', stickiness: 'userId', groupId: 'hooked' }, variants }],
    });
    const other = await createFlag(ctx, 'default', { name: uniqueName('plain'), strategies: [{ name: 'default' }] });
    const { name } = await createExperiment(ctx, flag, { goal: { kind: 'proportion', event: 'hook-goal' } });
    Object.assign(globalThis, { EventSource });
    const token = await createSdkToken(ctx, 'frontend', 'development');
    const sentExposures: Array<{ featureName: string; context: Record<string, string> }> = [];
    const realFetch = globalThis.fetch;
    globalThis.fetch = (input, init) => {
      if (String(input).endsWith('/api/frontend/exposures'))
        sentExposures.push(...(JSON.parse(String(init?.body)) as { exposures: typeof sentExposures }).exposures);
      return realFetch(input, init);
    };
    after(() => {
      globalThis.fetch = realFetch;
    });
    const hook = vexilExposureHook({ url: baseUrl, token, api: 'frontend' });
    await hook.ready();
    WebOpenFeature.addHooks(hook);
    await WebOpenFeature.setProviderAndWait(
      new OFREPWebProvider({ baseUrl, headers: [['X-API-Key', token]], cacheMode: 'disabled', disableVisibilityRefresh: true }),
    );
    const users = ['hook-1', 'hook-2', 'hook-3'];
    for (const userId of users) {
      await WebOpenFeature.setContext({ targetingKey: userId });
      const client = WebOpenFeature.getClient();
      client.getStringValue(flag, 'none');
      client.getStringValue(flag, 'none');
      client.getBooleanValue(other, false);
    }
    await hook.flush();
    // The provider's bulk evaluations record each unit's assignment too (on the same rows), so what the hook sent is
    // read on the wire: one exposure per unit, of the experiment's flag only.
    assert.deepEqual(
      sentExposures.map((exposure) => [exposure.featureName, exposure.context.targetingKey ?? exposure.context.userId]),
      users.map((userId) => [flag, userId]),
    );
    assert.equal(await unitsExposed(ctx, name), users.length);
    await hook.close();
    await WebOpenFeature.close();
  });

  test('the web SDK: track() with the static context reaches the frontend track endpoint', async () => {
    const metric = uniqueName('clicks');
    expectStatus(
      await ctx.admin.post('/api/admin/environments/development/experiment-metrics', {
        name: metric,
        kind: 'proportion',
        event: 'signup-click',
      }),
      201,
    );
    Object.assign(globalThis, { EventSource });
    const token = await createSdkToken(ctx, 'frontend', 'development');
    const provider = withVexilTracking(
      new OFREPWebProvider({ baseUrl, headers: [['X-API-Key', token]], cacheMode: 'disabled', disableVisibilityRefresh: true }),
      { url: baseUrl, token, api: 'frontend' },
    );
    await WebOpenFeature.setContext({ targetingKey: 'web-user-1', plan: 'pro' });
    await WebOpenFeature.setProviderAndWait(provider);
    WebOpenFeature.getClient().track('signup-click');
    WebOpenFeature.getClient().track('not-a-metric');
    await provider.tracker.flush();
    const kept = await ctx.db.selectFrom('tracked_events').select(['event', 'value']).where('event', '=', 'signup-click').execute();
    assert.deepEqual(kept, [{ event: 'signup-click', value: 1 }]);
    const drops = (await ctx.admin.get('/api/admin/environments/development/experiment-metrics')).json() as {
      unknownEvents: Array<{ event: string; dropped: number }>;
    };
    assert.deepEqual(
      drops.unknownEvents.filter((entry) => entry.event === 'not-a-metric').map((entry) => entry.dropped),
      [1],
    );
    await WebOpenFeature.close();
  });
});
