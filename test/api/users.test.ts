import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { expectError, expectStatus, getOk } from '../helpers/assertions.js';
import { eventsSince, lastEventId, type StoredEvent } from '../helpers/events.js';
import { createUserSession, uniqueName, sendMalformedJson } from '../helpers/fixtures.js';
import { STRONG_PASSWORD, startTestApp, useTestApp } from '../helpers/test-app.js';

interface User {
  id: number;
  name: string | null;
  email: string | null;
  username: string | null;
  imageUrl: string | null;
  rootRole: number;
  createdAt: string | null;
  seenAt: string | null;
  loginAttempts: number;
  isAPI: boolean;
  accountType: string;
}

const USERS = '/api/admin/user-admin';
const UNKNOWN_ID = 987654321;
const ADMIN_TOKEN_IDENTITY = { createdBy: 'admin-token', createdByUserId: -42 };

const ctx = useTestApp();

// ---------------------------------------------------------------------------------------------------------------
// helpers

async function listUsers(): Promise<User[]> {
  const response = await ctx.admin.get(USERS);
  expectStatus(response, 200);
  return (response.json() as { users: User[] }).users;
}

async function getUser(id: number): Promise<User> {
  return getOk<User>(ctx.admin, `${USERS}/${id}`);
}

/** Creates a user as the admin token and returns the created user as the API shows it (without emailSent). */
async function createUser(body: Record<string, unknown>): Promise<User> {
  const response = await ctx.admin.post(USERS, body);
  expectStatus(response, 201);
  const { emailSent, ...user } = response.json() as User & { emailSent: boolean };
  assert.equal(emailSent, false);
  return user;
}

function assertNoPasswordFields(user: object): void {
  for (const key of ['password', 'passwordHash', 'password_hash']) {
    assert.ok(!(key in user), `a user must never carry "${key}": ${JSON.stringify(user)}`);
  }
}

/** No secret, password or password hash may ever reach an event. */
function assertNoSecrets(event: StoredEvent, ...secrets: string[]): void {
  const text = JSON.stringify({ data: event.data, preData: event.preData });
  for (const secret of [...secrets, 'scrypt', 'passwordHash', 'password_hash']) {
    assert.ok(!text.includes(secret), `event ${event.type} leaks "${secret}": ${text}`);
  }
}

function assertUserEvent(
  event: StoredEvent | undefined,
  expected: {
    type: string;
    createdBy: string;
    createdByUserId: number;
    data: unknown;
    preData: unknown;
  },
): asserts event is StoredEvent {
  assert.ok(event, `expected a ${expected.type} event`);
  assert.equal(event.type, expected.type);
  assert.equal(event.createdBy, expected.createdBy);
  assert.equal(event.createdByUserId, expected.createdByUserId);
  assert.equal(event.project, null);
  assert.equal(event.environment, null);
  assert.equal(event.featureName, null);
  assert.deepEqual(event.data, expected.data);
  assert.deepEqual(event.preData, expected.preData);
}

/** Asserts a 4xx with details at the given paths (every detail's path must be one of them), nothing changed. */
async function expectRejected(send: () => Promise<LightMyRequestResponse>, status: number, name: string, paths?: string[]) {
  const usersBefore = await listUsers();
  const eventsBefore = await lastEventId(ctx);
  const response = await send();
  const body = expectError(response, status, name);
  if (paths) {
    const actual = body.details.map((detail) => detail.path);
    for (const path of paths) assert.ok(actual.includes(path), `details must name ${path}: ${JSON.stringify(body.details)}`);
    for (const path of actual) assert.ok(path !== undefined && paths.includes(path), `unexpected detail path ${path}`);
  }
  assert.deepEqual(await listUsers(), usersBefore, 'the user list must be unchanged');
  assert.deepEqual(await eventsSince(ctx, eventsBefore), [], 'no event may be written');
  return body;
}

async function login(username: string, password: string) {
  return ctx.as().post('/auth/simple/login', { username, password });
}

function sessionCookieOf(response: LightMyRequestResponse): string {
  const cookie = response.cookies.find((c) => c.name === 'vexil-session');
  assert.ok(cookie, 'login must set the session cookie');
  return `vexil-session=${cookie.value}`;
}

// ---------------------------------------------------------------------------------------------------------------

