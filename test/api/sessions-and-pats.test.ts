import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { expectError, expectStatus, getOk } from '../helpers/assertions.js';
import { eventsSince, lastEventId, type StoredEvent } from '../helpers/events.js';
import { createUserSession, uniqueName } from '../helpers/fixtures.js';
import { STRONG_PASSWORD, startTestApp, type TestApp } from '../helpers/test-app.js';

interface User {
  id: number;
  username: string | null;
  email: string | null;
  rootRole: number;
  seenAt: string | null;
  loginAttempts: number;
}

interface Pat {
  id: number;
  description: string;
  expiresAt: string;
  createdAt: string;
  seenAt: string | null;
  userId: number;
  secret?: string;
}

const LOGIN = '/auth/simple/login';
const ME = '/api/admin/user';
const TOKENS = '/api/admin/user/tokens';
const HOUR = 3_600_000;

let ctx: TestApp;

before(async () => {
  ctx = await startTestApp();
});

after(async () => {
  await ctx.close();
});

// ---------------------------------------------------------------------------------------------------------------
// helpers

async function createUser(body: Record<string, unknown>): Promise<User> {
  const response = await ctx.admin.post('/api/admin/user-admin', body);
  expectStatus(response, 201);
  return response.json() as User;
}

async function getUser(id: number): Promise<User> {
  return getOk<User>(ctx.admin, `/api/admin/user-admin/${id}`);
}

function login(username: string, password: string) {
  return ctx.as().post(LOGIN, { username, password });
}

function sessionCookieOf(response: LightMyRequestResponse): string {
  const cookie = response.cookies.find((c) => c.name === 'vexil-session');
  assert.ok(cookie, 'login must set the session cookie');
  return `vexil-session=${cookie.value}`;
}

async function me(client: { get(url: string): Promise<LightMyRequestResponse> }): Promise<User> {
  const response = await client.get(ME);
  expectStatus(response, 200);
  return (response.json() as { user: User }).user;
}

function inHours(hours: number): string {
  return new Date(ctx.clock.now().getTime() + hours * HOUR).toISOString();
}

async function createPat(cookie: string, description: string, expiresAt = inHours(24 * 30)): Promise<Pat & { secret: string }> {
  const response = await ctx.withCookie(cookie).post(TOKENS, { description, expiresAt });
  expectStatus(response, 201);
  return response.json() as Pat & { secret: string };
}

async function listPats(client: { get(url: string): Promise<LightMyRequestResponse> }): Promise<Pat[]> {
  const response = await client.get(TOKENS);
  expectStatus(response, 200);
  return (response.json() as { pats: Pat[] }).pats;
}

function withoutSecret(pat: Pat): Pat {
  const { secret: _secret, ...view } = pat;
  return view;
}

function assertNoSecrets(event: StoredEvent, ...secrets: string[]): void {
  const text = JSON.stringify({ data: event.data, preData: event.preData });
  for (const secret of [...secrets, 'scrypt', 'secret', 'passwordHash', 'password_hash']) {
    assert.ok(!text.includes(secret), `event ${event.type} leaks "${secret}": ${text}`);
  }
}

function assertUserLevelEvent(event: StoredEvent | undefined, type: string, actor: { id: number; username: string }) {
  assert.ok(event, `expected a ${type} event`);
  assert.equal(event.type, type);
  assert.equal(event.createdBy, actor.username);
  assert.equal(event.createdByUserId, actor.id);
  assert.equal(event.project, null);
  assert.equal(event.environment, null);
  assert.equal(event.featureName, null);
  return event;
}

// ---------------------------------------------------------------------------------------------------------------

