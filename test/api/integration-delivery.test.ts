import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SYSTEM_ACTOR } from '../../src/domain/access/actor.js';
import { recordEvent } from '../../src/domain/events/record-event.js';
import { inUnitOfWork } from '../../src/db/unit-of-work.js';
import { runDeliveryPass, type DeliveryPassResult } from '../../src/workers/delivery-worker.js';
import { pruneIntegrationEvents } from '../../src/workers/integration-event-retention.js';
import { expectError, expectStatus } from '../helpers/assertions.js';
import { uniqueName } from '../helpers/fixtures.js';
import { useAppWithReceiver } from '../helpers/integrations.js';
import { startHttpReceiver } from '../helpers/http-receiver.js';
import { createFlag, createProject } from '../helpers/projects.js';

/**
 * Delivery through the outbox to real HTTP receivers on 127.0.0.1, driven pass by pass with the fixed clock:
 * what is sent, what each attempt records, retries, timeouts, templates, filters, redelivery and retention.
 */
// Two seconds: long enough that a loaded CI machine answers a healthy receiver in time, short enough for the hang test.
const { ctx, receiver } = useAppWithReceiver({ INTEGRATIONS_DELIVERY_TIMEOUT_MS: '2000' });

interface IntegrationEvent {
  id: string;
  integrationId: number;
  createdAt: string;
  state: 'success' | 'failed' | 'successWithErrors';
  stateDetails: string;
  event: { id: number; type: string; featureName: string | null; project: string | null; label: string; summary: string };
  details: Record<string, unknown>;
}

const ADDONS = '/api/admin/addons';

function deliver(): Promise<DeliveryPassResult> {
  return runDeliveryPass({ db: ctx.db, clock: ctx.clock, config: ctx.config, log: ctx.app.log });
}

/** A path of its own on the shared receiver, so each test reads only what was sent to it. */
function hookPath(): string {
  return `/hooks/${uniqueName('hook')}`;
}

function requestsTo(path: string) {
  return receiver.requests.filter((request) => request.path === path);
}

async function createAddon(body: Record<string, unknown>): Promise<number> {
  const response = await ctx.admin.post(ADDONS, { enabled: true, ...body });
  expectStatus(response, 201);
  return (response.json() as { id: number }).id;
}

function webhook(path: string, overrides: { parameters?: Record<string, string>; [key: string]: unknown } = {}) {
  const { parameters, ...rest } = overrides;
  return { provider: 'webhook', events: ['feature-created'], ...rest, parameters: { url: `${receiver.origin}${path}`, ...parameters } };
}

async function integrationEvents(addonId: number, query = ''): Promise<IntegrationEvent[]> {
  const response = await ctx.admin.get(`${ADDONS}/${addonId}/events${query}`);
  expectStatus(response, 200);
  return (response.json() as { integrationEvents: IntegrationEvent[] }).integrationEvents;
}

async function deliveries(addonId: number) {
  const response = await ctx.admin.get(`${ADDONS}/${addonId}`);
  expectStatus(response, 200);
  return (response.json() as { deliveries: { pending: number; lastSuccessAt: string | null; lastFailureAt: string | null } }).deliveries;
}

async function removeAddon(id: number): Promise<void> {
  expectStatus(await ctx.admin.delete(`${ADDONS}/${id}`), 200);
}

