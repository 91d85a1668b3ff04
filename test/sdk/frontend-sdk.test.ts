import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { InMemStorageProvider, Unleash, UnleashEvents } from 'unleash-client';
import { EVENTS, InMemoryStorageProvider, UnleashClient } from 'unleash-proxy-client';
import { expectError, expectStatus } from '../helpers/assertions.js';
import { eventsSince, lastEventId } from '../helpers/events.js';
import { createUserSession, uniqueName } from '../helpers/fixtures.js';
import { eventually } from '../helpers/eventually.js';
import { createFlag, createSegment, createProject } from '../helpers/projects.js';
import { hashToken } from '../../src/shared/secrets.js';
import type { FlagConfiguration } from '../../src/domain/evaluation/engine.js';
import { sdkClientOf } from '../helpers/engine-differential.js';
import { createSdkToken } from '../helpers/sdk-fixtures.js';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../helpers/test-app.js';

/**
 * Browser and mobile SDKs (`unleash-proxy-client` from npm) against the frontend API, the agreement of Vexil's
 * evaluation with the Node SDK's, and every way an SDK request can be wrong.
 */
let ctx: TestApp;
let baseUrl: string;
let frontendToken: string;
let clientToken: string;
const project = uniqueName('fe');
const name = (key: string) => `${project}-${key}`;
let nodeSdk: Unleash;

before(async () => {
  ctx = await startTestApp();
  baseUrl = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  await createProject(ctx, { id: project, environments: ['development'] });
  frontendToken = await createSdkToken(ctx, 'frontend', 'development', [project]);
  clientToken = await createSdkToken(ctx, 'client', 'development', [project]);
  const segment = await createSegment(ctx, {
    name: uniqueName('pro'),
    constraints: [{ contextName: 'plan', operator: 'IN', values: ['pro'] }],
  });
  await createFlag(ctx, project, {
    name: name('rollout'),
    strategies: [{ name: 'flexibleRollout', parameters: { rollout: '37', stickiness: 'userId', groupId: name('rollout') } }],
  });
  await createFlag(ctx, project, { name: name('users'), strategies: [{ name: 'userWithId', parameters: { userIds: 'alice' } }] });
  await createFlag(ctx, project, {
    name: name('pro'),
    strategies: [{ name: 'default', segments: [segment.id] }],
    impressionData: true,
  });
  await createFlag(ctx, project, { name: name('off'), strategies: [{ name: 'default' }], enabled: false });
  await createFlag(ctx, project, {
    name: name('variants'),
    strategies: [{ name: 'flexibleRollout', parameters: { rollout: '60', stickiness: 'userId', groupId: name('variants') } }],
    variants: [
      { name: 'a', weight: 333, weightType: 'variable', stickiness: 'userId', payload: { type: 'string', value: 'A' } },
      { name: 'b', weight: 333, weightType: 'variable', stickiness: 'userId' },
      { name: 'c', weight: 334, weightType: 'variable', stickiness: 'userId' },
    ],
  });
  await createFlag(ctx, project, { name: name('child'), strategies: [{ name: 'default' }] });
  expectStatus(
    await ctx.admin.post(`/api/admin/projects/${project}/features/${name('child')}/dependencies`, {
      feature: name('variants'),
      variants: ['a', 'b'],
    }),
    200,
  );
  nodeSdk = new Unleash({
    url: `${baseUrl}/api/`,
    appName: 'agreement',
    customHeaders: { Authorization: clientToken },
    // Polls once at start (0 would never fetch); the test only reads that configuration.
    refreshInterval: 600_000,
    disableMetrics: true,
    storageProvider: new InMemStorageProvider(),
  });
  await new Promise((resolve) => nodeSdk.once(UnleashEvents.Synchronized, resolve));
});

after(async () => {
  nodeSdk.destroy();
  await ctx.close();
});

interface Toggle {
  name: string;
  enabled: boolean;
  variant: { name: string; enabled: boolean; payload?: unknown };
  impressionData: boolean;
}

