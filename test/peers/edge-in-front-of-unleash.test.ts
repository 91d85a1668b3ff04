import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Unleash } from 'unleash-client';
import { startTestEdge, type TestEdge } from '../helpers/edge.js';
import { Draw, randomContext } from '../helpers/engine-differential.js';
import { seededRandom } from '../helpers/seeded-random.js';
import { eventually } from '../helpers/eventually.js';
import { startNodeSdk } from '../helpers/sdk-fixtures.js';
import { reachablePostgres, startUnleash, UNLEASH_PACKAGES, type RunningUnleash } from '../helpers/unleash-server.js';

/**
 * Vexil Edge in front of the real unleash-server (7.x and 8.x from npm): the official Node SDK gets through the edge
 * what it gets from Unleash, the edge's frontend API (Vexil's engine, at the edge) agrees with that SDK flag by flag,
 * and a change in Unleash reaches the edge on its next poll (Unleash has no change stream to follow).
 */
const postgres = await reachablePostgres();
const skip = postgres ? false : 'no PostgreSQL answers (TEST_DATABASE_URL or 127.0.0.1:5432); unleash-server needs one';
const seed = Number(process.env.ENGINE_DIFFERENTIAL_SEED ?? Math.floor(Math.random() * 2 ** 31));
const ENVIRONMENT = 'development';
const FEATURES = '/api/admin/projects/default/features';