describe('delivery', () => {
  test('an event is delivered once: the outbox row commits with it, the receiver gets the event, the attempt is recorded', async () => {
    const path = hookPath();
    const project = await createProject(ctx);
    const addonId = await createAddon(
      webhook(path, { projects: [project], parameters: { authorization: 'Bearer hook-s3cret', customHeaders: '{"X-Team":"growth"}' } }),
    );
    const flag = await createFlag(ctx, project);
    assert.deepEqual(
      await deliveries(addonId),
      { pending: 1, lastSuccessAt: null, lastFailureAt: null },
      'the outbox row is committed with the event',
    );

    const result = await deliver();
    assert.equal(result.failed, 0);
    const [request] = requestsTo(path);
    assert.ok(request && requestsTo(path).length === 1, 'one request');
    assert.equal(request.method, 'POST');
    assert.equal(request.headers['content-type'], 'application/json');
    assert.equal(request.headers.authorization, 'Bearer hook-s3cret');
    assert.equal(request.headers['x-team'], 'growth');
    assert.equal(request.headers['x-vexil-event'], 'feature-created');
    assert.match(String(request.headers['x-vexil-delivery']), /^[0-9a-f-]{36}$/);
    const sent = JSON.parse(request.body) as IntegrationEvent['event'];
    assert.deepEqual([sent.type, sent.featureName, sent.project, sent.label], ['feature-created', flag, project, 'Flag created']);

    const [recorded, ...others] = await integrationEvents(addonId);
    assert.deepEqual(others, []);
    assert.match(recorded!.id, /^[0-9]+$/);
    assert.equal(recorded!.integrationId, addonId);
    assert.equal(recorded!.state, 'success');
    assert.equal(recorded!.stateDetails, 'Delivered: status code 200 (attempt 1 of 5)');
    assert.equal(recorded!.createdAt, ctx.clock.now().toISOString());
    assert.deepEqual(recorded!.event, sent);
    assert.deepEqual(recorded!.details, {
      url: `${receiver.origin}/*****`,
      contentType: 'application/json',
      body: request.body,
      deliveryId: request.headers['x-vexil-delivery'],
      attempt: 1,
      statusCode: 200,
    });
    assert.ok(
      !JSON.stringify(recorded).includes('s3cret') && !JSON.stringify(recorded).includes(path),
      'no secret in the integration event',
    );
    assert.deepEqual(await deliveries(addonId), { pending: 0, lastSuccessAt: recorded!.createdAt, lastFailureAt: null });

    assert.deepEqual(await deliver(), { attempted: 0, delivered: 0, failed: 0 }, 'nothing is delivered twice');
    await removeAddon(addonId);
  });

  test('a rolled-back change leaves no delivery behind', async () => {
    const addonId = await createAddon({
      provider: 'webhook',
      events: ['segment-created'],
      parameters: { url: `${receiver.origin}${hookPath()}` },
    });
    await assert.rejects(
      inUnitOfWork(ctx, SYSTEM_ACTOR, async (uow) => {
        await recordEvent(uow, { type: 'segment-created', data: { name: 'never' } });
        throw new Error('the change fails after its event');
      }),
      /the change fails/,
    );
    assert.equal((await deliveries(addonId)).pending, 0);
    await removeAddon(addonId);
  });

  test('a failure is retried with backoff under the same delivery id, and succeeds', async () => {
    const path = hookPath();
    const project = await createProject(ctx);
    receiver.answer((request) => ({ status: request.path === path && requestsTo(path).length === 1 ? 500 : 200 }));
    const addonId = await createAddon(webhook(path, { projects: [project] }));
    await createFlag(ctx, project);

    assert.deepEqual(await deliver(), { attempted: 1, delivered: 0, failed: 1 });
    const [failed] = await integrationEvents(addonId);
    const retryAt = new Date(ctx.clock.now().getTime() + 60_000).toISOString();
    assert.equal(failed!.state, 'failed');
    assert.equal(failed!.stateDetails, `Failed: status code 500 (attempt 1 of 5); next attempt at ${retryAt}`);
    assert.equal(failed!.details.nextAttemptAt, retryAt);
    assert.deepEqual(await deliveries(addonId), { pending: 1, lastSuccessAt: null, lastFailureAt: failed!.createdAt });

    ctx.clock.advance(59_000);
    assert.equal((await deliver()).attempted, 0, 'not before the backoff');
    ctx.clock.advance(1_000);
    assert.deepEqual(await deliver(), { attempted: 1, delivered: 1, failed: 0 });

    const sent = requestsTo(path);
    assert.equal(sent.length, 2);
    assert.equal(sent[0]!.headers['x-vexil-delivery'], sent[1]!.headers['x-vexil-delivery'], 'the receiver can de-duplicate');
    assert.equal(sent[0]!.body, sent[1]!.body);
    const listed = await integrationEvents(addonId);
    assert.deepEqual(
      listed.map((event) => [event.state, event.details.attempt]),
      [
        ['success', 2],
        ['failed', 1],
      ],
      'newest first',
    );
    assert.ok(BigInt(listed[0]!.id) > BigInt(listed[1]!.id));
    assert.equal(listed[0]!.stateDetails, 'Delivered: status code 200 (attempt 2 of 5)');
    assert.equal((await deliveries(addonId)).pending, 0);
    receiver.answer(() => ({ status: 200 }));
    await removeAddon(addonId);
  });

  test('after 5 failed attempts over 15 minutes the delivery is given up', async () => {
    const path = hookPath();
    const project = await createProject(ctx);
    receiver.answer((request) => ({ status: request.path === path ? 503 : 200 }));
    const addonId = await createAddon(webhook(path, { projects: [project] }));
    await createFlag(ctx, project);
    const start = ctx.clock.now().getTime();
    for (const wait of [0, 60_000, 120_000, 240_000, 480_000]) {
      ctx.clock.advance(wait);
      assert.deepEqual(await deliver(), { attempted: 1, delivered: 0, failed: 1 });
    }
    assert.equal(ctx.clock.now().getTime() - start, 15 * 60_000);
    const listed = await integrationEvents(addonId);
    assert.deepEqual(
      listed.map((event) => event.details.attempt),
      [5, 4, 3, 2, 1],
    );
    assert.equal(listed[0]!.stateDetails, 'Failed: status code 503 (attempt 5 of 5); no attempts left');
    assert.equal((await deliveries(addonId)).pending, 0);
    ctx.clock.advance(3_600_000);
    assert.equal((await deliver()).attempted, 0);
    receiver.answer(() => ({ status: 200 }));
    await removeAddon(addonId);
  });

  test('a receiver that does not answer in time is a failed attempt, retried', async () => {
    const path = hookPath();
    const project = await createProject(ctx);
    receiver.answer((request) => (request.path === path ? 'hang' : { status: 200 }));
    const addonId = await createAddon(webhook(path, { projects: [project] }));
    await createFlag(ctx, project);
    const started = Date.now();
    assert.deepEqual(await deliver(), { attempted: 1, delivered: 0, failed: 1 });
    assert.ok(Date.now() - started < 10_000, 'the timeout ends the attempt');
    const [event] = await integrationEvents(addonId);
    assert.match(event!.stateDetails, /^Failed: no answer within 2000 ms \(attempt 1 of 5\); next attempt at /);
    assert.equal(event!.details.statusCode, null);
    receiver.answer(() => ({ status: 200 }));
    await removeAddon(addonId);
  });

  test('a refused connection is a failed attempt, retried', async () => {
    const closed = await startHttpReceiver();
    await closed.close();
    const project = await createProject(ctx);
    const addonId = await createAddon({
      provider: 'webhook',
      events: [],
      projects: [project],
      parameters: { url: `${closed.origin}/gone` },
    });
    await createFlag(ctx, project);
    assert.equal((await deliver()).failed, 1);
    const [event] = await integrationEvents(addonId);
    assert.match(event!.stateDetails, /^Failed: network error \(.*ECONNREFUSED.*\) \(attempt 1 of 5\); next attempt at /);
    await removeAddon(addonId);
  });

  test('customHeaders that are not JSON: delivered without them, recorded as successWithErrors', async () => {
    const path = hookPath();
    const project = await createProject(ctx);
    const addonId = await createAddon(webhook(path, { projects: [project], parameters: { customHeaders: '{"X-Team": growth}' } }));
    await createFlag(ctx, project);
    assert.deepEqual(await deliver(), { attempted: 1, delivered: 1, failed: 0 });
    assert.equal(requestsTo(path).length, 1);
    const [event] = await integrationEvents(addonId);
    assert.equal(event!.state, 'successWithErrors');
    assert.equal(event!.stateDetails, 'Delivered: status code 200 (attempt 1 of 5), but customHeaders is not valid JSON and was ignored');
    assert.equal((await deliveries(addonId)).lastSuccessAt, event!.createdAt);
    await removeAddon(addonId);
  });

  test('body templates: Mustache with JSON-escaped values in JSON bodies, plain values in text bodies', async () => {
    const jsonPath = hookPath();
    const textPath = hookPath();
    const project = await createProject(ctx);
    const json = await createAddon(
      webhook(jsonPath, {
        projects: [project],
        parameters: {
          bodyTemplate:
            '{"type":"{{event.type}}","flag":"{{event.featureName}}","description":"{{event.data.description}}","by":"{{event.createdBy}}","data":{{event.data}}{{#event.tags}},"tag":"{{value}}"{{/event.tags}}}',
        },
      }),
    );
    const text = await createAddon(
      webhook(textPath, {
        projects: [project],
        parameters: {
          contentType: 'text/plain; charset=utf-8',
          bodyTemplate: '{{event.createdBy}} created {{event.featureName}}: {{event.data.description}}',
        },
      }),
    );
    const description = 'Says "hi" \\ <b>bold</b> & more';
    const flag = await createFlag(ctx, project, { description });
    await deliver();

    const [jsonRequest] = requestsTo(jsonPath);
    const body = JSON.parse(jsonRequest!.body) as Record<string, unknown>;
    assert.deepEqual({ ...body, data: undefined }, { type: 'feature-created', flag, description, by: 'admin-token', data: undefined });
    assert.equal((body.data as { name: string; description: string }).name, flag);
    assert.equal((body.data as { description: string }).description, description);
    const [textRequest] = requestsTo(textPath);
    assert.equal(textRequest!.headers['content-type'], 'text/plain; charset=utf-8');
    assert.equal(textRequest!.body, `admin-token created ${flag}: ${description}`);
    const [recorded] = await integrationEvents(text);
    assert.equal(recorded!.details.body, textRequest!.body);
    assert.equal(recorded!.details.contentType, 'text/plain; charset=utf-8');
    await removeAddon(json);
    await removeAddon(text);
  });

  test('filters: only the chosen event types, projects and environments are delivered', async () => {
    const path = hookPath();
    const [shop, other] = [await createProject(ctx), await createProject(ctx)];
    const addonId = await createAddon(
      webhook(path, { events: ['feature-environment-enabled'], projects: [shop], environments: ['production'] }),
    );
    const flag = await createFlag(ctx, shop);
    const otherFlag = await createFlag(ctx, other);
    for (const [project, name, environment] of [
      [shop, flag, 'development'],
      [shop, flag, 'production'],
      [other, otherFlag, 'production'],
    ] as const) {
      expectStatus(await ctx.admin.post(`/api/admin/projects/${project}/features/${name}/environments/${environment}/on`), 200);
    }
    expectStatus(await ctx.admin.put(`/api/admin/projects/${shop}/features/${flag}`, { description: 'changed' }), 200);
    await deliver();
    const sent = requestsTo(path).map((request) => JSON.parse(request.body) as { type: string; project: string; environment: string });
    assert.deepEqual(
      sent.map((event) => [event.type, event.project, event.environment]),
      [['feature-environment-enabled', shop, 'production']],
    );
    await removeAddon(addonId);
  });

  test('a disabled configuration gets no new deliveries and holds its pending ones until it is enabled again', async () => {
    const path = hookPath();
    const project = await createProject(ctx);
    const body = webhook(path, { projects: [project] });
    const addonId = await createAddon(body);
    await createFlag(ctx, project);
    const put = (enabled: boolean) => ctx.admin.put(`${ADDONS}/${addonId}`, { ...body, enabled, parameters: { url: '*****' } });
    expectStatus(await put(false), 200);
    await createFlag(ctx, project);
    assert.equal((await deliver()).attempted, 0);
    assert.equal((await deliveries(addonId)).pending, 1, 'the delivery owed before disabling waits');
    expectStatus(await put(true), 200);
    assert.equal((await deliver()).delivered, 1);
    assert.equal(requestsTo(path).length, 1);
    await removeAddon(addonId);
  });

  test('redelivery sends the same event again with a new delivery id and records a new attempt', async () => {
    const path = hookPath();
    const project = await createProject(ctx);
    const addonId = await createAddon(webhook(path, { projects: [project] }));
    await createFlag(ctx, project);
    await deliver();
    const [first] = await integrationEvents(addonId);

    const response = await ctx.admin.post(`${ADDONS}/${addonId}/events/${first!.id}/redeliver`);
    expectStatus(response, 202);
    const redelivery = response.json() as { deliveryId: string; eventId: number };
    assert.equal(redelivery.eventId, first!.event.id);
    assert.equal((await deliveries(addonId)).pending, 1);
    await deliver();

    const sent = requestsTo(path);
    assert.equal(sent.length, 2);
    assert.equal(sent[1]!.body, sent[0]!.body);
    assert.equal(sent[1]!.headers['x-vexil-delivery'], redelivery.deliveryId);
    assert.notEqual(sent[1]!.headers['x-vexil-delivery'], sent[0]!.headers['x-vexil-delivery']);
    const listed = await integrationEvents(addonId);
    assert.deepEqual(
      listed.map((event) => [event.state, event.event.id, event.details.deliveryId]),
      [
        ['success', first!.event.id, redelivery.deliveryId],
        ['success', first!.event.id, first!.details.deliveryId],
      ],
    );

    expectError(await ctx.admin.post(`${ADDONS}/${addonId}/events/99999999/redeliver`), 404, 'NotFoundError');
    expectStatus(await ctx.admin.put(`${ADDONS}/${addonId}`, { ...webhook(path), enabled: false, parameters: { url: '*****' } }), 200);
    expectError(await ctx.admin.post(`${ADDONS}/${addonId}/events/${first!.id}/redeliver`), 409, 'ConflictError');
    await removeAddon(addonId);
  });

  test('integration events page newest first with limit and offset', async () => {
    const path = hookPath();
    const project = await createProject(ctx);
    const addonId = await createAddon(webhook(path, { projects: [project] }));
    for (let i = 0; i < 4; i += 1) await createFlag(ctx, project);
    await deliver();
    const all = await integrationEvents(addonId);
    assert.equal(all.length, 4);
    const ids = all.map((event) => BigInt(event.id));
    assert.deepEqual(
      [...ids].sort((a, b) => (a < b ? 1 : -1)),
      ids,
      'newest first',
    );
    assert.deepEqual(await integrationEvents(addonId, '?limit=2&offset=1'), all.slice(1, 3));
    assert.deepEqual(await integrationEvents(addonId, '?offset=4'), []);
    await removeAddon(addonId);
  });

  test('deleting a configuration drops its pending deliveries and its integration events', async () => {
    const path = hookPath();
    const project = await createProject(ctx);
    receiver.answer((request) => ({ status: request.path === path ? 500 : 200 }));
    const addonId = await createAddon(webhook(path, { projects: [project] }));
    await createFlag(ctx, project);
    await deliver();
    await removeAddon(addonId);
    const left = await ctx.db.selectFrom('addon_deliveries').select('id').where('addon_id', '=', addonId).execute();
    const events = await ctx.db.selectFrom('integration_events').select('id').where('integration_id', '=', addonId).execute();
    assert.deepEqual([left, events], [[], []]);
    receiver.answer(() => ({ status: 200 }));
  });
});