describe('GET /api/admin/user-admin', () => {
  test('lists every user and the three root roles', async () => {
    const alice = await createUser({ username: uniqueName('alice'), name: 'Alice', rootRole: 'Editor' });
    const carol = await createUser({ email: `${uniqueName('carol')}@example.com`, rootRole: 'Viewer' });

    const response = await ctx.admin.get(USERS);
    expectStatus(response, 200);
    const body = response.json() as { users: User[]; rootRoles: Array<Record<string, unknown>> };

    assert.deepEqual(Object.keys(body).sort(), ['rootRoles', 'users']);
    assert.deepEqual(
      body.users.find((user) => user.id === alice.id),
      alice,
    );
    assert.deepEqual(
      body.users.find((user) => user.id === carol.id),
      carol,
    );
    for (const user of body.users) assertNoPasswordFields(user);
    const ids = body.users.map((user) => user.id);
    assert.deepEqual(
      ids,
      [...ids].sort((a, b) => a - b),
      'users are listed by id',
    );

    assert.deepEqual(
      body.rootRoles.map(({ id, name, type }) => ({ id, name, type })),
      [
        { id: 1, name: 'Admin', type: 'root' },
        { id: 2, name: 'Editor', type: 'root' },
        { id: 3, name: 'Viewer', type: 'root' },
      ],
    );
    for (const role of body.rootRoles) assert.equal(typeof role.description, 'string');
  });

  test('without credentials is 401 AuthenticationRequired, with an unknown token 401 UnauthorizedError', async () => {
    expectError(await ctx.as().get(USERS), 401, 'AuthenticationRequired');
    expectError(await ctx.as('*:*.not-a-real-token').get(USERS), 401, 'UnauthorizedError');
  });
});

