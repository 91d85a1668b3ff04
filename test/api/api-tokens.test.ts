import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { expectError, expectStatus } from '../helpers/assertions.js';
import { eventsSince, lastEventId, type StoredEvent } from '../helpers/events.js';
import { createUserSession, uniqueName } from '../helpers/fixtures.js';
import { useTestApp } from '../helpers/test-app.js';
import { createProject } from '../helpers/projects.js';

/** A token as GET /api/admin/api-tokens lists it. */
interface ApiToken {
  id: number;
  tokenName: string;
  type: string;
  environment: string;
  project: string;
  projects: string[];
  expiresAt: string | null;
  createdAt: string;
  seenAt: string | null;
}

type CreatedToken = ApiToken & { secret: string };

const TOKENS = '/api/admin/api-tokens';
const TOKEN_FIELDS = ['createdAt', 'environment', 'expiresAt', 'id', 'project', 'projects', 'seenAt', 'tokenName', 'type'];

const ctx = useTestApp();

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The random part of a secret (after `<project>:<environment>.`), which must never show up anywhere else. */
function randomPart(secret: string): string {
  const part = secret.slice(secret.lastIndexOf('.') + 1);
  assert.match(part, /^[0-9a-f]{64}$/, `the secret's random part must be 64 hex digits (got ${secret})`);
  return part;
}

function withoutSecret(token: CreatedToken): ApiToken {
  const { secret: _secret, ...rest } = token;
  return rest;
}

async function createToken(body: Record<string, unknown>): Promise<CreatedToken> {
  const response = await ctx.admin.post(TOKENS, body);
  expectStatus(response, 201);
  const token = response.json() as CreatedToken;
  assert.equal(typeof token.secret, 'string', 'the creation response carries the secret');
  assert.deepEqual(Object.keys(token).sort(), [...TOKEN_FIELDS, 'secret'].sort());
  return token;
}

async function listTokens(): Promise<ApiToken[]> {
  const response = await ctx.admin.get(TOKENS);
  expectStatus(response, 200);
  const body = response.json() as { tokens: ApiToken[] };
  assert.ok(Array.isArray(body.tokens));
  return body.tokens;
}

async function deleteToken(reference: string | number) {
  return ctx.admin.delete(`${TOKENS}/${encodeURIComponent(String(reference))}`);
}

/** Asserts that a refused request stored nothing: same token list, no event written. */
async function assertNothingStored(tokensBefore: ApiToken[], eventsBefore: number): Promise<void> {
  assert.deepEqual(await listTokens(), tokensBefore, 'the token list must be unchanged');
  assert.deepEqual(await eventsSince(ctx, eventsBefore), [], 'no event may be written');
}

/** Posts a bad body and checks the error, its detail paths and that nothing was stored. */
async function expectRefused(body: unknown, status: number, name: string, paths: string[] = []): Promise<ReturnType<typeof expectError>> {
  const tokensBefore = await listTokens();
  const eventsBefore = await lastEventId(ctx);
  const response = await ctx.admin.post(TOKENS, body);
  const error = expectError(response, status, name);
  const detailPaths = error.details.map((detail) => detail.path);
  for (const path of paths) {
    assert.ok(detailPaths.includes(path), `details must name ${path} (got ${JSON.stringify(error.details)})`);
  }
  await assertNothingStored(tokensBefore, eventsBefore);
  return error;
}

function assertCreatedEvent(event: StoredEvent | undefined, token: CreatedToken): void {
  assert.ok(event, 'an api-token-created event must be written');
  assert.equal(event.type, 'api-token-created');
  assert.equal(event.createdBy, 'admin-token');
  assert.equal(event.createdByUserId, -42);
  assert.deepEqual(event.data, withoutSecret(token));
  assert.equal(event.preData, null);
  assert.ok(!JSON.stringify(event).includes(randomPart(token.secret)), 'the event must not carry the secret');
  assert.ok(!JSON.stringify(event).includes(token.secret));
}

