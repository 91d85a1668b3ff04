import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { runDeliveryPass } from '../../src/workers/delivery-worker.js';
import { expectError, expectStatus } from '../helpers/assertions.js';
import { eventsSince, lastEventId } from '../helpers/events.js';
import { createUserSession, uniqueName } from '../helpers/fixtures.js';
import { startHttpReceiver, type HttpReceiver, type ReceivedRequest } from '../helpers/http-receiver.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

/**
 * Standard Webhooks signatures, verified by the `standardwebhooks` library as a receiver would: every delivery
 * signed, retries keeping their id, the secret shown only when made, and rotation with a day of overlap.
 */
let ctx: TestApp;
let receiver: HttpReceiver;
before(async () => {
  ctx = await startTestApp({ env: { INTEGRATIONS_ALLOW_PRIVATE_NETWORKS: 'true' } });
  receiver = await startHttpReceiver();
});
after(async () => {
  await receiver.close();
  await ctx.close();
});

const ADDONS = '/api/admin/addons';
const DAY_MS = 24 * 60 * 60 * 1000;

interface Setup {
  addonId: number;
  secret: string;
  project: string;
  path: string;
}

async function signedWebhook(): Promise<Setup> {
  const project = uniqueName('signed');
  expectStatus(await ctx.admin.post('/api/admin/projects', { id: project, name: project }), 201);
  const path = `/hooks/${uniqueName('hook')}`;
  const created = await ctx.admin.post(ADDONS, {
    provider: 'webhook',
    enabled: true,
    events: ['feature-created'],
    projects: [project],
    // A configured header of the same name must not replace the signature.
    parameters: { url: `${receiver.origin}${path}`, customHeaders: '{"webhook-signature":"v1,forged"}' },
  });
  expectStatus(created, 201);
  const body = created.json() as { id: number; signingSecret: string; signingSecretCreatedAt: string };
  assert.match(body.signingSecret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  assert.equal(body.signingSecretCreatedAt, ctx.clock.now().toISOString());
  return { addonId: body.id, secret: body.signingSecret, project, path };
}

/** Creates a flag in the project and runs one delivery pass; returns what the receiver got. */
async function deliverOne(setup: Setup): Promise<ReceivedRequest> {
  const before = receiver.requests.filter((request) => request.path === setup.path).length;
  expectStatus(await ctx.admin.post(`/api/admin/projects/${setup.project}/features`, { name: uniqueName('flag') }), 201);
  await runDeliveryPass({ db: ctx.db, clock: ctx.clock, config: ctx.config, log: ctx.app.log });
  const received = receiver.requests.filter((request) => request.path === setup.path);
  assert.equal(received.length, before + 1);
  return received.at(-1)!;
}

function signatureHeaders(request: ReceivedRequest): { 'webhook-id': string; 'webhook-timestamp': string; 'webhook-signature': string } {
  return {
    'webhook-id': String(request.headers['webhook-id']),
    'webhook-timestamp': String(request.headers['webhook-timestamp']),
    'webhook-signature': String(request.headers['webhook-signature']),
  };
}

describe('signed deliveries', () => {
  test('a receiver verifies every delivery with the secret shown at creation; a changed body fails', async () => {
    const setup = await signedWebhook();
    const request = await deliverOne(setup);
    const headers = signatureHeaders(request);
    assert.equal(headers['webhook-id'], request.headers['x-vexil-delivery']);
    assert.equal(headers['webhook-timestamp'], String(Math.floor(ctx.clock.now().getTime() / 1000)));
    assert.match(headers['webhook-signature'], /^v1,[A-Za-z0-9+/]+=*$/, 'one signature, not the configured header');

    const verified = new Webhook(setup.secret).verify(request.body, headers) as { type: string; project: string };
    assert.deepEqual([verified.type, verified.project], ['feature-created', setup.project]);
    assert.throws(
      () => new Webhook(setup.secret).verify(request.body.replace('feature-created', 'feature-deleted'), headers),
      /No matching signature/,
    );
    const otherSecret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    assert.throws(() => new Webhook(otherSecret).verify(request.body, headers), /No matching signature/);
  });

  test('a retried delivery keeps its webhook-id and is signed again at its own time', async () => {
    const setup = await signedWebhook();
    receiver.answer((request, index) =>
      request.path === setup.path && index === receiver.requests.length - 1 ? { status: 503 } : { status: 200 },
    );
    const first = await deliverOne(setup);
    receiver.answer(() => ({ status: 200 }));
    ctx.clock.advance(60_000);
    await runDeliveryPass({ db: ctx.db, clock: ctx.clock, config: ctx.config, log: ctx.app.log });
    const retry = receiver.requests.filter((request) => request.path === setup.path).at(-1)!;
    assert.notEqual(retry, first);
    assert.equal(retry.headers['webhook-id'], first.headers['webhook-id']);
    assert.equal(Number(retry.headers['webhook-timestamp']) - Number(first.headers['webhook-timestamp']), 60);
    assert.equal(retry.body, first.body);
    new Webhook(setup.secret).verify(retry.body, signatureHeaders(retry));
    ctx.clock.set(new Date());
  });

  test('the secret is never read back, logged in an event or shown in the list', async () => {
    const since = await lastEventId(ctx);
    const setup = await signedWebhook();
    const read = await ctx.admin.get(`${ADDONS}/${setup.addonId}`);
    expectStatus(read, 200);
    const list = await ctx.admin.get(ADDONS);
    expectStatus(list, 200);
    const events = await eventsSince(ctx, since);
    assert.deepEqual(
      events.map((event) => event.type),
      ['project-created', 'addon-config-created'],
    );
    const secretBody = setup.secret.slice('whsec_'.length);
    for (const [what, text] of [
      ['GET', read.body],
      ['list', list.body],
      ['events', JSON.stringify(events)],
    ] as const) {
      assert.ok(!text.includes(secretBody), `${what} must not show the secret`);
    }
    assert.equal((read.json() as { signingSecret?: string }).signingSecret, undefined);
  });
});

describe('rotating the signing secret', () => {
  test('shows a new secret once; both secrets sign for a day, then only the new one', async () => {
    const setup = await signedWebhook();
    ctx.clock.advance(1000);
    const since = await lastEventId(ctx);
    const rotated = await ctx.admin.post(`${ADDONS}/${setup.addonId}/signing-secret`);
    expectStatus(rotated, 200);
    const body = rotated.json() as { signingSecret: string; signingSecretCreatedAt: string; previousSecretValidUntil: string };
    assert.match(body.signingSecret, /^whsec_/);
    assert.notEqual(body.signingSecret, setup.secret);
    assert.equal(body.signingSecretCreatedAt, ctx.clock.now().toISOString());
    assert.equal(body.previousSecretValidUntil, new Date(ctx.clock.now().getTime() + DAY_MS).toISOString());

    const [event, ...others] = await eventsSince(ctx, since);
    assert.deepEqual(others, []);
    assert.equal(event!.type, 'addon-config-updated');
    assert.deepEqual(
      [
        (event!.preData as { signingSecretCreatedAt: string }).signingSecretCreatedAt,
        (event!.data as { signingSecretCreatedAt: string }).signingSecretCreatedAt,
      ],
      [new Date(ctx.clock.now().getTime() - 1000).toISOString(), body.signingSecretCreatedAt],
    );
    for (const secret of [setup.secret, body.signingSecret])
      assert.ok(!JSON.stringify(event).includes(secret.slice(6)), 'no secret in the event');

    // During the overlap a receiver holding either secret verifies.
    const during = await deliverOne(setup);
    assert.equal(String(during.headers['webhook-signature']).split(' ').length, 2);
    new Webhook(setup.secret).verify(during.body, signatureHeaders(during));
    new Webhook(body.signingSecret).verify(during.body, signatureHeaders(during));

    // A day later only the new secret signs. (The library also checks the timestamp against the real time, which
    // the test clock has left, so the signature is compared with the one the library makes.)
    ctx.clock.advance(DAY_MS + 1000);
    const later = await deliverOne(setup);
    const headers = signatureHeaders(later);
    const sentAt = new Date(Number(headers['webhook-timestamp']) * 1000);
    assert.equal(headers['webhook-signature'], new Webhook(body.signingSecret).sign(headers['webhook-id'], sentAt, later.body));
    ctx.clock.set(new Date());
  });

  test('is Admin work: a Viewer and an Editor get 403, an unknown configuration 404, and nothing changes', async () => {
    const setup = await signedWebhook();
    for (const role of ['Viewer', 'Editor'] as const) {
      const user = await createUserSession(ctx, role);
      expectError(await ctx.withCookie(user.cookie).post(`${ADDONS}/${setup.addonId}/signing-secret`), 403, 'PermissionError');
    }
    expectError(await ctx.admin.post(`${ADDONS}/999999/signing-secret`), 404, 'NotFoundError');
    expectError(await ctx.admin.post(`${ADDONS}/not-a-number/signing-secret`), 400, 'BadDataError');
    const request = await deliverOne(setup);
    new Webhook(setup.secret).verify(request.body, signatureHeaders(request));
    assert.equal(String(request.headers['webhook-signature']).split(' ').length, 1, 'still one secret');
  });
});
