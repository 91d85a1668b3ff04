import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { expectError, expectStatus, getOk, signInRefusal } from '../helpers/assertions.js';
import { eventsSince, lastEventId } from '../helpers/events.js';
import { type AnswerOptions, type SamlIdp, startSamlIdp } from '../helpers/saml-idp.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

// SAML 2.0 sign-in against an identity provider made with samlify (a SAML library acting as the IdP), driven
// through HTTP: the redirect to the IdP, its signed answer posted back, and each kind of answer that must be refused.

const BASE_URL = 'http://vexil.test';
const CALLBACK = `${BASE_URL}/auth/saml/callback`;
let idp: SamlIdp;
let ctx: TestApp;

before(async () => {
  idp = await startSamlIdp({ entityId: `${BASE_URL}/auth/saml/metadata`, callbackUrl: CALLBACK });
  ctx = await startTestApp({ env: { BASE_URL, SAML_METADATA_URL: idp.metadataUrl, SAML_NAME: 'Corp SSO' } });
  idp.accounts.set('ada', { email: 'ada@corp.example', name: 'Ada Lovelace', groups: ['engineering'] });
  idp.accounts.set('bob', { email: 'bob@corp.example', name: 'Bob', groups: [] });
});
after(async () => {
  await ctx?.close();
  await idp?.close();
});

/** The test's browser: the cookie naming the SAML request its last sign-in start made. */
let requestCookie: string | undefined;

/** Starts a sign-in as a browser would; answers where Vexil sends it (the IdP, with the request). */
async function startSignIn(next = '/projects'): Promise<string> {
  const started = await ctx.as().get(`/auth/saml/login?next=${encodeURIComponent(next)}`);
  expectStatus(started, 302);
  const location = String(started.headers.location);
  assert.ok(location.startsWith(`${idp.metadataUrl.replace('/metadata', '')}/sso?SAMLRequest=`), location);
  const cookie = started.cookies.find((entry) => entry.name === 'vexil-saml-request');
  assert.ok(cookie?.httpOnly && cookie.path === '/auth/saml', 'the request id is kept in an HttpOnly cookie of the SAML paths');
  requestCookie = cookie.value;
  return location;
}

/** The identity provider's form, posted by the browser holding `cookie` (the test's browser unless given; null: none). */
function post(form: Record<string, string>, cookie: string | null | undefined = requestCookie): Promise<LightMyRequestResponse> {
  return ctx.as().inject({
    method: 'POST',
    url: '/auth/saml/callback',
    payload: new URLSearchParams(form).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie ? { cookie: `vexil-saml-request=${cookie}` } : {}) },
  });
}

/** A refused answer goes back to the sign-in page with the reason, opens no session, and is in the sign-in audit. */
async function expectRefused(response: LightMyRequestResponse, reason: RegExp): Promise<void> {
  assert.match(signInRefusal(response), reason);
  assert.equal(
    response.cookies.find((cookie) => cookie.name === 'vexil-session'),
    undefined,
  );
  const audit = await getOk<{ signons: Array<{ authType: string; successful: boolean; failureReason: string }> }>(
    ctx.admin,
    '/api/admin/signons?limit=1',
  );
  assert.deepEqual(
    audit.signons.map(({ authType, successful }) => [authType, successful]),
    [['saml', false]],
  );
  assert.match(audit.signons[0]!.failureReason, reason);
}

async function answerFor(login: string, options?: AnswerOptions) {
  return idp.answer(await startSignIn(), login, options);
}