async function frontend(query: string): Promise<Toggle[]> {
  const response = await ctx.as(frontendToken).get(`/api/frontend?${query}`);
  expectStatus(response, 200);
  return (response.json() as { toggles: Toggle[] }).toggles;
}

describe('unleash-proxy-client against /api/frontend', () => {
  for (const usePOSTrequests of [false, true]) {
    test(`evaluates for its context and follows context changes (${usePOSTrequests ? 'POST' : 'GET'})`, async () => {
      const client = new UnleashClient({
        url: `${baseUrl}/api/frontend`,
        clientKey: frontendToken,
        appName: 'browser',
        refreshInterval: 0,
        disableMetrics: true,
        usePOSTrequests,
        storageProvider: new InMemoryStorageProvider(),
      });
      try {
        // An answer the SDK rejects (a 500, say) fails the test instead of leaving it waiting for READY forever.
        const ready = new Promise((resolve, reject) => {
          client.once(EVENTS.READY, resolve);
          client.once(EVENTS.ERROR, (error: unknown) => reject(new Error(`the SDK reported an error: ${JSON.stringify(error)}`)));
        });
        await client.start();
        await ready;
        assert.equal(client.isEnabled(name('users')), false);
        assert.equal(client.isEnabled(name('off')), false);
        await client.updateContext({ userId: 'alice', properties: { plan: 'pro' } });
        assert.equal(client.isEnabled(name('users')), true);
        assert.equal(client.isEnabled(name('pro')), true);
        await client.updateContext({ userId: 'bob', properties: { plan: 'free' } });
        assert.equal(client.isEnabled(name('users')), false);
        assert.equal(client.isEnabled(name('pro')), false);
        // The variant a user gets is the one the Node SDK computes for the same user.
        for (const userId of ['u1', 'u2', 'u3', 'u4', 'u5', 'u6']) {
          await client.updateContext({ userId });
          const expected = nodeSdk.getVariant(name('variants'), { userId, environment: 'development' });
          assert.equal(client.getVariant(name('variants')).name, expected.name, userId);
        }
      } finally {
        client.stop();
      }
    });
  }
});

describe('Vexil evaluates as the Node SDK does, to the bucket', () => {
  test('the same flags on, the same variants and payloads, for 300 users', async () => {
    let enabledSomewhere = 0;
    for (let i = 0; i < 300; i++) {
      const userId = `user-${i}`;
      const plan = i % 3 === 0 ? 'pro' : 'free';
      const toggles = await frontend(`userId=${userId}&properties[plan]=${plan}`);
      const byName = new Map(toggles.map((toggle) => [toggle.name, toggle]));
      const context = { userId, environment: 'development', properties: { plan } };
      for (const flag of ['rollout', 'users', 'pro', 'off', 'variants', 'child'].map(name)) {
        const expected = nodeSdk.isEnabled(flag, context);
        assert.equal(byName.has(flag), expected, `${flag} for ${userId}`);
        if (!expected) continue;
        enabledSomewhere += 1;
        const variant = nodeSdk.getVariant(flag, context);
        assert.equal(byName.get(flag)!.variant.name, variant.name, `${flag} variant for ${userId}`);
        assert.deepEqual(byName.get(flag)!.variant.payload, variant.payload);
      }
    }
    assert.ok(enabledSomewhere > 300, `${enabledSomewhere} evaluations were on`);
  });

  test('only enabled flags are sent, with impression data', async () => {
    const toggles = await frontend('userId=alice&properties[plan]=pro');
    assert.ok(toggles.every((toggle) => toggle.enabled));
    assert.equal(toggles.find((toggle) => toggle.name === name('pro'))?.impressionData, true);
    assert.equal(
      toggles.find((toggle) => toggle.name === name('off')),
      undefined,
    );
  });
});

