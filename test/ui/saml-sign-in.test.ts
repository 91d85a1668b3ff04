import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { buildWebUi, launchBrowser, signIn, textOf, waitForTexts } from '../helpers/browser.js';
import { freePort } from '../helpers/free-port.js';
import { type SamlIdp, startSamlIdp } from '../helpers/saml-idp.js';
import { STRONG_PASSWORD, startTestApp, type TestApp } from '../helpers/test-app.js';

// SAML sign-in in a real browser: the sign-in page's button sends Chromium to an identity provider made with
// samlify, whose page posts the signed answer back; the person lands where they were going, signed in. A person
// the sign-in policy does not let in is sent back to the sign-in page with the reason.
let idp: SamlIdp;
let ctx: TestApp;
let baseUrl: string;
let browser: Browser;

describe('signing in with SAML in a browser', { timeout: 120_000 }, () => {
  before(async () => {
    buildWebUi();
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    idp = await startSamlIdp({ entityId: `${baseUrl}/auth/saml/metadata`, callbackUrl: `${baseUrl}/auth/saml/callback` });
    ctx = await startTestApp({ env: { BASE_URL: baseUrl, SAML_METADATA_URL: idp.metadataUrl, SAML_NAME: 'Corp SSO' } });
    await ctx.app.listen({ port, host: '127.0.0.1' });
    browser = await launchBrowser();
    idp.accounts.set('grace', { email: 'grace@corp.example', name: 'Grace Hopper', groups: [] });
    idp.accounts.set('mallory', { email: 'mallory@elsewhere.example', name: 'Mallory', groups: [] });
  });

  after(async () => {
    await browser?.close();
    await ctx?.close();
    await idp?.close();
  });

  test('the button goes to the identity provider, whose answer signs the person in where they were going', async () => {
    idp.signedIn = 'grace';
    const page = await (await browser.newContext()).newPage();
    await page.goto(`${baseUrl}/login?next=${encodeURIComponent('/projects')}`);
    await page.getByRole('link', { name: 'Sign in with Corp SSO' }).click();
    await page.waitForURL(`${baseUrl}/projects`);
    const me = (await (await page.request.get(`${baseUrl}/api/admin/user`)).json()) as { user: { email: string; name: string } };
    assert.deepEqual([me.user.email, me.user.name], ['grace@corp.example', 'Grace Hopper']);
    // The navigation names the person once its own request for the signed-in user has answered.
    await waitForTexts(page.getByRole('navigation'), ([text = '']) => /grace@corp\.example|Grace/.test(text));
    await page.context().close();
  });

  test("the Users page's sign-in history names the SAML sign-in as such", async () => {
    const admin = await ctx.admin.post('/api/admin/user-admin', { username: 'ops', rootRole: 'Admin', password: STRONG_PASSWORD });
    assert.equal(admin.statusCode, 201);
    const page = await (await browser.newContext()).newPage();
    await signIn(page, baseUrl, 'ops', STRONG_PASSWORD);
    await page.goto(`${baseUrl}/admin/users`);
    const rows = page.getByRole('table', { name: 'Sign-in history' }).locator('tbody tr');
    const texts = await waitForTexts(rows, (all) => all.length === 2);
    const cells = texts.map((text) => text.split('\t').map((cell) => cell.trim()));
    assert.deepEqual(
      cells.map(([, who, how]) => [who, how]),
      [
        ['ops', 'Password'],
        ['grace@corp.example', 'SAML'],
      ],
    );
    await page.context().close();
  });

  test('a person the sign-in policy keeps out is sent back to the sign-in page with the reason', async () => {
    const settings = '/api/admin/auth/saml/settings';
    try {
      assert.equal((await ctx.admin.post(settings, { emailDomains: 'corp.example' })).statusCode, 200);
      idp.signedIn = 'mallory';
      const page = await (await browser.newContext()).newPage();
      await page.goto(`${baseUrl}/login`);
      await page.getByRole('link', { name: 'Sign in with Corp SSO' }).click();
      await page.waitForURL(/\/login\?refused$/);
      assert.match(
        await textOf(page.getByRole('alert')),
        /Only people with an email at corp\.example may sign in here \(not mallory@elsewhere\.example\)/,
      );
      const response = await page.request.get(`${baseUrl}/api/admin/user`);
      assert.equal(response.status(), 401);
      await page.context().close();
    } finally {
      await ctx.admin.post(settings, { emailDomains: '' });
    }
  });
});
