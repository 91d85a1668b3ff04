import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { buildWebUi, launchBrowser, shows, textOf } from '../helpers/browser.js';
import { expectStatus } from '../helpers/assertions.js';
import { eventsSince, lastEventId } from '../helpers/events.js';
import { freePort } from '../helpers/free-port.js';
import { startOidcProvider, type TestOidcProvider } from '../helpers/oidc-provider.js';
import { createProject, projectPath } from '../helpers/projects.js';
import { STRONG_PASSWORD, startTestApp, type TestApp } from '../helpers/test-app.js';

// Sign-in through a real OpenID Connect provider (`oidc-provider`, in this process), driven by a real browser:
// the user is made at the first sign-in, the groups claim grants project access through SSO-mapped groups and
// takes it away at the next sign-in, and forged, expired, cross-browser and replayed answers are refused.
let provider: TestOidcProvider;
let ctx: TestApp;
let baseUrl: string;
let browser: Browser;
const PROVIDER_NAME = 'Acme SSO';
const MEMBER = 5;

/** A fresh browser (no provider session, no Vexil session), signing in as `login` at the provider's page. */
async function signInAs(login: string, options: { context?: BrowserContext; onCallback?: (url: string) => void } = {}) {
  const context = options.context ?? (await browser.newContext());
  const page = await context.newPage();
  if (options.onCallback) {
    const onCallback = options.onCallback;
    page.on('request', (request) => {
      if (request.url().includes('/auth/oidc/callback')) onCallback(request.url());
    });
  }
  await page.goto(`${baseUrl}/login?next=${encodeURIComponent('/projects')}`);
  await page.getByRole('link', { name: `Sign in with ${PROVIDER_NAME}` }).click();
  await atProvider(page, login);
  return { context, page };
}

/** Once a sign-in has left for the provider: signs in on its page, unless it knows the browser and sends it straight back. */
async function atProvider(page: Page, login: string): Promise<void> {
  const backInVexil = (url: URL) => url.href.startsWith(baseUrl) && !/^\/(login|auth\/oidc\/login)/.test(url.pathname);
  await page.waitForURL((url) => url.href.startsWith(provider.issuer) || backInVexil(url) || url.search === '?refused');
  if (page.url().startsWith(provider.issuer)) {
    await page.locator('input[name="login"]').fill(login);
    await page.locator('input[name="password"]').fill('any password');
    await page.getByRole('button', { name: 'Sign-in' }).click();
  }
  await page.waitForURL((url) => backInVexil(url) || url.search === '?refused');
}

async function sessionUser(page: Page): Promise<{ email: string; name: string; rootRole: number } | undefined> {
  const response = await page.request.get(`${baseUrl}/api/admin/user`);
  return response.ok() ? ((await response.json()) as { user: { email: string; name: string; rootRole: number } }).user : undefined;
}