describe('the Unleash Proxy paths and /all', () => {
  test('/api/proxy answers as /api/frontend; /all answers every flag of the token, off ones as off with the disabled variant', async () => {
    const query = 'userId=bob&properties[plan]=free';
    const enabled = await frontend(query);
    for (const path of ['/api/proxy', '/api/proxy/all', '/api/frontend/all']) {
      const get = await ctx.as(frontendToken).get(`${path}?${query}`);
      expectStatus(get, 200);
      const post = await ctx.as(frontendToken).post(path, { context: { userId: 'bob', properties: { plan: 'free' } } });
      expectStatus(post, 200);
      assert.deepEqual(post.json(), get.json(), path);
      const toggles = (get.json() as { toggles: Toggle[] }).toggles;
      if (!path.endsWith('/all')) {
        assert.deepEqual(toggles, enabled, path);
        continue;
      }
      assert.deepEqual(
        toggles.filter((toggle) => toggle.enabled),
        enabled,
        `${path}: the enabled ones as /api/frontend has them`,
      );
      const off = toggles.find((toggle) => toggle.name === name('off'));
      assert.deepEqual(off, {
        name: name('off'),
        enabled: false,
        variant: { name: 'disabled', enabled: false, feature_enabled: false, featureEnabled: false },
        impressionData: false,
      });
      assert.ok(
        toggles.every((toggle) => toggle.name.startsWith(project)),
        'only the token’s project',
      );
    }
    expectStatus(
      await ctx.as(frontendToken).post('/api/proxy/client/metrics', {
        appName: 'legacy-proxy-app',
        bucket: { start: new Date().toISOString(), stop: new Date().toISOString(), toggles: { [name('off')]: { yes: 0, no: 1 } } },
      }),
      200,
    );
  });
});

