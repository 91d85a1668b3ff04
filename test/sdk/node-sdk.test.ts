import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { after, before, describe, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { Strategy, type Unleash, UnleashEvents, type Context } from 'unleash-client';
import { expectStatus } from '../helpers/assertions.js';
import { uniqueName } from '../helpers/fixtures.js';
import { eventually } from '../helpers/eventually.js';
import { createFlag, createSegment } from '../helpers/projects.js';
import { createSdkToken, startNodeSdk } from '../helpers/sdk-fixtures.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { usingPostgres } from '../helpers/test-database.js';
import { openDatabase } from '../../src/db/database.js';
import { composeApp } from '../../src/server.js';

/**
 * The official Node SDK (`unleash-client` from npm), in polling and streaming mode, against a Vexil listening on
 * a real port: it synchronises, and evaluates flags that use every built-in strategy, every constraint operator,
 * segments, variants and dependencies as expected.
 */
let ctx: TestApp;
let baseUrl: string;
let clientToken: string;
let productionToken: string;
const project = uniqueName('sdk');
const other = uniqueName('sdk-other');
const name = (key: string) => `${project}-${key}`;
const sdks: Unleash[] = [];

const always = (constraints: unknown[] = [], extra: Record<string, unknown> = {}) => ({ name: 'default', constraints, ...extra });
const constrained = (contextName: string, operator: string, values: string | string[], extra: Record<string, unknown> = {}) =>
  always([{ contextName, operator, ...(Array.isArray(values) ? { values } : { value: values }), ...extra }]);

/** One flag per operator, each with one constraint and contexts it must and must not match. */
const OPERATOR_CASES: Array<{ key: string; strategy: unknown; yes: Context; no: Context }> = [
  {
    key: 'in',
    strategy: constrained('plan', 'IN', ['pro', 'team']),
    yes: { properties: { plan: 'team' } },
    no: { properties: { plan: 'free' } },
  },
  {
    key: 'not-in',
    strategy: constrained('plan', 'NOT_IN', ['free']),
    yes: { properties: { plan: 'pro' } },
    no: { properties: { plan: 'free' } },
  },
  {
    key: 'starts',
    strategy: constrained('email', 'STR_STARTS_WITH', ['admin@']),
    yes: { properties: { email: 'admin@x.io' } },
    no: { properties: { email: 'me@x.io' } },
  },
  {
    key: 'ends',
    strategy: constrained('email', 'STR_ENDS_WITH', ['@vexil.dev'], { caseInsensitive: true }),
    yes: { properties: { email: 'A@VEXIL.DEV' } },
    no: { properties: { email: 'a@x.io' } },
  },
  {
    key: 'contains',
    strategy: constrained('email', 'STR_CONTAINS', ['beta']),
    yes: { properties: { email: 'beta-user@x.io' } },
    no: { properties: { email: 'user@x.io' } },
  },
  { key: 'num-eq', strategy: constrained('age', 'NUM_EQ', '42'), yes: { properties: { age: '42' } }, no: { properties: { age: '41' } } },
  { key: 'num-gt', strategy: constrained('age', 'NUM_GT', '18'), yes: { properties: { age: '19' } }, no: { properties: { age: '18' } } },
  {
    key: 'num-gte',
    strategy: constrained('age', 'NUM_GTE', '18'),
    yes: { properties: { age: '18' } },
    no: { properties: { age: '17.5' } },
  },
  { key: 'num-lt', strategy: constrained('age', 'NUM_LT', '18'), yes: { properties: { age: '17' } }, no: { properties: { age: '18' } } },
  { key: 'num-lte', strategy: constrained('age', 'NUM_LTE', '18'), yes: { properties: { age: '18' } }, no: { properties: { age: '19' } } },
  {
    key: 'date-after',
    strategy: constrained('currentTime', 'DATE_AFTER', '2026-01-01T00:00:00Z'),
    yes: { currentTime: new Date('2026-06-01T00:00:00Z') },
    no: { currentTime: new Date('2025-06-01T00:00:00Z') },
  },
  {
    key: 'date-before',
    strategy: constrained('currentTime', 'DATE_BEFORE', '2026-01-01T00:00:00Z'),
    yes: { currentTime: new Date('2025-06-01T00:00:00Z') },
    no: { currentTime: new Date('2026-06-01T00:00:00Z') },
  },
  {
    key: 'semver-eq',
    strategy: constrained('version', 'SEMVER_EQ', '2.0.0'),
    yes: { properties: { version: '2.0.0' } },
    no: { properties: { version: '2.0.1' } },
  },
  {
    key: 'semver-gt',
    strategy: constrained('version', 'SEMVER_GT', '2.0.0'),
    yes: { properties: { version: '2.1.0' } },
    no: { properties: { version: '2.0.0' } },
  },
  {
    key: 'semver-lt',
    strategy: constrained('version', 'SEMVER_LT', '2.0.0'),
    yes: { properties: { version: '1.9.9' } },
    no: { properties: { version: '2.0.0' } },
  },
  {
    key: 'semver-gte',
    strategy: constrained('version', 'SEMVER_GTE', '2.0.0'),
    yes: { properties: { version: '2.0.0' } },
    no: { properties: { version: '2.0.0-beta.1' } },
  },
  {
    key: 'semver-lte',
    strategy: constrained('version', 'SEMVER_LTE', '2.0.0'),
    yes: { properties: { version: '2.0.0' } },
    no: { properties: { version: '2.0.1' } },
  },
  {
    key: 'regex',
    strategy: constrained('email', 'REGEX', '^[a-z]+@(eu|us)\\.vexil\\.dev$'),
    yes: { properties: { email: 'ada@eu.vexil.dev' } },
    no: { properties: { email: 'ada@asia.vexil.dev' } },
  },
  {
    key: 'cidr',
    strategy: constrained('remoteAddress', 'IN_CIDR', ['10.0.0.0/8', '2001:db8::/32']),
    yes: { remoteAddress: '10.20.30.40' },
    no: { remoteAddress: '192.168.1.1' },
  },
  {
    key: 'inverted',
    strategy: constrained('plan', 'IN', ['free'], { inverted: true }),
    yes: { properties: { plan: 'pro' } },
    no: { properties: { plan: 'free' } },
  },
];

/** The application's own implementation of a custom strategy defined in Vexil: on for the listed tenants. */
const TENANT_STRATEGY = uniqueName('tenant');
class TenantStrategy extends Strategy {
  constructor() {
    super(TENANT_STRATEGY);
  }
  override isEnabled(parameters: { tenants?: string }, context: Context): boolean {
    const tenants = (parameters.tenants ?? '').split(',').map((tenant) => tenant.trim());
    return tenants.includes(String(context.properties?.tenant));
  }
}

before(async () => {
  ctx = await startTestApp();
  baseUrl = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  for (const id of [project, other]) {
    expectStatus(await ctx.admin.post('/api/admin/projects', { id, name: id, environments: ['development', 'production'] }), 201);
  }
  clientToken = await createSdkToken(ctx, 'client', 'development', [project]);
  productionToken = await createSdkToken(ctx, 'client', 'production', [project]);

  const segment = await createSegment(ctx, {
    name: uniqueName('nordics'),
    constraints: [{ contextName: 'country', operator: 'IN', values: ['no', 'se'] }],
  });
  const segmentId = segment.id;

  await createFlag(ctx, project, { name: name('default'), strategies: [always()] });
  await createFlag(ctx, project, { name: name('off'), strategies: [always()], enabled: false });
  await createFlag(ctx, project, {
    name: name('rollout'),
    strategies: [{ name: 'flexibleRollout', parameters: { rollout: '37', stickiness: 'userId', groupId: name('rollout') } }],
  });
  await createFlag(ctx, project, { name: name('users'), strategies: [{ name: 'userWithId', parameters: { userIds: 'alice, bob' } }] });
  await createFlag(ctx, project, {
    name: name('ips'),
    strategies: [{ name: 'remoteAddress', parameters: { IPs: '10.1.2.3, 192.168.0.0/16' } }],
  });
  await createFlag(ctx, project, {
    name: name('hosts'),
    strategies: [{ name: 'applicationHostname', parameters: { hostNames: hostname() } }],
  });
  await createFlag(ctx, project, { name: name('segment'), strategies: [{ ...always(), segments: [segmentId] }] });
  // A disabled strategy that would turn everything on is left out; only the enabled one decides.
  await createFlag(ctx, project, {
    name: name('disabled-strategy'),
    strategies: [{ ...always(), disabled: true }, constrained('plan', 'IN', ['pro'])],
  });
  await createFlag(ctx, project, {
    name: name('env-variants'),
    strategies: [always()],
    variants: [
      { name: 'red', weight: 500, weightType: 'variable', stickiness: 'userId', payload: { type: 'json', value: '{"color":"red"}' } },
      { name: 'blue', weight: 500, weightType: 'variable', stickiness: 'userId', payload: { type: 'string', value: 'blue' } },
    ],
  });
  await createFlag(ctx, project, {
    name: name('strategy-variants'),
    strategies: [
      {
        name: 'flexibleRollout',
        parameters: { rollout: '100', stickiness: 'userId', groupId: name('strategy-variants') },
        variants: [
          { name: 'small', weight: 300, weightType: 'variable', stickiness: 'userId' },
          { name: 'large', weight: 700, weightType: 'fix', stickiness: 'userId', payload: { type: 'number', value: '7' } },
        ],
      },
    ],
  });
  expectStatus(
    await ctx.admin.post('/api/admin/strategies', {
      name: TENANT_STRATEGY,
      parameters: [{ name: 'tenants', type: 'list', required: true }],
    }),
    201,
  );
  await createFlag(ctx, project, {
    name: name('custom'),
    strategies: [{ name: TENANT_STRATEGY, parameters: { tenants: 'acme, globex' } }],
  });
  await createFlag(ctx, project, { name: name('child'), strategies: [always()] });
  expectStatus(
    await ctx.admin.post(`/api/admin/projects/${project}/features/${name('child')}/dependencies`, { feature: name('users') }),
    200,
  );
  for (const { key, strategy } of OPERATOR_CASES) await createFlag(ctx, project, { name: name(`op-${key}`), strategies: [strategy] });
  // Another project's flag and an archived flag are never sent to this token.
  await createFlag(ctx, other, { name: `${other}-hidden`, strategies: [always()] });
  await createFlag(ctx, project, { name: name('archived'), strategies: [always()] });
  expectStatus(await ctx.admin.delete(`/api/admin/projects/${project}/features/${name('archived')}`), 202);
});

after(async () => {
  for (const sdk of sdks) sdk.destroy();
  // destroy() does not cancel a poll already under way, and once destroyed the SDK has no error listener: a poll
  // that starts its connection after the server closed would throw as an unhandled rejection. Closing after a
  // pause longer than a request to this local server takes lets such a poll finish against a live server.
  await new Promise((resolve) => setTimeout(resolve, 500));
  await ctx.close();
});

async function startSdk(token: string, mode: 'polling' | 'streaming' = 'polling'): Promise<Unleash> {
  const sdk = await startNodeSdk(baseUrl, token, {
    refreshInterval: 200,
    metricsInterval: 0,
    strategies: [new TenantStrategy()],
    ...(mode === 'streaming' ? { experimentalMode: { type: 'streaming' as const } } : {}),
  });
  sdks.push(sdk);
  return sdk;
}

describe('the Node SDK in polling mode', () => {
  let sdk: Unleash;
  before(async () => {
    sdk = await startSdk(clientToken);
  });

  test('receives the flags of its token: its project and environment, no archived flags', () => {
    const names = sdk
      .getFeatureToggleDefinitions()!
      .map((definition) => definition.name)
      .sort();
    const expected = [
      'child',
      'custom',
      'default',
      'disabled-strategy',
      'env-variants',
      'hosts',
      'ips',
      'off',
      'rollout',
      'segment',
      'strategy-variants',
      'users',
      ...OPERATOR_CASES.map(({ key }) => `op-${key}`),
    ]
      .map(name)
      .sort();
    assert.deepEqual(names, expected);
  });

  test('evaluates the built-in strategies', () => {
    assert.equal(sdk.isEnabled(name('default')), true);
    assert.equal(sdk.isEnabled(name('off')), false);
    assert.equal(sdk.isEnabled(name('users'), { userId: 'bob' }), true);
    assert.equal(sdk.isEnabled(name('users'), { userId: 'carol' }), false);
    assert.equal(sdk.isEnabled(name('ips'), { remoteAddress: '10.1.2.3' }), true);
    assert.equal(sdk.isEnabled(name('ips'), { remoteAddress: '192.168.44.5' }), true);
    assert.equal(sdk.isEnabled(name('ips'), { remoteAddress: '10.1.2.4' }), false);
    assert.equal(sdk.isEnabled(name('hosts')), true);
    const rolledOut = Array.from({ length: 1000 }, (_, i) => sdk.isEnabled(name('rollout'), { userId: `user-${i}` })).filter(
      Boolean,
    ).length;
    assert.ok(rolledOut > 300 && rolledOut < 440, `37% rollout enabled ${rolledOut} of 1000 users`);
  });

  test("evaluates a custom strategy defined in Vexil with the application's implementation and parameters", () => {
    assert.equal(sdk.isEnabled(name('custom'), { properties: { tenant: 'globex' } }), true);
    assert.equal(sdk.isEnabled(name('custom'), { properties: { tenant: 'initech' } }), false);
  });

  for (const { key, yes, no } of OPERATOR_CASES) {
    test(`evaluates the ${key} constraint`, () => {
      assert.equal(sdk.isEnabled(name(`op-${key}`), yes), true, JSON.stringify(yes));
      assert.equal(sdk.isEnabled(name(`op-${key}`), no), false, JSON.stringify(no));
    });
  }

  test('evaluates segments, dependencies and leaves disabled strategies out', () => {
    assert.equal(sdk.isEnabled(name('segment'), { properties: { country: 'se' } }), true);
    assert.equal(sdk.isEnabled(name('segment'), { properties: { country: 'dk' } }), false);
    assert.equal(sdk.isEnabled(name('child'), { userId: 'alice' }), true);
    assert.equal(sdk.isEnabled(name('child'), { userId: 'mallory' }), false, 'the parent is off for mallory');
    assert.equal(sdk.isEnabled(name('disabled-strategy'), { properties: { plan: 'pro' } }), true);
    assert.equal(sdk.isEnabled(name('disabled-strategy'), { properties: { plan: 'free' } }), false);
  });

  test('selects environment and strategy variants with stickiness and payloads', () => {
    const colors = new Map<string, number>();
    for (let i = 0; i < 400; i++) {
      const variant = sdk.getVariant(name('env-variants'), { userId: `user-${i}` });
      assert.equal(variant.enabled, true);
      assert.deepEqual(
        variant.payload,
        variant.name === 'red' ? { type: 'json', value: '{"color":"red"}' } : { type: 'string', value: 'blue' },
      );
      colors.set(variant.name, (colors.get(variant.name) ?? 0) + 1);
      // Sticky: the same user gets the same variant every time.
      assert.equal(sdk.getVariant(name('env-variants'), { userId: `user-${i}` }).name, variant.name);
    }
    assert.deepEqual([...colors.keys()].sort(), ['blue', 'red']);
    assert.ok(colors.get('red')! > 150 && colors.get('red')! < 250, `red for ${colors.get('red')} of 400`);
    const sizes = Array.from({ length: 400 }, (_, i) => sdk.getVariant(name('strategy-variants'), { userId: `user-${i}` }).name);
    const large = sizes.filter((size) => size === 'large').length;
    assert.ok(large > 240 && large < 320, `large for ${large} of 400 (70%)`);
    assert.deepEqual(
      sdk.getVariant(name('strategy-variants'), { userId: sizes.indexOf('large') === -1 ? 'x' : `user-${sizes.indexOf('large')}` }).payload,
      { type: 'number', value: '7' },
    );
  });

  test('sees a change within its refresh interval, and a 304 while nothing changed', async () => {
    let unchanged = 0;
    sdk.on(UnleashEvents.Unchanged, () => (unchanged += 1));
    await eventually(() => unchanged >= 2, 3000);
    expectStatus(await ctx.admin.post(`/api/admin/projects/${project}/features/${name('off')}/environments/development/on`), 200);
    await eventually(() => sdk.isEnabled(name('off')), 3000);
    expectStatus(await ctx.admin.post(`/api/admin/projects/${project}/features/${name('off')}/environments/development/off`), 200);
    await eventually(() => !sdk.isEnabled(name('off')), 3000);
  });

  test('the configuration goes gzipped to clients that take it, as this SDK does (it sends accept-encoding: gzip,deflate)', async () => {
    const get = (headers: Record<string, string>) =>
      ctx.app.inject({
        method: 'GET',
        url: '/api/client/features',
        headers: { authorization: clientToken, 'unleash-client-spec': '5.2.0', ...headers },
      });
    const plain = await get({});
    expectStatus(plain, 200);
    assert.equal(plain.headers['content-encoding'], undefined);
    const compressed = await get({ 'accept-encoding': 'gzip,deflate' });
    expectStatus(compressed, 200);
    assert.equal(compressed.headers['content-encoding'], 'gzip');
    assert.equal(compressed.headers.vary, 'accept-encoding, unleash-client-spec');
    assert.equal(compressed.headers.etag, plain.headers.etag);
    assert.equal(gunzipSync(compressed.rawPayload).toString(), plain.payload);
    assert.ok(compressed.rawPayload.length < plain.rawPayload.length / 3, 'the JSON shrinks to under a third');
    assert.equal((await get({ 'accept-encoding': 'gzip;q=0, identity' })).headers['content-encoding'], undefined);
    // A 304 stays a 304, whatever the encoding.
    const notModified = await get({ 'accept-encoding': 'gzip', 'if-none-match': String(plain.headers.etag) });
    assert.equal(notModified.statusCode, 304);
    assert.equal(notModified.rawPayload.length, 0);
  });

  test('a token of another environment sees that environment only', async () => {
    const production = await startSdk(productionToken);
    assert.equal(production.isEnabled(name('default')), false, 'nothing is on in production');
    assert.ok(production.getFeatureToggleDefinition(name('default')), 'the flag is known there, off');
    assert.equal(production.getFeatureToggleDefinition(`${other}-hidden`), undefined);
  });
});

describe('the Node SDK in streaming mode', () => {
  test('hydrates from the stream and receives a change pushed within a second', async () => {
    const sdk = await startSdk(clientToken, 'streaming');
    assert.equal(sdk.isEnabled(name('users'), { userId: 'alice' }), true);
    assert.equal(sdk.isEnabled(name('op-in'), { properties: { plan: 'pro' } }), true);
    const flag = name('streamed');
    await createFlag(ctx, project, { name: flag, strategies: [always()] });
    const arrived = await eventually(() => sdk.isEnabled(flag), 1000);
    assert.ok(arrived < 1000, `the new flag arrived after ${arrived.toFixed(0)} ms`);
    expectStatus(await ctx.admin.post(`/api/admin/projects/${project}/features/${flag}/environments/development/off`), 200);
    await eventually(() => !sdk.isEnabled(flag), 1000);
    expectStatus(await ctx.admin.delete(`/api/admin/projects/${project}/features/${flag}`), 202);
    await eventually(() => sdk.getFeatureToggleDefinition(flag) === undefined, 1000);
  });
});

describe('two instances on one PostgreSQL', { skip: !usingPostgres() && 'needs PostgreSQL (TEST_DATABASE_URL)' }, () => {
  test('a flag toggled through one instance reaches a streaming SDK connected to the other within a second', async () => {
    const handle = await openDatabase(ctx.databaseConfig);
    const { app: second } = await composeApp(
      { db: handle.db, clock: ctx.clock, config: ctx.config, listen: handle.listen },
      { logLevel: 'silent' },
    );
    try {
      const secondUrl = await second.listen({ port: 0, host: '127.0.0.1' });
      const sdk = await startNodeSdk(secondUrl, clientToken, { experimentalMode: { type: 'streaming' } });
      sdks.push(sdk);
      const flag = name('across');
      await createFlag(ctx, project, { name: flag, strategies: [always()], enabled: false });
      await eventually(() => sdk.getFeatureToggleDefinition(flag) !== undefined, 1000);
      expectStatus(await ctx.admin.post(`/api/admin/projects/${project}/features/${flag}/environments/development/on`), 200);
      const arrived = await eventually(() => sdk.isEnabled(flag), 1000);
      assert.ok(arrived < 1000, `arrived after ${arrived.toFixed(0)} ms`);
      sdk.destroy();
    } finally {
      await second.close();
      await handle.close();
    }
  });
});