describe('POST /api/admin/api-tokens creates tokens', () => {
  test('an admin token spans every project and environment; its secret is *:*.<64 hex>', async () => {
    const before = await lastEventId(ctx);
    const tokenName = uniqueName('admin-token');
    const token = await createToken({ tokenName, type: 'admin' });
    assert.match(token.secret, /^\*:\*\.[0-9a-f]{64}$/);
    assert.equal(token.tokenName, tokenName);
    assert.equal(token.type, 'admin');
    assert.equal(token.environment, '*');
    assert.equal(token.project, '*');
    assert.deepEqual(token.projects, ['*']);
    assert.equal(token.expiresAt, null);
    assert.equal(token.seenAt, null);
    assert.equal(token.createdAt, ctx.clock.now().toISOString());
    assert.ok(Number.isInteger(token.id));

    const events = await eventsSince(ctx, before);
    assert.equal(events.length, 1);
    assertCreatedEvent(events[0], token);
    assert.equal(events[0]!.environment, null, 'an admin token concerns no single environment');
    assert.equal(events[0]!.project, null, 'an admin token concerns no single project');
    const data = events[0]!.data as Record<string, unknown>;
    assert.equal(data.tokenName, tokenName);
    assert.equal(data.type, 'admin');
    assert.equal(data.environment, '*');
    assert.deepEqual(data.projects, ['*']);
  });

  test('a client token for one project and environment development', async () => {
    const project = await createProject(ctx, { prefix: 'tokens' });
    const before = await lastEventId(ctx);
    const tokenName = uniqueName('client-token');
    const token = await createToken({ tokenName, type: 'client', environment: 'development', project });
    assert.match(token.secret, new RegExp(`^${escapeRegExp(project)}:development\\.[0-9a-f]{64}$`));
    assert.ok(token.secret.startsWith(`${project}:development.`));
    assert.equal(token.type, 'client');
    assert.equal(token.environment, 'development');
    assert.equal(token.project, project);
    assert.deepEqual(token.projects, [project]);

    const events = await eventsSince(ctx, before);
    assert.equal(events.length, 1);
    assertCreatedEvent(events[0], token);
    assert.equal(events[0]!.environment, 'development');
    assert.equal(events[0]!.project, project, 'a token of exactly one project sets the event project');
    const data = events[0]!.data as Record<string, unknown>;
    assert.equal(data.tokenName, tokenName);
    assert.equal(data.type, 'client');
    assert.equal(data.environment, 'development');
    assert.deepEqual(data.projects, [project]);
  });

  test('a client token for two projects: secret []:development., projects sorted', async () => {
    const base = uniqueName('multi');
    const first = `${base}-a`;
    const second = `${base}-b`;
    for (const id of [second, first]) {
      expectStatus(await ctx.admin.post('/api/admin/projects', { id, name: id }), 201);
    }
    const before = await lastEventId(ctx);
    const token = await createToken({
      tokenName: uniqueName('multi-token'),
      type: 'client',
      environment: 'development',
      projects: [second, first],
    });
    assert.match(token.secret, /^\[\]:development\.[0-9a-f]{64}$/);
    assert.deepEqual(token.projects, [first, second]);
    assert.equal(token.project, '[]');
    assert.equal(token.environment, 'development');

    const events = await eventsSince(ctx, before);
    assert.equal(events.length, 1);
    assertCreatedEvent(events[0], token);
    assert.equal(events[0]!.environment, 'development');
    assert.equal(events[0]!.project, null, 'a token of several projects concerns no single project');
    assert.deepEqual((events[0]!.data as ApiToken).projects, [first, second]);

    // Its secret, with `[]` in it, also deletes it through the path.
    const beforeDelete = await lastEventId(ctx);
    expectStatus(await deleteToken(token.secret), 200);
    assert.equal(
      (await listTokens()).find((t) => t.id === token.id),
      undefined,
    );
    const deleted = await eventsSince(ctx, beforeDelete);
    assert.deepEqual(
      deleted.map((e) => [e.type, e.project, e.environment]),
      [['api-token-deleted', null, 'development']],
    );
    assert.deepEqual((deleted[0]!.preData as ApiToken).projects, [first, second]);
  });

  test('a frontend token for all projects', async () => {
    const before = await lastEventId(ctx);
    const token = await createToken({ tokenName: uniqueName('frontend'), type: 'frontend', environment: 'production' });
    assert.match(token.secret, /^\*:production\.[0-9a-f]{64}$/);
    assert.equal(token.type, 'frontend');
    assert.equal(token.environment, 'production');
    assert.equal(token.project, '*');
    assert.deepEqual(token.projects, ['*']);
    const events = await eventsSince(ctx, before);
    assert.equal(events.length, 1);
    assertCreatedEvent(events[0], token);
    assert.equal(events[0]!.environment, 'production');
    assert.equal(events[0]!.project, null);
  });

  test("type 'backend' is stored as 'client'", async () => {
    const token = await createToken({ tokenName: uniqueName('backend'), type: 'backend', environment: 'development' });
    assert.equal(token.type, 'client');
    assert.match(token.secret, /^\*:development\.[0-9a-f]{64}$/);
    const listed = (await listTokens()).find((t) => t.id === token.id);
    assert.equal(listed?.type, 'client');
  });

  test("type 'CLIENT' (upper case) is accepted", async () => {
    const token = await createToken({ tokenName: uniqueName('upper'), type: 'CLIENT', environment: 'development' });
    assert.equal(token.type, 'client');
    const listed = (await listTokens()).find((t) => t.id === token.id);
    assert.equal(listed?.type, 'client');
  });

  test('username is accepted as the deprecated name of tokenName', async () => {
    const username = uniqueName('legacy-name');
    const token = await createToken({ username, type: 'client', environment: 'development' });
    assert.equal(token.tokenName, username);
    const listed = (await listTokens()).find((t) => t.id === token.id);
    assert.equal(listed?.tokenName, username);
  });

  test('an environment given for a client token is used; the default is development', async () => {
    const token = await createToken({ tokenName: uniqueName('default-env'), type: 'client' });
    assert.equal(token.environment, 'development');
    assert.match(token.secret, /^\*:development\./);
  });
});

