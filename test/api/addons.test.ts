import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { expectError, expectStatus } from '../helpers/assertions.js';
import { eventsSince, lastEventId } from '../helpers/events.js';
import { createUserSession } from '../helpers/fixtures.js';
import { useTestApp } from '../helpers/test-app.js';
import { createProject } from '../helpers/projects.js';

/**
 * Integration configurations through the admin API: Unleash's shapes, masking of secrets, validation, events
 * and permissions. Delivery itself is in integration-delivery.test.ts.
 */
// Configurations here point at 127.0.0.1; the outbound-safety tests cover the refusal.
const ctx = useTestApp({ env: { INTEGRATIONS_ALLOW_PRIVATE_NETWORKS: 'true' } });

interface Addon {
  id: number;
  provider: string;
  description: string;
  enabled: boolean;
  parameters: Record<string, string>;
  events: string[];
  projects: string[];
  environments: string[];
  createdAt: string;
  updatedAt: string;
  signingSecretCreatedAt: string;
}

const ADDONS = '/api/admin/addons';
const SECRET = 'Bearer s3cr3t-value-never-shown';
const HOOK_URL = 'http://127.0.0.1:9/hooks/secret-path-token';

function webhookBody(overrides: Record<string, unknown> = {}) {
  return {
    provider: 'webhook',
    description: 'Deploy notifier',
    enabled: true,
    parameters: { url: HOOK_URL, authorization: SECRET, contentType: 'application/json' },
    events: ['feature-created'],
    ...overrides,
  };
}

async function createAddon(body: Record<string, unknown> = webhookBody()): Promise<Addon> {
  const response = await ctx.admin.post(ADDONS, body);
  expectStatus(response, 201);
  // The signing secret is shown in this answer only (webhook-signing.test.ts verifies it).
  const { signingSecret, ...addon } = response.json() as Addon & { signingSecret: string };
  assert.match(signingSecret, /^whsec_/);
  return addon;
}

async function storedParameters(id: number): Promise<Record<string, string>> {
  const row = await ctx.db.selectFrom('addons').select('parameters').where('id', '=', id).executeTakeFirstOrThrow();
  return row.parameters;
}