for (const peer of UNLEASH_PACKAGES) {
  describe(`Vexil Edge in front of ${peer}`, { skip, timeout: 300_000 }, () => {
    let unleash: RunningUnleash;
    let edge: TestEdge;
    let client: string;
    let frontend: string;
    const flags: string[] = [];

    const call = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${unleash.baseUrl}${path}`, {
        method,
        headers: { authorization: unleash.adminToken, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      if (!response.ok) throw new Error(`Unleash ${method} ${path}: ${response.status} ${await response.text()}`);
      return response;
    };
    const token = async (type: 'client' | 'frontend') =>
      (
        (await (
          await call('POST', '/api/admin/api-tokens', { tokenName: `edge-${type}`, type, environment: ENVIRONMENT, projects: ['*'] })
        ).json()) as { secret: string }
      ).secret;
    const flag = async (name: string, strategies: unknown[], enabled = true) => {
      await call('POST', FEATURES, { name });
      for (const strategy of strategies) await call('POST', `${FEATURES}/${name}/environments/${ENVIRONMENT}/strategies`, strategy);
      if (enabled) await call('POST', `${FEATURES}/${name}/environments/${ENVIRONMENT}/on`);
      flags.push(name);
    };

    before(async () => {
      unleash = await startUnleash(postgres!, peer);
      const segment = (await (
        await call('POST', '/api/admin/segments', {
          name: 'edge-beta',
          constraints: [{ contextName: 'userId', operator: 'IN', values: ['1', '2', '3', '10', '42', '77'] }],
        })
      ).json()) as { id: number };
      const variants = [
        { name: 'red', weight: 500, weightType: 'variable', stickiness: 'default', payload: { type: 'string', value: 'r' } },
        { name: 'blue', weight: 500, weightType: 'variable', stickiness: 'default' },
      ];
      await flag('edge-rollout', [
        { name: 'flexibleRollout', parameters: { rollout: '50', stickiness: 'default', groupId: 'edge-rollout' }, variants },
      ]);
      await flag('edge-session', [{ name: 'flexibleRollout', parameters: { rollout: '30', stickiness: 'sessionId', groupId: 'g' } }]);
      await flag('edge-constrained', [
        {
          name: 'default',
          constraints: [
            { contextName: 'appName', operator: 'STR_CONTAINS', values: ['a'], caseInsensitive: true },
            { contextName: 'currentTime', operator: 'DATE_AFTER', value: '2020-01-01T00:00:00.000Z' },
          ],
        },
      ]);
      await flag('edge-segment', [{ name: 'default', segments: [segment.id] }]);
      await flag('edge-users', [
        { name: 'default', constraints: [{ contextName: 'userId', operator: 'IN', values: ['1', '5', '9', '42'] }] },
      ]);
      await flag('edge-off', [{ name: 'default' }], false);
      client = await token('client');
      frontend = await token('frontend');
      // Unleash answers its client API from a cache refreshed a moment after a change.
      await eventually(async () => {
        const served = (await (
          await fetch(`${unleash.baseUrl}/api/client/features`, { headers: { authorization: client, 'unleash-client-spec': '5.2.0' } })
        ).json()) as { features: unknown[] };
        return served.features.length === flags.length;
      }, 20_000);
      edge = await startTestEdge({ UPSTREAM_URL: unleash.baseUrl, TOKENS: client });
    });

    after(async () => {
      await edge?.close();
      await unleash?.stop();
    });

    test(`the Node SDK through the edge answers as from Unleash, and the edge's frontend API agrees, for 1,000 contexts (seed ${seed})`, async () => {
      // Unleash has no change stream: the edge says it polls once its first attempt at one has been answered.
      const readiness = async () =>
        (await (await fetch(`${edge.url}/internal-backstage/ready`)).json()) as { status: string; upstream: { changes: string } };
      await eventually(async () => (await readiness()).upstream.changes === 'polled', 5000);
      assert.equal((await readiness()).status, 'READY');
      const sdks: Unleash[] = [];
      try {
        // One application name for both, as constraints may read it.
        const options = { appName: 'edge-parity', refreshInterval: 3_600_000 };
        const direct = await startNodeSdk(unleash.baseUrl, client, options);
        sdks.push(direct);
        const throughEdge = await startNodeSdk(edge.url, client, options);
        sdks.push(throughEdge);
        assert.deepEqual(
          throughEdge
            .getFeatureToggleDefinitions()
            .map((definition) => definition.name)
            .sort(),
          [...flags].sort(),
        );
        const draw = new Draw(seededRandom(seed));
        const realRandom = Math.random;
        try {
          for (let round = 0; round < 1000; round++) {
            const { properties, currentTime: _now, environment: _environment, ...fields } = randomContext(draw);
            const strings = (record: Record<string, unknown>) =>
              Object.fromEntries(
                Object.entries(record).filter(
                  ([name, value]) => typeof value === 'string' && value.length <= 1000 && !name.startsWith('extra'),
                ),
              ) as Record<string, string>;
            // Where the context has none, the SDK reads its own application name and the frontend API the caller's
            // address: both are given the same.
            const context = {
              appName: 'edge-parity',
              remoteAddress: '127.0.0.1',
              ...strings(fields),
              properties: strings(properties ?? {}),
            };
            const held = draw.next();
            Math.random = () => held;
            const expected: Record<string, { enabled: boolean; variant: string }> = {};
            for (const name of flags) {
              const enabled = direct.isEnabled(name, context);
              assert.equal(throughEdge.isEnabled(name, context), enabled, `${name} for ${JSON.stringify(context)}`);
              const variant = direct.getVariant(name, context);
              assert.deepEqual(throughEdge.getVariant(name, context), variant, name);
              if (enabled) expected[name] = { enabled, variant: variant.name };
            }
            if (round % 20 === 0) {
              const answer = await fetch(`${edge.url}/api/frontend`, {
                method: 'POST',
                headers: { authorization: frontend, 'content-type': 'application/json' },
                body: JSON.stringify({ context }),
              });
              assert.equal(answer.status, 200);
              const { toggles } = (await answer.json()) as {
                toggles: Array<{ name: string; enabled: boolean; variant: { name: string } }>;
              };
              assert.deepEqual(
                Object.fromEntries(toggles.map((toggle) => [toggle.name, { enabled: toggle.enabled, variant: toggle.variant.name }])),
                expected,
                JSON.stringify(context),
              );
            }
          }
        } finally {
          Math.random = realRandom;
        }
      } finally {
        for (const sdk of sdks) sdk.destroy();
      }
    });

    test('a change in Unleash reaches the edge on its next poll', async () => {
      await call('POST', `${FEATURES}/edge-off/environments/${ENVIRONMENT}/on`);
      await eventually(async () => {
        await edge.edge.runOnce();
        const served = (await (await fetch(`${edge.url}/api/client/features/edge-off`, { headers: { authorization: client } })).json()) as {
          enabled: boolean;
        };
        return served.enabled;
      }, 20_000);
    });
  });
}
