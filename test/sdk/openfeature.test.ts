import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { inflateSync } from 'node:zlib';
import { EventSource } from 'eventsource';
import { OFREPProvider } from '@openfeature/ofrep-provider';
import { OFREPWebProvider } from '@openfeature/ofrep-web-provider';
import { OpenFeature as ServerOpenFeature } from '@openfeature/server-sdk';
import { OpenFeature as WebOpenFeature } from '@openfeature/web-sdk';
import type { Unleash } from 'unleash-client';
import { expectStatus } from '../helpers/assertions.js';
import { eventually } from '../helpers/eventually.js';
import { uniqueName } from '../helpers/fixtures.js';
import { createFlag, createProject, featurePath } from '../helpers/projects.js';
import { createSdkToken, startNodeSdk } from '../helpers/sdk-fixtures.js';
import { ADMIN_TOKEN, useTestApp } from '../helpers/test-app.js';
import { hashToken } from '../../src/shared/secrets.js';
import { usingPostgres } from '../helpers/test-database.js';

/**
 * OpenFeature's real SDKs with their OFREP providers from npm, against a listening Vexil: the server provider
 * with a client token, the web provider (bulk evaluation, as a browser uses it) with a frontend token. Values,
 * variants and reasons as they happened, and agreement with the official Unleash SDK, bucket for bucket.
 */
let baseUrl: string;
let clientToken: string;
let frontendToken: string;
let otherProjectToken: string;
const project = uniqueName('of');
const flags = {
  static: `${project}-static`,
  rollout: `${project}-rollout`,
  targeted: `${project}-targeted`,
  off: `${project}-off`,
  colours: `${project}-colours`,
  limits: `${project}-limits`,
  layout: `${project}-layout`,
};
const sdks: Unleash[] = [];

const ctx = useTestApp({}, async (app) => {
  baseUrl = await app.app.listen({ port: 0, host: '127.0.0.1' });
  await createProject(app, { id: project, environments: ['development'] });
  await createFlag(app, project, { name: flags.static, strategies: [{ name: 'default' }] });
  await createFlag(app, project, {
    name: flags.rollout,
    strategies: [{ name: 'flexibleRollout', parameters: { rollout: '40', stickiness: 'default', groupId: flags.rollout } }],
  });
  await createFlag(app, project, {
    name: flags.targeted,
    strategies: [{ name: 'default', constraints: [{ contextName: 'plan', operator: 'IN', values: ['pro'] }] }],
  });
  await createFlag(app, project, { name: flags.off, strategies: [{ name: 'default' }], enabled: false });
  const variantFlag = (name: string, variants: unknown[]) =>
    createFlag(app, project, {
      name,
      strategies: [{ name: 'flexibleRollout', parameters: { rollout: '100', stickiness: 'default', groupId: name }, variants }],
    });
  await variantFlag(flags.colours, [
    { name: 'red', weight: 500, weightType: 'variable', stickiness: 'default', payload: { type: 'string', value: 'crimson' } },
    { name: 'blue', weight: 500, weightType: 'variable', stickiness: 'default', payload: { type: 'string', value: 'navy' } },
  ]);
  await variantFlag(flags.limits, [
    { name: 'high', weight: 1000, weightType: 'variable', stickiness: 'default', payload: { type: 'number', value: '250' } },
  ]);
  await variantFlag(flags.layout, [
    {
      name: 'grid',
      weight: 1000,
      weightType: 'variable',
      stickiness: 'default',
      payload: { type: 'json', value: '{"columns":3,"dense":true}' },
    },
  ]);
  clientToken = await createSdkToken(app, 'client', 'development', [project]);
  frontendToken = await createSdkToken(app, 'frontend', 'development', [project]);
  otherProjectToken = await createSdkToken(app, 'client', 'development', ['default']);
});

after(async () => {
  for (const sdk of sdks) sdk.destroy();
  await ServerOpenFeature.close();
  await WebOpenFeature.close();
});

