import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { OFREPProvider } from '@openfeature/ofrep-provider';
import { OFREPWebProvider } from '@openfeature/ofrep-web-provider';
import { OpenFeature as ServerOpenFeature } from '@openfeature/server-sdk';
import { OpenFeature as WebOpenFeature } from '@openfeature/web-sdk';
import { EventSource } from 'eventsource';
import type { Unleash } from 'unleash-client';
import { EVENTS, InMemoryStorageProvider, UnleashClient } from 'unleash-proxy-client';
import type { EvaluationContext } from '../../src/domain/evaluation/context.js';
import { expectStatus } from '../helpers/assertions.js';
import { startTestEdge, type TestEdge } from '../helpers/edge.js';
import { Draw, randomConfiguration, randomContext } from '../helpers/engine-differential.js';
import { seededRandom } from '../helpers/seeded-random.js';
import { uniqueName } from '../helpers/fixtures.js';
import { loadThroughFlagsFile } from '../helpers/flags-file-loader.js';
import { eventually } from '../helpers/eventually.js';
import { createExperiment, unitsExposed } from '../helpers/experiments.js';
import { freePort } from '../helpers/free-port.js';
import { createFlag, createProject } from '../helpers/projects.js';
import { redisMissing, startRedis } from '../helpers/redis-server.js';
import { scrapedValue } from '../helpers/prometheus.js';
import { createSdkToken, startNodeSdk } from '../helpers/sdk-fixtures.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

/**
 * Vexil Edge in front of a Vexil server: the official Node SDK and the frontend API get through the edge what they
 * get from the server, tokens are checked with the server and held to their scopes, usage reaches the server once,
 * and the edge keeps serving (and starts from its backup) while the server is away. The server is reached through
 * a TCP proxy the tests cut to take it away.
 */
const seed = Number(process.env.ENGINE_DIFFERENTIAL_SEED ?? Math.floor(Math.random() * 2 ** 31));
const ENVIRONMENT = 'development';
let ctx: TestApp;
let upstream: TcpProxy;
let serverUrl: string;
let client: string;
let frontend: string;
let edge: TestEdge;
let backupFolder: string;

async function get(url: string, token: string, headers: Record<string, string> = {}) {
  return fetch(url, { headers: { authorization: token, ...headers } });
}