describe('client API details', () => {
  test('ETag and 304; an unknown If-None-Match gets the whole answer', async () => {
    const first = await ctx
      .as(clientToken)
      .inject({ method: 'GET', url: '/api/client/features', headers: { 'unleash-client-spec': '5.2.0' } });
    expectStatus(first, 200);
    const etag = first.headers.etag as string;
    assert.match(etag, /^"[0-9a-f]+:\d+"$/);
    const body = first.json() as { version: number; features: Array<{ name: string }>; segments: unknown[] };
    assert.equal(body.version, 2);
    assert.equal(body.segments.length, 1);
    const again = await ctx.as(clientToken).inject({ method: 'GET', url: '/api/client/features', headers: { 'if-none-match': etag } });
    expectStatus(again, 304);
    assert.equal(again.body, '');
    const unknown = await ctx
      .as(clientToken)
      .inject({ method: 'GET', url: '/api/client/features', headers: { 'if-none-match': '"bogus"' } });
    expectStatus(unknown, 200);
    assert.deepEqual(
      (unknown.json() as typeof body).features.map((f) => f.name),
      body.features.map((f) => f.name),
    );
  });

  test('query filters and inlined segment constraints', async () => {
    const prefixed = (await ctx.as(clientToken).get(`/api/client/features?namePrefix=${name('us')}`)).json() as {
      features: Array<{ name: string }>;
    };
    assert.deepEqual(
      prefixed.features.map((f) => f.name),
      [name('users')],
    );
    const inlined = (await ctx.as(clientToken).get('/api/client/features?inlineSegmentConstraints=true')).json() as {
      features: Array<{ name: string; strategies: Array<{ constraints: unknown[]; segments?: unknown }> }>;
      segments: unknown[];
    };
    const pro = inlined.features.find((f) => f.name === name('pro'))!;
    assert.deepEqual(pro.strategies[0]!.constraints, [
      { contextName: 'plan', operator: 'IN', values: ['pro'], caseInsensitive: false, inverted: false },
    ]);
    assert.equal(pro.strategies[0]!.segments, undefined);
    assert.deepEqual(inlined.segments, []);
  });

  test('a client that does not announce the segments specification gets segment constraints inside strategies, as Unleash serves it', async () => {
    type Answer = { features: FlagConfiguration['features']; segments: Array<{ id: number; constraints: unknown[] }> };
    const read = async (headers: Record<string, string>, query = '') => {
      const response = await ctx.as(clientToken).inject({ method: 'GET', url: `/api/client/features${query}`, headers });
      expectStatus(response, 200);
      return response.json() as Answer;
    };
    const inlinedFor = [
      await read({}),
      await read({ 'unleash-client-spec': '4.1.0' }),
      await read({ 'unleash-client-spec': '5.2.0' }, '?inlineSegmentConstraints=true'),
    ];
    const listedFor = [
      await read({ 'unleash-client-spec': '4.2.0' }),
      await read({ 'unleash-client-spec': '5.2.0' }),
      await read({}, '?inlineSegmentConstraints=false'),
    ];
    for (const answer of inlinedFor) {
      const pro = answer.features.find((f) => f.name === name('pro'))!;
      assert.deepEqual(pro.strategies[0]!.constraints, [
        { contextName: 'plan', operator: 'IN', values: ['pro'], caseInsensitive: false, inverted: false },
      ]);
      assert.deepEqual([pro.strategies[0]!.segments, answer.segments], [undefined, []]);
    }
    for (const answer of listedFor) {
      assert.deepEqual(answer.features.find((f) => f.name === name('pro'))!.strategies[0]!.constraints, []);
      assert.equal(answer.segments.length, 1);
    }
    // What a client from before segments makes of each: it reads strategies and constraints, nothing else.
    const beforeSegments = (answer: Answer): FlagConfiguration => ({
      features: answer.features.map((f) => ({ ...f, strategies: f.strategies.map(({ segments: _ignored, ...strategy }) => strategy) })),
      segments: new Map(),
    });
    const current = (answer: Answer): FlagConfiguration => ({
      features: answer.features,
      segments: new Map(answer.segments.map((segment) => [segment.id, segment])) as FlagConfiguration['segments'],
    });
    const contexts = [{ properties: { plan: 'pro' } }, { properties: { plan: 'free' } }, { userId: 'alice' }, {}];
    const evaluate = (configuration: FlagConfiguration) =>
      contexts.map((context) =>
        configuration.features.map((f) => sdkClientOf(configuration).isEnabled(f.name, context as never, () => false)),
      );
    assert.deepEqual(evaluate(beforeSegments(inlinedFor[0]!)), evaluate(current(listedFor[1]!)));
    // Without inlining, such a client turned the segment-limited flag on for every plan.
    const unlimited = evaluate(beforeSegments(listedFor[1]!));
    assert.notDeepEqual(unlimited, evaluate(current(listedFor[1]!)));
  });

  test('delta: a hydration, then only what changed; a revision from the future gets a hydration', async () => {
    const first = await ctx.as(clientToken).get('/api/client/delta');
    expectStatus(first, 200);
    const [hydration] = (first.json() as { events: Array<{ type: string; eventId: number }> }).events;
    assert.equal(hydration!.type, 'hydration');
    const etag = first.headers.etag as string;
    expectStatus(await ctx.as(clientToken).inject({ method: 'GET', url: '/api/client/delta', headers: { 'if-none-match': etag } }), 304);
    expectStatus(await ctx.admin.post(`/api/admin/projects/${project}/features/${name('off')}/environments/development/on`), 200);
    // The change reaches the store with the commit's NOTIFY, a moment after the toggle's own answer on PostgreSQL.
    let changed = await ctx.as(clientToken).inject({ method: 'GET', url: '/api/client/delta', headers: { 'if-none-match': etag } });
    await eventually(async () => {
      changed = await ctx.as(clientToken).inject({ method: 'GET', url: '/api/client/delta', headers: { 'if-none-match': etag } });
      return changed.statusCode === 200;
    }, 2000);
    const events = (changed.json() as { events: Array<{ type: string; feature?: { name: string; enabled: boolean } }> }).events;
    assert.deepEqual(
      events.map((e) => [e.type, e.feature?.name, e.feature?.enabled]),
      [['feature-updated', name('off'), true]],
    );
    const future = await ctx
      .as(clientToken)
      .inject({ method: 'GET', url: '/api/client/delta', headers: { 'if-none-match': '"999999999"' } });
    expectStatus(future, 200);
    assert.equal((future.json() as { events: Array<{ type: string }> }).events[0]!.type, 'hydration');
    expectStatus(await ctx.admin.post(`/api/admin/projects/${project}/features/${name('off')}/environments/development/off`), 200);
  });

  test('registration creates the application once, with its instance', async () => {
    const before = await lastEventId(ctx);
    const appName = uniqueName('app');
    const registration = {
      appName,
      instanceId: 'i-1',
      sdkVersion: 'unleash-client-node:6.12.1',
      strategies: ['default'],
      started: new Date().toISOString(),
      interval: 15000,
      platformName: 'node',
    };
    expectStatus(await ctx.as(clientToken).post('/api/client/register', registration), 202);
    expectStatus(await ctx.as(clientToken).post('/api/client/register', { ...registration, instanceId: 'i-2' }), 202);
    const events = await eventsSince(ctx, before);
    assert.deepEqual(
      events.map((e) => [e.type, e.environment, (e.data as { appName: string }).appName]),
      [['application-created', 'development', appName]],
    );
    const instances = await ctx.db
      .selectFrom('client_instances')
      .select(['instance_id', 'environment', 'sdk_version'])
      .where('app_name', '=', appName)
      .orderBy('instance_id')
      .execute();
    assert.deepEqual(instances, [
      { instance_id: 'i-1', environment: 'development', sdk_version: 'unleash-client-node:6.12.1' },
      { instance_id: 'i-2', environment: 'development', sdk_version: 'unleash-client-node:6.12.1' },
    ]);
    const list = (await ctx.admin.get('/api/admin/metrics/applications')).json() as {
      applications: Array<{ appName: string; environments: string[]; strategies: string[] }>;
    };
    const listed = list.applications.find((application) => application.appName === appName);
    assert.deepEqual(listed && { environments: listed.environments, strategies: listed.strategies }, {
      environments: ['development'],
      strategies: ['default'],
    });
    const one = await ctx.admin.get(`/api/admin/metrics/applications/${appName}`);
    expectStatus(one, 200);
    assert.deepEqual(
      (one.json() as { instances: Array<{ instanceId: string; sdkVersion: string; interval: number }> }).instances.map((i) => [
        i.instanceId,
        i.sdkVersion,
        i.interval,
      ]),
      [
        ['i-1', 'unleash-client-node:6.12.1', 15000],
        ['i-2', 'unleash-client-node:6.12.1', 15000],
      ],
    );
    expectError(await ctx.admin.get('/api/admin/metrics/applications/no-such-app'), 404, 'NotFoundError');
  });
});