describe('SAML sign-in', () => {
  test('a signed answer signs the person in, creates them with their groups, and brings them where they were going', async () => {
    const group = await ctx.admin.post('/api/admin/groups', { name: 'Engineering', rootRole: 2, mappingsSSO: ['engineering'] });
    expectStatus(group, 201);
    const since = await lastEventId(ctx);
    const answer = await idp.answer(await startSignIn('/flags?project=default'), 'ada');
    const started = requestCookie;
    const signedIn = await post(answer);
    expectStatus(signedIn, 302);
    assert.equal(signedIn.headers.location, '/flags?project=default');
    const cookie = signedIn.cookies.find((entry) => entry.name === 'vexil-session');
    assert.ok(cookie);
    const me = await getOk<{ user: { email: string; name: string; rootRole: number } }>(
      ctx.withCookie(`vexil-session=${cookie.value}`),
      '/api/admin/user',
    );
    assert.deepEqual(me.user.email, 'ada@corp.example');
    assert.equal(me.user.name, 'Ada Lovelace');
    // The Engineering group (an Editor role) came with the groups attribute.
    expectStatus(
      await ctx.withCookie(`vexil-session=${cookie.value}`).post('/api/admin/projects', { id: 'ada-project', name: 'Ada' }),
      201,
    );
    const types = (await eventsSince(ctx, since)).map((event) => [event.type, event.createdBy]);
    assert.deepEqual(types.slice(0, 3), [
      ['user-created', 'Corp SSO'],
      ['group-user-added', 'Corp SSO'],
      ['user-signed-in', 'Corp SSO'],
    ]);

    // The same answer a second time, as a replay would send it (with the cookie, too), signs no one in.
    await expectRefused(await post(answer, started), /already used/);
    // The callback ended the sign-in the browser started: its cookie is cleared.
    assert.equal(signedIn.cookies.find((entry) => entry.name === 'vexil-saml-request')?.value, '');
  });

  test('where to go after signing in stays on this server, however the path is written', async () => {
    const elsewhere = ['/.//evil.example/', '/..//evil.example/', '/%2e//evil.example/', '/\t/evil.example/', '/\n/evil.example/'];
    for (const next of [...elsewhere, '/\\evil.example/', '//evil.example/', 'https://evil.example/']) {
      // The path travels to the identity provider as the RelayState, and back.
      const relayState = new URL(await startSignIn(next)).searchParams.get('RelayState');
      assert.equal(relayState, '/', `next=${JSON.stringify(next)} is sent as "/"`);
      const answer = await idp.answer(await startSignIn(), 'ada');
      const signedIn = await post({ ...answer, RelayState: next });
      expectStatus(signedIn, 302);
      assert.equal(signedIn.headers.location, '/', `RelayState=${JSON.stringify(next)} returns to the start page`);
    }
    // A path of this app, dots and all, is kept as it resolves.
    assert.equal(new URL(await startSignIn('/projects/./a/../b?x=1')).searchParams.get('RelayState'), '/projects/b?x=1');
  });

  test('an unsigned, tampered, wrongly addressed, expired or unrequested answer is refused', async () => {
    await expectRefused(await post(await answerFor('bob', { unsigned: true })), /SAML answer was refused.*signature/i);
    const signed = await answerFor('bob');
    const tampered = Buffer.from(signed.SAMLResponse, 'base64').toString('utf8').replaceAll('bob@corp.example', 'ada@corp.example');
    await expectRefused(await post({ ...signed, SAMLResponse: Buffer.from(tampered).toString('base64') }), /signature/i);
    await expectRefused(await post(await answerFor('bob', { audience: 'https://another-app.example' })), /audience/i);
    await expectRefused(await post(await answerFor('bob', { shiftMs: -60 * 60_000 })), /No valid subject confirmation|expired/i);
    await expectRefused(
      await post(await answerFor('bob', { recipient: 'https://another-app.example/acs' })),
      /meant for https:\/\/another-app/,
    );
    // An answer to a request Vexil did not make: a request id of the IdP's own invention.
    const unrequested = Buffer.from((await answerFor('bob')).SAMLResponse, 'base64').toString('utf8');
    const forgedId = unrequested.replace(/InResponseTo="[^"]+"/g, 'InResponseTo="_made-up"');
    await expectRefused(
      await post({ SAMLResponse: Buffer.from(forgedId).toString('base64'), RelayState: '/' }),
      /answers no sign-in started here|signature/i,
    );
    // Nobody was created by any of them.
    const users = await getOk<{ users: Array<{ email: string | null }> }>(ctx.admin, '/api/admin/user-admin');
    assert.ok(!users.users.some((user) => user.email === 'bob@corp.example'));
  });

  test("an answer to another browser's sign-in, or to none, signs no one in (login CSRF, IdP-initiated assertions)", async () => {
    // The attacker signs in to their own account at the IdP and keeps the answer instead of posting it.
    const attackers = await answerFor('bob');
    const attackerCookie = requestCookie;
    // Their page posts it from the victim's browser, which started no sign-in...
    await expectRefused(await post(attackers, null), /not started in this browser/);
    // ...or started one of its own.
    await startSignIn();
    await expectRefused(await post(attackers), /does not answer the sign-in this browser started/);

    // An assertion the IdP made for no request, wrapped in a Response naming the request this browser started.
    const location = await startSignIn();
    const unbound = await idp.answer(location, 'bob', { assertionAnswersNoRequest: true });
    const xml = Buffer.from(unbound.SAMLResponse, 'base64').toString('utf8');
    assert.equal((xml.match(/InResponseTo=/g) ?? []).length, 1, 'only the unsigned Response names the request');
    await expectRefused(await post(unbound), /does not answer the sign-in this browser started/);

    // The attacker's own browser could still use it: the refusals above did not spend it.
    expectStatus(await post(attackers, attackerCookie), 302);
  });

  test('the password sign-in takes JSON only: a form posted from another site is a 415', async () => {
    const response = await ctx.as().inject({
      method: 'POST',
      url: '/auth/simple/login',
      payload: new URLSearchParams({ username: 'ada@corp.example', password: 'whatever-it-is' }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expectError(response, 415, 'ContentTypeError');
  });

  test("a client asking for JSON gets a refusal as a 401 in Unleash's error shape, recorded too", async () => {
    const { SAMLResponse, RelayState } = await answerFor('bob', { unsigned: true });
    const refused = await ctx.as().inject({
      method: 'POST',
      url: '/auth/saml/callback',
      payload: new URLSearchParams({ SAMLResponse, RelayState }).toString(),
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
        cookie: `vexil-saml-request=${requestCookie}`,
      },
    });
    const body = expectError(refused, 401, 'UnauthorizedError');
    assert.match(body.message, /SAML answer was refused.*signature/i);
    const audit = await getOk<{ signons: Array<{ authType: string; failureReason: string }> }>(ctx.admin, '/api/admin/signons?limit=1');
    assert.deepEqual(
      audit.signons.map(({ authType, failureReason }) => [authType, failureReason]),
      [['saml', body.message]],
    );
  });

  test("with SAML the only sign-in, people pushed over SCIM get the SAML policy's default role", async () => {
    const SAML = '/api/admin/auth/saml/settings';
    expectStatus(await ctx.admin.post(SAML, { defaultRootRole: 'Editor' }), 200);
    try {
      const made = await ctx.admin.post('/api/admin/scim/token');
      expectStatus(made, 201);
      const { token } = made.json() as { token: string };
      const pushed = await ctx.app.inject({
        method: 'POST',
        url: '/scim/v2/Users',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' },
        payload: JSON.stringify({ userName: 'cleo@corp.example', emails: [{ primary: true, value: 'cleo@corp.example' }], active: true }),
      });
      expectStatus(pushed, 201);
      const { id } = pushed.json() as { id: string };
      const person = await getOk<{ email: string; rootRole: number }>(ctx.admin, `/api/admin/user-admin/${id}`);
      assert.deepEqual([person.email, person.rootRole], ['cleo@corp.example', 2], "Editor (2), not the OpenID Connect policy's Viewer");
    } finally {
      expectStatus(await ctx.admin.post(SAML, { defaultRootRole: 'Viewer' }), 200);
      expectStatus(await ctx.admin.delete('/api/admin/scim/token'), 204);
    }
  });

  test('a malformed post is a 400; the service provider metadata names the entity and the callback', async () => {
    expectStatus(await post({ RelayState: '/' }), 400);
    await expectRefused(await post({ SAMLResponse: 'bm90IHhtbA==' }), /SAML answer was refused/);
    const metadata = await ctx.as().get('/auth/saml/metadata');
    expectStatus(metadata, 200);
    assert.match(String(metadata.headers['content-type']), /samlmetadata\+xml/);
    assert.match(metadata.body, new RegExp(`entityID="${BASE_URL}/auth/saml/metadata"`));
    assert.match(metadata.body, new RegExp(`Location="${CALLBACK}"`));
    const options = await getOk<{ saml: { name: string; path: string } }>(ctx.as(), '/auth/options');
    assert.deepEqual(options.saml, { name: 'Corp SSO', path: '/auth/saml/login' });
  });
});

test('metadata larger than a megabyte is refused as it streams in, not read whole first', async () => {
  // Served in chunks without a length: the size is known only by reading.
  let sent = 0;
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/samlmetadata+xml' });
    const chunk = Buffer.alloc(64 * 1024, 'x');
    const push = () => {
      while (sent < 64 * 1024 * 1024) {
        sent += chunk.length;
        if (!response.write(chunk)) return void response.once('drain', push);
      }
      response.end();
    };
    push();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const metadataUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/metadata`;
  const app = await startTestApp({ env: { BASE_URL, SAML_METADATA_URL: metadataUrl } });
  try {
    assert.match(
      signInRefusal(await app.as().get('/auth/saml/login')),
      /metadata at .* could not be read: its metadata is larger than 1000000 bytes/,
    );
    assert.ok(sent < 8 * 1024 * 1024, `stopped reading early (${sent} bytes sent)`);
  } finally {
    await app.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});