describe('GET /api/admin/api-tokens lists tokens without secrets', () => {
  test('the list holds every created token with all fields and no secret anywhere', async () => {
    const project = await createProject(ctx, { prefix: 'tokens' });
    const created = [
      await createToken({ tokenName: uniqueName('list-admin'), type: 'admin' }),
      await createToken({ tokenName: uniqueName('list-client'), type: 'client', environment: 'development', project }),
      await createToken({ tokenName: uniqueName('list-frontend'), type: 'frontend', environment: 'production' }),
    ];
    const response = await ctx.admin.get(TOKENS);
    expectStatus(response, 200);
    const tokens = (response.json() as { tokens: ApiToken[] }).tokens;
    for (const token of created) {
      const listed = tokens.find((t) => t.id === token.id);
      assert.ok(listed, `token ${token.tokenName} must be listed`);
      assert.deepEqual(Object.keys(listed).sort(), TOKEN_FIELDS);
      assert.deepEqual(listed, withoutSecret(token));
      assert.ok(!response.body.includes(randomPart(token.secret)), 'the list must not carry a secret');
    }
    for (const token of tokens) assert.ok(!('secret' in token), `token ${token.id} must not have a secret field`);
    assert.ok(!response.body.includes('"secret"'));
    // Listed in id order: the three new ones appear in creation order.
    const ids = tokens.map((t) => t.id).filter((id) => created.some((token) => token.id === id));
    assert.deepEqual(
      ids,
      created.map((token) => token.id),
    );
  });

  test('the api_tokens table does not hold the clear secret', async () => {
    const token = await createToken({ tokenName: uniqueName('stored'), type: 'admin' });
    const rows = await ctx.db.selectFrom('api_tokens').selectAll().where('id', '=', token.id).execute();
    assert.equal(rows.length, 1);
    const row = rows[0]!;
    assert.notEqual(row.secret_hash, token.secret);
    assert.match(row.secret_hash, /^[0-9a-f]{64}$/);
    assert.notEqual(row.secret_hash, randomPart(token.secret));
    for (const [column, value] of Object.entries(row)) {
      const text = value instanceof Date ? value.toISOString() : String(value);
      assert.ok(!text.includes(randomPart(token.secret)), `column ${column} must not hold the secret`);
    }
  });
});