async function postJson(url: string, token: string, body: unknown) {
  return fetch(url, { method: 'POST', headers: { authorization: token, 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

/** The context as a browser can send it: string values only. */
function sendable(context: EvaluationContext): Record<string, unknown> {
  const strings = (record: Record<string, unknown>) =>
    Object.fromEntries(
      Object.entries(record).filter(([name, value]) => typeof value === 'string' && value.length <= 1000 && !name.startsWith('extra')),
    );
  const { properties, currentTime, ...fields } = context;
  const time = typeof currentTime === 'string' && /^\d{4}-\d\d-\d\dT/.test(currentTime) ? { currentTime } : {};
  return { ...strings(fields), ...time, properties: strings(properties ?? {}) };
}

before(async () => {
  ctx = await startTestApp();
  serverUrl = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  upstream = await startTcpProxy(new URL(serverUrl));
  const draw = new Draw(seededRandom(seed));
  await loadThroughFlagsFile(ctx, randomConfiguration(draw, 150), [ENVIRONMENT]);
  client = await createSdkToken(ctx, 'client', ENVIRONMENT);
  frontend = await createSdkToken(ctx, 'frontend', ENVIRONMENT);
  backupFolder = await mkdtemp(join(tmpdir(), 'vexil-edge-'));
  edge = await startTestEdge({ UPSTREAM_URL: upstream.url, TOKENS: client, BACKUP_FOLDER: backupFolder });
});

after(async () => {
  await edge?.close();
  await upstream?.close();
  await ctx?.close();
  if (backupFolder) await rm(backupFolder, { recursive: true, force: true });
});

describe('Vexil Edge in front of Vexil', () => {
  test(`the Node SDK and the frontend API answer through the edge as from the server, for 1,000 contexts (seed ${seed})`, async () => {
    const sdks: Unleash[] = [];
    try {
      const direct = await startNodeSdk(serverUrl, client);
      sdks.push(direct);
      const throughEdge = await startNodeSdk(edge.url, client);
      sdks.push(throughEdge);
      const names = direct.getFeatureToggleDefinitions().map((flag) => flag.name);
      assert.ok(names.length >= 10, `${names.length} flags`);
      assert.deepEqual(
        throughEdge.getFeatureToggleDefinitions().map((flag) => flag.name),
        names,
      );
      const draw = new Draw(seededRandom(seed + 1));
      const realRandom = Math.random;
      try {
        for (let round = 0; round < 1000; round++) {
          const context = sendable(randomContext(draw)) as Record<string, string>;
          const held = draw.next();
          Math.random = () => held;
          for (const name of names) {
            assert.equal(throughEdge.isEnabled(name, context), direct.isEnabled(name, context), `${name} for ${JSON.stringify(context)}`);
            assert.deepEqual(throughEdge.getVariant(name, context), direct.getVariant(name, context), name);
          }
          if (round % 10 === 0) {
            const fromServer = await postJson(`${serverUrl}/api/frontend`, frontend, { context });
            const fromEdge = await postJson(`${edge.url}/api/frontend`, frontend, { context });
            assert.equal(fromEdge.status, 200);
            assert.deepEqual(await fromEdge.json(), await fromServer.json(), JSON.stringify(context));
          }
        }
      } finally {
        Math.random = realRandom;
      }
    } finally {
      for (const sdk of sdks) sdk.destroy();
    }
  });

  test(`unleash-proxy-client and the OFREP providers (server and web) answer through the edge as from the server (seed ${seed})`, async () => {
    const names = (
      (await (await get(`${serverUrl}/api/client/features`, client)).json()) as { features: Array<{ name: string }> }
    ).features.map((feature) => feature.name);
    const proxyClient = (url: string) =>
      new UnleashClient({
        url: `${url}/api/frontend`,
        clientKey: frontend,
        appName: 'edge-browser',
        refreshInterval: 0,
        disableMetrics: true,
        storageProvider: new InMemoryStorageProvider(),
      });
    const browsers = [proxyClient(serverUrl), proxyClient(edge.url)];
    await Promise.all(
      browsers.map(
        (browser) =>
          new Promise((resolve) => {
            browser.once(EVENTS.READY, resolve);
            void browser.start();
          }),
      ),
    );
    await ServerOpenFeature.setProviderAndWait(
      'edge-direct',
      new OFREPProvider({ baseUrl: serverUrl, headers: [['Authorization', client]] }),
    );
    await ServerOpenFeature.setProviderAndWait(
      'edge-through',
      new OFREPProvider({ baseUrl: edge.url, headers: [['Authorization', client]] }),
    );
    const [direct, through] = [ServerOpenFeature.getClient('edge-direct'), ServerOpenFeature.getClient('edge-through')];
    const draw = new Draw(seededRandom(seed + 2));
    const realRandom = Math.random;
    try {
      for (let round = 0; round < 1000; round++) {
        // unleash-proxy-client makes up a session id of its own (a different one in each client) when the context
        // has none: each context brings one, so both clients ask for the same.
        const drawn = sendable(randomContext(draw)) as { sessionId?: string };
        const context = { ...drawn, sessionId: drawn.sessionId || `session-${round}` } as {
          userId?: string;
          sessionId?: string;
          properties: Record<string, string>;
        };
        const held = draw.next();
        Math.random = () => held;
        for (const browser of browsers) await browser.updateContext(context);
        const [fromServer, fromEdge] = browsers.map((browser) => JSON.stringify(browser.getAllToggles()));
        assert.equal(fromEdge, fromServer, JSON.stringify(context));
        if (round % 20 === 0) {
          const evaluationContext = { targetingKey: context.userId ?? `anonymous-${round}`, ...context.properties };
          for (const name of names) {
            const [expected, actual] = await Promise.all([
              direct.getBooleanDetails(name, false, evaluationContext),
              through.getBooleanDetails(name, false, evaluationContext),
            ]);
            assert.deepEqual(
              { value: actual.value, variant: actual.variant, reason: actual.reason },
              { value: expected.value, variant: expected.variant, reason: expected.reason },
              name,
            );
          }
        }
      }
    } finally {
      Math.random = realRandom;
      for (const browser of browsers) browser.stop();
      await ServerOpenFeature.close();
    }
  });

  test('the OFREP web provider through the edge answers as from the server, and hears of a change on the edge’s event stream', async () => {
    // Node has no EventSource of its own; browsers do. The provider uses the global one for its event stream.
    Object.assign(globalThis, { EventSource });
    const names = (
      (await (await get(`${serverUrl}/api/client/features`, client)).json()) as { features: Array<{ name: string }> }
    ).features.map((feature) => feature.name);
    const provider = (baseUrl: string) =>
      new OFREPWebProvider({ baseUrl, headers: [['X-API-Key', frontend]], cacheMode: 'disabled', disableVisibilityRefresh: true });
    // Flags with random stickiness draw from Math.random in this process, for the server and the edge alike: held at
    // one value, both draw the same.
    const realRandom = Math.random;
    Math.random = () => 0.37;
    try {
      for (const [round, userId] of ['alice', 'bob', 'carol', 'dave'].entries()) {
        const context = { targetingKey: userId, plan: round % 2 === 0 ? 'pro' : 'free' };
        await WebOpenFeature.setContext('edge-web-direct', context);
        await WebOpenFeature.setContext('edge-web-through', context);
        if (round === 0) {
          await WebOpenFeature.setProviderAndWait('edge-web-direct', provider(serverUrl));
          await WebOpenFeature.setProviderAndWait('edge-web-through', provider(edge.url));
        }
        const [direct, through] = [WebOpenFeature.getClient('edge-web-direct'), WebOpenFeature.getClient('edge-web-through')];
        for (const name of names) {
          const [expected, actual] = [direct.getBooleanDetails(name, false), through.getBooleanDetails(name, false)];
          assert.deepEqual(
            [actual.value, actual.variant, actual.reason],
            [expected.value, expected.variant, expected.reason],
            `${name} for ${userId}`,
          );
        }
      }
      const flag = await createFlag(ctx, 'default', { enabled: false, strategies: [{ name: 'default' }] });
      const through = WebOpenFeature.getClient('edge-web-through');
      await eventually(() => through.getBooleanDetails(flag, true).errorCode === undefined, 5_000);
      assert.equal(through.getBooleanValue(flag, true), false);
      expectStatus(await ctx.admin.post(`/api/admin/projects/default/features/${flag}/environments/${ENVIRONMENT}/on`), 200);
      await eventually(() => through.getBooleanValue(flag, false) === true, 5_000);
    } finally {
      Math.random = realRandom;
      await WebOpenFeature.close();
    }
  });

  test('the client API answers 304 for its ETag, and a change on the server reaches the edge', async () => {
    const first = await get(`${edge.url}/api/client/features`, client);
    assert.equal(first.status, 200);
    const etag = first.headers.get('etag')!;
    assert.ok(etag);
    assert.equal((await get(`${edge.url}/api/client/features`, client, { 'if-none-match': etag })).status, 304);

    const flag = await createFlag(ctx, 'default', { strategies: [{ name: 'default' }] });
    await edge.edge.runOnce();
    const after = await get(`${edge.url}/api/client/features`, client, { 'if-none-match': etag });
    assert.equal(after.status, 200);
    const body = (await after.json()) as { features: Array<{ name: string; enabled: boolean }> };
    assert.deepEqual(
      body.features.filter((feature) => feature.name === flag),
      [{ ...body.features.find((feature) => feature.name === flag), name: flag, enabled: true }],
    );
  });

  test('a 304 for a trusted token is the ordinary one, counted as any other, and a revoked token loses it at the next check', async () => {
    const revocable = await createSdkToken(ctx, 'client', ENVIRONMENT);
    const first = await get(`${edge.url}/api/client/features`, revocable);
    assert.equal(first.status, 200);
    const etag = first.headers.get('etag')!;
    const series = {
      counted: 'vexil_client_api_requests_total{endpoint="GET /api/client/features",status_code="304"}',
      timed: 'http_request_duration_seconds_count{method="GET",route="/api/client/features",status_code="304"}',
    };
    const scraped = async () => [await scrapedValue(edge.edge.app, series.counted), await scrapedValue(edge.edge.app, series.timed)];
    const [counted, timed] = await scraped();
    for (let poll = 0; poll < 3; poll++) {
      const answer = await get(`${edge.url}/api/client/features`, revocable, { 'if-none-match': `W/${etag}` });
      assert.equal(answer.status, 304);
      assert.deepEqual([answer.headers.get('etag'), answer.headers.get('cache-control'), await answer.text()], [etag, 'no-cache', '']);
    }
    assert.deepEqual(await scraped(), [(counted || 0) + 3, (timed || 0) + 3]);
    // A token of another kind, or an ETag that is not the current one, gets what it got before.
    assert.equal((await get(`${edge.url}/api/client/features`, frontend, { 'if-none-match': etag })).status, 403);
    assert.equal((await get(`${edge.url}/api/client/features`, revocable, { 'if-none-match': '"other:1"' })).status, 200);

    expectStatus(await ctx.admin.delete(`/api/admin/api-tokens/${encodeURIComponent(revocable)}`), 200);
    await edge.edge.runOnce();
    const revoked = await get(`${edge.url}/api/client/features`, revocable, { 'if-none-match': etag });
    assert.equal(revoked.status, 401);
    assert.equal(((await revoked.json()) as { name: string }).name, 'UnauthorizedError');
  });

  test('a starting edge downloads the configuration once, then takes each change from the stream and refreshes with a 304', async () => {
    // A counter has no series before its first request of a status.
    const served = async (status: number, path = '/api/client/features') =>
      (await scrapedValue(ctx.app, `vexil_client_api_requests_total{endpoint="GET ${path}",status_code="${status}"}`)) || 0;
    const created = await ctx.admin.post('/api/admin/segments', { name: uniqueName('streamed'), constraints: [] });
    expectStatus(created, 201);
    const segment = created.json() as { id: number; name: string };
    const before = [await served(200), await served(304)];
    const starting = await startTestEdge({ UPSTREAM_URL: upstream.url, TOKENS: client });
    const seen = async (flag: string) => {
      const answer = await get(`${starting.url}/api/client/features/${flag}`, client);
      return answer.status === 200 ? ((await answer.json()) as { enabled: boolean; variants?: Array<{ name: string }> }) : answer.status;
    };
    const features = async (url: string) =>
      (await (await get(`${url}/api/client/features`, client, { 'unleash-client-spec': '5.2.0' })).json()) as {
        features: unknown[];
        segments: Array<{ id: number }>;
      };
    try {
      // A flag made, switched on, given a variant, its segment changed, then the flag deleted (and the segment with it
      // gone from what SDKs see): each step must reach the edge by the stream alone.
      const flag = await createFlag(ctx, 'default', { strategies: [{ name: 'default', segments: [segment.id] }] });
      await eventually(async () => (await seen(flag)) !== 404);
      expectStatus(await ctx.admin.post(`/api/admin/projects/default/features/${flag}/environments/${ENVIRONMENT}/on`), 200);
      await eventually(async () => ((await seen(flag)) as { enabled?: boolean }).enabled === true);
      expectStatus(
        await ctx.admin.put(`/api/admin/projects/default/features/${flag}/environments/${ENVIRONMENT}/variants`, [
          { name: 'blue', weight: 1000, weightType: 'variable', stickiness: 'default' },
        ]),
        200,
      );
      await eventually(async () => ((await seen(flag)) as { variants?: Array<{ name: string }> }).variants?.[0]?.name === 'blue');
      const constraints = [{ contextName: 'userId', operator: 'IN', values: ['streamed'], inverted: false, caseInsensitive: false }];
      expectStatus(await ctx.admin.put(`/api/admin/segments/${segment.id}`, { name: segment.name, constraints }), 204);
      const heldSegment = async () => (await features(starting.url)).segments.find((held) => held.id === segment.id);
      await eventually(async () => JSON.stringify(await heldSegment()).includes('"streamed"'));
      // A client that does not announce the segments specification gets them inside the strategy, from the edge too.
      const forOldClients = (await (await get(`${starting.url}/api/client/features`, client)).json()) as {
        features: Array<{ name: string; strategies: Array<{ constraints: unknown[]; segments?: number[] }> }>;
        segments: unknown[];
      };
      const inlined = forOldClients.features.find((feature) => feature.name === flag)!.strategies[0]!;
      assert.deepEqual([inlined.constraints, inlined.segments, forOldClients.segments], [constraints, undefined, []]);
      expectStatus(await ctx.admin.delete(`/api/admin/projects/default/features/${flag}`), 202);
      await eventually(async () => (await seen(flag)) === 404 && (await heldSegment()) === undefined);
      // One download at start (the stream's greeting at the same revision is not fetched again), none per change.
      assert.deepEqual([await served(200), await served(304)], [before[0]! + 1, before[1]]);
      // A refresh round asks what changed since the revision held: nothing the stream has not brought.
      const deltasUnchanged = await served(304, '/api/client/delta');
      await starting.edge.runOnce();
      assert.deepEqual(
        [await served(200), await served(304), await served(304, '/api/client/delta')],
        [before[0]! + 1, before[1], deltasUnchanged + 1],
      );
      // What the edge built from the stream is what the server serves.
      const [direct, through] = await Promise.all([features(serverUrl), features(starting.url)]);
      assert.deepEqual([through.features, through.segments], [direct.features, direct.segments]);
    } finally {
      await starting.close();
    }
  });

  test('a change on the server reaches streaming SDKs behind the edge and behind two chained edges, without a poll', async () => {
    const chained = await startTestEdge({ UPSTREAM_URL: edge.url, TOKENS: client });
    const sdks: Unleash[] = [];
    try {
      const readiness = (await (await fetch(`${chained.url}/internal-backstage/ready`)).json()) as { upstream: { changes: string } };
      assert.equal(readiness.upstream.changes, 'streamed', 'an edge upstream streams its changes');
      const flag = await createFlag(ctx, 'default');
      await eventually(async () => (await get(`${chained.url}/api/client/features/${flag}`, client)).status === 200);
      for (const url of [edge.url, chained.url]) sdks.push(await startNodeSdk(url, client, { experimentalMode: { type: 'streaming' } }));
      assert.deepEqual(
        sdks.map((sdk) => sdk.isEnabled(flag)),
        [false, false],
      );
      expectStatus(await ctx.admin.post(`/api/admin/projects/default/features/${flag}/environments/${ENVIRONMENT}/on`), 200);
      // The edges poll once an hour here: only the streams can bring the change.
      const tookMs = await eventually(() => sdks.every((sdk) => sdk.isEnabled(flag)), 5_000);
      assert.ok(tookMs < 5_000);
    } finally {
      for (const sdk of sdks) sdk.destroy();
      await chained.close();
    }
  });

  test('tokens: a narrower token sees only its projects, an unknown one is refused, a frontend token is no client token', async () => {
    const project = await createProject(ctx, { environments: [ENVIRONMENT] });
    const inProject = await createFlag(ctx, project, { strategies: [{ name: 'default' }] });
    const scoped = await createSdkToken(ctx, 'client', ENVIRONMENT, [project]);
    await edge.edge.runOnce();
    const answer = await get(`${edge.url}/api/client/features`, scoped);
    assert.equal(answer.status, 200);
    const { features } = (await answer.json()) as { features: Array<{ name: string; project: string }> };
    assert.deepEqual(
      features.map((feature) => [feature.name, feature.project]),
      [[inProject, project]],
    );

    const unknown = await get(`${edge.url}/api/client/features`, `*:${ENVIRONMENT}.${uniqueName('not-a-secret')}`);
    assert.equal(unknown.status, 401);
    assert.equal(((await unknown.json()) as { name: string }).name, 'UnauthorizedError');
    const wrongKind = await get(`${edge.url}/api/client/features`, frontend);
    assert.equal(wrongKind.status, 403);
    const noToken = await fetch(`${edge.url}/api/client/features`);
    assert.equal(noToken.status, 401);
  });

  test('a token for an environment the edge does not follow is refused with a 403 that says why', async () => {
    const production = await createSdkToken(ctx, 'client', 'production');
    const answer = await get(`${edge.url}/api/client/features`, production);
    assert.equal(answer.status, 403);
    const body = (await answer.json()) as { name: string; message: string };
    assert.equal(body.name, 'PermissionError');
    assert.match(body.message, /sees more than this edge follows \(environment "production"/);
  });

  test('usage reported to the edge reaches the server once, after the interval', async () => {
    const flag = await createFlag(ctx, 'default', { strategies: [{ name: 'default' }] });
    await edge.edge.runOnce();
    const now = new Date();
    const report = (yes: number) => ({
      appName: 'edge-usage-app',
      instanceId: 'one',
      bucket: { start: new Date(now.getTime() - 60_000).toISOString(), stop: now.toISOString(), toggles: { [flag]: { yes, no: 1 } } },
    });
    assert.equal((await postJson(`${edge.url}/api/client/metrics`, client, report(3))).status, 202);
    assert.equal((await postJson(`${edge.url}/api/client/metrics`, client, report(4))).status, 202);
    const usage = async () => {
      const response = await ctx.admin.get(`/api/admin/client-metrics/features/${flag}/raw?hoursBack=2`);
      expectStatus(response, 200);
      return (response.json() as { lastHourUsage: Array<{ appName: string; yes: number; no: number; environment: string }> }).lastHourUsage;
    };
    assert.deepEqual(await usage(), [], 'nothing before the interval');
    await edge.edge.runOnce();
    const recorded = (await usage()).map(({ appName, yes, no, environment }) => ({ appName, yes, no, environment }));
    assert.deepEqual(recorded, [{ appName: 'edge-usage-app', yes: 7, no: 2, environment: ENVIRONMENT }]);
    await edge.edge.runOnce();
    assert.deepEqual(
      (await usage()).map(({ appName, yes, no, environment }) => ({ appName, yes, no, environment })),
      recorded,
      'sent once',
    );
  });

  test('usage reported while the server is away is kept, and reaches it once when it is back', async () => {
    const flag = await createFlag(ctx, 'default', { strategies: [{ name: 'default' }] });
    await edge.edge.runOnce();
    const now = new Date();
    const bucket = {
      start: new Date(now.getTime() - 60_000).toISOString(),
      stop: now.toISOString(),
      toggles: { [flag]: { yes: 5, no: 0 } },
    };
    const usage = async () => {
      const response = await ctx.admin.get(`/api/admin/client-metrics/features/${flag}/raw?hoursBack=2`);
      return (response.json() as { lastHourUsage: Array<{ appName: string; yes: number }> }).lastHourUsage.map(({ appName, yes }) => ({
        appName,
        yes,
      }));
    };
    await upstream.cut();
    try {
      assert.equal((await postJson(`${edge.url}/api/client/metrics`, client, { appName: 'offline-app', bucket })).status, 202);
      await edge.edge.runOnce();
      assert.match(await (await fetch(`${edge.url}/internal-backstage/metrics`)).text(), /^vexil_edge_usage_held 1$/m);
    } finally {
      await upstream.restore();
    }
    assert.deepEqual(await usage(), []);
    await edge.edge.runOnce();
    assert.deepEqual(await usage(), [{ appName: 'offline-app', yes: 5 }]);
    await edge.edge.runOnce();
    assert.deepEqual(await usage(), [{ appName: 'offline-app', yes: 5 }], 'sent once');
  });

  test('bad reports are a 400 at the edge, in the Unleash error format', async () => {
    const response = await postJson(`${edge.url}/api/client/metrics`, client, { appName: 'x', bucket: { start: 'never' } });
    assert.equal(response.status, 400);
    const body = (await response.json()) as { name: string; details: unknown[] };
    assert.equal(body.name, 'BadDataError');
    assert.ok(body.details.length > 0);
  });

  test('with the server away the edge keeps serving and says so; a new edge starts from the backup; both catch up', async () => {
    // Current first: a change still on its way would land between the two reads.
    await edge.edge.runOnce();
    const before = await get(`${edge.url}/api/client/features`, client);
    const served = (await before.json()) as { features: unknown[] };
    await upstream.cut();
    try {
      await edge.edge.runOnce();
      const ready = await fetch(`${edge.url}/internal-backstage/ready`);
      assert.equal(ready.status, 200);
      const readiness = (await ready.json()) as { status: string; upstream: { reachable: boolean; lastError: string | null } };
      assert.equal(readiness.status, 'READY');
      assert.equal(readiness.upstream.reachable, false);
      assert.ok(readiness.upstream.lastError);
      const still = await get(`${edge.url}/api/client/features`, client);
      assert.deepEqual(((await still.json()) as { features: unknown[] }).features, served.features);
      const metrics = await (await fetch(`${edge.url}/internal-backstage/metrics`)).text();
      assert.match(metrics, /^vexil_edge_upstream_reachable 0$/m);

      const started = performance.now();
      const second = await startTestEdge({ UPSTREAM_URL: upstream.url, TOKENS: client, BACKUP_FOLDER: backupFolder });
      const startupMs = performance.now() - started;
      try {
        const fromBackup = await get(`${second.url}/api/client/features`, client);
        assert.equal(fromBackup.status, 200);
        assert.deepEqual(((await fromBackup.json()) as { features: unknown[] }).features, served.features);
        // Two edges behind one load balancer: an SDK moving between them keeps its ETag and gets a 304.
        assert.equal(fromBackup.headers.get('etag'), before.headers.get('etag'));
        assert.ok(startupMs < 5_000, `started in ${Math.round(startupMs)} ms`);

        await upstream.restore();
        const flag = await createFlag(ctx, 'default', { strategies: [{ name: 'default' }] });
        await second.edge.runOnce();
        const caughtUp = (await (await get(`${second.url}/api/client/features`, client)).json()) as { features: Array<{ name: string }> };
        assert.ok(
          caughtUp.features.some((feature) => feature.name === flag),
          'the restarted edge caught up',
        );
        await edge.edge.runOnce();
        const etags = await Promise.all(
          [edge.url, second.url].map(async (url) => (await get(`${url}/api/client/features`, client)).headers.get('etag')),
        );
        assert.notEqual(etags[0], before.headers.get('etag'));
        assert.equal(etags[0], etags[1], 'both edges caught up to the same ETag');
      } finally {
        await second.close();
      }
      await edge.edge.runOnce();
      const readyAgain = (await (await fetch(`${edge.url}/internal-backstage/ready`)).json()) as { upstream: { reachable: boolean } };
      assert.equal(readyAgain.upstream.reachable, true);
    } finally {
      await upstream.restore();
    }
  });

  test('with REDIS_URL the backup is kept in Redis too: an edge with no backup folder starts from it while the server is away', {
    skip: redisMissing,
  }, async () => {
    const redis = await startRedis();
    try {
      const writer = await startTestEdge({ UPSTREAM_URL: upstream.url, TOKENS: client, REDIS_URL: redis.url });
      const served = (await (await get(`${writer.url}/api/client/features`, client)).json()) as { features: unknown[] };
      assert.ok(served.features.length > 0);
      await writer.close();
      await upstream.cut();
      try {
        const reader = await startTestEdge({ UPSTREAM_URL: upstream.url, TOKENS: client, REDIS_URL: redis.url });
        try {
          const fromRedis = await get(`${reader.url}/api/client/features`, client);
          assert.equal(fromRedis.status, 200);
          assert.deepEqual(((await fromRedis.json()) as { features: unknown[] }).features, served.features);
        } finally {
          await reader.close();
        }
      } finally {
        await upstream.restore();
      }
    } finally {
      await redis.stop();
    }
  });

  test('an edge whose Redis does not answer starts all the same, and serves from upstream', async () => {
    const lonely = await startTestEdge({ UPSTREAM_URL: upstream.url, TOKENS: client, REDIS_URL: `redis://127.0.0.1:${await freePort()}` });
    try {
      assert.equal((await get(`${lonely.url}/api/client/features`, client)).status, 200);
    } finally {
      await lonely.close();
    }
  });

  test("experiments: the edge forwards the assignments of its frontend API's evaluations upstream, each unit once", async () => {
    const variants = ['control', 'treatment'].map((name) => ({ name, weight: 500, weightType: 'variable', stickiness: 'userId' }));
    const flag = await createFlag(ctx, 'default', {
      environment: ENVIRONMENT,
      strategies: [{ name: 'flexibleRollout', parameters: { rollout: '100', stickiness: 'userId', groupId: 'edge-exp' }, variants }],
    });
    const { name, path } = await createExperiment(ctx, flag, {
      environment: ENVIRONMENT,
      goal: { kind: 'proportion', event: 'edge-goal' },
    });
    const exposures = () => unitsExposed(ctx, name);
    // Starting an experiment changes no flag, so the edge learns of it by asking, every 5 s while SDKs ask: probes
    // until the first assignment arrives.
    let probes = 0;
    await eventually(async () => {
      await get(`${edge.url}/api/frontend?userId=probe-${probes++}`, frontend);
      return (await exposures()) > 0;
    }, 15_000);
    // Probes sent meanwhile arrive with the next forwarding, within 2 s.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    const before = await exposures();
    for (let i = 0; i < 120; i++) {
      await get(`${edge.url}/api/frontend?userId=edge-user-${i}&sessionId=s-${i}&properties[email]=u${i}@example.com`, frontend);
      if (i % 2 === 0) await get(`${edge.url}/api/frontend?userId=edge-user-${i}`, frontend);
    }
    await eventually(async () => (await exposures()) >= before + 120, 10_000);
    ctx.clock.advance(60_000);
    const results = (await ctx.admin.post(`${path}/results`)).json() as {
      exposures: Array<{ units: number }>;
      variantMismatches: number;
    };
    const units = results.exposures.reduce((sum, arm) => sum + arm.units, 0);
    assert.equal(units - before, 120, 'each unit once');
    assert.equal(results.variantMismatches, 0);
  });

  test("the backstage answers Unleash Edge's shapes: health, ready, tokens (secrets masked) and features", async () => {
    const health = await fetch(`${edge.url}/internal-backstage/health`);
    assert.deepEqual([health.status, await health.json()], [200, { status: 'OK' }]);
    const ready = (await (await fetch(`${edge.url}/internal-backstage/ready`)).json()) as { status: string };
    assert.equal(ready.status, 'READY');
    const tokensAnswer = await fetch(`${edge.url}/internal-backstage/tokens`);
    const text = await tokensAnswer.text();
    const secretPart = client.slice(client.indexOf('.') + 1);
    assert.ok(!text.includes(secretPart) && !text.includes(secretPart.slice(0, 6)), 'no part of a secret is shown');
    const tokens = JSON.parse(text) as {
      tokenRefreshes: Array<{
        token: { token: string; type: string; environment: string };
        last_feature_count: number | null;
        failure_count: number;
      }>;
      tokenValidationStatus: Array<{ token: string; type: string; environment: string; projects: string[]; status: string }>;
      invalidTokenCount: number;
    };
    assert.ok(
      tokens.tokenRefreshes.some(
        (refresh) => refresh.token.token === `*:${refresh.token.environment}.****` && refresh.token.type === 'backend',
      ),
      JSON.stringify(tokens.tokenRefreshes),
    );
    assert.ok(
      tokens.tokenValidationStatus.every((token) => token.token.endsWith('.****') && ['Validated', 'Trusted'].includes(token.status)),
    );
    assert.equal(typeof tokens.invalidTokenCount, 'number');
    const features = (await (await fetch(`${edge.url}/internal-backstage/features`)).json()) as Record<
      string,
      { version: number; features: Array<{ name: string }> }
    >;
    const served = (await (await get(`${edge.url}/api/client/features`, client)).json()) as { features: Array<{ name: string }> };
    const held = Object.values(features).flatMap((environment) => environment.features.map((feature) => feature.name));
    assert.ok(
      served.features.every((feature) => held.includes(feature.name)),
      'every flag served is among those held',
    );
    assert.deepEqual(new Set(Object.values(features).map((environment) => environment.version)), new Set([2]));
  });

  test('DISABLE_TOKENS_ENDPOINT, DISABLE_FEATURES_ENDPOINT and DISABLE_METRICS_ENDPOINT leave those views out', async () => {
    const quiet = await startTestEdge({
      UPSTREAM_URL: upstream.url,
      TOKENS: client,
      DISABLE_TOKENS_ENDPOINT: 'true',
      DISABLE_FEATURES_ENDPOINT: 'true',
      DISABLE_METRICS_ENDPOINT: 'true',
    });
    try {
      const statuses = await Promise.all(
        ['tokens', 'features', 'metrics', 'health'].map(async (path) => (await fetch(`${quiet.url}/internal-backstage/${path}`)).status),
      );
      assert.deepEqual(statuses, [404, 404, 404, 200]);
    } finally {
      await quiet.close();
    }
  });
});