describe('POST /api/admin/user-admin', () => {
  test('creates a user with rootRole by name, records user-created without secrets', async () => {
    const since = await lastEventId(ctx);
    const username = uniqueName('dave');
    const email = `${username}@example.com`;
    const response = await ctx.admin.post(USERS, {
      username,
      email,
      name: 'Dave Example',
      password: STRONG_PASSWORD,
      rootRole: 'Editor',
      sendEmail: true,
    });
    expectStatus(response, 201);
    const body = response.json() as User & { emailSent: boolean };
    assertNoPasswordFields(body);
    assert.ok(Number.isInteger(body.id) && body.id > 0);
    assert.equal(body.emailSent, false);
    assert.equal(body.username, username);
    assert.equal(body.email, email);
    assert.equal(body.name, 'Dave Example');
    assert.equal(body.rootRole, 2);
    assert.equal(body.imageUrl, null);
    assert.equal(body.seenAt, null);
    assert.equal(body.loginAttempts, 0);
    assert.equal(body.isAPI, false);
    assert.equal(body.accountType, 'User');
    assert.equal(body.createdAt, ctx.clock.now().toISOString());

    const { emailSent: _emailSent, ...user } = body;
    assert.deepEqual(await getUser(body.id), user);

    const events = await eventsSince(ctx, since);
    assert.equal(events.length, 1);
    assertUserEvent(events[0], { type: 'user-created', ...ADMIN_TOKEN_IDENTITY, data: user, preData: null });
    assertNoSecrets(events[0], STRONG_PASSWORD);

    // The password given at creation works for logging in.
    expectStatus(await login(username, STRONG_PASSWORD), 200);
  });

  test('accepts rootRole by id (1, 2, 3) and by name in any case', async () => {
    const cases: Array<[string | number, number]> = [
      [1, 1],
      [2, 2],
      [3, 3],
      ['admin', 1],
      ['VIEWER', 3],
    ];
    for (const [rootRole, expected] of cases) {
      const user = await createUser({ username: uniqueName('role'), rootRole });
      assert.equal(user.rootRole, expected, `rootRole ${JSON.stringify(rootRole)}`);
      assert.equal((await getUser(user.id)).rootRole, expected);
    }
  });

  test('creates a user with only an email', async () => {
    const email = `${uniqueName('erin')}@example.com`;
    const user = await createUser({ email, rootRole: 'Viewer' });
    assert.equal(user.email, email);
    assert.equal(user.username, null);
    assert.ok((await listUsers()).some((listed) => listed.id === user.id && listed.email === email));
  });

  test('an unknown body property is a 400 naming it', async () => {
    await expectRejected(
      () => ctx.admin.post(USERS, { username: uniqueName('x'), rootRole: 'Viewer', isAdmin: true }),
      400,
      'BadDataError',
      ['/body/isAdmin'],
    );
  });

  test('a wrong type (rootRole: true) is a 400 at /body/rootRole', async () => {
    await expectRejected(() => ctx.admin.post(USERS, { username: uniqueName('x'), rootRole: true }), 400, 'BadDataError', [
      '/body/rootRole',
    ]);
  });

  test('a missing rootRole is a 400 at /body/rootRole', async () => {
    await expectRejected(() => ctx.admin.post(USERS, { username: uniqueName('x') }), 400, 'BadDataError', ['/body/rootRole']);
  });

  test('neither username nor email is a 400', async () => {
    await expectRejected(() => ctx.admin.post(USERS, { name: 'Nobody', rootRole: 'Viewer' }), 400, 'BadDataError', ['/body/username']);
  });

  test('an invalid email is a 400 at /body/email', async () => {
    await expectRejected(() => ctx.admin.post(USERS, { email: 'not-an-email', rootRole: 'Viewer' }), 400, 'BadDataError', ['/body/email']);
  });

  test('an unknown role name (Superuser) is a 400 at /body/rootRole', async () => {
    const body = await expectRejected(
      () => ctx.admin.post(USERS, { username: uniqueName('x'), rootRole: 'Superuser' }),
      400,
      'BadDataError',
      ['/body/rootRole'],
    );
    assert.match(body.details[0]!.message, /Superuser/);
  });

  test('an unknown role id (7) is a 400 at /body/rootRole', async () => {
    await expectRejected(() => ctx.admin.post(USERS, { username: uniqueName('x'), rootRole: 7 }), 400, 'BadDataError', ['/body/rootRole']);
  });

  test('a duplicate username is a 409 NameExistsError, case-insensitively (Bob vs bob)', async () => {
    const lower = uniqueName('bob');
    const upper = `B${lower.slice(1)}`;
    await createUser({ username: upper, rootRole: 'Viewer' });
    await expectRejected(() => ctx.admin.post(USERS, { username: lower, rootRole: 'Viewer' }), 409, 'NameExistsError');
    await expectRejected(() => ctx.admin.post(USERS, { username: upper, rootRole: 'Editor' }), 409, 'NameExistsError');
  });

  test('a duplicate email is a 409 NameExistsError, case-insensitively', async () => {
    const email = `${uniqueName('frank')}@example.com`;
    await createUser({ email, rootRole: 'Viewer' });
    await expectRejected(() => ctx.admin.post(USERS, { username: uniqueName('other'), email, rootRole: 'Viewer' }), 409, 'NameExistsError');
    await expectRejected(() => ctx.admin.post(USERS, { email: email.toUpperCase(), rootRole: 'Viewer' }), 409, 'NameExistsError');
  });

  test('a weak password is a 400 listing each failed rule', async () => {
    const body = await expectRejected(
      () => ctx.admin.post(USERS, { username: uniqueName('weak'), password: 'short', rootRole: 'Viewer' }),
      400,
      'BadDataError',
      ['/body/password'],
    );
    assert.deepEqual(body.details.map((detail) => detail.message).sort(), [
      'The password must be at least 10 characters long',
      'The password must contain at least one number',
      'The password must contain at least one special character',
      'The password must contain at least one uppercase letter',
    ]);
    for (const detail of body.details) assert.equal(detail.path, '/body/password');
  });

  test('a malformed JSON body is a 400 at /body', async () => {
    await expectRejected(() => sendMalformedJson(ctx.admin, 'POST', USERS, '{"username": '), 400, 'BadDataError', ['/body']);
  });
});

describe('GET /api/admin/user-admin/:id', () => {
  test('returns the user', async () => {
    const created = await createUser({
      username: uniqueName('gina'),
      email: `${uniqueName('gina')}@example.com`,
      name: 'Gina',
      rootRole: 'Viewer',
    });
    const response = await ctx.admin.get(`${USERS}/${created.id}`);
    expectStatus(response, 200);
    const user = response.json() as User;
    assertNoPasswordFields(user);
    assert.deepEqual(user, created);
  });

  test('a non-numeric id is a 400 at /params/id', async () => {
    await expectRejected(() => ctx.admin.get(`${USERS}/abc`), 400, 'BadDataError', ['/params/id']);
  });

  test('an unknown id is a 404', async () => {
    await expectRejected(() => ctx.admin.get(`${USERS}/${UNKNOWN_ID}`), 404, 'NotFoundError');
  });
});