describe('what created tokens may do', () => {
  test('a client token cannot be used on the admin API (403 PermissionError)', async () => {
    const token = await createToken({ tokenName: uniqueName('sdk'), type: 'client', environment: 'development' });
    const response = await ctx.as(token.secret).get('/api/admin/projects');
    expectError(response, 403, 'PermissionError');
    const frontend = await createToken({ tokenName: uniqueName('fe'), type: 'frontend', environment: 'development' });
    expectError(await ctx.as(frontend.secret).get('/api/admin/projects'), 403, 'PermissionError');
  });

  test('a created admin token works on GET /api/admin/projects and is marked as seen', async () => {
    const project = await createProject(ctx, { prefix: 'tokens' });
    const token = await createToken({ tokenName: uniqueName('works'), type: 'admin' });
    const response = await ctx.as(token.secret).get('/api/admin/projects');
    expectStatus(response, 200);
    const ids = (response.json() as { projects: Array<{ id: string }> }).projects.map((p) => p.id);
    assert.ok(ids.includes(project), 'the list must contain the project just created');
    assert.ok(ids.includes('default'));
    const listed = (await listTokens()).find((t) => t.id === token.id);
    assert.equal(listed?.seenAt, ctx.clock.now().toISOString());
  });

  test('a created admin token can create a project, recorded as admin-token', async () => {
    const token = await createToken({ tokenName: uniqueName('acts'), type: 'admin' });
    const before = await lastEventId(ctx);
    const id = uniqueName('by-new-token');
    expectStatus(await ctx.as(token.secret).post('/api/admin/projects', { id, name: id }), 201);
    const events = await eventsSince(ctx, before);
    assert.deepEqual(
      events.map((e) => [e.type, e.createdBy, e.createdByUserId, e.project]),
      [['project-created', 'admin-token', -42, id]],
    );
  });
});

describe('DELETE /api/admin/api-tokens/:token', () => {
  test('deletes by secret: gone from the list, event with preData, the secret then gets 401', async () => {
    const project = await createProject(ctx, { prefix: 'tokens' });
    const token = await createToken({ tokenName: uniqueName('del-secret'), type: 'client', environment: 'development', project });
    const admin = await createToken({ tokenName: uniqueName('del-secret-admin'), type: 'admin' });
    expectStatus(await ctx.as(admin.secret).get('/api/admin/projects'), 200);
    const listedBefore = (await listTokens()).find((t) => t.id === token.id);
    assert.ok(listedBefore);

    const before = await lastEventId(ctx);
    const response = await deleteToken(token.secret);
    expectStatus(response, 200);
    const remaining = await listTokens();
    assert.equal(
      remaining.find((t) => t.id === token.id),
      undefined,
      'the token must be gone',
    );
    assert.ok(
      remaining.some((t) => t.id === admin.id),
      'other tokens stay',
    );

    const events = await eventsSince(ctx, before);
    assert.equal(events.length, 1);
    const event = events[0]!;
    assert.equal(event.type, 'api-token-deleted');
    assert.equal(event.createdBy, 'admin-token');
    assert.equal(event.createdByUserId, -42);
    assert.equal(event.project, project);
    assert.equal(event.environment, 'development');
    assert.equal(event.data, null);
    assert.deepEqual(event.preData, listedBefore);
    assert.ok(!JSON.stringify(event).includes(randomPart(token.secret)), 'the event must not carry the secret');

    // A deleted admin token no longer authenticates.
    const beforeAdmin = await lastEventId(ctx);
    expectStatus(await deleteToken(admin.secret), 200);
    const adminEvents = await eventsSince(ctx, beforeAdmin);
    assert.deepEqual(
      adminEvents.map((e) => e.type),
      ['api-token-deleted'],
    );
    assert.ok(!JSON.stringify(adminEvents).includes(randomPart(admin.secret)));
    expectError(await ctx.as(admin.secret).get('/api/admin/projects'), 401, 'UnauthorizedError');
    expectError(await ctx.as(token.secret).get('/api/admin/projects'), 401, 'UnauthorizedError');
  });

  test('deletes by numeric id; the deleted token then gets 401', async () => {
    const token = await createToken({ tokenName: uniqueName('del-id'), type: 'admin' });
    expectStatus(await ctx.as(token.secret).get('/api/admin/projects'), 200);
    const listedBefore = (await listTokens()).find((t) => t.id === token.id);
    assert.ok(listedBefore);

    const before = await lastEventId(ctx);
    expectStatus(await deleteToken(token.id), 200);
    assert.equal(
      (await listTokens()).find((t) => t.id === token.id),
      undefined,
    );
    const events = await eventsSince(ctx, before);
    assert.equal(events.length, 1);
    assert.equal(events[0]!.type, 'api-token-deleted');
    assert.equal(events[0]!.createdBy, 'admin-token');
    assert.equal(events[0]!.environment, null);
    assert.equal(events[0]!.project, null);
    assert.deepEqual(events[0]!.preData, listedBefore);
    assert.ok(!JSON.stringify(events[0]).includes(randomPart(token.secret)));
    expectError(await ctx.as(token.secret).get('/api/admin/projects'), 401, 'UnauthorizedError');
  });

  test('an unknown secret or id is a 404 NotFoundError and changes nothing', async () => {
    const tokensBefore = await listTokens();
    const before = await lastEventId(ctx);
    expectError(await deleteToken('*:*.no-such-token-0123456789abcdef'), 404, 'NotFoundError');
    expectError(await deleteToken(987654321), 404, 'NotFoundError');
    await assertNothingStored(tokensBefore, before);
  });

  test('deleting the same token twice: the second time is a 404', async () => {
    const token = await createToken({ tokenName: uniqueName('twice'), type: 'frontend', environment: 'development' });
    expectStatus(await deleteToken(token.id), 200);
    const before = await lastEventId(ctx);
    expectError(await deleteToken(token.id), 404, 'NotFoundError');
    expectError(await deleteToken(token.secret), 404, 'NotFoundError');
    assert.deepEqual(await eventsSince(ctx, before), []);
  });
});