describe('POST /api/frontend/client/metrics', () => {
  test('records a browser’s counts for the frontend token’s environment; a bucket ending before it starts is a 400', async () => {
    const appName = uniqueName('browser-app');
    const now = Date.now();
    const bucket = (start: number, stop: number) => ({
      start: new Date(start).toISOString(),
      stop: new Date(stop).toISOString(),
      toggles: { [name('users')]: { yes: 4, no: 2 } },
    });
    expectError(
      await ctx.as(frontendToken).post('/api/frontend/client/metrics', { appName, bucket: bucket(now, now - 60_000) }),
      400,
      'BadDataError',
    );
    // 200, as Unleash answers a frontend SDK (a server-side SDK's report is a 202).
    expectStatus(await ctx.as(frontendToken).post('/api/frontend/client/metrics', { appName, bucket: bucket(now - 60_000, now) }), 200);
    const usage = await ctx.db
      .selectFrom('feature_usage_hourly')
      .select(['feature_name', 'environment', 'yes', 'no'])
      .where('app_name', '=', appName)
      .execute();
    assert.deepEqual(usage, [{ feature_name: name('users'), environment: 'development', yes: 4, no: 2 }]);
  });
});

describe('POST /api/client/metrics/bulk (as Unleash Edge sends it)', () => {
  test('registers the applications and records every count', async () => {
    const appName = uniqueName('edge-app');
    const now = new Date().toISOString();
    const response = await ctx.as(clientToken).post('/api/client/metrics/bulk', {
      applications: [{ appName, instanceId: 'edge-1', environment: 'development', strategies: ['default'], sdkVersion: 'unleash-edge:19' }],
      metrics: [
        { featureName: name('users'), appName, environment: 'development', timestamp: now, yes: 3, no: 1 },
        { featureName: name('users'), appName, environment: 'development', timestamp: now, yes: 2, no: 0, variants: {} },
        { featureName: 'no-such-flag', appName, environment: 'development', timestamp: now, yes: 1, no: 1 },
      ],
    });
    expectStatus(response, 202);
    const usage = await ctx.db
      .selectFrom('feature_usage_hourly')
      .select(['feature_name', 'yes', 'no'])
      .where('app_name', '=', appName)
      .execute();
    assert.deepEqual(usage, [{ feature_name: name('users'), yes: 5, no: 1 }]);
    const apps = await ctx.db
      .selectFrom('client_instances')
      .select(['instance_id', 'sdk_version'])
      .where('app_name', '=', appName)
      .execute();
    assert.deepEqual(apps, [{ instance_id: 'edge-1', sdk_version: 'unleash-edge:19' }]);
  });

  test('another environment, a bad count or a bad timestamp is a 400 and stores nothing', async () => {
    const appName = uniqueName('edge-bad');
    const metric = { featureName: name('users'), appName, environment: 'development', timestamp: new Date().toISOString(), yes: 1, no: 0 };
    const cases: Array<[unknown, string]> = [
      [{ metrics: [metric, { ...metric, environment: 'production' }] }, '/body/metrics/1/environment'],
      [{ metrics: [{ ...metric, yes: -1 }] }, '/body/metrics/0/yes'],
      [{ metrics: [{ ...metric, timestamp: 'now' }] }, '/body/metrics/0/timestamp'],
      [{ applications: [{ appName, environment: 'production' }], metrics: [metric] }, '/body/applications/0/environment'],
      [{ applications: [] }, '/body/metrics'],
    ];
    for (const [payload, path] of cases) {
      const error = expectError(await ctx.as(clientToken).post('/api/client/metrics/bulk', payload), 400, 'BadDataError');
      assert.ok(
        error.details.some((d) => d.path === path),
        `${path}: ${JSON.stringify(error.details)}`,
      );
    }
    assert.deepEqual(await ctx.db.selectFrom('feature_usage_hourly').select('yes').where('app_name', '=', appName).execute(), []);
    assert.deepEqual(await ctx.db.selectFrom('client_applications').select('app_name').where('app_name', '=', appName).execute(), []);
  });
});

