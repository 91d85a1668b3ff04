import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { expectError, expectStatus, getOk } from '../helpers/assertions.js';
import { eventsSince, lastEventId } from '../helpers/events.js';
import { uniqueName } from '../helpers/fixtures.js';
import { STRONG_PASSWORD, startTestApp, type TestApp } from '../helpers/test-app.js';
import type { SessionView as Session } from '../../src/domain/users/sessions.js';

const MINE = '/api/admin/user/sessions';
const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';
const PHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148 Safari/604.1';

let ctx: TestApp;
before(async () => {
  ctx = await startTestApp();
});
after(() => ctx.close());

async function createUser(): Promise<{ id: number; username: string }> {
  const username = uniqueName('sessions');
  const created = await ctx.admin.post('/api/admin/user-admin', { username, rootRole: 'Viewer', password: STRONG_PASSWORD });
  expectStatus(created, 201);
  return { id: (created.json() as { id: number }).id, username };
}

/** Signs in from a browser and an address; answers the session cookie. */
async function signIn(username: string, userAgent: string, address: string): Promise<string> {
  const login = await ctx.as().inject({
    method: 'POST',
    url: '/auth/simple/login',
    payload: { username, password: STRONG_PASSWORD },
    headers: { 'user-agent': userAgent },
    remoteAddress: address,
  });
  expectStatus(login, 200);
  const cookie = login.cookies.find((entry) => entry.name === 'vexil-session');
  assert.ok(cookie);
  return `vexil-session=${cookie.value}`;
}

const sessionsOf = (response: LightMyRequestResponse) => (response.json() as { sessions: Session[] }).sessions;