describe('bad input is a 4xx and stores nothing', () => {
  test('missing type', async () => {
    await expectRefused({ tokenName: uniqueName('no-type') }, 400, 'BadDataError', ['/body/type']);
  });

  test("unknown type 'superuser'", async () => {
    const error = await expectRefused({ tokenName: uniqueName('super'), type: 'superuser' }, 400, 'BadDataError', ['/body/type']);
    assert.ok(
      error.details.some((d) => d.message.includes('superuser')),
      'the details say what was sent',
    );
  });

  test('missing tokenName and username', async () => {
    await expectRefused({ type: 'admin' }, 400, 'BadDataError', ['/body/tokenName']);
  });

  test('empty tokenName', async () => {
    await expectRefused({ tokenName: '', type: 'admin' }, 400, 'BadDataError', ['/body/tokenName']);
  });

  test('a tokenName of only spaces', async () => {
    await expectRefused({ tokenName: '   ', type: 'admin' }, 400, 'BadDataError', ['/body/tokenName']);
  });

  test("an admin token with environment 'development'", async () => {
    const error = await expectRefused(
      { tokenName: uniqueName('admin-env'), type: 'admin', environment: 'development' },
      400,
      'BadDataError',
    );
    assert.deepEqual(
      error.details.map((detail) => detail.path),
      ['/body/environment'],
    );
    assert.match(error.details[0]!.message, /got "development"/);
  });

  test("an admin token with project 'p'", async () => {
    const project = await createProject(ctx, { prefix: 'p' });
    const error = await expectRefused({ tokenName: uniqueName('admin-project'), type: 'admin', project }, 400, 'BadDataError');
    assert.deepEqual(
      error.details.map((detail) => detail.path),
      ['/body/projects'],
    );
    assert.match(error.details[0]!.message, new RegExp(`got \\["${project}"\\]`));
  });

  test("a client token with environment '*'", async () => {
    await expectRefused({ tokenName: uniqueName('client-star'), type: 'client', environment: '*' }, 400, 'BadDataError', [
      '/body/environment',
    ]);
  });

  test('an unknown environment is a 404 NotFoundError', async () => {
    const environment = uniqueName('no-env');
    const error = await expectRefused({ tokenName: uniqueName('unknown-env'), type: 'client', environment }, 404, 'NotFoundError');
    assert.ok(error.message.includes(environment), 'the message names the environment');
  });

  test('an unknown project is a 404 NotFoundError', async () => {
    const project = uniqueName('no-project');
    const error = await expectRefused(
      { tokenName: uniqueName('unknown-project'), type: 'client', environment: 'development', project },
      404,
      'NotFoundError',
    );
    assert.ok(error.message.includes(project), 'the message names the project');
  });

  test('an unknown project among several is a 404 NotFoundError', async () => {
    const known = await createProject(ctx, { prefix: 'tokens' });
    const unknown = uniqueName('no-project');
    await expectRefused(
      { tokenName: uniqueName('unknown-projects'), type: 'client', environment: 'development', projects: [known, unknown] },
      404,
      'NotFoundError',
    );
  });

  test('both project and projects', async () => {
    const project = await createProject(ctx, { prefix: 'tokens' });
    await expectRefused(
      { tokenName: uniqueName('both'), type: 'client', environment: 'development', project, projects: [project] },
      400,
      'BadDataError',
      ['/body/project'],
    );
  });

  test("projects ['*', 'x']", async () => {
    const project = await createProject(ctx, { prefix: 'x' });
    await expectRefused(
      { tokenName: uniqueName('star-and'), type: 'client', environment: 'development', projects: ['*', project] },
      400,
      'BadDataError',
      ['/body/projects'],
    );
  });

  test('an empty projects list', async () => {
    await expectRefused(
      { tokenName: uniqueName('no-projects'), type: 'client', environment: 'development', projects: [] },
      400,
      'BadDataError',
      ['/body/projects'],
    );
  });

  test('expiresAt in the past', async () => {
    const expiresAt = new Date(ctx.clock.now().getTime() - 60_000).toISOString();
    await expectRefused({ tokenName: uniqueName('past'), type: 'admin', expiresAt }, 400, 'BadDataError', ['/body/expiresAt']);
  });

  test("expiresAt that is not a date ('tomorrow')", async () => {
    const error = await expectRefused({ tokenName: uniqueName('tomorrow'), type: 'admin', expiresAt: 'tomorrow' }, 400, 'BadDataError', [
      '/body/expiresAt',
    ]);
    assert.ok(
      error.details.some((d) => d.message.includes('tomorrow')),
      'the details say what was sent',
    );
  });

  test('an unknown body property', async () => {
    await expectRefused({ tokenName: uniqueName('extra'), type: 'admin', superpowers: true }, 400, 'BadDataError', ['/body/superpowers']);
  });

  test('a malformed JSON body', async () => {
    const tokensBefore = await listTokens();
    const before = await lastEventId(ctx);
    const response = await ctx.admin.inject({
      method: 'POST',
      url: TOKENS,
      payload: '{"tokenName": "broken", "type": "admin"',
      headers: { 'content-type': 'application/json' },
    });
    expectError(response, 400, 'BadDataError');
    await assertNothingStored(tokensBefore, before);
  });

  test('a text/plain body is a 415 ContentTypeError', async () => {
    const tokensBefore = await listTokens();
    const before = await lastEventId(ctx);
    const response = await ctx.admin.inject({
      method: 'POST',
      url: TOKENS,
      payload: JSON.stringify({ tokenName: uniqueName('plain'), type: 'admin' }),
      headers: { 'content-type': 'text/plain' },
    });
    expectError(response, 415, 'ContentTypeError');
    await assertNothingStored(tokensBefore, before);
  });
});