describe('bad SDK requests', () => {
  test('tokens: none, unknown, admin, and the wrong kind', async () => {
    expectError(await ctx.as().get('/api/client/features'), 401, 'AuthenticationRequired');
    expectError(await ctx.as('*:development.unknown-secret-0123456789').get('/api/client/features'), 401, 'UnauthorizedError');
    expectError(await ctx.as(ADMIN_TOKEN).get('/api/client/features'), 403, 'PermissionError');
    expectError(await ctx.as(frontendToken).get('/api/client/features'), 403, 'PermissionError');
    expectError(await ctx.as(clientToken).get('/api/frontend'), 403, 'PermissionError');
    expectError(await ctx.as(ADMIN_TOKEN).get('/api/frontend'), 403, 'PermissionError');
    expectError(await ctx.as(clientToken).get('/api/admin/projects'), 403, 'PermissionError');
  });

  test('malformed registrations, metrics and contexts are 400s and store nothing', async () => {
    const before = await lastEventId(ctx);
    const cases: Array<[string, string, unknown, string]> = [
      ['POST', '/api/client/register', { instanceId: 'x' }, '/body/appName'],
      ['POST', '/api/client/register', { appName: 'x', strategies: 'default' }, '/body/strategies'],
      ['POST', '/api/client/register', { appName: 'x', interval: -1 }, '/body/interval'],
      ['POST', '/api/client/register', { appName: 'x', environment: 'production' }, '/body/environment'],
      ['POST', '/api/client/metrics', { appName: 'x', bucket: { start: 'yesterday', stop: 'now', toggles: {} } }, '/body/bucket/start'],
    ];
    for (const [method, url, payload, path] of cases) {
      const error = expectError(
        await ctx.as(clientToken).inject({ method: method as 'POST', url, payload: payload as object }),
        400,
        'BadDataError',
      );
      assert.ok(
        error.details.some((d) => d.path === path),
        `${url} ${JSON.stringify(payload)}: ${JSON.stringify(error.details)}`,
      );
    }
    const frontendCases: Array<[unknown, string]> = [
      [{ context: { userId: { nested: true } } }, '/body/context/userId'],
      [{ context: { currentTime: 'soon' } }, '/body/context/currentTime'],
      [{ context: { properties: { plan: ['pro'] } } }, '/body/context/properties/plan'],
      [{ context: { userId: 'u'.repeat(1001) } }, '/body/context/userId'],
      [{ context: { properties: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`p${i}`, 'x'])) } }, '/body/context/properties'],
    ];
    for (const [payload, path] of frontendCases) {
      const error = expectError(await ctx.as(frontendToken).post('/api/frontend', payload), 400, 'BadDataError');
      assert.ok(
        error.details.some((d) => d.path === path),
        `${JSON.stringify(payload)}: ${JSON.stringify(error.details)}`,
      );
    }
    expectError(await ctx.as(frontendToken).get('/api/frontend?userId=a&userId=b'), 400, 'BadDataError');
    expectError(await ctx.as(frontendToken).get('/api/frontend?currentTime=soon'), 400, 'BadDataError');
    expectError(
      await ctx.as(clientToken).get(`/api/client/features?${Array.from({ length: 101 }, (_, i) => `project=p${i}`).join('&')}`),
      400,
      'BadDataError',
    );
    assert.deepEqual(await eventsSince(ctx, before), []);
    const apps = await ctx.db.selectFrom('client_applications').select('app_name').where('app_name', '=', 'x').execute();
    assert.deepEqual(apps, []);
  });

  test('CORS: any origin by default; with FRONTEND_API_ORIGINS only those', async () => {
    const open = await ctx.as(frontendToken).inject({ method: 'GET', url: '/api/frontend', headers: { origin: 'https://shop.example' } });
    assert.equal(open.headers['access-control-allow-origin'], '*');
    const noCorsOnAdmin = await ctx.admin.inject({
      method: 'GET',
      url: '/api/admin/projects',
      headers: { origin: 'https://shop.example' },
    });
    assert.equal(noCorsOnAdmin.headers['access-control-allow-origin'], undefined);
    const restricted = await startTestApp({ env: { FRONTEND_API_ORIGINS: 'https://app.example' } });
    try {
      const token = await createSdkToken(restricted, 'frontend', 'development');
      const preflight = await restricted.as().inject({
        method: 'OPTIONS',
        url: '/api/frontend',
        headers: {
          origin: 'https://app.example',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization,content-type',
        },
      });
      assert.equal(preflight.statusCode, 204);
      assert.equal(preflight.headers['access-control-allow-origin'], 'https://app.example');
      const allowed = await restricted
        .as(token)
        .inject({ method: 'GET', url: '/api/frontend', headers: { origin: 'https://app.example' } });
      assert.equal(allowed.headers['access-control-allow-origin'], 'https://app.example');
      const refused = await restricted
        .as(token)
        .inject({ method: 'GET', url: '/api/frontend', headers: { origin: 'https://evil.example' } });
      assert.equal(refused.headers['access-control-allow-origin'], undefined);
    } finally {
      await restricted.close();
    }
  });

  test('CORS: an admin sets the allowed origins at run time; each must be * or an origin', async () => {
    const originOf = async (origin: string) =>
      (await ctx.as(frontendToken).inject({ method: 'GET', url: '/api/frontend', headers: { origin } })).headers[
        'access-control-allow-origin'
      ];
    const since = await lastEventId(ctx);
    expectStatus(
      await ctx.admin.post('/api/admin/ui-config/cors', { frontendApiOrigins: ['https://shop.example/', 'https://shop.example'] }),
      204,
    );
    try {
      assert.deepEqual(((await ctx.admin.get('/api/admin/ui-config')).json() as { frontendApiOrigins: string[] }).frontendApiOrigins, [
        'https://shop.example',
      ]);
      assert.equal(await originOf('https://shop.example'), 'https://shop.example');
      assert.equal(await originOf('https://evil.example'), undefined);
      const events = await eventsSince(ctx, since);
      assert.deepEqual(
        events.map((event) => [event.type, event.data, event.preData]),
        [
          [
            'setting-updated',
            { id: 'frontendSettings', frontendApiOrigins: ['https://shop.example'] },
            { id: 'frontendSettings', frontendApiOrigins: ['*'] },
          ],
        ],
      );

      const bad = expectError(
        await ctx.admin.post('/api/admin/ui-config/cors', {
          frontendApiOrigins: ['https://ok.example', 'https://x.example/path', 'ftp://x.example', 'nonsense'],
        }),
        400,
        'BadDataError',
      );
      assert.deepEqual(
        bad.details.map((detail) => detail.path),
        ['/body/frontendApiOrigins/1', '/body/frontendApiOrigins/2', '/body/frontendApiOrigins/3'],
      );
      expectError(await ctx.admin.post('/api/admin/ui-config/cors', { frontendApiOrigins: 'https://ok.example' }), 400, 'BadDataError');
      expectError(
        await ctx.admin.post('/api/admin/ui-config/cors', {
          frontendApiOrigins: Array.from({ length: 101 }, (_, i) => `https://a${i}.example`),
        }),
        400,
        'BadDataError',
      );
      const editor = await createUserSession(ctx, 'Editor');
      expectError(
        await ctx.withCookie(editor.cookie).post('/api/admin/ui-config/cors', { frontendApiOrigins: ['*'] }),
        403,
        'PermissionError',
      );
      assert.equal(await originOf('https://shop.example'), 'https://shop.example', 'refused changes keep the setting');
    } finally {
      expectStatus(await ctx.admin.post('/api/admin/ui-config/cors', { frontendApiOrigins: ['*'] }), 204);
    }
    assert.equal(await originOf('https://evil.example'), '*');
  });

  test('a deleted token stops working at once', async () => {
    const token = await createSdkToken(ctx, 'client', 'development', [project]);
    expectStatus(await ctx.as(token).get('/api/client/features'), 200);
    expectStatus(await ctx.admin.delete(`/api/admin/api-tokens/${encodeURIComponent(token)}`), 200);
    await eventually(async () => (await ctx.as(token).get('/api/client/features')).statusCode === 401, 2000);
  });

  test('a flag change keeps SDK tokens cached; a token change drops them', async () => {
    const token = await createSdkToken(ctx, 'client', 'development', [project]);
    const other = await createSdkToken(ctx, 'client', 'development', [project]);
    const sees = async (flag: string) =>
      ((await ctx.as(token).get('/api/client/features')).json() as { features?: Array<{ name: string }> }).features?.some(
        (f) => f.name === flag,
      ) ?? false;
    expectStatus(await ctx.as(token).get('/api/client/features'), 200);
    // On PostgreSQL the creations above are told by NOTIFY, later; a flag made after them is told after them, so
    // once it is seen no earlier token change can still drop the cache.
    const barrier = await createFlag(ctx, project, { name: name(uniqueName('barrier')), strategies: [{ name: 'default' }] });
    await eventually(() => sees(barrier), 2000);
    // Removed behind the API's back (no event, no notification): only a cache can still know the token.
    await ctx.db.deleteFrom('api_tokens').where('secret_hash', '=', hashToken(token)).execute();
    const flag = await createFlag(ctx, project, { name: name(uniqueName('cached')), strategies: [{ name: 'default' }] });
    await eventually(() => sees(flag), 2000);
    // A change to tokens (here deleting another one) drops every cached token, on every instance.
    expectStatus(await ctx.admin.delete(`/api/admin/api-tokens/${encodeURIComponent(other)}`), 200);
    await eventually(async () => (await ctx.as(token).get('/api/client/features')).statusCode === 401, 2000);
  });
});
