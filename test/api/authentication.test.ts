import { Writable } from 'node:stream';
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../../src/config.js';
import type { DatabaseHandle, Db } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { bootstrap, composeApp } from '../../src/server.js';
import { redactUrl } from '../../src/shared/redact-url.js';
import { systemClock } from '../../src/shared/clock.js';
import { expectError, expectStatus } from '../helpers/assertions.js';
import { eventsSince, lastEventId } from '../helpers/events.js';
import { createUserSession, uniqueName } from '../helpers/fixtures.js';
import { ADMIN_TOKEN, STRONG_PASSWORD, startTestApp, type TestApp } from '../helpers/test-app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

const PROJECTS = '/api/admin/projects';

let ctx: TestApp;

before(async () => {
  ctx = await startTestApp();
});

after(async () => {
  await ctx.close();
});

async function projectIds(): Promise<string[]> {
  const response = await ctx.admin.get(PROJECTS);
  expectStatus(response, 200);
  return (response.json() as { projects: Array<{ id: string }> }).projects.map((project) => project.id);
}

describe('authentication on /api/admin', () => {
  test("no Authorization header and no cookie: 401 AuthenticationRequired with Unleash's description of how to sign in", async () => {
    const error = expectError(await ctx.as().get(PROJECTS), 401, 'AuthenticationRequired');
    assert.equal(error.permissions, undefined);
    const { id: _id, ...body } = error as unknown as Record<string, unknown>;
    assert.deepEqual(body, {
      name: 'AuthenticationRequired',
      message: 'You must log in or send an API token in the Authorization header',
      details: [{ message: 'You must log in or send an API token in the Authorization header' }],
      type: 'password',
      path: '/auth/simple/login',
      defaultHidden: false,
      options: [],
    });
    // SDK paths are for tokens: no sign-in page is described there.
    const sdk = expectError(await ctx.as().get('/api/client/features'), 401, 'AuthenticationRequired') as unknown as Record<
      string,
      unknown
    >;
    assert.deepEqual([sdk.type, sdk.path, sdk.options], [undefined, undefined, undefined]);
  });

  test('with company sign-in only, the description hides the password form and offers the company sign-in', async () => {
    const companyOnly = await startTestApp({
      env: {
        OIDC_ISSUER: 'https://login.example.com',
        OIDC_CLIENT_ID: 'vexil',
        OIDC_CLIENT_SECRET: 'client-secret-0123456789',
        OIDC_NAME: 'Example SSO',
        OIDC_ONLY: 'true',
      },
    });
    try {
      const error = expectError(await companyOnly.as().get(PROJECTS), 401, 'AuthenticationRequired') as unknown as Record<string, unknown>;
      assert.deepEqual(
        [error.type, error.defaultHidden, error.options],
        ['password', true, [{ type: 'oidc', message: 'Sign in with Example SSO', path: '/auth/oidc/login' }]],
      );
    } finally {
      await companyOnly.close();
    }
  });

  test('an empty Authorization header counts as none: 401 AuthenticationRequired', async () => {
    expectError(await ctx.as('').get(PROJECTS), 401, 'AuthenticationRequired');
  });

  test('an unknown token: 401 UnauthorizedError', async () => {
    expectError(await ctx.as('*:*.not-a-known-token-0123456789abcdef').get(PROJECTS), 401, 'UnauthorizedError');
    expectError(await ctx.as('Bearer nonsense').get(PROJECTS), 401, 'UnauthorizedError');
  });

  test('the admin token works bare, with "Bearer " and with "bearer "', async () => {
    const id = uniqueName('auth');
    expectStatus(await ctx.admin.post(PROJECTS, { id, name: id }), 201);
    for (const header of [ADMIN_TOKEN, `Bearer ${ADMIN_TOKEN}`, `bearer ${ADMIN_TOKEN}`]) {
      const response = await ctx.as(header).get(PROJECTS);
      expectStatus(response, 200);
      const ids = (response.json() as { projects: Array<{ id: string }> }).projects.map((project) => project.id);
      assert.ok(ids.includes(id), `"${header.split(' ')[0]}" must see the project list`);
    }
  });

  test('an unknown session cookie: 401 AuthenticationRequired, describing how to sign in again', async () => {
    const error = expectError(await ctx.withCookie('vexil-session=nope').get(PROJECTS), 401, 'AuthenticationRequired');
    assert.equal((error as unknown as { path: string }).path, '/auth/simple/login');
  });

  test('a session cookie from a login works, and stops working after logout', async () => {
    const session = await createUserSession(ctx, 'Viewer');
    expectStatus(await ctx.withCookie(session.cookie).get(PROJECTS), 200);
    expectStatus(await ctx.withCookie(session.cookie).post('/logout'), 204);
    expectError(await ctx.withCookie(session.cookie).get(PROJECTS), 401, 'AuthenticationRequired');
  });

  test('GET /health needs no authentication', async () => {
    const response = await ctx.as().get('/health');
    expectStatus(response, 200);
    assert.deepEqual(response.json(), { health: 'GOOD' });
  });

  test('POST /auth/simple/login needs no authentication', async () => {
    const username = uniqueName('login');
    expectStatus(await ctx.admin.post('/api/admin/user-admin', { username, rootRole: 'Viewer', password: STRONG_PASSWORD }), 201);
    const response = await ctx.as().post('/auth/simple/login', { username, password: STRONG_PASSWORD });
    expectStatus(response, 200);
    assert.equal((response.json() as { username: string }).username, username);
    assert.ok(response.cookies.some((cookie) => cookie.name === 'vexil-session'));
    // A wrong password is the login's own answer, not an authentication demand.
    expectError(await ctx.as().post('/auth/simple/login', { username, password: 'wrong-password' }), 401, 'PasswordMismatch');
  });
});