describe('PUT /api/admin/user-admin/:id', () => {
  test('updates name, email and root role and records user-updated with before and after', async () => {
    const original = await createUser({
      username: uniqueName('hank'),
      email: `${uniqueName('hank')}@example.com`,
      name: 'Hank',
      rootRole: 'Viewer',
      password: STRONG_PASSWORD,
    });
    const since = await lastEventId(ctx);
    const email = `${uniqueName('henry')}@example.com`;
    const response = await ctx.admin.put(`${USERS}/${original.id}`, { name: 'Henry', email, rootRole: 'Editor' });
    expectStatus(response, 200);
    const updated = response.json() as User;
    assertNoPasswordFields(updated);
    assert.deepEqual(updated, { ...original, name: 'Henry', email, rootRole: 2 });
    assert.deepEqual(await getUser(original.id), updated);

    const events = await eventsSince(ctx, since);
    assert.equal(events.length, 1);
    assertUserEvent(events[0], { type: 'user-updated', ...ADMIN_TOKEN_IDENTITY, data: updated, preData: original });
    assertNoSecrets(events[0], STRONG_PASSWORD);
  });

  test('updating only the root role by id keeps the other fields', async () => {
    const original = await createUser({ username: uniqueName('ivy'), name: 'Ivy', rootRole: 'Viewer' });
    const since = await lastEventId(ctx);
    const response = await ctx.admin.put(`${USERS}/${original.id}`, { rootRole: 1 });
    expectStatus(response, 200);
    assert.deepEqual(response.json(), { ...original, rootRole: 1 });
    const events = await eventsSince(ctx, since);
    assert.equal(events.length, 1);
    assertUserEvent(events[0], {
      type: 'user-updated',
      ...ADMIN_TOKEN_IDENTITY,
      data: { ...original, rootRole: 1 },
      preData: original,
    });
  });

  test('updating to identical values returns 200 and writes no event', async () => {
    const original = await createUser({
      username: uniqueName('jack'),
      email: `${uniqueName('jack')}@example.com`,
      name: 'Jack',
      rootRole: 'Editor',
    });
    const since = await lastEventId(ctx);
    for (const body of [{ name: original.name, email: original.email, rootRole: 'Editor' }, { rootRole: 2 }, {}]) {
      const response = await ctx.admin.put(`${USERS}/${original.id}`, body);
      expectStatus(response, 200);
      assert.deepEqual(response.json(), original);
    }
    assert.deepEqual(await getUser(original.id), original);
    assert.deepEqual(await eventsSince(ctx, since), []);
  });

  test('an unknown role is a 400 and changes nothing', async () => {
    const original = await createUser({ username: uniqueName('kate'), rootRole: 'Viewer' });
    await expectRejected(() => ctx.admin.put(`${USERS}/${original.id}`, { rootRole: 'Superuser' }), 400, 'BadDataError', [
      '/body/rootRole',
    ]);
    await expectRejected(() => ctx.admin.put(`${USERS}/${original.id}`, { rootRole: 7 }), 400, 'BadDataError', ['/body/rootRole']);
    assert.deepEqual(await getUser(original.id), original);
  });

  test('bad bodies are 400: unknown property, invalid email, wrong type', async () => {
    const original = await createUser({ username: uniqueName('liam'), rootRole: 'Viewer' });
    await expectRejected(() => ctx.admin.put(`${USERS}/${original.id}`, { username: 'renamed' }), 400, 'BadDataError', ['/body/username']);
    await expectRejected(() => ctx.admin.put(`${USERS}/${original.id}`, { email: 'nope' }), 400, 'BadDataError', ['/body/email']);
    await expectRejected(() => ctx.admin.put(`${USERS}/${original.id}`, { rootRole: true }), 400, 'BadDataError', ['/body/rootRole']);
    assert.deepEqual(await getUser(original.id), original);
  });

  test("taking another user's email is a 409 NameExistsError", async () => {
    const email = `${uniqueName('mia')}@example.com`;
    await createUser({ email, rootRole: 'Viewer' });
    const other = await createUser({ username: uniqueName('noah'), rootRole: 'Viewer' });
    await expectRejected(() => ctx.admin.put(`${USERS}/${other.id}`, { email }), 409, 'NameExistsError');
    assert.deepEqual(await getUser(other.id), other);
  });

  test('a non-numeric id is a 400 at /params/id', async () => {
    await expectRejected(() => ctx.admin.put(`${USERS}/abc`, { name: 'x' }), 400, 'BadDataError', ['/params/id']);
  });

  test('an unknown id is a 404', async () => {
    await expectRejected(() => ctx.admin.put(`${USERS}/${UNKNOWN_ID}`, { name: 'x' }), 404, 'NotFoundError');
  });
});

