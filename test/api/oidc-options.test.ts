import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectError, expectStatus, getOk, signInRefusal } from '../helpers/assertions.js';
import { freePort } from '../helpers/free-port.js';
import { startTestApp, STRONG_PASSWORD, type TestApp } from '../helpers/test-app.js';

// How sign-in is offered, and what happens when the provider cannot be reached. The whole sign-in, against a
// real provider in a real browser, is in test/ui/oidc-sign-in.test.ts.
describe('sign-in options', () => {
  let plain: TestApp;
  let oidcOnly: TestApp;

  before(async () => {
    plain = await startTestApp();
    // Nothing listens on this port: the provider is down or misconfigured.
    const issuer = `http://127.0.0.1:${await freePort()}`;
    oidcOnly = await startTestApp({
      env: { OIDC_ISSUER: issuer, OIDC_CLIENT_ID: 'vexil', OIDC_CLIENT_SECRET: 'secret', OIDC_ONLY: 'true', OIDC_NAME: 'Acme SSO' },
    });
  });
  after(async () => {
    await plain?.close();
    await oidcOnly?.close();
  });

  test('without a provider: password only, and the OpenID Connect paths are not found', async () => {
    assert.deepEqual(await getOk(plain.as(), '/auth/options'), { password: true, oidc: null, saml: null });
    expectError(await plain.as().get('/auth/oidc/login'), 404, 'NotFoundError');
    expectError(await plain.as().get('/auth/oidc/callback?code=x&state=y'), 404, 'NotFoundError');
  });

  test('with OIDC_ONLY: the provider is offered and a password sign-in is refused, naming it', async () => {
    assert.deepEqual(await getOk(oidcOnly.as(), '/auth/options'), {
      password: false,
      oidc: { name: 'Acme SSO', path: '/auth/oidc/login' },
      saml: null,
    });
    expectStatus(
      await oidcOnly.admin.post('/api/admin/user-admin', { username: 'pat', rootRole: 'Viewer', password: STRONG_PASSWORD }),
      201,
    );
    const refused = expectError(
      await oidcOnly.as().post('/auth/simple/login', { username: 'pat', password: STRONG_PASSWORD }),
      403,
      'PermissionError',
    );
    assert.match(refused.message, /Password sign-in is turned off on this server; sign in with Acme SSO/);
  });

  test('a provider that cannot be reached sends the browser back to the sign-in page with one line, never a 500', async () => {
    const response = await oidcOnly.as().get('/auth/oidc/login?next=/projects');
    assert.match(signInRefusal(response), /^The sign-in provider at http:\/\/127\.0\.0\.1:\d+\/ could not be reached or read/);
    assert.equal(
      response.cookies.find((cookie) => cookie.name === 'vexil-session'),
      undefined,
    );
  });

  test('a callback without a started sign-in is refused with a redirect, shows none of its words, and opens no session', async () => {
    for (const url of [
      '/auth/oidc/callback?code=abc&state=def',
      '/auth/oidc/callback',
      // Anyone can write this link: what it says is not repeated to the person who follows it.
      '/auth/oidc/callback?error=access_denied&error_description=Your%20account%20is%20locked%2C%20call%20%2B1%20555%200100',
    ]) {
      const response = await oidcOnly.as().get(url);
      assert.match(signInRefusal(response), /^This sign-in was not started in this browser, or has already been used; start again$/, url);
      assert.equal(
        response.cookies.find((cookie) => cookie.name === 'vexil-session'),
        undefined,
      );
    }
  });

  test('an over-long callback parameter is a 400, not a sign-in attempt', async () => {
    expectError(await oidcOnly.as().get(`/auth/oidc/callback?code=${'x'.repeat(5000)}&state=s`), 400, 'BadDataError');
  });
});