describe('integration configurations', () => {
  test('GET /addons lists the providers with their parameter definitions', async () => {
    const response = await ctx.admin.get(ADDONS);
    expectStatus(response, 200);
    const { providers } = response.json() as {
      providers: Array<{
        name: string;
        parameters: Array<{ name: string; required: boolean; sensitive: boolean; type: string }>;
        events: string[];
        tagTypes: Array<{ name: string }>;
      }>;
    };
    assert.deepEqual(
      providers.map((provider) => provider.name),
      ['webhook', 'slack', 'teams', 'datadog'],
    );
    const webhook = providers.find((provider) => provider.name === 'webhook')!;
    assert.deepEqual(
      webhook.parameters.map(({ name, required, sensitive, type }) => ({ name, required, sensitive, type })),
      [
        { name: 'url', required: true, sensitive: true, type: 'url' },
        { name: 'contentType', required: false, sensitive: false, type: 'text' },
        { name: 'authorization', required: false, sensitive: true, type: 'text' },
        { name: 'bodyTemplate', required: false, sensitive: false, type: 'textfield' },
        { name: 'customHeaders', required: false, sensitive: true, type: 'textfield' },
      ],
    );
    assert.ok(webhook.events.includes('feature-environment-enabled'));
    assert.deepEqual(
      providers.find((provider) => provider.name === 'slack')!.tagTypes.map((t) => t.name),
      ['slack'],
    );
    assert.deepEqual(
      providers
        .find((provider) => provider.name === 'datadog')!
        .parameters.filter((p) => p.required)
        .map((p) => p.name),
      ['apiKey'],
    );
  });

  test('creating answers 201 with secrets masked, stores them, and records addon-config-created without them', async () => {
    const project = await createProject(ctx);
    const before = await lastEventId(ctx);
    const created = await createAddon(webhookBody({ projects: [project], environments: ['production'] }));
    assert.equal(typeof created.id, 'number');
    assert.deepEqual(
      { ...created, id: 0, createdAt: '', updatedAt: '', signingSecretCreatedAt: '' },
      {
        id: 0,
        provider: 'webhook',
        description: 'Deploy notifier',
        enabled: true,
        parameters: { url: '*****', authorization: '*****', contentType: 'application/json' },
        events: ['feature-created'],
        projects: [project],
        environments: ['production'],
        createdAt: '',
        updatedAt: '',
        signingSecretCreatedAt: '',
      },
    );
    assert.equal(created.createdAt, ctx.clock.now().toISOString());
    assert.equal(created.signingSecretCreatedAt, created.createdAt);
    assert.deepEqual(await storedParameters(created.id), { url: HOOK_URL, authorization: SECRET, contentType: 'application/json' });

    const events = await eventsSince(ctx, before);
    assert.deepEqual(
      events.map((event) => [event.type, event.createdBy]),
      [['addon-config-created', 'admin-token']],
    );
    assert.deepEqual(events[0]!.data, created);
    assert.ok(!JSON.stringify(events).includes('s3cr3t') && !JSON.stringify(events).includes('secret-path-token'));

    const listed = (await ctx.admin.get(ADDONS)).json() as { addons: Addon[] };
    assert.deepEqual(
      listed.addons.find((addon) => addon.id === created.id),
      created,
    );
    const one = await ctx.admin.get(`${ADDONS}/${created.id}`);
    expectStatus(one, 200);
    assert.deepEqual(one.json(), { ...created, deliveries: { pending: 0, lastSuccessAt: null, lastFailureAt: null } });
  });

  test('updating with the mask keeps the stored secret, a new secret replaces it, and the events never show either', async () => {
    const created = await createAddon();
    const before = await lastEventId(ctx);

    const masked = await ctx.admin.put(`${ADDONS}/${created.id}`, { ...webhookBody(), parameters: created.parameters, enabled: false });
    expectStatus(masked, 200);
    assert.equal((masked.json() as Addon).enabled, false);
    assert.deepEqual(await storedParameters(created.id), { url: HOOK_URL, authorization: SECRET, contentType: 'application/json' });

    ctx.clock.advance(1000);
    const rotated = await ctx.admin.put(`${ADDONS}/${created.id}`, {
      ...webhookBody({ enabled: false }),
      parameters: { ...created.parameters, authorization: 'Bearer rotated-s3cr3t' },
    });
    expectStatus(rotated, 200);
    assert.equal((await storedParameters(created.id)).authorization, 'Bearer rotated-s3cr3t');
    assert.equal((rotated.json() as Addon).parameters.authorization, '*****');

    const events = await eventsSince(ctx, before);
    assert.deepEqual(
      events.map((event) => event.type),
      ['addon-config-updated', 'addon-config-updated'],
    );
    assert.deepEqual((events[0]!.preData as Addon).enabled, true);
    assert.deepEqual((events[0]!.data as Addon).enabled, false);
    // A change of a secret alone is recorded too, told apart by updatedAt.
    assert.notEqual((events[1]!.data as Addon).updatedAt, (events[1]!.preData as Addon).updatedAt);
    assert.ok(!JSON.stringify(events).includes('s3cr3t'), 'no secret in the events');
  });

  test('an update that changes nothing records nothing; fields left out keep their values', async () => {
    const project = await createProject(ctx);
    const created = await createAddon(webhookBody({ projects: [project], environments: ['development'] }));
    const before = await lastEventId(ctx);
    const { description: _description, ...withoutOptional } = webhookBody();
    const response = await ctx.admin.put(`${ADDONS}/${created.id}`, { ...withoutOptional, parameters: created.parameters });
    expectStatus(response, 200);
    assert.deepEqual(response.json(), created);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('deleting answers 200, records addon-config-deleted, and the configuration is gone', async () => {
    const created = await createAddon();
    const before = await lastEventId(ctx);
    const response = await ctx.admin.delete(`${ADDONS}/${created.id}`);
    expectStatus(response, 200);
    const events = await eventsSince(ctx, before);
    assert.deepEqual(
      events.map((event) => [event.type, event.data]),
      [['addon-config-deleted', null]],
    );
    assert.deepEqual(events[0]!.preData, created);
    expectError(await ctx.admin.get(`${ADDONS}/${created.id}`), 404, 'NotFoundError');
    expectError(await ctx.admin.delete(`${ADDONS}/${created.id}`), 404, 'NotFoundError');
  });

  test('the first Slack configuration creates the slack tag type, once', async () => {
    const before = await lastEventId(ctx);
    const slack = {
      provider: 'slack',
      enabled: true,
      parameters: { url: 'http://127.0.0.1:9/services/T000/B000/XXXX', defaultChannel: 'releases' },
      events: [],
    };
    await createAddon(slack);
    await createAddon(slack);
    const tagType = await ctx.admin.get('/api/admin/tag-types/slack');
    expectStatus(tagType, 200);
    const events = await eventsSince(ctx, before);
    assert.deepEqual(
      events.map((event) => event.type),
      ['addon-config-created', 'tag-type-created', 'addon-config-created'],
    );
    assert.equal((events[0]!.data as Addon).parameters.url, '*****');
  });

  test('customHeaders that are not JSON are accepted (they make deliveries successWithErrors)', async () => {
    const created = await createAddon(webhookBody({ parameters: { url: HOOK_URL, customHeaders: 'not json' } }));
    assert.equal(created.parameters.customHeaders, '*****');
    assert.equal((await storedParameters(created.id)).customHeaders, 'not json');
  });

  test('`*` in projects and environments is accepted as "all", as Unleash\'s UI sends it', async () => {
    const created = await createAddon(webhookBody({ projects: ['*'], environments: ['*'], events: [] }));
    assert.deepEqual([created.projects, created.environments, created.events], [['*'], ['*'], []]);
  });
});

describe('integration configurations: bad input', () => {
  async function expectBadData(body: unknown, path: string, message: RegExp) {
    const before = await lastEventId(ctx);
    const response = await ctx.admin.post(ADDONS, body);
    const error = expectError(response, 400, 'BadDataError');
    assert.ok(
      error.details.some((detail) => detail.path === path && message.test(detail.message)),
      `expected a detail at ${path} matching ${message}: ${JSON.stringify(error.details)}`,
    );
    assert.deepEqual(await eventsSince(ctx, before), [], 'nothing is recorded');
  }

  test('an unknown provider', () =>
    expectBadData(webhookBody({ provider: 'pagerduty' }), '/body/provider', /must be one of webhook, slack, teams, datadog/));

  test('a missing required parameter', async () => {
    await expectBadData(webhookBody({ parameters: { contentType: 'text/plain' } }), '/body/parameters/url', /"url" is required/);
    await expectBadData(
      { provider: 'slack', enabled: true, parameters: { url: HOOK_URL, defaultChannel: '   ' }, events: [] },
      '/body/parameters/defaultChannel',
      /"defaultChannel" is required/,
    );
    await expectBadData({ provider: 'datadog', enabled: true, parameters: {}, events: [] }, '/body/parameters/apiKey', /required/);
  });

  test('an invalid URL', async () => {
    await expectBadData(webhookBody({ parameters: { url: 'not a url' } }), '/body/parameters/url', /absolute http or https URL/);
    await expectBadData(
      webhookBody({ parameters: { url: 'ftp://example.com/x' } }),
      '/body/parameters/url',
      /http or https URL \(got a ftp: URL\)/,
    );
    await expectBadData(
      webhookBody({ parameters: { url: 'https://user:pw@example.com/' } }),
      '/body/parameters/url',
      /may not carry credentials/,
    );
  });

  test('an unknown event type in events', () =>
    expectBadData(
      webhookBody({ events: ['feature-created', 'feature-exploded'] }),
      '/body/events/1',
      /Unknown event type "feature-exploded"/,
    ));

  test('a parameter the provider does not take, and unknown body properties', async () => {
    await expectBadData(
      webhookBody({ parameters: { url: HOOK_URL, channel: 'x' } }),
      '/body/parameters/channel',
      /not a parameter of webhook/,
    );
    await expectBadData({ ...webhookBody(), color: 'red' }, '/body/color', /not an allowed property/);
    await expectBadData(webhookBody({ parameters: { url: HOOK_URL, contentType: 5 } }), '/body/parameters/contentType', /string/);
  });

  test('a body template that is not valid Mustache, and a content type that is not a media type', async () => {
    await expectBadData(
      webhookBody({ parameters: { url: HOOK_URL, bodyTemplate: '{{#event}} unclosed' } }),
      '/body/parameters/bodyTemplate',
      /not a valid Mustache template/,
    );
    await expectBadData(
      webhookBody({ parameters: { url: HOOK_URL, contentType: 'json please' } }),
      '/body/parameters/contentType',
      /media type/,
    );
  });

  test('unknown projects and environments in the filters', async () => {
    await expectBadData(webhookBody({ projects: ['no-such-project'] }), '/body/projects/0', /Unknown project "no-such-project"/);
    await expectBadData(
      webhookBody({ environments: ['production', 'staging-x'] }),
      '/body/environments/1',
      /Unknown environment "staging-x"/,
    );
  });

  test('the mask for a secret that was never stored', () =>
    expectBadData(
      webhookBody({ parameters: { url: HOOK_URL, authorization: '*****' } }),
      '/body/parameters/authorization',
      /no stored value to keep/,
    ));

  test('a mask kept across a change of provider is refused, the stored configuration unchanged', async () => {
    const created = await createAddon();
    const response = await ctx.admin.put(`${ADDONS}/${created.id}`, {
      provider: 'teams',
      enabled: true,
      parameters: { url: '*****' },
      events: [],
    });
    expectError(response, 400, 'BadDataError');
    assert.deepEqual((await ctx.admin.get(`${ADDONS}/${created.id}`)).json(), {
      ...created,
      deliveries: { pending: 0, lastSuccessAt: null, lastFailureAt: null },
    });
  });

  test('an unknown addon id is a 404 and a non-numeric one a 400', async () => {
    for (const response of [
      await ctx.admin.get(`${ADDONS}/987654`),
      await ctx.admin.put(`${ADDONS}/987654`, webhookBody()),
      await ctx.admin.delete(`${ADDONS}/987654`),
      await ctx.admin.get(`${ADDONS}/987654/events`),
      await ctx.admin.post(`${ADDONS}/987654/events/1/redeliver`),
    ]) {
      assert.match(expectError(response, 404, 'NotFoundError').message, /integration configuration 987654/);
    }
    for (const response of [
      await ctx.admin.get(`${ADDONS}/abc`),
      await ctx.admin.put(`${ADDONS}/abc`, webhookBody()),
      await ctx.admin.delete(`${ADDONS}/abc`),
      await ctx.admin.get(`${ADDONS}/abc/events`),
      await ctx.admin.post(`${ADDONS}/1/events/abc/redeliver`),
    ]) {
      expectError(response, 400, 'BadDataError');
    }
  });

  test('a bad limit or offset of the integration events is a 400 naming the parameter', async () => {
    const created = await createAddon();
    for (const [query, parameter] of [
      ['limit=0', 'limit'],
      ['limit=1001', 'limit'],
      ['limit=ten', 'limit'],
      ['offset=-1', 'offset'],
      ['offset=1.5', 'offset'],
    ] as const) {
      const error = expectError(await ctx.admin.get(`${ADDONS}/${created.id}/events?${query}`), 400, 'BadDataError');
      assert.equal(error.details[0]!.path, `/query/${parameter}`, query);
    }
    expectStatus(await ctx.admin.get(`${ADDONS}/${created.id}/events?limit=1000&offset=0`), 200);
  });
});

describe('integration configurations: permissions and documentation', () => {
  test('Editors read configurations but only Admins change them or see integration events', async () => {
    const created = await createAddon();
    const editor = ctx.withCookie((await createUserSession(ctx, 'Editor')).cookie);
    const before = await lastEventId(ctx);
    expectStatus(await editor.get(ADDONS), 200);
    const read = await editor.get(`${ADDONS}/${created.id}`);
    expectStatus(read, 200);
    assert.equal((read.json() as Addon).parameters.authorization, '*****');
    const cases = [
      [await editor.post(ADDONS, webhookBody()), 'CREATE_ADDON'],
      [await editor.put(`${ADDONS}/${created.id}`, webhookBody()), 'UPDATE_ADDON'],
      [await editor.delete(`${ADDONS}/${created.id}`), 'DELETE_ADDON'],
      [await editor.get(`${ADDONS}/${created.id}/events`), 'ADMIN'],
      [await editor.post(`${ADDONS}/${created.id}/events/1/redeliver`), 'ADMIN'],
    ] as const;
    for (const [response, permission] of cases) {
      assert.deepEqual(expectError(response, 403, 'PermissionError').permissions, [permission]);
    }
    assert.deepEqual(await eventsSince(ctx, before), []);
    expectError(await ctx.as().get(ADDONS), 401, 'AuthenticationRequired');
  });

  test('the OpenAPI document names the components as Unleash does', async () => {
    const document = (await ctx.as().get('/docs/openapi.json')).json() as {
      paths: Record<string, Record<string, unknown>>;
      components: { schemas: Record<string, unknown> };
    };
    for (const name of [
      'addonSchema',
      'addonsSchema',
      'addonCreateUpdateSchema',
      'addonTypeSchema',
      'addonParameterSchema',
      'integrationEventSchema',
      'integrationEventsSchema',
    ]) {
      assert.ok(document.components.schemas[name], `missing component ${name}`);
    }
    assert.ok(document.paths['/api/admin/addons/{id}/events']?.get);
    assert.ok(document.paths['/api/admin/addons/{id}/events/{integrationEventId}/redeliver']?.post);
  });
});