describe('the server SDK with the OFREP provider (client token)', () => {
  test('booleans, strings, numbers and objects, with their variants and reasons', async () => {
    await ServerOpenFeature.setProviderAndWait('vexil', new OFREPProvider({ baseUrl, headers: [['Authorization', clientToken]] }));
    const client = ServerOpenFeature.getClient('vexil');
    const alice = { targetingKey: 'alice', plan: 'pro' };

    const on = await client.getBooleanDetails(flags.static, false, alice);
    assert.deepEqual([on.value, on.reason, on.variant, on.flagMetadata], [true, 'STATIC', 'on', { project, flagType: 'release' }]);
    const targeted = await client.getBooleanDetails(flags.targeted, false, alice);
    assert.deepEqual([targeted.value, targeted.reason], [true, 'TARGETING_MATCH']);
    const notTargeted = await client.getBooleanDetails(flags.targeted, true, { targetingKey: 'bob', plan: 'free' });
    assert.deepEqual([notTargeted.value, notTargeted.reason], [false, 'DEFAULT']);
    const off = await client.getBooleanDetails(flags.off, true, alice);
    assert.deepEqual([off.value, off.reason, off.variant], [false, 'DISABLED', 'off']);

    const colour = await client.getStringDetails(flags.colours, 'none', alice);
    assert.equal(colour.reason, 'SPLIT');
    assert.deepEqual([colour.variant === 'red' ? 'crimson' : 'navy'], [colour.value]);
    const limit = await client.getNumberDetails(flags.limits, 0, alice);
    assert.deepEqual([limit.value, limit.variant], [250, 'high']);
    const layout = await client.getObjectDetails(flags.layout, {}, alice);
    assert.deepEqual([layout.value, layout.variant], [{ columns: 3, dense: true }, 'grid']);

    const unknown = await client.getBooleanDetails(uniqueName('nope'), true, alice);
    assert.deepEqual([unknown.value, unknown.errorCode], [true, 'FLAG_NOT_FOUND']);
  });

  test('agrees with the official Unleash SDK for 500 contexts, bucket for bucket', async () => {
    const client = ServerOpenFeature.getClient('vexil');
    const sdk = await startNodeSdk(baseUrl, clientToken, { refreshInterval: 3_600_000 });
    sdks.push(sdk);
    let on = 0;
    for (let i = 0; i < 500; i++) {
      const context = { targetingKey: `user-${i}`, plan: i % 3 === 0 ? 'pro' : 'free' };
      const sdkContext = { userId: context.targetingKey, properties: { plan: context.plan } };
      for (const flag of [flags.rollout, flags.targeted, flags.static, flags.off]) {
        const expected = sdk.isEnabled(flag, sdkContext);
        assert.equal(await client.getBooleanValue(flag, !expected, context), expected, `${flag} for ${context.targetingKey}`);
        if (flag === flags.rollout && expected) on++;
      }
      assert.equal(await client.getStringValue(flags.colours, 'none', context), sdk.getVariant(flags.colours, sdkContext).payload?.value);
    }
    assert.ok(on > 150 && on < 250, `${on} of 500 in the 40% rollout`);
  });

  test('a token sees only its projects: another project’s flag is not found', async () => {
    await ServerOpenFeature.setProviderAndWait('other', new OFREPProvider({ baseUrl, headers: [['Authorization', otherProjectToken]] }));
    const details = await ServerOpenFeature.getClient('other').getBooleanDetails(flags.static, false, { targetingKey: 'alice' });
    assert.deepEqual([details.value, details.errorCode], [false, 'FLAG_NOT_FOUND']);
  });
});

describe('usage', () => {
  test('OFREP evaluations count in each flag’s usage (yes and no, last seen), written within seconds', async () => {
    const usageOf = async (flag: string) => {
      const result = (await ctx.admin.get(`/api/admin/search/features?project=IS:${project}&query=${flag}`)).json() as {
        features: Array<{ name: string; environments: Array<{ name: string; lastSeenAt: string | null; yes: number; no: number }> }>;
      };
      return result.features.find((f) => f.name === flag)!.environments.find((e) => e.name === 'development')!;
    };
    // The 500 contexts above evaluated the 40% rollout: some yes, some no. The tally is written every few
    // seconds, so a busy machine may show part of it first.
    await eventually(async () => {
      const counted = await usageOf(flags.rollout);
      return counted.yes > 100 && counted.no > 100;
    }, 15_000).catch(() => undefined);
    const rollout = await usageOf(flags.rollout);
    assert.ok(rollout.yes > 100 && rollout.no > 100 && rollout.lastSeenAt !== null, JSON.stringify(rollout));
    const off = await usageOf(flags.off);
    assert.ok(off.yes === 0 && off.no > 0, JSON.stringify(off));
  });
});

