import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectError, expectStatus, getOk } from '../helpers/assertions.js';
import { eventsSince, lastEventId } from '../helpers/events.js';
import { createUserSession, uniqueName } from '../helpers/fixtures.js';
import { STRONG_PASSWORD, startTestApp, type TestApp } from '../helpers/test-app.js';
import type { SignOnView } from '../../src/domain/users/sign-in-audit.js';

const AGENT = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';

let ctx: TestApp;
before(async () => {
  ctx = await startTestApp();
});
after(() => ctx.close());

function signIn(username: string, password: string, address: string) {
  return ctx.as().inject({
    method: 'POST',
    url: '/auth/simple/login',
    payload: { username, password },
    headers: { 'user-agent': AGENT },
    remoteAddress: address,
  });
}

async function createUser(): Promise<{ id: number; username: string }> {
  const username = uniqueName('audited');
  const created = await ctx.admin.post('/api/admin/user-admin', { username, rootRole: 'Viewer', password: STRONG_PASSWORD });
  expectStatus(created, 201);
  return { id: (created.json() as { id: number }).id, username };
}

const audit = (query = '') => getOk<{ signons: SignOnView[]; total: number }>(ctx.admin, `/api/admin/signons${query}`);
const shown = ({ userId, username, authType, successful, failureReason, ip, userAgent }: SignOnView) => ({
  userId,
  username,
  authType,
  successful,
  failureReason,
  ip,
  userAgent,
});

describe('the sign-in audit', () => {
  test('a sign-in and refused ones are recorded with who, how, from where and why, newest first, and as events', async () => {
    const user = await createUser();
    const since = await lastEventId(ctx);
    expectStatus(await signIn(user.username, STRONG_PASSWORD, '203.0.113.7'), 200);
    expectError(await signIn(user.username, 'not-the-password', '198.51.100.23'), 401, 'PasswordMismatch');
    expectError(await signIn('nobody-of-that-name', STRONG_PASSWORD, '198.51.100.23'), 401, 'PasswordMismatch');

    const { signons } = await audit('?limit=3');
    const wrongPassword = (userId: number | null, username: string) => ({
      userId,
      username,
      authType: 'password',
      successful: false,
      failureReason: 'Wrong username or password',
      ip: '198.51.100.23',
      userAgent: AGENT,
    });
    assert.deepEqual(signons.map(shown), [
      wrongPassword(null, 'nobody-of-that-name'),
      wrongPassword(user.id, user.username),
      {
        userId: user.id,
        username: user.username,
        authType: 'password',
        successful: true,
        failureReason: null,
        ip: '203.0.113.7',
        userAgent: AGENT,
      },
    ]);
    assert.ok(signons[0]!.id > signons[1]!.id && signons[1]!.id > signons[2]!.id);

    const events = await eventsSince(ctx, since);
    assert.deepEqual(
      events.map((event) => [event.type, event.data]),
      [
        ['user-signed-in', { id: user.id, username: user.username, authType: 'password', address: '203.0.113.7' }],
        [
          'user-sign-in-refused',
          { username: user.username, authType: 'password', address: '198.51.100.23', reason: 'Wrong username or password' },
        ],
        [
          'user-sign-in-refused',
          // What was typed matched nobody (people type passwords there): the audit keeps it, the event does not.
          { username: null, authType: 'password', address: '198.51.100.23', reason: 'Wrong username or password' },
        ],
      ],
    );
    // The password never reaches the audit or the events.
    assert.ok(!JSON.stringify({ signons, events }).includes('not-the-password'));

    const own = await audit(`?userId=${user.id}`);
    assert.equal(own.total, 2);
    assert.deepEqual(
      own.signons.map((entry) => entry.successful),
      [false, true],
    );
  });

  test('a throttled attempt is recorded as such; an address sending refusals as fast as it can fills no more than its budget', async () => {
    const address = '192.0.2.99';
    const statuses: number[] = [];
    // Thirty wrong passwords (each for another name, so only the address's limit applies), then ten more.
    for (let attempt = 0; attempt < 40; attempt++) statuses.push((await signIn(`guess-${attempt}`, 'wrong', address)).statusCode);
    assert.deepEqual(statuses, [...Array(30).fill(401), ...Array(10).fill(429)]);
    const recorded = (await audit('?limit=1000')).signons.filter((entry) => entry.ip === address);
    assert.equal(recorded.length, 30, 'thirty refusals a minute from one address at most');
    assert.ok(recorded.every((entry) => entry.failureReason === 'Wrong username or password'));

    // From another address, the tenth wrong password for one account trips its limit: that refusal is recorded.
    const user = await createUser();
    for (let attempt = 0; attempt < 10; attempt++) expectStatus(await signIn(user.username, 'wrong', '192.0.2.100'), 401);
    expectError(await signIn(user.username, STRONG_PASSWORD, '192.0.2.100'), 429, 'TooManyRequestsError');
    const [latest] = (await audit(`?userId=${user.id}&limit=1`)).signons;
    assert.deepEqual(shown(latest!), {
      userId: user.id,
      username: user.username,
      authType: 'password',
      successful: false,
      failureReason: 'Too many failed sign-ins from this address',
      ip: '192.0.2.100',
      userAgent: AGENT,
    });
  });

  test('bad queries are refused with a 400, and only Admins read the audit', async () => {
    for (const query of ['?limit=0', '?limit=1001', '?limit=abc', '?offset=-1', '?userId=0', '?userId=x']) {
      expectError(await ctx.admin.get(`/api/admin/signons${query}`), 400, 'BadDataError');
    }
    const editor = await createUserSession(ctx, 'Editor');
    expectError(await ctx.withCookie(editor.cookie).get('/api/admin/signons'), 403, 'PermissionError');
    expectError(await ctx.as().get('/api/admin/signons'), 401, 'AuthenticationRequired');
  });
});