describe('DELETE /api/admin/user-admin/:id', () => {
  test('deletes the user and records user-deleted with preData', async () => {
    const user = await createUser({
      username: uniqueName('olga'),
      email: `${uniqueName('olga')}@example.com`,
      rootRole: 'Editor',
      password: STRONG_PASSWORD,
    });
    const since = await lastEventId(ctx);
    expectStatus(await ctx.admin.delete(`${USERS}/${user.id}`), 200);

    expectError(await ctx.admin.get(`${USERS}/${user.id}`), 404, 'NotFoundError');
    assert.ok(!(await listUsers()).some((listed) => listed.id === user.id));

    const events = await eventsSince(ctx, since);
    assert.equal(events.length, 1);
    assertUserEvent(events[0], { type: 'user-deleted', ...ADMIN_TOKEN_IDENTITY, data: null, preData: user });
    assertNoSecrets(events[0], STRONG_PASSWORD);

    // The deleted user can no longer log in.
    expectError(await login(user.username!, STRONG_PASSWORD), 401, 'PasswordMismatch');
  });

  test('an Admin user cannot delete themselves (400), but can delete another user', async () => {
    const me = await createUserSession(ctx, 'Admin');
    const self = await getUser(me.id);
    await expectRejected(() => ctx.withCookie(me.cookie).delete(`${USERS}/${me.id}`), 400, 'BadDataError');
    assert.deepEqual(await getUser(me.id), self);
    expectStatus(await ctx.withCookie(me.cookie).get('/api/admin/user'), 200);

    const other = await createUser({ username: uniqueName('pete'), rootRole: 'Viewer' });
    const since = await lastEventId(ctx);
    expectStatus(await ctx.withCookie(me.cookie).delete(`${USERS}/${other.id}`), 200);
    const events = await eventsSince(ctx, since);
    assert.equal(events.length, 1);
    assertUserEvent(events[0], {
      type: 'user-deleted',
      createdBy: me.username,
      createdByUserId: me.id,
      data: null,
      preData: other,
    });
  });

  test('a non-numeric id is a 400 at /params/id', async () => {
    await expectRejected(() => ctx.admin.delete(`${USERS}/abc`), 400, 'BadDataError', ['/params/id']);
  });

  test('an unknown id is a 404', async () => {
    await expectRejected(() => ctx.admin.delete(`${USERS}/${UNKNOWN_ID}`), 404, 'NotFoundError');
  });
});