describe('sessions a person can see and end', () => {
  test('a user lists their sessions with where and with what each was opened, the current one marked, last used first', async () => {
    const user = await createUser();
    const laptop = await signIn(user.username, FIREFOX, '203.0.113.7');
    ctx.clock.advance(120_000);
    const phone = await signIn(user.username, PHONE, '198.51.100.23');
    const openedPhoneAt = ctx.clock.now().toISOString();

    const fromPhone = sessionsOf(await getOkResponse(phone, MINE));
    assert.deepEqual(
      fromPhone.map(({ address, userAgent, current }) => ({ address, userAgent, current })),
      [
        { address: '198.51.100.23', userAgent: PHONE, current: true },
        { address: '203.0.113.7', userAgent: FIREFOX, current: false },
      ],
    );
    assert.equal(fromPhone[0]!.createdAt, openedPhoneAt);
    assert.ok(fromPhone.every((session) => Date.parse(session.expiresAt) > ctx.clock.now().getTime()));

    // Using the laptop two minutes later makes it the last used; its seenAt moves with it.
    ctx.clock.advance(120_000);
    expectStatus(await ctx.withCookie(laptop).get('/api/admin/user'), 200);
    const fromLaptop = sessionsOf(await getOkResponse(laptop, MINE));
    assert.deepEqual(
      fromLaptop.map(({ userAgent, current }) => ({ userAgent, current })),
      [
        { userAgent: FIREFOX, current: true },
        { userAgent: PHONE, current: false },
      ],
    );
    assert.equal(fromLaptop[0]!.seenAt, ctx.clock.now().toISOString());
  });

  test('ending one session signs that browser out at once and is recorded; ending the others keeps the one in use', async () => {
    const user = await createUser();
    const laptop = await signIn(user.username, FIREFOX, '203.0.113.7');
    const phone = await signIn(user.username, PHONE, '198.51.100.23');
    const tablet = await signIn(user.username, PHONE, '192.0.2.44');
    const phoneId = sessionsOf(await getOkResponse(phone, MINE)).find((session) => session.current)!.id;
    const since = await lastEventId(ctx);

    expectStatus(await ctx.withCookie(laptop).delete(`${MINE}/${phoneId}`), 204);
    expectError(await ctx.withCookie(phone).get('/api/admin/user'), 401, 'AuthenticationRequired');
    const ended = await eventsSince(ctx, since);
    assert.deepEqual(
      ended.map((event) => ({ type: event.type, data: event.data, createdBy: event.createdBy })),
      [{ type: 'user-sessions-ended', data: { id: user.id, username: user.username, email: null, sessions: 1 }, createdBy: user.username }],
    );

    const others = await ctx.withCookie(laptop).delete(MINE);
    expectStatus(others, 200);
    assert.deepEqual(others.json(), { ended: 1 });
    expectError(await ctx.withCookie(tablet).get('/api/admin/user'), 401, 'AuthenticationRequired');
    expectStatus(await ctx.withCookie(laptop).get('/api/admin/user'), 200);
    assert.deepEqual(
      sessionsOf(await getOkResponse(laptop, MINE)).map((session) => session.userAgent),
      [FIREFOX],
    );
  });

  test("an Admin lists a user's sessions and ends one or all of them; the user is signed out at the next request", async () => {
    const user = await createUser();
    const laptop = await signIn(user.username, FIREFOX, '203.0.113.7');
    const phone = await signIn(user.username, PHONE, '198.51.100.23');
    const listed = await getOk<{ sessions: Session[] }>(ctx.admin, `/api/admin/user-admin/${user.id}/sessions`);
    assert.deepEqual(listed.sessions.map((session) => [session.userAgent, session.current]).sort(), [
      [FIREFOX, false],
      [PHONE, false],
    ]);
    const laptopId = listed.sessions.find((session) => session.userAgent === FIREFOX)!.id;

    expectStatus(await ctx.admin.delete(`/api/admin/user-admin/${user.id}/sessions/${laptopId}`), 204);
    expectError(await ctx.withCookie(laptop).get('/api/admin/user'), 401, 'AuthenticationRequired');
    expectStatus(await ctx.withCookie(phone).get('/api/admin/user'), 200);

    const since = await lastEventId(ctx);
    const all = await ctx.admin.delete(`/api/admin/user-admin/${user.id}/sessions`);
    expectStatus(all, 200);
    assert.deepEqual(all.json(), { ended: 1 });
    expectError(await ctx.withCookie(phone).get('/api/admin/user'), 401, 'AuthenticationRequired');
    assert.deepEqual(
      (await eventsSince(ctx, since)).map((event) => [event.type, (event.data as { sessions: number }).sessions]),
      [['user-sessions-ended', 1]],
    );
    // Nothing left to end: answered, and nothing recorded.
    assert.deepEqual((await ctx.admin.delete(`/api/admin/user-admin/${user.id}/sessions`)).json(), { ended: 0 });
    assert.deepEqual(await eventsSince(ctx, since).then((events) => events.length), 1);
  });

  test("refusals: another user's session, an unknown one, a bad id, a token without sessions, a non-Admin on the admin paths", async () => {
    const owner = await createUser();
    const other = await createUser();
    const ownerCookie = await signIn(owner.username, FIREFOX, '203.0.113.7');
    const otherCookie = await signIn(other.username, PHONE, '198.51.100.23');
    const otherId = sessionsOf(await getOkResponse(otherCookie, MINE))[0]!.id;

    // Someone else's session is not one's own to end, and is not told apart from one that does not exist.
    expectError(await ctx.withCookie(ownerCookie).delete(`${MINE}/${otherId}`), 404, 'NotFoundError');
    expectStatus(await ctx.withCookie(otherCookie).get('/api/admin/user'), 200);
    expectError(await ctx.withCookie(ownerCookie).delete(`${MINE}/999999999`), 404, 'NotFoundError');
    expectError(await ctx.withCookie(ownerCookie).delete(`${MINE}/abc`), 400, 'BadDataError');
    expectError(await ctx.admin.delete(`/api/admin/user-admin/${owner.id}/sessions/${otherId}`), 404, 'NotFoundError');
    expectStatus(await ctx.withCookie(otherCookie).get('/api/admin/user'), 200);
    expectError(await ctx.admin.get('/api/admin/user-admin/999999/sessions'), 404, 'NotFoundError');

    // An admin token is no person: it has no sessions of its own.
    expectError(await ctx.admin.get(MINE), 400, 'BadDataError');
    // A Viewer may not look at or end another user's sessions.
    expectError(await ctx.withCookie(ownerCookie).get(`/api/admin/user-admin/${other.id}/sessions`), 403, 'PermissionError');
    expectError(await ctx.withCookie(ownerCookie).delete(`/api/admin/user-admin/${other.id}/sessions`), 403, 'PermissionError');
    expectStatus(await ctx.withCookie(otherCookie).get('/api/admin/user'), 200);
  });

  test('a very long browser name is kept cut short; the cookie and its hash are never shown', async () => {
    const user = await createUser();
    const cookie = await signIn(user.username, `Agent/${'x'.repeat(5000)}`, '203.0.113.7');
    const response = await getOkResponse(cookie, MINE);
    const [session] = sessionsOf(response);
    assert.equal(session!.userAgent!.length, 512);
    const secret = cookie.split('=')[1]!;
    assert.ok(!response.body.includes(secret));
    assert.deepEqual(Object.keys(session!).sort(), ['address', 'createdAt', 'current', 'expiresAt', 'id', 'seenAt', 'userAgent']);
  });
});

async function getOkResponse(cookie: string, url: string): Promise<LightMyRequestResponse> {
  const response = await ctx.withCookie(cookie).get(url);
  expectStatus(response, 200);
  return response;
}
