import { eventually } from '../helpers/eventually.js';
import assert from 'node:assert/strict';
import { createHash, createHmac, randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { expectError, expectRefused, expectStatus, getOk, onlyEvent } from '../helpers/assertions.js';
import { eventsSince, lastEventId } from '../helpers/events.js';
import { createUserSession, uniqueName } from '../helpers/fixtures.js';
import { createFlag, createProject } from '../helpers/projects.js';
import { startTestApp, useTestApp } from '../helpers/test-app.js';

// Unleash Enterprise Edge's token issuing (`POST /edge/issue-token`): an Admin makes an edge client, the Edge signs each
// request with its secret as Unleash's protocol defines (HMAC-SHA256 over method, path, timestamp, nonce and the body's
// SHA-256), and is issued client tokens, the same each time, that the client API accepts. Unleash's Edge is a Rust
// binary outside npm, so the requests are signed here by the protocol's definition.

const MASTER = 'edge-master-secret-for-tests-0123456789abcdef';
const ctx = useTestApp({ env: { EDGE_MASTER_SECRET: MASTER } });

interface Client {
  clientId: string;
  clientSecret: string;
}

function signedHeaders(client: Client, body: unknown, overrides: { timestamp?: string; nonce?: string; secret?: string } = {}) {
  const timestamp = overrides.timestamp ?? new Date().toISOString();
  const nonce = overrides.nonce ?? randomUUID();
  const bodyHash = createHash('sha256').update(JSON.stringify(body)).digest('hex');
  const canonical = `POST\n/edge/issue-token\n${timestamp}\n${nonce}\n${bodyHash}`;
  const signature = createHmac('sha256', Buffer.from(overrides.secret ?? client.clientSecret, 'base64url'))
    .update(canonical)
    .digest('base64url');
  return { authorization: `HMAC ${client.clientId}:${signature}`, 'x-timestamp': timestamp, 'x-nonce': nonce, 'content-sha256': bodyHash };
}

const issue = (client: Client, body: unknown, overrides: Parameters<typeof signedHeaders>[2] = {}) =>
  ctx.as().inject({ method: 'POST', url: '/edge/issue-token', headers: signedHeaders(client, body, overrides), payload: body as object });

async function makeClient(): Promise<Client> {
  const created = await ctx.admin.post('/api/admin/edge-clients', { name: uniqueName('edge') });
  expectStatus(created, 201);
  return created.json() as Client;
}

type Issued = { tokens: Array<{ token: string; type: string; environment: string; projects: string[] }> };

describe('edge token issuing', () => {
  test('a signed request is issued client tokens the client API accepts, the same each time', async () => {
    const project = await createProject(ctx);
    const flag = await createFlag(ctx, project, { strategies: [{ name: 'default' }] });
    const before = await lastEventId(ctx);
    const client = await makeClient();
    assert.match(client.clientId, /^edge-[0-9a-f]{16}$/);
    onlyEvent(await eventsSince(ctx, before), 'edge-client-created');
    assert.ok(!JSON.stringify(await eventsSince(ctx, before)).includes(client.clientSecret), 'no secret in the event');
    const listed = await getOk<Array<Record<string, unknown>>>(ctx.admin, '/api/admin/edge-clients');
    assert.ok(listed.some((entry) => entry.clientId === client.clientId && !('clientSecret' in entry)));

    const body = {
      tokens: [
        { environment: 'development', projects: [project] },
        { environment: 'production', projects: ['*'] },
      ],
    };
    const first = await issue(client, body);
    expectStatus(first, 200);
    const issued = first.json() as Issued;
    assert.deepEqual(
      issued.tokens.map(({ type, environment, projects }) => [type, environment, projects]),
      [
        ['client', 'development', [project]],
        ['client', 'production', ['*']],
      ],
    );
    assert.match(issued.tokens[0]!.token, new RegExp(`^${project}:development\\.[0-9a-f]{64}$`));
    assert.match(issued.tokens[1]!.token, /^\*:production\.[0-9a-f]{64}$/);
    const features = await ctx.as(issued.tokens[0]!.token).get('/api/client/features');
    expectStatus(features, 200);
    assert.deepEqual(
      (features.json() as { features: Array<{ name: string }> }).features.map((feature) => feature.name),
      [flag],
    );
    // Asked again (another nonce): the same tokens, and no new one made.
    const again = await lastEventId(ctx);
    assert.deepEqual((await issue(client, body)).json(), issued);
    assert.deepEqual(await eventsSince(ctx, again), []);
  });

  test('a deleted token is issued anew with another secret; a deleted client signs nothing more, and its tokens end with it', async () => {
    const client = await makeClient();
    const body = { tokens: [{ environment: 'development', projects: ['*'] }] };
    const { token } = ((await issue(client, body)).json() as Issued).tokens[0]!;
    const tokens = await getOk<{ tokens: Array<{ id: number; tokenName: string }> }>(ctx.admin, '/api/admin/api-tokens');
    const held = tokens.tokens.find((entry) => entry.tokenName === `edge_${client.clientId}_development`)!;
    expectStatus(await ctx.admin.delete(`/api/admin/api-tokens/${held.id}`), 200);
    expectError(await ctx.as(token).get('/api/client/features'), 401, 'UnauthorizedError');
    const renewed = ((await issue(client, body)).json() as Issued).tokens[0]!.token;
    assert.notEqual(renewed, token);
    expectStatus(await ctx.as(renewed).get('/api/client/features'), 200);
    expectError(await ctx.as(token).get('/api/client/features'), 401, 'UnauthorizedError');

    const other = ((await issue(client, { tokens: [{ environment: 'production', projects: ['default'] }] })).json() as Issued).tokens[0]!
      .token;
    expectStatus(await ctx.as(other).get('/api/client/features'), 200);
    const since = await lastEventId(ctx);
    expectStatus(await ctx.admin.delete(`/api/admin/edge-clients/${client.clientId}`), 200);
    expectError(await issue(client, body), 401, 'UnauthorizedError');
    assert.deepEqual(
      (await eventsSince(ctx, since)).map((event) => event.type),
      ['api-token-deleted', 'api-token-deleted', 'edge-client-deleted'],
    );
    // What the client was issued is gone with it (once SDK token caches hear of the change): its tokens do not outlive it.
    for (const issuedToken of [renewed, other]) {
      await eventually(async () => (await ctx.as(issuedToken).get('/api/client/features')).statusCode === 401, 5_000);
    }
  });

  test('an unsigned, stale, tampered, replayed or wrongly signed request is refused and issues nothing', async () => {
    const client = await makeClient();
    const body = { tokens: [{ environment: 'development', projects: ['*'] }] };
    const refused = async (send: () => ReturnType<typeof issue>, why: RegExp) => {
      const error = await expectRefused(ctx, send, { status: 401, name: 'UnauthorizedError' });
      assert.match(error.message, why);
    };
    await refused(() => ctx.as().post('/edge/issue-token', body), /no HMAC Authorization/);
    await refused(() => issue(client, body, { timestamp: new Date(Date.now() - 10 * 60_000).toISOString() }), /stale/);
    await refused(() => issue(client, body, { secret: Buffer.from('not the secret').toString('base64url') }), /signature/);
    await refused(
      () =>
        ctx.as().inject({
          method: 'POST',
          url: '/edge/issue-token',
          headers: signedHeaders(client, body),
          payload: { tokens: [{ environment: 'production', projects: ['*'] }] },
        }),
      /content-sha256/,
    );
    await refused(() => issue({ clientId: 'edge-nobody', clientSecret: client.clientSecret }, body), /unknown/);
    const nonce = randomUUID();
    expectStatus(await issue(client, body, { nonce }), 200);
    await refused(() => issue(client, body, { nonce }), /replayed/);
  });

  test('bad scopes are a 400; only an Admin manages edge clients', async () => {
    const client = await makeClient();
    for (const [body, path] of [
      [{ tokens: [{ environment: 'no-such-environment', projects: ['*'] }] }, '/body/tokens/0/environment'],
      [{ tokens: [{ environment: 'development', projects: ['no-such-project'] }] }, '/body/tokens/0/projects'],
      [{ tokens: [{ environment: 'development', projects: [] }] }, '/body/tokens/0/projects'],
      [{ tokens: [{ environment: 'development', projects: ['*', 'default'] }] }, '/body/projects'],
    ] as const) {
      await expectRefused(ctx, () => issue(client, body), { status: 400, name: 'BadDataError', path });
    }
    const editor = ctx.withCookie((await createUserSession(ctx, 'Editor')).cookie);
    await expectRefused(ctx, () => editor.post('/api/admin/edge-clients', { name: 'mine' }), { status: 403, name: 'PermissionError' });
    await expectRefused(ctx, () => editor.delete(`/api/admin/edge-clients/${client.clientId}`), { status: 403, name: 'PermissionError' });
    expectError(await ctx.admin.delete('/api/admin/edge-clients/edge-nobody'), 404, 'NotFoundError');
  });

  test('at most 100 edge clients; deleting one makes room', async () => {
    const clients = async () => getOk<Array<{ clientId: string }>>(ctx.admin, '/api/admin/edge-clients');
    for (let count = (await clients()).length; count < 100; count += 1) await makeClient();
    const refused = await expectRefused(
      ctx,
      () => ctx.admin.post('/api/admin/edge-clients', { name: 'one too many' }),
      { status: 409, name: 'ConflictError' },
      clients,
    );
    assert.match(refused.message, /already 100 edge clients/);
    expectStatus(await ctx.admin.delete(`/api/admin/edge-clients/${(await clients())[0]!.clientId}`), 200);
    await makeClient();
  });

  test('without EDGE_MASTER_SECRET no client can be made and nothing is issued', async () => {
    const plain = await startTestApp();
    try {
      expectError(await plain.admin.post('/api/admin/edge-clients', { name: 'edge' }), 400, 'BadDataError');
      expectError(await plain.as().post('/edge/issue-token', { tokens: [] }), 401, 'UnauthorizedError');
    } finally {
      await plain.close();
    }
  });
});