describe('POST /auth/simple/login', () => {
  test('sets an HttpOnly, SameSite=Lax vexil-session cookie and returns the user; the cookie authenticates', async () => {
    const username = uniqueName('login');
    const created = await createUser({ username, name: 'Login User', password: STRONG_PASSWORD, rootRole: 'Editor' });

    const response = await login(username, STRONG_PASSWORD);
    expectStatus(response, 200);
    const user = response.json() as User;
    assert.equal(user.id, created.id);
    assert.equal(user.username, username);
    assert.equal(user.rootRole, 2);
    assert.equal(user.loginAttempts, 0);
    assert.equal(user.seenAt, ctx.clock.now().toISOString());
    for (const key of ['password', 'passwordHash', 'password_hash']) assert.ok(!(key in user), key);

    const cookie = response.cookies.find((c) => c.name === 'vexil-session');
    assert.ok(cookie, 'the session cookie is set');
    assert.ok(cookie.value.length >= 32, 'the session id is long and random');
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.sameSite, 'Lax');
    assert.equal(cookie.path, '/');
    const header = String(response.headers['set-cookie']);
    assert.match(header, /HttpOnly/);
    assert.match(header, /SameSite=Lax/);

    // Only a hash of the session id is stored.
    const sessions = await ctx.db.selectFrom('user_sessions').selectAll().where('user_id', '=', created.id).execute();
    assert.equal(sessions.length, 1);
    assert.notEqual(sessions[0]!.id_hash, cookie.value);

    const current = await me(ctx.withCookie(`vexil-session=${cookie.value}`));
    assert.equal(current.id, created.id);
    assert.equal(current.username, username);
  });

  test('logs in by email, case-insensitively', async () => {
    const email = `${uniqueName('mail')}@example.com`;
    const created = await createUser({ email, password: STRONG_PASSWORD, rootRole: 'Viewer' });
    for (const given of [email, email.toUpperCase()]) {
      const response = await login(given, STRONG_PASSWORD);
      expectStatus(response, 200);
      assert.equal((response.json() as User).id, created.id);
      assert.equal((await me(ctx.withCookie(sessionCookieOf(response)))).id, created.id);
    }
  });

  test('a wrong password and an unknown user both give 401 PasswordMismatch with the same message, no cookie', async () => {
    const username = uniqueName('mismatch');
    await createUser({ username, password: STRONG_PASSWORD, rootRole: 'Viewer' });

    const wrongPassword = await login(username, 'Not-The-Password-1');
    const wrongBody = expectError(wrongPassword, 401, 'PasswordMismatch');
    const unknownUser = await login(uniqueName('nobody'), STRONG_PASSWORD);
    const unknownBody = expectError(unknownUser, 401, 'PasswordMismatch');

    assert.equal(wrongBody.message, unknownBody.message);
    assert.deepEqual(
      wrongBody.details.map((d) => d.message),
      unknownBody.details.map((d) => d.message),
    );
    for (const response of [wrongPassword, unknownUser]) {
      assert.ok(!response.cookies.some((c) => c.name === 'vexil-session' && c.value), 'no session on failure');
    }
  });

  test('the eleventh wrong password in a minute is a 429 with Retry-After, for that address only, until the window passes', async () => {
    const username = uniqueName('throttled');
    await createUser({ username, password: STRONG_PASSWORD, rootRole: 'Viewer' });
    const attacker = (password: string) =>
      ctx.as().inject({ method: 'POST', url: LOGIN, payload: { username, password }, remoteAddress: '203.0.113.7' });
    for (let i = 1; i <= 10; i++) expectError(await attacker(`Wrong-Password-${i}`), 401, 'PasswordMismatch');
    for (const password of ['Wrong-Password-11', STRONG_PASSWORD]) {
      const refused = await attacker(password);
      const error = expectError(refused, 429, 'TooManyRequestsError');
      assert.match(error.message, /Too many failed logins/);
      const retryAfter = Number(refused.headers['retry-after']);
      assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After: ${refused.headers['retry-after']}`);
      assert.equal(refused.cookies.length, 0);
    }
    // The owner, from their own address, is not locked out by the attacker.
    const owner = await ctx
      .as()
      .inject({ method: 'POST', url: LOGIN, payload: { username, password: STRONG_PASSWORD }, remoteAddress: '198.51.100.20' });
    expectStatus(owner, 200);
    // Once the window has passed, the attacker's address may try again.
    ctx.clock.advance(61_000);
    expectStatus(await attacker(STRONG_PASSWORD), 200);
  });

  test('one address spraying passwords over many accounts is throttled after 30 failures', async () => {
    const sprayer = (username: string) =>
      ctx.as().inject({ method: 'POST', url: LOGIN, payload: { username, password: 'Spring-2026-Spray' }, remoteAddress: '203.0.113.99' });
    for (let i = 0; i < 30; i++) expectError(await sprayer(uniqueName('victim')), 401, 'PasswordMismatch');
    expectError(await sprayer(uniqueName('victim')), 429, 'TooManyRequestsError');
  });

  test('a failed attempt increments loginAttempts; a success resets it to 0', async () => {
    const username = uniqueName('attempts');
    const created = await createUser({ username, password: STRONG_PASSWORD, rootRole: 'Viewer' });
    assert.equal((await getUser(created.id)).loginAttempts, 0);

    expectError(await login(username, 'Wrong-Password-1'), 401, 'PasswordMismatch');
    assert.equal((await getUser(created.id)).loginAttempts, 1);
    expectError(await login(username.toUpperCase(), 'Wrong-Password-2'), 401, 'PasswordMismatch');
    assert.equal((await getUser(created.id)).loginAttempts, 2);

    const success = await login(username, STRONG_PASSWORD);
    expectStatus(success, 200);
    assert.equal((success.json() as User).loginAttempts, 0);
    assert.equal((await getUser(created.id)).loginAttempts, 0);
  });

  test('a missing password is a 400 at /body/password and opens no session', async () => {
    const username = uniqueName('nopass');
    const created = await createUser({ username, password: STRONG_PASSWORD, rootRole: 'Viewer' });
    const body = expectError(await ctx.as().post(LOGIN, { username }), 400, 'BadDataError');
    assert.deepEqual(
      body.details.map((d) => d.path),
      ['/body/password'],
    );
    const extra = expectError(await ctx.as().post(LOGIN, { username, password: STRONG_PASSWORD, remember: true }), 400, 'BadDataError');
    assert.deepEqual(
      extra.details.map((d) => d.path),
      ['/body/remember'],
    );
    const sessions = await ctx.db.selectFrom('user_sessions').selectAll().where('user_id', '=', created.id).execute();
    assert.deepEqual(sessions, []);
    assert.equal((await getUser(created.id)).loginAttempts, 0);
  });
});

describe('POST /logout', () => {
  test('ends the session: the cookie then gets 401 AuthenticationRequired; other sessions live on', async () => {
    const session = await createUserSession(ctx, 'Viewer');
    const second = sessionCookieOf(await login(session.username, STRONG_PASSWORD));
    assert.equal((await me(ctx.withCookie(session.cookie))).id, session.id);

    const response = await ctx.withCookie(session.cookie).post('/logout');
    expectStatus(response, 204);
    const cleared = response.cookies.find((c) => c.name === 'vexil-session');
    assert.ok(cleared, 'logout clears the cookie');
    assert.equal(cleared.value, '');

    expectError(await ctx.withCookie(session.cookie).get(ME), 401, 'AuthenticationRequired');
    assert.equal((await me(ctx.withCookie(second))).id, session.id);
  });

  test('an unknown session cookie and no credentials are both 401 AuthenticationRequired, as in Unleash', async () => {
    expectError(await ctx.withCookie('vexil-session=not-a-session').get(ME), 401, 'AuthenticationRequired');
    expectError(await ctx.as().get(ME), 401, 'AuthenticationRequired');
  });
});

describe('personal access tokens', () => {
  test('a user creates one: 201 with a user: secret shown once, hashed in storage, pat-created without secret', async () => {
    const session = await createUserSession(ctx, 'Editor');
    const since = await lastEventId(ctx);
    const description = uniqueName('ci token');
    const expiresAt = inHours(24 * 30);

    const response = await ctx.withCookie(session.cookie).post(TOKENS, { description, expiresAt });
    expectStatus(response, 201);
    const pat = response.json() as Pat & { secret: string };
    assert.ok(pat.secret.startsWith('user:'), pat.secret);
    assert.ok(pat.secret.length > 'user:'.length + 32);
    assert.ok(Number.isInteger(pat.id));
    assert.equal(pat.description, description);
    assert.equal(pat.expiresAt, expiresAt);
    assert.equal(pat.createdAt, ctx.clock.now().toISOString());
    assert.equal(pat.seenAt, null);
    assert.equal(pat.userId, session.id);

    // The list shows the token without its secret.
    const pats = await listPats(ctx.withCookie(session.cookie));
    assert.deepEqual(pats, [withoutSecret(pat)]);
    for (const listed of pats) assert.ok(!('secret' in listed), 'the list never carries the secret');
    assert.ok(!(await ctx.withCookie(session.cookie).get(TOKENS)).body.includes(pat.secret));

    // Only a hash is stored.
    const rows = await ctx.db.selectFrom('personal_access_tokens').selectAll().where('id', '=', pat.id).execute();
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.user_id, session.id);
    assert.notEqual(rows[0]!.secret_hash, pat.secret);
    assert.ok(!rows[0]!.secret_hash.includes(pat.secret.slice('user:'.length)));

    const events = await eventsSince(ctx, since);
    assert.equal(events.length, 1);
    const event = assertUserLevelEvent(events[0], 'pat-created', session);
    const data = event.data as Record<string, unknown>;
    assert.equal(data.id, pat.id);
    assert.equal(data.description, description);
    assert.equal(data.expiresAt, expiresAt);
    assert.equal(data.userId, session.id);
    assert.ok(!('secret' in data), 'pat-created carries no secret');
    assert.deepEqual(event.data, withoutSecret(pat));
    assert.equal(event.preData, null);
    assertNoSecrets(event, pat.secret, pat.secret.slice('user:'.length), rows[0]!.secret_hash, STRONG_PASSWORD);
  });

  test('the PAT authenticates as its user, also with a Bearer prefix, and its events name that user', async () => {
    const session = await createUserSession(ctx, 'Editor');
    const pat = await createPat(session.cookie, uniqueName('automation'));

    const asUser = await me(ctx.as(pat.secret));
    assert.equal(asUser.id, session.id);
    assert.equal(asUser.username, session.username);
    const meBody = (await ctx.as(pat.secret).get(ME)).json() as { permissions: Array<{ permission: string }> };
    assert.ok(!meBody.permissions.some((p) => p.permission === 'ADMIN'), 'an Editor PAT has no ADMIN');

    assert.equal((await me(ctx.as(`Bearer ${pat.secret}`))).id, session.id);
    assert.equal((await me(ctx.as(`bearer ${pat.secret}`))).id, session.id);

    // A PAT acts with its user's role: an Editor cannot administer users.
    const forbidden = expectError(await ctx.as(pat.secret).get('/api/admin/user-admin'), 403, 'PermissionError');
    assert.deepEqual(forbidden.permissions, ['ADMIN']);

    const since = await lastEventId(ctx);
    const projectId = uniqueName('pat-project');
    const created = await ctx.as(`Bearer ${pat.secret}`).post('/api/admin/projects', { id: projectId, name: 'PAT project' });
    expectStatus(created, 201);
    const events = await eventsSince(ctx, since);
    // The Editor owns the project it made.
    assert.deepEqual(
      events.map((event) => event.type),
      ['project-created', 'project-access-added'],
    );
    assert.equal(events[0]!.createdBy, session.username);
    assert.equal(events[0]!.createdByUserId, session.id);
    assert.equal(events[0]!.project, projectId);
    assert.equal((events[0]!.data as { id: string }).id, projectId);
    assertNoSecrets(events[0]!, pat.secret);

    // Using the PAT stamps its seenAt.
    const [listed] = await listPats(ctx.as(pat.secret));
    assert.equal(listed?.id, pat.id);
    assert.equal(listed?.seenAt, ctx.clock.now().toISOString());
  });

  test('deleting a PAT records pat-deleted and the PAT stops working', async () => {
    const session = await createUserSession(ctx, 'Viewer');
    const keep = await createPat(session.cookie, uniqueName('keep'));
    const pat = await createPat(session.cookie, uniqueName('short-lived'));
    assert.equal((await me(ctx.as(pat.secret))).id, session.id);

    const since = await lastEventId(ctx);
    expectStatus(await ctx.withCookie(session.cookie).delete(`${TOKENS}/${pat.id}`), 200);

    const events = await eventsSince(ctx, since);
    assert.equal(events.length, 1);
    const event = assertUserLevelEvent(events[0], 'pat-deleted', session);
    assert.equal(event.data, null);
    // The PAT was used above, which stamped its seenAt with the (fixed) test clock.
    assert.deepEqual(event.preData, { ...withoutSecret(pat), seenAt: ctx.clock.now().toISOString() });
    assertNoSecrets(event, pat.secret);

    assert.deepEqual(
      (await listPats(ctx.withCookie(session.cookie))).map((p) => p.id),
      [keep.id],
    );
    expectError(await ctx.as(pat.secret).get(ME), 401, 'UnauthorizedError');
    assert.equal((await me(ctx.as(keep.secret))).id, session.id);

    // Deleting it again is a 404 and records nothing.
    const again = await lastEventId(ctx);
    expectError(await ctx.withCookie(session.cookie).delete(`${TOKENS}/${pat.id}`), 404, 'NotFoundError');
    assert.deepEqual(await eventsSince(ctx, again), []);
  });

  test("a user can neither see nor delete another user's PAT (404)", async () => {
    const owner = await createUserSession(ctx, 'Editor');
    const other = await createUserSession(ctx, 'Admin');
    const pat = await createPat(owner.cookie, uniqueName('private'));
    const othersPat = await createPat(other.cookie, uniqueName('theirs'));

    const seenByOther = await listPats(ctx.withCookie(other.cookie));
    assert.deepEqual(seenByOther, [withoutSecret(othersPat)]);

    const since = await lastEventId(ctx);
    const body = expectError(await ctx.withCookie(other.cookie).delete(`${TOKENS}/${pat.id}`), 404, 'NotFoundError');
    assert.ok(!JSON.stringify(body).includes(owner.username), 'the 404 does not reveal the owner');
    expectError(await ctx.as(othersPat.secret).delete(`${TOKENS}/${pat.id}`), 404, 'NotFoundError');
    assert.deepEqual(await eventsSince(ctx, since), []);

    assert.deepEqual(await listPats(ctx.withCookie(owner.cookie)), [withoutSecret(pat)]);
    assert.equal((await me(ctx.as(pat.secret))).id, owner.id);
  });

  test('an unknown PAT is 401 UnauthorizedError', async () => {
    expectError(await ctx.as('user:0123456789abcdef0123456789abcdef').get(ME), 401, 'UnauthorizedError');
    expectError(await ctx.as('Bearer user:nope').get(ME), 401, 'UnauthorizedError');
  });

  test('expiresAt in the past is a 400 at /body/expiresAt and stores nothing', async () => {
    const session = await createUserSession(ctx, 'Viewer');
    const since = await lastEventId(ctx);
    for (const expiresAt of [inHours(-1), ctx.clock.now().toISOString()]) {
      const body = expectError(
        await ctx.withCookie(session.cookie).post(TOKENS, { description: uniqueName('past'), expiresAt }),
        400,
        'BadDataError',
      );
      assert.deepEqual(
        body.details.map((d) => d.path),
        ['/body/expiresAt'],
      );
    }
    const notADate = expectError(
      await ctx.withCookie(session.cookie).post(TOKENS, { description: uniqueName('bad'), expiresAt: 'tomorrow' }),
      400,
      'BadDataError',
    );
    assert.deepEqual(
      notADate.details.map((d) => d.path),
      ['/body/expiresAt'],
    );
    assert.deepEqual(await listPats(ctx.withCookie(session.cookie)), []);
    assert.deepEqual(await eventsSince(ctx, since), []);
  });

  test('a missing description (or an unknown property) is a 400 and stores nothing', async () => {
    const session = await createUserSession(ctx, 'Viewer');
    const since = await lastEventId(ctx);
    const missing = expectError(await ctx.withCookie(session.cookie).post(TOKENS, { expiresAt: inHours(24) }), 400, 'BadDataError');
    assert.deepEqual(
      missing.details.map((d) => d.path),
      ['/body/description'],
    );
    const empty = expectError(
      await ctx.withCookie(session.cookie).post(TOKENS, { description: '', expiresAt: inHours(24) }),
      400,
      'BadDataError',
    );
    assert.deepEqual(
      empty.details.map((d) => d.path),
      ['/body/description'],
    );
    const extra = expectError(
      await ctx.withCookie(session.cookie).post(TOKENS, { description: uniqueName('x'), expiresAt: inHours(24), secret: 'user:mine' }),
      400,
      'BadDataError',
    );
    assert.deepEqual(
      extra.details.map((d) => d.path),
      ['/body/secret'],
    );
    assert.deepEqual(await listPats(ctx.withCookie(session.cookie)), []);
    assert.deepEqual(await eventsSince(ctx, since), []);
  });

  test('a duplicate description for the same user is a 409 NameExistsError; another user may reuse it', async () => {
    const session = await createUserSession(ctx, 'Viewer');
    const description = uniqueName('deploy');
    const first = await createPat(session.cookie, description);

    const since = await lastEventId(ctx);
    expectError(await ctx.withCookie(session.cookie).post(TOKENS, { description, expiresAt: inHours(48) }), 409, 'NameExistsError');
    assert.deepEqual(await listPats(ctx.withCookie(session.cookie)), [withoutSecret(first)]);
    assert.deepEqual(await eventsSince(ctx, since), []);

    const other = await createUserSession(ctx, 'Viewer');
    const reused = await createPat(other.cookie, description);
    assert.equal(reused.description, description);
    assert.equal(reused.userId, other.id);
  });

  test('the admin token cannot create or list PATs (403 PermissionError)', async () => {
    const since = await lastEventId(ctx);
    const before = await ctx.db.selectFrom('personal_access_tokens').select('id').execute();
    expectError(await ctx.admin.post(TOKENS, { description: uniqueName('admin'), expiresAt: inHours(24) }), 403, 'PermissionError');
    expectError(await ctx.admin.get(TOKENS), 403, 'PermissionError');
    assert.deepEqual(await ctx.db.selectFrom('personal_access_tokens').select('id').execute(), before);
    assert.deepEqual(await eventsSince(ctx, since), []);
  });

  test('a PAT cannot make more PATs, and none lives longer than 366 days', async () => {
    const session = await createUserSession(ctx, 'Viewer');
    const pat = await createPat(session.cookie, uniqueName('ci'));
    const since = await lastEventId(ctx);
    const refused = expectError(
      await ctx.as(pat.secret).post(TOKENS, { description: uniqueName('child'), expiresAt: inHours(24) }),
      403,
      'PermissionError',
    );
    assert.match(refused.message, /A token cannot create personal access tokens: a person signs in to make one/);
    const tooLong = expectError(
      await ctx.withCookie(session.cookie).post(TOKENS, { description: uniqueName('forever'), expiresAt: inHours(367 * 24) }),
      400,
      'BadDataError',
    );
    assert.deepEqual(
      tooLong.details.map((d) => d.path),
      ['/body/expiresAt'],
    );
    assert.match(tooLong.message, /at most 366 days/);
    assert.deepEqual(await eventsSince(ctx, since), []);
    assert.deepEqual(
      (await listPats(ctx.withCookie(session.cookie))).map((entry) => entry.description),
      [pat.description],
    );
    expectStatus(await ctx.withCookie(session.cookie).post(TOKENS, { description: uniqueName('year'), expiresAt: inHours(365 * 24) }), 201);
  });

  test('a PAT stops working when it expires (401 UnauthorizedError)', async () => {
    const session = await createUserSession(ctx, 'Viewer');
    const pat = await createPat(session.cookie, uniqueName('hourly'), inHours(1));
    assert.equal((await me(ctx.as(pat.secret))).id, session.id);

    ctx.clock.advance(2 * HOUR);
    expectError(await ctx.as(pat.secret).get(ME), 401, 'UnauthorizedError');
    expectError(await ctx.as(`Bearer ${pat.secret}`).get(ME), 401, 'UnauthorizedError');
    // The session (48 h) outlives the PAT.
    assert.equal((await me(ctx.withCookie(session.cookie))).id, session.id);
  });
});

// Last in the file: it moves the shared clock far ahead.
describe('session expiry', () => {
  test('a session expires after the default 48 hours (401 AuthenticationRequired)', async () => {
    const session = await createUserSession(ctx, 'Viewer');
    assert.equal((await me(ctx.withCookie(session.cookie))).id, session.id);

    ctx.clock.advance(47 * HOUR);
    assert.equal((await me(ctx.withCookie(session.cookie))).id, session.id, 'still valid before 48 h');

    ctx.clock.advance(2 * HOUR);
    expectError(await ctx.withCookie(session.cookie).get(ME), 401, 'AuthenticationRequired');

    // Logging in again gives a working session.
    const fresh = await login(session.username, STRONG_PASSWORD);
    expectStatus(fresh, 200);
    assert.equal((await me(ctx.withCookie(sessionCookieOf(fresh)))).id, session.id);
  });
});

describe('changing your own password', () => {
  const CHANGE = '/api/admin/user/change-password';
  const NEW_PASSWORD = 'Another-Strong-7-Phrase';

  test('keeps the session in use, ends the others, and the new password logs in', async () => {
    const session = await createUserSession(ctx, 'Viewer');
    const other = await ctx.as().post(LOGIN, { username: session.username, password: STRONG_PASSWORD });
    const otherCookie = `vexil-session=${other.cookies.find((cookie) => cookie.name === 'vexil-session')!.value}`;
    const since = await lastEventId(ctx);

    const changed = await ctx
      .withCookie(session.cookie)
      .post(CHANGE, { oldPassword: STRONG_PASSWORD, password: NEW_PASSWORD, confirmPassword: NEW_PASSWORD });
    expectStatus(changed, 200);

    expectStatus(await ctx.withCookie(session.cookie).get(ME), 200);
    expectError(await ctx.withCookie(otherCookie).get(ME), 401, 'AuthenticationRequired');
    expectError(await ctx.as().post(LOGIN, { username: session.username, password: STRONG_PASSWORD }), 401, 'PasswordMismatch');
    expectStatus(await ctx.as().post(LOGIN, { username: session.username, password: NEW_PASSWORD }), 200);
    const events = await eventsSince(ctx, since);
    // The old password refused and the new one taken are in the sign-in audit's events too.
    assert.deepEqual(
      events.map((event) => [event.type, event.createdBy]),
      [
        ['user-password-changed', session.username],
        ['user-sign-in-refused', 'system'],
        ['user-signed-in', 'system'],
      ],
    );
    assert.ok(!JSON.stringify(events).includes(NEW_PASSWORD));
    assert.ok(!JSON.stringify(events).includes(STRONG_PASSWORD));
  });

  test('bad input is a 400 naming the field, and the password stays as it was', async () => {
    const session = await createUserSession(ctx, 'Editor');
    const client = ctx.withCookie(session.cookie);
    const cases: Array<[unknown, string]> = [
      [{ oldPassword: 'wrong-password', password: NEW_PASSWORD, confirmPassword: NEW_PASSWORD }, '/body/oldPassword'],
      [{ oldPassword: STRONG_PASSWORD, password: NEW_PASSWORD, confirmPassword: `${NEW_PASSWORD}x` }, '/body/confirmPassword'],
      [{ oldPassword: STRONG_PASSWORD, password: 'short', confirmPassword: 'short' }, '/body/password'],
      [{ password: NEW_PASSWORD, confirmPassword: NEW_PASSWORD }, '/body'],
    ];
    for (const [body, path] of cases) {
      const response = await client.post(CHANGE, body);
      const error = expectError(response, 400, 'BadDataError');
      assert.ok(
        error.details.some((detail) => detail.path?.startsWith(path)),
        `${JSON.stringify(body)} → ${JSON.stringify(error.details)}`,
      );
    }
    expectStatus(await ctx.as().post(LOGIN, { username: session.username, password: STRONG_PASSWORD }), 200);
  });

  test('an API token has no password of its own', async () => {
    const response = await ctx.admin.post(CHANGE, { oldPassword: 'x', password: NEW_PASSWORD, confirmPassword: NEW_PASSWORD });
    expectError(response, 400, 'BadDataError');
  });
});