describe('the web SDK with the OFREP web provider (frontend token)', () => {
  test('evaluates every flag once for the context, and reads them from what it holds', async () => {
    // Node has no EventSource of its own; browsers do. The provider uses the global one for its event stream.
    Object.assign(globalThis, { EventSource });
    await WebOpenFeature.setContext({ targetingKey: 'alice', plan: 'pro' });
    await WebOpenFeature.setProviderAndWait(
      new OFREPWebProvider({ baseUrl, headers: [['X-API-Key', frontendToken]], cacheMode: 'disabled', disableVisibilityRefresh: true }),
    );
    const client = WebOpenFeature.getClient();
    assert.equal(client.getBooleanValue(flags.static, false), true);
    assert.equal(client.getBooleanValue(flags.targeted, false), true);
    assert.equal(client.getBooleanValue(flags.off, true), false);
    assert.deepEqual(client.getObjectValue(flags.layout, {}), { columns: 3, dense: true });
    assert.equal(client.getBooleanDetails(uniqueName('nope'), true).errorCode, 'FLAG_NOT_FOUND');
  });

  test('a change reaches it through the event stream the bulk answer names, without polling', async () => {
    const client = WebOpenFeature.getClient();
    assert.equal(client.getBooleanValue(flags.off, true), false);
    expectStatus(await ctx.admin.post(`${featurePath(project, flags.off)}/environments/development/on`), 200);
    await eventually(() => client.getBooleanValue(flags.off, false) === true, 5000);
    expectStatus(await ctx.admin.post(`${featurePath(project, flags.off)}/environments/development/off`), 200);
    await eventually(() => client.getBooleanValue(flags.off, true) === false, 5000);
  });
});