describe('order of checks: authentication, then validation, then permission', () => {
  test('an unauthenticated request with an invalid body gets 401, not 400', async () => {
    const before = await lastEventId(ctx);
    expectError(await ctx.as().post(PROJECTS, { bogus: true }), 401, 'AuthenticationRequired');
    expectError(await ctx.as('*:*.unknown-token-0123456789abcdef').post(PROJECTS, { bogus: true }), 401, 'UnauthorizedError');
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('a Viewer posting an invalid body gets 400 (validation before permission)', async () => {
    const viewer = await createUserSession(ctx, 'Viewer');
    const before = await lastEventId(ctx);
    const error = expectError(await ctx.withCookie(viewer.cookie).post(PROJECTS, { id: uniqueName('v') }), 400, 'BadDataError');
    assert.ok(
      error.details.some((detail) => detail.path === '/body/name'),
      JSON.stringify(error.details),
    );
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test("a Viewer posting a valid body gets 403 PermissionError ['CREATE_PROJECT']; nothing created", async () => {
    const viewer = await createUserSession(ctx, 'Viewer');
    const idsBefore = await projectIds();
    const before = await lastEventId(ctx);
    const id = uniqueName('viewer-project');
    const error = expectError(await ctx.withCookie(viewer.cookie).post(PROJECTS, { id, name: id }), 403, 'PermissionError');
    assert.deepEqual(error.permissions, ['CREATE_PROJECT']);
    expectError(await ctx.admin.get(`${PROJECTS}/${id}`), 404, 'NotFoundError');
    assert.deepEqual(await projectIds(), idsBefore);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('a Viewer may read', async () => {
    const viewer = await createUserSession(ctx, 'Viewer');
    const response = await ctx.withCookie(viewer.cookie).get(PROJECTS);
    expectStatus(response, 200);
    assert.deepEqual(
      (response.json() as { projects: Array<{ id: string }> }).projects.map((project) => project.id),
      await projectIds(),
    );
  });
});

describe('what an Editor may do', () => {
  test('an Editor creates and updates projects, owning those it creates; events name the editor', async () => {
    const editor = await createUserSession(ctx, 'Editor');
    const client = ctx.withCookie(editor.cookie);
    const id = uniqueName('editor-project');
    const before = await lastEventId(ctx);

    const created = await client.post(PROJECTS, { id, name: 'Before' });
    expectStatus(created, 201);
    assert.equal((created.json() as { id: string }).id, id);
    const updated = await client.put(`${PROJECTS}/${id}`, { name: 'After' });
    expectStatus(updated, 200);
    assert.equal((updated.json() as { name: string }).name, 'After');

    const events = await eventsSince(ctx, before);
    assert.deepEqual(
      events.map((event) => [event.type, event.createdBy, event.createdByUserId, event.project]),
      [
        ['project-created', editor.username, editor.id, id],
        ['project-access-added', editor.username, editor.id, id],
        ['project-updated', editor.username, editor.id, id],
      ],
    );
  });

  test("an Editor cannot delete a project: 403 ['DELETE_PROJECT']", async () => {
    const editor = await createUserSession(ctx, 'Editor');
    const id = uniqueName('keep');
    expectStatus(await ctx.admin.post(PROJECTS, { id, name: id }), 201);
    const before = await lastEventId(ctx);
    const error = expectError(await ctx.withCookie(editor.cookie).delete(`${PROJECTS}/${id}`), 403, 'PermissionError');
    assert.deepEqual(error.permissions, ['DELETE_PROJECT']);
    expectStatus(await ctx.admin.get(`${PROJECTS}/${id}`), 200);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test("an Editor cannot create an environment: 403 ['CREATE_ENVIRONMENT']", async () => {
    const editor = await createUserSession(ctx, 'Editor');
    const name = uniqueName('editor-env');
    const before = await lastEventId(ctx);
    const error = expectError(
      await ctx.withCookie(editor.cookie).post('/api/admin/environments', { name, type: 'test' }),
      403,
      'PermissionError',
    );
    assert.deepEqual(error.permissions, ['CREATE_ENVIRONMENT']);
    expectError(await ctx.admin.get(`/api/admin/environments/${name}`), 404, 'NotFoundError');
    assert.deepEqual(await eventsSince(ctx, before), []);
  });
});

describe('start-up bootstrap on a fresh database', () => {
  const opened: Array<{ database: TestDatabase; handle: DatabaseHandle; app?: FastifyInstance }> = [];

  async function freshDatabase() {
    const database = await createTestDatabase();
    const handle = await database.open();
    const entry: { database: TestDatabase; handle: DatabaseHandle; app?: FastifyInstance } = { database, handle };
    opened.push(entry);
    await migrateToLatest(handle.db);
    return entry;
  }

  async function appFor(entry: { database: TestDatabase; handle: DatabaseHandle; app?: FastifyInstance }) {
    const config = { ...loadConfig({}), database: entry.database.config, initAdminApiTokens: [] };
    const { app } = await composeApp(
      { db: entry.handle.db, clock: systemClock, config, listen: entry.handle.listen },
      { logLevel: 'silent' },
    );
    await app.ready();
    entry.app = app;
    return app;
  }

  // eventsSince reads through the context's database only: point it at the bootstrap database.
  const eventsOf = (db: Db, afterId: number) => eventsSince({ db }, afterId);
  const lastEventOf = (db: Db) => lastEventId({ db });

  after(async () => {
    for (const { database, handle, app } of opened) {
      await app?.close();
      await handle.close();
      await database.drop();
    }
  });

  test('with no tokens configured it creates an admin user once, audited as system, whose password logs in', async () => {
    const entry = await freshDatabase();
    const db = entry.handle.db;
    const deps = { db, clock: systemClock };

    const first = await bootstrap(deps, []);
    assert.equal(first.adminTokensCreated, 0);
    assert.ok(first.initialAdmin, 'the first start must create an initial admin');
    assert.equal(first.initialAdmin.username, 'admin');
    const password = first.initialAdmin.password;
    assert.equal(typeof password, 'string');
    assert.ok(password.length >= 12, 'the generated password must be long');

    const events = await eventsOf(db, 0);
    assert.equal(events.length, 1);
    const event = events[0]!;
    assert.equal(event.type, 'user-created');
    assert.equal(event.createdBy, 'system');
    assert.equal(event.createdByUserId, -1337);
    const data = event.data as { username: string; rootRole: number };
    assert.equal(data.username, 'admin');
    assert.equal(data.rootRole, 1);
    assert.ok(!JSON.stringify(event).includes(password), 'the event must not carry the password');
    assert.ok(!JSON.stringify(event).includes('scrypt$'), 'the event must not carry the password hash');

    const app = await appFor(entry);
    const login = await app.inject({ method: 'POST', url: '/auth/simple/login', payload: { username: 'admin', password } });
    expectStatus(login, 200);
    assert.equal((login.json() as { username: string }).username, 'admin');
    const cookie = login.cookies.find((c) => c.name === 'vexil-session');
    assert.ok(cookie);
    const users = await app.inject({ method: 'GET', url: '/api/admin/user-admin', headers: { cookie: `vexil-session=${cookie.value}` } });
    expectStatus(users, 200);
    assert.deepEqual(
      (users.json() as { users: Array<{ username: string; rootRole: number }> }).users.map((u) => [u.username, u.rootRole]),
      [['admin', 1]],
    );

    const afterFirst = await lastEventOf(db);
    const second = await bootstrap(deps, []);
    assert.deepEqual(second, { adminTokensCreated: 0 });
    assert.equal(second.initialAdmin, undefined);
    assert.deepEqual(await eventsOf(db, afterFirst), []);
    const usersAgain = await app.inject({
      method: 'GET',
      url: '/api/admin/user-admin',
      headers: { cookie: `vexil-session=${cookie.value}` },
    });
    assert.equal((usersAgain.json() as { users: unknown[] }).users.length, 1);
  });

  test('with an admin token configured it creates that token once and no user', async () => {
    const entry = await freshDatabase();
    const db = entry.handle.db;
    const deps = { db, clock: systemClock };
    const secret = '*:*.some-secret-0123456789abcdef';

    const first = await bootstrap(deps, [secret]);
    assert.deepEqual(first, { adminTokensCreated: 1 });
    assert.equal(first.initialAdmin, undefined);
    const events = await eventsOf(db, 0);
    assert.deepEqual(
      events.map((event) => [event.type, event.createdBy, event.createdByUserId]),
      [['api-token-created', 'system', -1337]],
    );
    const data = events[0]!.data as { tokenName: string; type: string; environment: string; projects: string[] };
    assert.equal(data.type, 'admin');
    assert.equal(data.tokenName, 'admin');
    assert.equal(data.environment, '*');
    assert.deepEqual(data.projects, ['*']);
    assert.ok(!JSON.stringify(events).includes('some-secret-0123456789abcdef'), 'the event must not carry the secret');

    const afterFirst = await lastEventOf(db);
    const second = await bootstrap(deps, [secret]);
    assert.deepEqual(second, { adminTokensCreated: 0 });
    assert.deepEqual(await eventsOf(db, afterFirst), []);

    const app = await appFor(entry);
    const projects = await app.inject({ method: 'GET', url: PROJECTS, headers: { authorization: secret } });
    expectStatus(projects, 200);
    assert.deepEqual(
      (projects.json() as { projects: Array<{ id: string }> }).projects.map((p) => p.id),
      ['default'],
    );
    const users = await app.inject({ method: 'GET', url: '/api/admin/user-admin', headers: { authorization: secret } });
    expectStatus(users, 200);
    assert.deepEqual((users.json() as { users: unknown[] }).users, [], 'no admin user is created when tokens are configured');
    const tokens = await app.inject({ method: 'GET', url: '/api/admin/api-tokens', headers: { authorization: secret } });
    expectStatus(tokens, 200);
    const listed = (tokens.json() as { tokens: Array<{ tokenName: string; type: string }> }).tokens;
    assert.deepEqual(
      listed.map((t) => [t.tokenName, t.type]),
      [['admin', 'admin']],
    );
    assert.ok(!tokens.body.includes('some-secret'));
  });
});

describe('logs never carry secrets', () => {
  test('redactUrl masks the token in the delete path and keeps the rest', () => {
    assert.equal(redactUrl('/api/admin/api-tokens/*:*.abc?x=1'), '/api/admin/api-tokens/[redacted]?x=1');
    assert.equal(redactUrl('/api/admin/api-tokens/%5B%5D%3Adevelopment.abc'), '/api/admin/api-tokens/[redacted]');
    assert.equal(redactUrl('/api/admin/api-tokens'), '/api/admin/api-tokens');
    assert.equal(redactUrl('/api/admin/projects/p?x=1'), '/api/admin/projects/p?x=1');
    assert.ok(!redactUrl('/api/admin/api-tokens/*:*.abc?x=1').includes('abc'));
    assert.equal(redactUrl('/auth/oidc/callback?code=one-time-code&state=s'), '/auth/oidc/callback?code=[redacted]&state=s');
  });

  test('a run that uses every kind of secret-bearing URL logs none of the secrets', async () => {
    const lines: string[] = [];
    const logStream = new Writable({
      write(chunk, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const app = await startTestApp({ logLevel: 'info', logStream });
    try {
      const secrets: string[] = [];
      expectStatus(
        await app.admin.post('/api/admin/user-admin', { username: 'logged-person', rootRole: 'Viewer', password: STRONG_PASSWORD }),
        201,
      );
      const reset = await app.admin.post('/api/admin/user-admin/reset-password', { id: 'logged-person' });
      expectStatus(reset, 200);
      const resetToken = new URL((reset.json() as { resetPasswordUrl: string }).resetPasswordUrl, 'http://localhost').searchParams.get(
        'token',
      )!;
      secrets.push(resetToken);
      await app.as().get(`/auth/reset/validate?token=${encodeURIComponent(resetToken)}`);
      await app.as().get(`/reset-password?token=${encodeURIComponent(resetToken)}`);
      const invite = await app.admin.post('/api/admin/invite-link/tokens', {
        name: 'logged',
        expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
      });
      expectStatus(invite, 201);
      const inviteSecret = (invite.json() as { secret: string }).secret;
      secrets.push(inviteSecret);
      await app.as().get(`/invite/${inviteSecret}/validate`);
      await app.as().post(`/invite/${inviteSecret}/signup`, { email: 'someone@example.com', name: 'S', password: 'short' });
      await app.admin.get(`/api/admin/invite-link/tokens/${inviteSecret}`);
      const projectToken = await app.admin.post('/api/admin/projects/default/api-tokens', {
        tokenName: 'logged',
        type: 'client',
        environment: 'development',
      });
      expectStatus(projectToken, 201);
      const projectSecret = (projectToken.json() as { secret: string }).secret;
      secrets.push(projectSecret.slice(projectSecret.indexOf('.') + 1));
      await app.admin.delete(`/api/admin/projects/default/api-tokens/${encodeURIComponent(projectSecret)}`);
      const token = await app.admin.post('/api/admin/api-tokens', { tokenName: 'logged', type: 'client', environment: 'development' });
      const secret = (token.json() as { secret: string }).secret;
      secrets.push(secret.slice(secret.indexOf('.') + 1));
      await app.admin.delete(`/api/admin/api-tokens/${encodeURIComponent(secret)}`);
      await app.as().get('/auth/oidc/callback?code=one-time-code-123456&state=s');
      secrets.push('one-time-code-123456');
      const logged = lines.join('');
      assert.ok(logged.includes('/invite/[redacted]/validate'), 'the requests were logged, masked');
      assert.ok(
        secrets.every((value) => typeof value === 'string' && value.length >= 16),
        JSON.stringify(secrets),
      );
      for (const value of secrets) assert.equal(logged.includes(value), false, `${value} appears in the log`);
    } finally {
      await app.close();
    }
  });
});