describe('tokens keep projects and environments they use from being deleted', () => {
  test('a project used by a client token cannot be deleted until the token is', async () => {
    const project = await createProject(ctx, { prefix: 'tokens' });
    const token = await createToken({ tokenName: uniqueName('holds-project'), type: 'client', environment: 'development', project });
    const before = await lastEventId(ctx);

    const refused = await ctx.admin.delete(`/api/admin/projects/${project}`);
    const error = expectError(refused, 409, 'ConflictError');
    assert.ok(error.message.includes(token.tokenName), `the message names the token (got "${error.message}")`);
    expectStatus(await ctx.admin.get(`/api/admin/projects/${project}`), 200);
    assert.deepEqual(await eventsSince(ctx, before), []);

    expectStatus(await deleteToken(token.id), 200);
    expectStatus(await ctx.admin.delete(`/api/admin/projects/${project}`), 200);
    expectError(await ctx.admin.get(`/api/admin/projects/${project}`), 404, 'NotFoundError');
    const events = await eventsSince(ctx, before);
    assert.deepEqual(
      events.map((e) => [e.type, e.project]),
      [
        ['api-token-deleted', project],
        ['project-deleted', project],
      ],
    );
  });

  test('a project that is one of several of a token cannot be deleted either', async () => {
    const first = await createProject(ctx, { prefix: 'tokens' });
    const second = await createProject(ctx, { prefix: 'tokens' });
    const token = await createToken({
      tokenName: uniqueName('holds-two'),
      type: 'client',
      environment: 'development',
      projects: [first, second],
    });
    const error = expectError(await ctx.admin.delete(`/api/admin/projects/${second}`), 409, 'ConflictError');
    assert.ok(error.message.includes(token.tokenName));
    expectStatus(await ctx.admin.get(`/api/admin/projects/${second}`), 200);
    assert.deepEqual((await listTokens()).find((t) => t.id === token.id)?.projects, [first, second].sort());
  });

  test('an environment used by a token cannot be deleted until the token is', async () => {
    const environment = uniqueName('env');
    expectStatus(await ctx.admin.post('/api/admin/environments', { name: environment, type: 'test' }), 201);
    const token = await createToken({ tokenName: uniqueName('holds-env'), type: 'client', environment });
    assert.ok(token.secret.startsWith(`*:${environment}.`));
    const before = await lastEventId(ctx);

    const error = expectError(await ctx.admin.delete(`/api/admin/environments/${environment}`), 409, 'ConflictError');
    assert.ok(error.message.includes(environment), `the message names the environment (got "${error.message}")`);
    expectStatus(await ctx.admin.get(`/api/admin/environments/${environment}`), 200);
    assert.deepEqual(await eventsSince(ctx, before), []);

    expectStatus(await deleteToken(token.secret), 200);
    expectStatus(await ctx.admin.delete(`/api/admin/environments/${environment}`), 200);
    expectError(await ctx.admin.get(`/api/admin/environments/${environment}`), 404, 'NotFoundError');
    const events = await eventsSince(ctx, before);
    assert.deepEqual(
      events.map((e) => [e.type, e.environment]),
      [
        ['api-token-deleted', environment],
        ['environment-deleted', environment],
      ],
    );
  });
});