describe('providers', () => {
  test("Slack posts to the channels of the flag's slack tags, or to the default channel", async () => {
    const path = hookPath();
    const project = await createProject(ctx);
    const addonId = await createAddon({
      provider: 'slack',
      events: ['feature-tagged', 'feature-created'],
      projects: [project],
      parameters: { url: `${receiver.origin}${path}`, defaultChannel: 'releases', username: 'Flags' },
    });
    const flag = await createFlag(ctx, project);
    for (const value of ['growth', 'checkout-team']) {
      expectStatus(await ctx.admin.post(`/api/admin/features/${flag}/tags`, { type: 'slack', value }), 201);
    }
    await deliver();
    const messages = requestsTo(path).map(
      (request) => JSON.parse(request.body) as { channel: string; text: string; username: string; attachments?: unknown },
    );
    // Deliveries run concurrently, so only the set of messages is fixed, not their order.
    assert.deepEqual(
      messages.map((message) => message.channel).sort(),
      ['#checkout-team', '#growth', '#growth', '#releases'],
      'feature-created (no tag yet), then each tagging posts to the channels tagged at that moment',
    );
    const created = messages.find((message) => message.channel === '#releases')!;
    assert.equal(created.text, `*admin-token* created *${flag}* (release) in project *${project}*`);
    assert.equal(created.username, 'Flags');
    assert.deepEqual(created.attachments, [
      {
        actions: [
          {
            name: 'featureToggle',
            text: 'Open in Vexil',
            type: 'button',
            value: 'featureToggle',
            style: 'primary',
            url: `${ctx.config.baseUrl}/projects/${project}/features/${flag}`,
          },
        ],
      },
    ]);
    const twoChannels = (await integrationEvents(addonId)).find((event) => (event.details.channels as string[]).length === 2)!;
    assert.deepEqual(twoChannels.details.channels, ['checkout-team', 'growth']);
    assert.equal(twoChannels.details.url, `${receiver.origin}/*****`);
    assert.equal(twoChannels.stateDetails, 'Delivered: 2 requests: status code 200; status code 200 (attempt 1 of 5)');
    await removeAddon(addonId);
  });

  test('Teams posts a MessageCard and Datadog an event with its API key', async () => {
    const teamsPath = hookPath();
    const datadogPath = hookPath();
    const project = await createProject(ctx);
    const teams = await createAddon({
      provider: 'teams',
      events: [],
      projects: [project],
      parameters: { url: `${receiver.origin}${teamsPath}` },
    });
    const datadog = await createAddon({
      provider: 'datadog',
      events: [],
      projects: [project],
      parameters: { url: `${receiver.origin}${datadogPath}`, apiKey: 'dd-s3cret', sourceTypeName: 'vexil' },
    });
    const flag = await createFlag(ctx, project);
    await deliver();

    const [card] = requestsTo(teamsPath).map(
      (request) => JSON.parse(request.body) as { sections: Array<{ activityTitle: string; facts: unknown }> },
    );
    assert.equal(card!.sections[0]!.activityTitle, `**admin-token** created **${flag}** (release) in project **${project}**`);
    assert.deepEqual(card!.sections[0]!.facts, [
      { name: 'User', value: 'admin-token' },
      { name: 'Action', value: 'feature-created' },
    ]);
    const [datadogRequest] = requestsTo(datadogPath);
    assert.equal(datadogRequest!.headers['dd-api-key'], 'dd-s3cret');
    assert.deepEqual(JSON.parse(datadogRequest!.body), {
      text: `%%% \n**admin-token** created **${flag}** (release) in project **${project}**\n %%% `,
      title: 'Vexil notification update',
      tags: ['user:admin-token', 'action:feature-created', `project:${project}`],
      source_type_name: 'vexil',
    });
    const [recorded] = await integrationEvents(datadog);
    assert.equal(recorded!.details.url, `${receiver.origin}${datadogPath}`, 'the Datadog URL is not a secret');
    assert.ok(!JSON.stringify(recorded).includes('dd-s3cret'));
    await removeAddon(teams);
    await removeAddon(datadog);
  });
});

describe('retention', () => {
  test('integration events older than the retention (30 days) are deleted, newer ones kept', async () => {
    const path = hookPath();
    const project = await createProject(ctx);
    const addonId = await createAddon(webhook(path, { projects: [project] }));
    await createFlag(ctx, project);
    await deliver();
    ctx.clock.advance(29 * 86_400_000);
    await createFlag(ctx, project);
    await deliver();
    const [newer, older] = await integrationEvents(addonId);

    ctx.clock.advance(2 * 86_400_000);
    const deleted = await pruneIntegrationEvents({ db: ctx.db, clock: ctx.clock, config: ctx.config });
    assert.ok(deleted >= 1);
    assert.deepEqual(await integrationEvents(addonId), [newer]);
    assert.ok(older);
    await removeAddon(addonId);
  });
});