describe('the OFREP endpoints', () => {
  const post = (path: string, body: unknown, headers: Record<string, string> = { authorization: clientToken }) =>
    ctx.app.inject({ method: 'POST', url: path, headers, payload: body as Record<string, unknown> });

  test('bulk evaluation has an ETag for the flags and the context, and answers 304 while both are the same', async () => {
    const first = await post('/ofrep/v1/evaluate/flags', { context: { targetingKey: 'alice' } });
    expectStatus(first, 200);
    const etag = String(first.headers.etag);
    const keys = (first.json() as { flags: Array<{ key: string }> }).flags.map((f) => f.key).sort();
    assert.deepEqual(keys, Object.values(flags).sort());
    const withEtag = (targetingKey: string) =>
      post('/ofrep/v1/evaluate/flags', { context: { targetingKey } }, { authorization: clientToken, 'if-none-match': etag });
    assert.equal((await withEtag('alice')).statusCode, 304);
    expectStatus(await withEtag('bob'), 200);
    expectStatus(await ctx.admin.post(`${featurePath(project, flags.off)}/environments/development/on`), 200);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expectStatus(await withEtag('alice'), 200);
    expectStatus(await ctx.admin.post(`${featurePath(project, flags.off)}/environments/development/off`), 200);
  });

  test('a client that takes deflate gets the same bulk answer compressed; fetch reads it as it reads the plain one', async () => {
    const context = { context: { targetingKey: 'carol', plan: 'pro' } };
    // The previous test's last change reaches the store by a PostgreSQL notification: wait until the answer holds.
    let plain = await post('/ofrep/v1/evaluate/flags', context);
    await eventually(async () => {
      await new Promise((resolve) => setTimeout(resolve, 200));
      const again = await post('/ofrep/v1/evaluate/flags', context);
      const settled = again.headers.etag === plain.headers.etag;
      plain = again;
      return settled;
    });
    expectStatus(plain, 200);
    assert.equal(plain.headers['content-encoding'], undefined);
    const compressed = await post('/ofrep/v1/evaluate/flags', context, {
      authorization: clientToken,
      'accept-encoding': 'gzip, deflate, br',
    });
    expectStatus(compressed, 200);
    assert.equal(compressed.headers['content-encoding'], 'deflate');
    assert.equal(compressed.headers.vary, 'accept-encoding');
    assert.equal(compressed.headers.etag, plain.headers.etag);
    // inflateSync checks the stream's Adler-32 too.
    assert.equal(inflateSync(compressed.rawPayload).toString(), plain.payload);
    const refused = await post('/ofrep/v1/evaluate/flags', context, { authorization: clientToken, 'accept-encoding': 'gzip, deflate;q=0' });
    assert.equal(refused.headers['content-encoding'], undefined);
    assert.equal(refused.payload, plain.payload);

    // Node's fetch asks for deflate by itself and decodes the answer.
    const fetched = await fetch(`${baseUrl}/ofrep/v1/evaluate/flags`, {
      method: 'POST',
      headers: { authorization: clientToken, 'content-type': 'application/json' },
      body: JSON.stringify(context),
    });
    assert.equal(fetched.headers.get('content-encoding'), 'deflate');
    assert.deepEqual(await fetched.json(), plain.json());
  });

  test('right after a change, every evaluation reads one configuration: the flag and its strategies from the same revision', async () => {
    const flag = uniqueName('snapshot');
    await createFlag(ctx, project, {
      name: flag,
      strategies: [{ name: 'flexibleRollout', parameters: { rollout: '100', stickiness: 'default', groupId: flag } }],
      enabled: false,
    });
    const frontend = { authorization: frontendToken };
    const evaluate = () => post(`/ofrep/v1/evaluate/flags/${flag}`, { context: { targetingKey: 'alice' } });
    const bulk = () => post('/ofrep/v1/evaluate/flags', { context: { targetingKey: 'alice' } }, frontend);
    const bulkValue = async () =>
      (await bulk()).json<{ flags: Array<{ key: string; value: unknown; reason: string }> }>().flags.find((f) => f.key === flag);
    assert.deepEqual([(await evaluate()).json<{ reason: string }>().reason, (await bulkValue())?.reason], ['DISABLED', 'DISABLED']);
    // Before the change, or after it: never the flag of one revision evaluated with the strategies of another
    // (on, yet answered DEFAULT or DISABLED). In one process on the embedded engine a commit marks the store at
    // once, so the first answers after a write already hold it; on PostgreSQL the change arrives a moment later.
    const consistent = [JSON.stringify([false, 'DISABLED']), JSON.stringify([true, 'STATIC'])];
    const answersOf = async () => {
      const answers = await Promise.all([evaluate(), evaluate(), bulk(), evaluate()]);
      return answers.map((answer) => {
        const body = answer.json<{ value?: unknown; reason?: string; flags?: Array<{ key: string; value: unknown; reason: string }> }>();
        const mine = body.flags ? body.flags.find((f) => f.key === flag) : body;
        return JSON.stringify([mine?.value, mine?.reason]);
      });
    };
    for (let round = 0; round < 5; round += 1) {
      for (const [state, settled] of [
        ['on', consistent[1]!],
        ['off', consistent[0]!],
      ] as const) {
        expectStatus(await ctx.admin.post(`${featurePath(project, flag)}/environments/development/${state}`), 200);
        for (let tries = 1; ; tries += 1) {
          const answers = await answersOf();
          for (const answer of answers) assert.ok(consistent.includes(answer), `round ${round}, ${state}: ${answer}`);
          if (answers.every((answer) => answer === settled)) break;
          assert.ok(usingPostgres(), `round ${round}, ${state}: the first answers after the write hold it (${answers.join(' ')})`);
          assert.ok(tries < 250, `round ${round}: the change reaches every evaluation within 5 s`);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      }
    }
  });

  test('browsers on an allowed origin call OFREP across origins; others get no CORS headers; the event stream opens at once', async () => {
    const preflight = (origin: string) =>
      ctx.app.inject({
        method: 'OPTIONS',
        url: '/ofrep/v1/evaluate/flags',
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-api-key,content-type' },
      });
    expectStatus(await ctx.admin.post('/api/admin/ui-config/cors', { frontendApiOrigins: ['https://shop.example'] }), 204);
    try {
      const allowed = await preflight('https://shop.example');
      assert.equal(allowed.statusCode, 204);
      assert.equal(allowed.headers['access-control-allow-origin'], 'https://shop.example');
      assert.match(String(allowed.headers['access-control-allow-headers']), /X-API-Key/i);
      assert.equal((await preflight('https://evil.example')).headers['access-control-allow-origin'], undefined);
      const evaluated = await post(
        '/ofrep/v1/evaluate/flags',
        { context: { targetingKey: 'alice' } },
        { 'x-api-key': frontendToken, origin: 'https://shop.example' },
      );
      expectStatus(evaluated, 200);
      assert.equal(evaluated.headers['access-control-allow-origin'], 'https://shop.example');
      assert.match(String(evaluated.headers['access-control-expose-headers']), /ETag/i);

      // The stream's headers (CORS included) arrive before any event or keep-alive.
      const { eventStreams } = evaluated.json<{ eventStreams: Array<{ endpoint: { requestUri: string } }> }>();
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(), 2_000);
      try {
        const stream = await fetch(`${baseUrl}${eventStreams[0]!.endpoint.requestUri}`, {
          headers: { origin: 'https://shop.example' },
          signal: controller.signal,
        });
        assert.equal(stream.status, 200);
        assert.equal(stream.headers.get('content-type'), 'text/event-stream');
        assert.equal(stream.headers.get('access-control-allow-origin'), 'https://shop.example');
      } finally {
        clearTimeout(timer);
        controller.abort();
      }
    } finally {
      expectStatus(await ctx.admin.post('/api/admin/ui-config/cors', { frontendApiOrigins: ['*'] }), 204);
    }
  });

  test('bad input is a 400 in OFREP’s shape; credentials are 401 and 403', async () => {
    const key = flags.static;
    const cases: Array<[unknown, string]> = [
      [{ context: 'alice' }, 'INVALID_CONTEXT'],
      [{ context: { targetingKey: 42 } }, 'INVALID_CONTEXT'],
      [{ context: { targetingKey: 'a', address: { city: 'Oslo' } } }, 'INVALID_CONTEXT'],
      [{ context: { targetingKey: 'a', currentTime: 'yesterday' } }, 'INVALID_CONTEXT'],
    ];
    for (const [body, errorCode] of cases) {
      const response = await post(`/ofrep/v1/evaluate/flags/${key}`, body);
      expectStatus(response, 400);
      const error = response.json() as { key: string; errorCode: string; errorDetails: string };
      assert.deepEqual([error.key, error.errorCode], [key, errorCode], JSON.stringify(body));
      assert.ok(error.errorDetails.length > 0);
    }
    const broken = await ctx.app.inject({
      method: 'POST',
      url: '/ofrep/v1/evaluate/flags',
      headers: { authorization: clientToken, 'content-type': 'application/json' },
      payload: '{"context": {',
    });
    expectStatus(broken, 400);
    assert.equal((broken.json() as { errorCode: string }).errorCode, 'PARSE_ERROR');
    const huge = await post('/ofrep/v1/evaluate/flags', { context: { targetingKey: 'a', note: 'x'.repeat(70 * 1024) } });
    expectStatus(huge, 400);
    assert.deepEqual(huge.json(), { errorCode: 'INVALID_CONTEXT', errorDetails: 'The request body is larger than 64 KiB' });
    const notFound = await post(`/ofrep/v1/evaluate/flags/${uniqueName('nope')}`, { context: {} });
    expectStatus(notFound, 404);
    assert.equal((notFound.json() as { errorCode: string }).errorCode, 'FLAG_NOT_FOUND');
    expectStatus(await post('/ofrep/v1/evaluate/flags', { context: {} }, {}), 401);
    expectStatus(await post('/ofrep/v1/evaluate/flags', { context: {} }, { authorization: 'not-a-token' }), 401);
    const unknownChannel = await ctx.app.inject({ method: 'GET', url: `/ofrep/v1/events?channel=${'0'.repeat(64)}` });
    expectStatus(unknownChannel, 401);
    assert.equal((unknownChannel.json() as { errorCode: string }).errorCode, 'GENERAL');
    expectStatus(await ctx.app.inject({ method: 'GET', url: '/ofrep/v1/events?channel=my-token' }), 400);
    const adminRefused = await post('/ofrep/v1/evaluate/flags', { context: {} }, { authorization: ADMIN_TOKEN });
    expectStatus(adminRefused, 403);
    assert.equal((adminRefused.json() as { errorCode: string }).errorCode, 'GENERAL');
  });

  test('opening the event stream by its channel counts as a use of the token it stands for', async () => {
    const name = uniqueName('stream');
    const created = await ctx.admin.post('/api/admin/api-tokens', {
      tokenName: name,
      type: 'frontend',
      environment: 'development',
      projects: [project],
    });
    expectStatus(created, 201);
    const { secret } = created.json() as { secret: string };
    const seenAt = async () => {
      const { tokens } = (await ctx.admin.get('/api/admin/api-tokens')).json() as {
        tokens: Array<{ tokenName: string; seenAt: string | null }>;
      };
      return tokens.find((token) => token.tokenName === name)?.seenAt;
    };
    assert.equal(await seenAt(), null, 'not used yet');
    const stop = new AbortController();
    const stream = await fetch(`${baseUrl}/ofrep/v1/events?channel=${hashToken(secret)}`, { signal: stop.signal });
    assert.equal(stream.status, 200);
    stop.abort();
    assert.equal(await seenAt(), ctx.clock.now().toISOString());
  });
});