/** Rows in every table of the database, by table. */
async function rowCounts(app: TestApp): Promise<Record<string, number>> {
  const tables = await app.db
    .selectFrom('information_schema.tables' as never)
    .select('table_name' as never)
    .where('table_schema' as never, '=', 'public' as never)
    .where('table_type' as never, '=', 'BASE TABLE' as never)
    .execute();
  const counts: Record<string, number> = {};
  for (const { table_name } of tables as Array<{ table_name: string }>) {
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql.table(table_name)}`.execute(app.db);
    counts[table_name] = rows[0]!.n;
  }
  return counts;
}

async function refusedWith(page: Page, reason: RegExp): Promise<void> {
  await page.waitForURL(/\/login\?refused$/);
  assert.match(await textOf(page.getByRole('alert')), reason);
  assert.equal(await sessionUser(page), undefined, 'a refused sign-in opens no session');
}

describe('signing in with OpenID Connect', { timeout: 180_000 }, () => {
  before(async () => {
    buildWebUi();
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    provider = await startOidcProvider(`${baseUrl}/auth/oidc/callback`);
    ctx = await startTestApp({
      env: {
        BASE_URL: baseUrl,
        OIDC_ISSUER: provider.issuer,
        OIDC_CLIENT_ID: provider.clientId,
        OIDC_CLIENT_SECRET: provider.clientSecret,
        OIDC_SCOPES: 'openid email profile groups',
        OIDC_NAME: PROVIDER_NAME,
      },
    });
    await ctx.app.listen({ port, host: '127.0.0.1' });
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await ctx?.close();
    await provider?.close();
  });

  test('a browser call that fails says what failed (this app, started here, is hardened after the browser helpers)', async () => {
    const page = await browser.newPage();
    await page.goto(`${baseUrl}/login`);
    await assert.rejects(page.locator('#nothing-has-this-id').click({ timeout: 100 }), /Timeout 100ms exceeded/);
    await page.close();
  });

  test('the first sign-in creates the user, recorded as made by the provider; a later one updates name and email', async () => {
    provider.accounts.set('ada', { email: 'ada@acme.example', name: 'Ada Lovelace', groups: [] });
    const before = await lastEventId(ctx);
    const { context, page } = await signInAs('ada');
    await page.waitForURL(`${baseUrl}/projects`);
    const user = await sessionUser(page);
    assert.deepEqual(user && [user.email, user.name, user.rootRole], ['ada@acme.example', 'Ada Lovelace', 3]);
    const created = (await eventsSince(ctx, before)).filter((event) => event.type === 'user-created');
    assert.deepEqual(
      created.map((event) => [event.createdBy, (event.data as { email: string }).email]),
      [[PROVIDER_NAME, 'ada@acme.example']],
    );
    const seen = await ctx.db.selectFrom('users').select('seen_at').where('email', '=', 'ada@acme.example').executeTakeFirstOrThrow();
    assert.ok(seen.seen_at, 'a sign-in is when the user was last seen');
    const signedIn = (await eventsSince(ctx, before)).filter((event) => event.type === 'user-signed-in');
    assert.deepEqual(
      signedIn.map((event) => [event.createdBy, event.data]),
      [
        [
          PROVIDER_NAME,
          {
            id: (created[0]!.data as { id: number }).id,
            username: 'ada@acme.example',
            authType: 'oidc',
            address: '127.0.0.1',
          },
        ],
      ],
    );
    await context.close();

    provider.accounts.set('ada', { email: 'ada.king@acme.example', name: 'Ada King', groups: [] });
    const again = await signInAs('ada');
    const renamed = await sessionUser(again.page);
    assert.deepEqual(renamed && [renamed.email, renamed.name], ['ada.king@acme.example', 'Ada King']);
    const users = await ctx.db.selectFrom('users').select('email').where('oidc_subject', '=', 'ada').execute();
    assert.deepEqual(users, [{ email: 'ada.king@acme.example' }], 'the same user, not a second one');
    await again.context.close();
  });

  test('a group claim grants project access through a mapped group, and losing it takes the access away at the next sign-in', async () => {
    const project = await createProject(ctx);
    const group = await ctx.admin.post('/api/admin/groups', { name: 'Payments team', mappingsSSO: ['payments'] });
    assert.equal(group.statusCode, 201);
    const groupId = (group.json() as { id: number }).id;
    assert.equal((await ctx.admin.post(`${projectPath(project)}/access`, { roles: [MEMBER], groups: [groupId] })).statusCode, 200);

    provider.accounts.set('grace', { email: 'grace@acme.example', name: 'Grace Hopper', groups: ['payments', 'everyone'] });
    const { context, page } = await signInAs('grace');
    const createFlag = (name: string) =>
      page.request.post(`${baseUrl}${projectPath(project)}/features`, { data: { name }, headers: { 'content-type': 'application/json' } });
    assert.equal((await createFlag('grace-flag-1')).status(), 201, 'a Member through the payments group');
    const members = (await ctx.admin.get(`/api/admin/groups/${groupId}`)).json() as {
      users: Array<{ user: { email: string }; createdBy: string }>;
    };
    assert.deepEqual(
      members.users.map((member) => [member.user.email, member.createdBy]),
      [['grace@acme.example', PROVIDER_NAME]],
    );

    provider.accounts.set('grace', { email: 'grace@acme.example', name: 'Grace Hopper', groups: ['everyone'] });
    const before = await lastEventId(ctx);
    // The provider remembers this browser: the next sign-in comes straight back with the new claim.
    await page.goto(`${baseUrl}/auth/oidc/login`);
    await atProvider(page, 'grace');
    assert.equal((await createFlag('grace-flag-2')).status(), 403, 'no longer in the payments group');
    assert.deepEqual(
      (await eventsSince(ctx, before)).filter((event) => event.type.startsWith('group-user')).map((event) => event.type),
      ['group-user-removed'],
    );
    await context.close();
  });

  test('an ID token signed with a key the provider never published is refused', async () => {
    provider.accounts.set('mallory', { email: 'mallory@acme.example', name: 'Mallory', groups: [] });
    provider.tamperIdToken = (_token, claims) => provider.signWithForeignKey({ ...claims, email: 'admin@acme.example' });
    try {
      const { context, page } = await signInAs('mallory');
      await refusedWith(page, /answer was refused/);
      await context.close();
    } finally {
      provider.tamperIdToken = undefined;
    }
    assert.equal(await ctx.db.selectFrom('users').select('id').where('email', '=', 'mallory@acme.example').executeTakeFirst(), undefined);
  });

  test('an expired ID token is refused, even with the provider signature', async () => {
    provider.accounts.set('late', { email: 'late@acme.example', name: 'Late', groups: [] });
    const past = Math.floor(Date.now() / 1000) - 3600;
    provider.tamperIdToken = (_token, claims) => provider.signWithProviderKey({ ...claims, iat: past - 600, exp: past });
    try {
      const { context, page } = await signInAs('late');
      await refusedWith(page, /answer was refused.*(exp|expired)/i);
      await context.close();
    } finally {
      provider.tamperIdToken = undefined;
    }
  });

  test('a callback with another state, or without the browser that started it, is refused', async () => {
    provider.accounts.set('eve', { email: 'eve@acme.example', name: 'Eve', groups: [] });
    const context = await browser.newContext();
    const page = await context.newPage();
    provider.rewriteNextCallback = (params) => params.set('state', 'a-state-this-browser-never-had');
    await page.goto(`${baseUrl}/login`);
    await page.getByRole('link', { name: `Sign in with ${PROVIDER_NAME}` }).click();
    await atProvider(page, 'eve');
    await refusedWith(page, /not started in this browser/);
    await context.close();
    // The refusal is in the sign-in audit, with the reason the page showed.
    const [latest] = (await ctx.admin.get('/api/admin/signons?limit=1').then((response) => response.json())).signons as Array<{
      authType: string;
      successful: boolean;
      failureReason: string;
      ip: string;
    }>;
    assert.deepEqual([latest!.authType, latest!.successful, latest!.ip], ['oidc', false, '127.0.0.1']);
    assert.match(latest!.failureReason, /not started in this browser/);
  });

  test('a replayed callback, and a used code under a new sign-in, are refused', async () => {
    provider.accounts.set('rita', { email: 'rita@acme.example', name: 'Rita', groups: [] });
    let firstCallback = '';
    const first = await signInAs('rita', { onCallback: (url) => (firstCallback ||= url) });
    assert.ok(await sessionUser(first.page), 'the first use signs in');
    // The replay comes from a browser without the first one's cookies. (Clearing the signed-in page's cookies instead
    // raced its own polling: a 401 sends that page to the sign-in page while the replay is under way.)
    await first.context.close();
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(firstCallback);
    await refusedWith(page, /not started in this browser|already been used/);

    // A new sign-in in the same browser, whose callback carries the old, redeemed code with the new state.
    const usedCode = new URL(firstCallback).searchParams.get('code')!;
    provider.rewriteNextCallback = (params) => params.set('code', usedCode);
    await page.goto(`${baseUrl}/auth/oidc/login`);
    await atProvider(page, 'rita');
    await refusedWith(page, /answer was refused.*invalid_grant|grant request is invalid/i);
    await context.close();
  });

  test('anyone may start sign-ins without end: the server keeps nothing for them, and a person still signs in', async () => {
    const rowsBefore = await rowCounts(ctx);
    const starts = [];
    for (let i = 0; i < 500; i += 1) starts.push(ctx.as().get('/auth/oidc/login'));
    for (const response of await Promise.all(starts)) {
      assert.equal(response.statusCode, 302);
      assert.ok(String(response.headers.location).startsWith(provider.issuer), 'each is sent to the provider');
    }
    assert.deepEqual(await rowCounts(ctx), rowsBefore, 'no table grows with sign-ins started and never finished');

    provider.accounts.set('flo', { email: 'flo@acme.example', name: 'Flo', groups: [] });
    const { context, page } = await signInAs('flo');
    await page.waitForURL(`${baseUrl}/projects`);
    assert.equal((await sessionUser(page))?.email, 'flo@acme.example');
    await context.close();
  });

  test('a sealed sign-in cookie that was changed is refused', async () => {
    provider.accounts.set('tim', { email: 'tim@acme.example', name: 'Tim', groups: [] });
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${baseUrl}/auth/oidc/login`);
    const [sealed] = (await context.cookies()).filter((cookie) => cookie.name === 'vexil-oidc-state');
    assert.ok(sealed, 'the sign-in in progress travels in its cookie');
    const bytes = Buffer.from(sealed.value, 'base64url');
    bytes[bytes.length - 1]! ^= 1;
    await context.addCookies([{ ...sealed, value: bytes.toString('base64url') }]);
    await atProvider(page, 'tim');
    await refusedWith(page, /not started in this browser/);
    await context.close();
  });

  test('where to go after signing in stays on this server, however the path is written', async () => {
    provider.accounts.set('otto', { email: 'otto@acme.example', name: 'Otto', groups: [] });
    const forms = ['/\t/evil.example/', '/\n/evil.example/', '/\\evil.example/', '//evil.example/', 'https://evil.example/'];
    for (const next of [...forms, '/.//evil.example/', '/..//evil.example/', '/%2e//evil.example/']) {
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(`${baseUrl}/auth/oidc/login?next=${encodeURIComponent(next)}`);
      await atProvider(page, 'otto');
      assert.equal(new URL(page.url()).origin, baseUrl, `next=${JSON.stringify(next)} keeps the browser here`);
      assert.equal(new URL(page.url()).pathname, '/', `next=${JSON.stringify(next)} returns to the start page`);

      // The sign-in page builds its link to the provider from `next` too.
      await page.goto(`${baseUrl}/login?next=${encodeURIComponent(next)}`);
      const href = await page.getByRole('link', { name: `Sign in with ${PROVIDER_NAME}` }).getAttribute('href');
      assert.equal(href, `/auth/oidc/login?next=${encodeURIComponent('/flags')}`);
      await context.close();
    }
  });

  test('the sign-in policy: only allowed email domains come in, new people only while automatic creation is on, with the default role', async () => {
    const settings = '/api/admin/auth/oidc/settings';
    try {
      assert.equal((await ctx.admin.post(settings, { emailDomains: 'acme.example', defaultRootRole: 'Editor' })).statusCode, 200);
      provider.accounts.set('outsider', { email: 'outsider@elsewhere.example', name: 'Outsider', groups: [] });
      const outsider = await signInAs('outsider');
      await refusedWith(outsider.page, /Only people with an email at acme\.example may sign in here \(not outsider@elsewhere\.example\)/);
      await outsider.context.close();

      provider.accounts.set('newcomer', { email: 'newcomer@acme.example', name: 'Newcomer', groups: [] });
      const newcomer = await signInAs('newcomer');
      assert.equal((await sessionUser(newcomer.page))?.rootRole, 2, 'created with the default role the policy names (Editor)');
      await newcomer.context.close();

      assert.equal((await ctx.admin.post(settings, { autoCreate: false })).statusCode, 200);
      provider.accounts.set('latecomer', { email: 'latecomer@acme.example', name: 'Latecomer', groups: [] });
      const latecomer = await signInAs('latecomer');
      await refusedWith(latecomer.page, /latecomer@acme\.example has no account here, and none is created at sign-in/);
      await latecomer.context.close();
      assert.equal(
        await ctx.db.selectFrom('users').select('id').where('email', '=', 'latecomer@acme.example').executeTakeFirst(),
        undefined,
      );
      // Someone who already has an account still comes in.
      const again = await signInAs('newcomer');
      assert.equal((await sessionUser(again.page))?.email, 'newcomer@acme.example');
      await again.context.close();
    } finally {
      await ctx.admin.post(settings, { emailDomains: '', autoCreate: true, defaultRootRole: 'Viewer' });
    }
  });

  test('an email the provider did not verify passes no domain rule, creates no account and replaces no stored email', async () => {
    const settings = '/api/admin/auth/oidc/settings';
    // A provider where people register themselves: anyone may claim an address of the company.
    provider.accounts.set('claimant', { email: 'ceo@acme.example', name: 'Claimant', groups: [], email_verified: false });
    try {
      expectStatus(await ctx.admin.post(settings, { emailDomains: 'acme.example' }), 200);
      const ruled = await signInAs('claimant');
      await refusedWith(ruled.page, /does not say it verified ceo@acme\.example, so it cannot show an email at acme\.example/);
      await ruled.context.close();
    } finally {
      expectStatus(await ctx.admin.post(settings, { emailDomains: '' }), 200);
    }
    const open = await signInAs('claimant');
    await refusedWith(open.page, /does not say it verified ceo@acme\.example, so no account is created for it/);
    await open.context.close();
    assert.equal(await ctx.db.selectFrom('users').select('id').where('email', '=', 'ceo@acme.example').executeTakeFirst(), undefined);

    // Someone known by their subject keeps the email on record when the provider sends an unverified one.
    provider.accounts.set('drifter', { email: 'drifter@acme.example', name: 'Drifter', groups: [] });
    const first = await signInAs('drifter');
    assert.equal((await sessionUser(first.page))?.email, 'drifter@acme.example');
    await first.context.close();
    provider.accounts.set('drifter', { email: 'ceo@acme.example', name: 'Drifter', groups: [], email_verified: false });
    const second = await signInAs('drifter');
    assert.equal((await sessionUser(second.page))?.email, 'drifter@acme.example');
    await second.context.close();
  });

  test('a person provisioned over SCIM is the one their first sign-in links to; deactivated, the provider cannot sign them in', async () => {
    const { token } = (await ctx.admin.post('/api/admin/scim/token')).json() as { token: string };
    const scim = ctx.as(`Bearer ${token}`);
    const provisioned = await scim.post('/scim/v2/Users', { userName: 'pat@acme.example', name: { formatted: 'Pat Provisioned' } });
    assert.equal(provisioned.statusCode, 201);
    const { id } = provisioned.json() as { id: string };
    provider.accounts.set('pat', { email: 'pat@acme.example', name: 'Pat Provisioned', groups: [] });

    const first = await signInAs('pat');
    assert.equal((await sessionUser(first.page))?.email, 'pat@acme.example');
    const linked = await ctx.db.selectFrom('users').select(['id', 'oidc_subject']).where('email', '=', 'pat@acme.example').execute();
    assert.deepEqual(linked, [{ id: Number(id), oidc_subject: 'pat' }]);

    const deactivated = await scim.patch(`/scim/v2/Users/${id}`, { Operations: [{ op: 'replace', path: 'active', value: false }] });
    assert.equal(deactivated.statusCode, 200);
    assert.equal(await sessionUser(first.page), undefined, 'the open session ended with the deactivation');
    await first.context.close();
    const again = await signInAs('pat');
    await refusedWith(again.page, /This account is deactivated/);
    await again.context.close();
    const audit = (await ctx.admin.get('/api/admin/signons?limit=1')).json() as {
      signons: Array<{ authType: string; failureReason: string }>;
    };
    assert.deepEqual(
      audit.signons.map(({ authType, failureReason }) => ({ authType, failureReason })),
      [{ authType: 'oidc', failureReason: 'This account is deactivated; ask an administrator to reactivate it' }],
    );
  });

  test('an account someone made through an invite link in another person’s name is never linked to that person’s sign-in', async () => {
    const invite = await ctx.admin.post('/api/admin/invite-link/tokens', {
      name: 'invited',
      expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
    });
    const { secret } = invite.json() as { secret: string };
    const planted = await ctx
      .as()
      .post(`/invite/${secret}/signup`, { email: 'ceo@acme.example', name: 'Not the CEO', password: STRONG_PASSWORD });
    assert.equal(planted.statusCode, 200, planted.body);
    provider.accounts.set('ceo', { email: 'ceo@acme.example', name: 'The CEO', groups: [] });

    const attempt = await signInAs('ceo');
    await refusedWith(attempt.page, /was made without confirming that email, so it is not linked/);
    await attempt.context.close();
    const rows = await ctx.db
      .selectFrom('users')
      .select(['oidc_subject', 'email_verified'])
      .where('email', '=', 'ceo@acme.example')
      .execute();
    assert.deepEqual(rows, [{ oidc_subject: null, email_verified: false }]);
  });

  test('the sign-in page offers the provider, and shows the refusal the server set in words, once; never words from the URL', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${baseUrl}/login?error=${encodeURIComponent('Your account is locked: call +1 555 0100')}`);
    await shows(page, `Sign in with ${PROVIDER_NAME}`);
    assert.equal(await page.getByRole('alert').count(), 0, 'a link anyone can write shows nothing');
    await context.addCookies([
      {
        name: 'vexil-sign-in-refused',
        value: encodeURIComponent('The sign-in provider refused: access_denied'),
        domain: new URL(baseUrl).hostname,
        path: '/login',
      },
    ]);
    await page.goto(`${baseUrl}/login?refused`);
    await shows(page, `Sign in with ${PROVIDER_NAME}`);
    assert.equal(await textOf(page.getByRole('alert')), 'The sign-in provider refused: access_denied');
    await page.screenshot({ path: join(tmpdir(), 'vexil-sign-in-refused.png') });
    await page.reload();
    await shows(page, `Sign in with ${PROVIDER_NAME}`);
    assert.equal(await page.getByRole('alert').count(), 0, 'shown once');
    await page.goto(`${baseUrl}/login?refused`);
    assert.ok(await page.getByLabel('Password').isVisible(), 'password sign-in stays on unless OIDC_ONLY is set');
    await page.screenshot({ path: join(tmpdir(), 'vexil-sign-in-oidc.png') });
    await context.close();
  });
});