describe('only admins manage API tokens', () => {
  for (const role of ['Editor', 'Viewer'] as const) {
    test(`a ${role} session gets 403 PermissionError on list, create and delete; nothing changes`, async () => {
      const session = await createUserSession(ctx, role);
      const victim = await createToken({ tokenName: uniqueName('victim'), type: 'admin' });
      const tokensBefore = await listTokens();
      const before = await lastEventId(ctx);
      const client = ctx.withCookie(session.cookie);

      const list = expectError(await client.get(TOKENS), 403, 'PermissionError');
      assert.deepEqual(list.permissions, ['READ_API_TOKEN']);
      assert.ok(!JSON.stringify(list).includes(randomPart(victim.secret)));

      const create = expectError(await client.post(TOKENS, { tokenName: uniqueName(`by-${role}`), type: 'admin' }), 403, 'PermissionError');
      assert.deepEqual(create.permissions, ['CREATE_API_TOKEN']);

      const remove = expectError(await client.delete(`${TOKENS}/${victim.id}`), 403, 'PermissionError');
      assert.deepEqual(remove.permissions, ['DELETE_API_TOKEN']);

      await assertNothingStored(tokensBefore, before);
      expectStatus(await ctx.as(victim.secret).get('/api/admin/projects'), 200);
    });
  }

  test('an Admin session may create a token, recorded under the user', async () => {
    const session = await createUserSession(ctx, 'Admin');
    const before = await lastEventId(ctx);
    const response = await ctx.withCookie(session.cookie).post(TOKENS, { tokenName: uniqueName('by-user'), type: 'admin' });
    expectStatus(response, 201);
    const token = response.json() as CreatedToken;
    const events = await eventsSince(ctx, before);
    assert.deepEqual(
      events.map((e) => [e.type, e.createdBy, e.createdByUserId]),
      [['api-token-created', session.username, session.id]],
    );
    assert.ok(!JSON.stringify(events).includes(randomPart(token.secret)));
  });
});

// Moves the file's shared clock: keep this last.
describe('token expiry', () => {
  test('a token works until its expiresAt, then gets 401 UnauthorizedError', async () => {
    const expiresAt = new Date(ctx.clock.now().getTime() + 3600 * 1000).toISOString();
    const token = await createToken({ tokenName: uniqueName('expiring'), type: 'admin', expiresAt });
    assert.equal(token.expiresAt, expiresAt);
    assert.equal((await listTokens()).find((t) => t.id === token.id)?.expiresAt, expiresAt);
    expectStatus(await ctx.as(token.secret).get('/api/admin/projects'), 200);

    ctx.clock.advance(2 * 3600 * 1000);

    expectError(await ctx.as(token.secret).get('/api/admin/projects'), 401, 'UnauthorizedError');
    expectError(await ctx.as(`Bearer ${token.secret}`).get('/api/admin/projects'), 401, 'UnauthorizedError');
    // A token without expiry keeps working.
    expectStatus(await ctx.admin.get('/api/admin/projects'), 200);
  });

  test('an SDK token is trusted for 10 s at a time and then checked again, never past its own expiry', async () => {
    const token = await createToken({ tokenName: uniqueName('sdk'), type: 'client', environment: 'production' });
    const poll = () => ctx.as(token.secret).get('/api/client/features');
    expectStatus(await poll(), 200);
    ctx.clock.advance(11_000);
    expectStatus(await poll(), 200); // checked again, and trusted for 10 s more
    // Removed behind the server's back (no notification): only the trust window keeps it working.
    await ctx.db.deleteFrom('api_token_projects').where('token_id', '=', token.id).execute();
    await ctx.db.deleteFrom('api_tokens').where('id', '=', token.id).execute();
    ctx.clock.advance(5_000);
    expectStatus(await poll(), 200);
    ctx.clock.advance(6_000);
    expectError(await poll(), 401, 'UnauthorizedError');

    const expiresAt = new Date(ctx.clock.now().getTime() + 3_000).toISOString();
    const shortLived = await createToken({ tokenName: uniqueName('sdk'), type: 'client', environment: 'production', expiresAt });
    expectStatus(await ctx.as(shortLived.secret).get('/api/client/features'), 200);
    ctx.clock.advance(4_000);
    expectError(await ctx.as(shortLived.secret).get('/api/client/features'), 401, 'UnauthorizedError');
  });
});