describe('POST /api/admin/user-admin/:id/change-password', () => {
  const NEW_PASSWORD = 'Another-Strong-Pass-42';

  test('changes the password, records user-password-changed without secrets and ends the sessions', async () => {
    const session = await createUserSession(ctx, 'Editor');
    const user = await getUser(session.id);
    expectStatus(await ctx.withCookie(session.cookie).get('/api/admin/user'), 200);

    const since = await lastEventId(ctx);
    const response = await ctx.admin.post(`${USERS}/${session.id}/change-password`, { password: NEW_PASSWORD });
    expectStatus(response, 200);
    assert.ok(!response.body.includes(NEW_PASSWORD));

    const events = await eventsSince(ctx, since);
    assert.equal(events.length, 1);
    assertUserEvent(events[0], {
      type: 'user-password-changed',
      ...ADMIN_TOKEN_IDENTITY,
      data: { id: user.id, username: user.username, email: user.email },
      preData: null,
    });
    assertNoSecrets(events[0], NEW_PASSWORD, STRONG_PASSWORD);

    // The session opened with the old password is over.
    expectError(await ctx.withCookie(session.cookie).get('/api/admin/user'), 401, 'AuthenticationRequired');

    expectError(await login(session.username, STRONG_PASSWORD), 401, 'PasswordMismatch');
    const fresh = await login(session.username, NEW_PASSWORD);
    expectStatus(fresh, 200);
    const me = await ctx.withCookie(sessionCookieOf(fresh)).get('/api/admin/user');
    expectStatus(me, 200);
    assert.equal((me.json() as { user: User }).user.id, session.id);
  });

  test('a weak password is a 400 listing each failed rule; the old password still works', async () => {
    const session = await createUserSession(ctx, 'Viewer');
    const body = await expectRejected(
      () => ctx.admin.post(`${USERS}/${session.id}/change-password`, { password: 'alllowercase' }),
      400,
      'BadDataError',
      ['/body/password'],
    );
    assert.deepEqual(body.details.map((detail) => detail.message).sort(), [
      'The password may not repeat a character three or more times in a row',
      'The password must contain at least one number',
      'The password must contain at least one special character',
      'The password must contain at least one uppercase letter',
    ]);
    expectStatus(await ctx.withCookie(session.cookie).get('/api/admin/user'), 200);
    expectStatus(await login(session.username, STRONG_PASSWORD), 200);
  });

  test('a missing or extra property is a 400', async () => {
    const user = await createUser({ username: uniqueName('quinn'), rootRole: 'Viewer' });
    await expectRejected(() => ctx.admin.post(`${USERS}/${user.id}/change-password`, {}), 400, 'BadDataError', ['/body/password']);
    await expectRejected(
      () => ctx.admin.post(`${USERS}/${user.id}/change-password`, { password: NEW_PASSWORD, confirm: NEW_PASSWORD }),
      400,
      'BadDataError',
      ['/body/confirm'],
    );
  });

  test('a non-numeric id is a 400 at /params/id', async () => {
    await expectRejected(() => ctx.admin.post(`${USERS}/abc/change-password`, { password: NEW_PASSWORD }), 400, 'BadDataError', [
      '/params/id',
    ]);
  });

  test('an unknown id is a 404', async () => {
    await expectRejected(() => ctx.admin.post(`${USERS}/${UNKNOWN_ID}/change-password`, { password: NEW_PASSWORD }), 404, 'NotFoundError');
  });
});

describe('permissions on /api/admin/user-admin', () => {
  for (const role of ['Editor', 'Viewer'] as const) {
    test(`${role === 'Editor' ? 'an' : 'a'} ${role} gets 403 PermissionError naming ADMIN and changes nothing`, async () => {
      const session = await createUserSession(ctx, role);
      const client = ctx.withCookie(session.cookie);
      const target = await createUser({ username: uniqueName('target'), rootRole: 'Viewer' });

      const requests: Array<[string, () => Promise<LightMyRequestResponse>]> = [
        ['list', () => client.get(USERS)],
        ['create', () => client.post(USERS, { username: uniqueName('sneaky'), rootRole: 'Admin' })],
        ['get', () => client.get(`${USERS}/${target.id}`)],
        ['update', () => client.put(`${USERS}/${target.id}`, { rootRole: 'Admin' })],
        ['delete', () => client.delete(`${USERS}/${target.id}`)],
        ['change-password', () => client.post(`${USERS}/${target.id}/change-password`, { password: STRONG_PASSWORD })],
      ];
      for (const [what, send] of requests) {
        const body = await expectRejected(send, 403, 'PermissionError');
        assert.deepEqual(body.permissions, ['ADMIN'], what);
      }
      assert.deepEqual(await getUser(target.id), target);
    });
  }
});