describe('changing when a token expires, and finding tokens by name', () => {
  test('a new expiresAt holds at once, even for an SDK token already trusted, and is recorded without the secret', async () => {
    const token = await createToken({ tokenName: uniqueName('moved'), type: 'client', environment: 'production' });
    const poll = () => ctx.as(token.secret).get('/api/client/features');
    expectStatus(await poll(), 200);
    const expiresAt = new Date(ctx.clock.now().getTime() - 1000).toISOString();
    const before = await lastEventId(ctx);
    expectStatus(await ctx.admin.put(`${TOKENS}/${encodeURIComponent(token.secret)}`, { expiresAt }), 200);
    assert.equal((await listTokens()).find((t) => t.id === token.id)?.expiresAt, expiresAt);
    expectError(await poll(), 401, 'UnauthorizedError');
    const events = await eventsSince(ctx, before);
    assert.deepEqual(
      events.map((event) => [event.type, (event.preData as ApiToken).expiresAt, (event.data as ApiToken).expiresAt]),
      [['api-token-updated', null, expiresAt]],
    );
    assert.ok(!JSON.stringify(events).includes(randomPart(token.secret)));

    // By id as well; a later time brings it back.
    const later = new Date(ctx.clock.now().getTime() + 3600_000).toISOString();
    expectStatus(await ctx.admin.put(`${TOKENS}/${token.id}`, { expiresAt: later }), 200);
    expectStatus(await poll(), 200);
  });

  test('an unknown token is 404, a bad or missing time 400, a Viewer 403, and nothing changes', async () => {
    const token = await createToken({ tokenName: uniqueName('kept'), type: 'admin' });
    const viewer = await createUserSession(ctx, 'Viewer');
    const tokensBefore = await listTokens();
    const eventsBefore = await lastEventId(ctx);
    expectError(await ctx.admin.put(`${TOKENS}/${uniqueName('nope')}`, { expiresAt: '2030-01-01T00:00:00Z' }), 404, 'NotFoundError');
    expectError(await ctx.admin.put(`${TOKENS}/${token.id}`, { expiresAt: 'tomorrow' }), 400, 'BadDataError');
    expectError(await ctx.admin.put(`${TOKENS}/${token.id}`, {}), 400, 'BadDataError');
    expectError(
      await ctx.admin.put(`${TOKENS}/${token.id}`, { expiresAt: '2030-01-01T00:00:00Z', tokenName: 'renamed' }),
      400,
      'BadDataError',
    );
    expectError(
      await ctx.withCookie(viewer.cookie).put(`${TOKENS}/${token.id}`, { expiresAt: '2030-01-01T00:00:00Z' }),
      403,
      'PermissionError',
    );
    await assertNothingStored(tokensBefore, eventsBefore);
  });

  test('GET by name lists every token of that name, and none for a name no token has', async () => {
    const name = uniqueName('twice');
    const first = await createToken({ tokenName: name, type: 'admin' });
    const second = await createToken({ tokenName: name, type: 'frontend', environment: 'development' });
    await createToken({ tokenName: uniqueName('other'), type: 'admin' });
    const named = await ctx.admin.get(`${TOKENS}/${name}`);
    expectStatus(named, 200);
    assert.deepEqual((named.json() as { tokens: ApiToken[] }).tokens, [withoutSecret(first), withoutSecret(second)]);
    assert.deepEqual((await ctx.admin.get(`${TOKENS}/${uniqueName('none')}`)).json(), { tokens: [] });
  });
});