describe('GET /api/admin/user', () => {
  test('as the admin token: the built-in admin-token identity with every permission', async () => {
    const response = await ctx.admin.get('/api/admin/user');
    expectStatus(response, 200);
    const body = response.json() as { user: User; permissions: Array<{ permission: string }> };
    assert.equal(body.user.username, 'admin-token');
    assert.equal(body.user.id, -42);
    assert.equal(body.user.rootRole, 1);
    assert.equal(body.user.isAPI, true);
    const permissions = body.permissions.map((p) => p.permission);
    assert.ok(permissions.includes('ADMIN'), JSON.stringify(permissions));
    assert.ok(permissions.includes('READ'), JSON.stringify(permissions));
  });

  test('as a Viewer session: their own user and exactly the READ permission', async () => {
    const session = await createUserSession(ctx, 'Viewer');
    const response = await ctx.withCookie(session.cookie).get('/api/admin/user');
    expectStatus(response, 200);
    const body = response.json() as { user: User; permissions: Array<{ permission: string }> };
    assertNoPasswordFields(body.user);
    assert.deepEqual(body.user, await getUser(session.id));
    assert.equal(body.user.username, session.username);
    assert.equal(body.user.rootRole, 3);
    assert.deepEqual(body.permissions, [{ permission: 'READ' }]);
  });

  test('without credentials is 401 AuthenticationRequired', async () => {
    expectError(await ctx.as().get('/api/admin/user'), 401, 'AuthenticationRequired');
  });
});

describe('searching people', () => {
  test('finds people by part of their name, username or email, case-insensitively, and not service accounts', async () => {
    const marker = uniqueName('Srch').toLowerCase();
    const byName = await ctx.admin.post('/api/admin/user-admin', {
      name: `Ada ${marker.toUpperCase()}`,
      email: `ada@${uniqueName('x')}.example`,
      rootRole: 'Viewer',
    });
    const byEmail = await ctx.admin.post('/api/admin/user-admin', { email: `${marker}@corp.example`, rootRole: 'Viewer' });
    const byUsername = await ctx.admin.post('/api/admin/user-admin', { username: `${marker}-bob`, rootRole: 'Viewer' });
    expectStatus(await ctx.admin.post('/api/admin/service-account', { name: marker, username: `${marker}-svc`, rootRole: 3 }), 201);
    const found = await getOk<Array<{ id: number }>>(ctx.admin, `/api/admin/user-admin/search?q=${marker}`);
    assert.deepEqual(
      found.map((user) => user.id),
      [byName, byEmail, byUsername].map((response) => (response.json() as { id: number }).id),
    );
    assert.deepEqual(await getOk(ctx.admin, `/api/admin/user-admin/search?q=${encodeURIComponent('%_')}${marker}`), []);
  });

  test('is for admins, and a term over 100 characters is 400', async () => {
    const viewer = await createUserSession(ctx, 'Viewer');
    expectError(await ctx.withCookie(viewer.cookie).get('/api/admin/user-admin/search?q=a'), 403, 'PermissionError');
    expectError(await ctx.admin.get(`/api/admin/user-admin/search?q=${'a'.repeat(101)}`), 400, 'BadDataError');
  });
});

describe('the last active Admin', () => {
  test('can be neither deleted nor demoted, through any path; once another Admin exists, either can', async () => {
    // A server of its own, where the Admins are only the people this test makes.
    const own = await startTestApp();
    try {
      const made = await own.admin.post(USERS, { username: uniqueName('only-admin'), rootRole: 'Admin', password: STRONG_PASSWORD });
      expectStatus(made, 201);
      const onlyId = (made.json() as { id: number }).id;
      const since = await lastEventId(own);
      const deleted = expectError(await own.admin.delete(`${USERS}/${onlyId}`), 409, 'ConflictError');
      assert.equal(deleted.message, `User ${onlyId} is the last active Admin and cannot be deleted; make someone else an Admin first`);
      const demoted = expectError(await own.admin.put(`${USERS}/${onlyId}`, { rootRole: 'Editor' }), 409, 'ConflictError');
      assert.match(demoted.message, /last active Admin and cannot be given another root role/);
      assert.deepEqual(await eventsSince(own, since), []);
      assert.equal((await getOk<{ rootRole: number }>(own.admin, `${USERS}/${onlyId}`)).rootRole, 1);

      // An Admin through a group counts as one.
      const second = await own.admin.post(USERS, { username: uniqueName('second'), rootRole: 'Viewer' });
      expectStatus(second, 201);
      const secondId = (second.json() as { id: number }).id;
      expectStatus(
        await own.admin.post('/api/admin/groups', { name: uniqueName('admins'), rootRole: 1, users: [{ user: { id: secondId } }] }),
        201,
      );
      expectStatus(await own.admin.put(`${USERS}/${onlyId}`, { rootRole: 'Editor' }), 200);
      expectStatus(await own.admin.delete(`${USERS}/${onlyId}`), 200);
    } finally {
      await own.close();
    }
  });
});
