import assert from 'node:assert/strict';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { shows, signIn, textOf, waitForTexts, watchForProblems } from '../helpers/browser.js';
import { STRONG_PASSWORD } from '../helpers/test-app.js';
import { useUiServer } from '../helpers/ui-server.js';

// Sign-in in a real browser: a person sees where they are signed in and ends a session they do not recognise; an
// Admin ends a user's sessions from the Users page (each ended browser is signed out at its next request), reads
// the sign-in history there, and sets who the identity provider may bring in.
const ui = useUiServer('sign-in', {
  seed: async (api) => {
    await api('POST', '/api/admin/user-admin', { username: 'mia', name: 'Mia Mobile', rootRole: 'Viewer', password: STRONG_PASSWORD });
    await api('POST', '/api/admin/user-admin', { email: 'rafa@example.com', name: 'Rafa', rootRole: 'Viewer', password: STRONG_PASSWORD });
  },
});

const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';
const PHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1';

async function browserOfMia(userAgent: string): Promise<Page> {
  const context = await ui.browser.newContext({ viewport: { width: 1360, height: 900 }, userAgent });
  const page = await context.newPage();
  watchForProblems(page, ui.problems);
  page.on('dialog', (dialog) => void dialog.accept());
  await signIn(page, ui.server.baseUrl, 'mia', STRONG_PASSWORD);
  return page;
}

/** Whether the browser is still signed in: its next request to the API answers, or a 401 sends it to sign in. */
async function signedIn(page: Page): Promise<boolean> {
  const status = await page.evaluate(async () => (await fetch('/api/admin/user')).status);
  return status === 200;
}

const rowsOf = (page: Page, table: string) => page.getByRole('table', { name: table }).locator('tbody tr');

describe('sign-in pages in a browser', { timeout: 120_000 }, () => {
  test('a person ends the session of a browser they do not recognise; an Admin ends all of a user’s sessions', async () => {
    const laptop = await browserOfMia(FIREFOX);
    const phone = await browserOfMia(PHONE);

    await laptop.goto(`${ui.server.baseUrl}/profile`);
    const rows = await waitForTexts(rowsOf(laptop, 'Your sessions'), (texts) => texts.length === 2);
    // This browser says so and has no End button; the phone has one.
    const laptopRow = rowsOf(laptop, 'Your sessions').filter({ hasText: 'Firefox on Linux' });
    const phoneRow = rowsOf(laptop, 'Your sessions').filter({ hasText: 'Safari on iOS' });
    assert.deepEqual(rows.map((row) => row.split('\t').slice(0, 2)).sort(), [
      ['Firefox on Linux This browser', '127.0.0.1'],
      ['Safari on iOS', '127.0.0.1'],
    ]);
    assert.equal(await laptopRow.getByRole('button', { name: 'End' }).count(), 0);
    assert.equal(await phoneRow.getByRole('button', { name: 'End' }).count(), 1);
    await laptop.screenshot({ path: join(ui.workDir, 'profile-sessions.png'), fullPage: true });

    await phoneRow.getByRole('button', { name: 'End' }).click();
    await shows(laptop, 'The session was ended.');
    await waitForTexts(rowsOf(laptop, 'Your sessions'), (texts) => texts.length === 1 && texts[0]!.startsWith('Firefox on Linux'));
    assert.equal(await signedIn(phone), false, 'the phone is signed out');
    assert.equal(await signedIn(laptop), true, 'the laptop is not');

    // An Admin opens Mia's sessions under her row on the Users page and signs her out everywhere.
    await ui.page.goto(`${ui.server.baseUrl}/admin/users`);
    await ui.page
      .getByRole('table', { name: 'Users' })
      .locator('tr', { hasText: 'Mia Mobile' })
      .getByRole('button', { name: 'Sessions' })
      .click();
    const hers = await waitForTexts(rowsOf(ui.page, 'Sessions of mia'), (texts) => texts.length === 1);
    assert.deepEqual(hers[0]!.split('\t').slice(0, 2), ['Firefox on Linux', '127.0.0.1']);
    await ui.page.screenshot({ path: join(ui.workDir, 'user-sessions.png'), fullPage: true });
    await ui.page.getByRole('region', { name: 'Sessions of mia' }).getByRole('button', { name: 'End all sessions' }).click();
    await shows(ui.page, 'No open sessions.');
    assert.equal(await signedIn(laptop), false, 'the laptop is signed out too');

    // Both ends are in the event log, as Mia's and as the Admin's.
    const events = (await (await ui.api('GET', '/api/admin/search/events?type=IS:user-sessions-ended')).json()) as {
      events: Array<{ createdBy: string; data: { username: string; sessions: number } }>;
    };
    assert.deepEqual(
      events.events.map((event) => [event.createdBy, event.data.username, event.data.sessions]),
      [
        ['ops', 'mia', 1],
        ['mia', 'mia', 1],
      ],
    );
    await laptop.context().close();
    await phone.context().close();
  });

  test('the Users page shows the sign-in history, refusals with their reason, newest first', async () => {
    const refused = await fetch(`${ui.server.baseUrl}/auth/simple/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': PHONE },
      body: JSON.stringify({ username: 'mia', password: 'a guess' }),
    });
    assert.equal(refused.status, 401);
    await ui.page.goto(`${ui.server.baseUrl}/admin/users`);
    const rows = await waitForTexts(rowsOf(ui.page, 'Sign-in history'), (texts) => texts.length === 4);
    // Newest first: the refusal just now, Mia's two sign-ins (phone, then laptop), the Admin's own (headless Chromium).
    assert.deepEqual(
      rows.map((row) => row.split('\t').slice(1)),
      [
        ['mia', 'Password', '127.0.0.1 · Safari on iOS', 'Refused Wrong username or password'],
        ['mia', 'Password', '127.0.0.1 · Safari on iOS', 'Signed in'],
        ['mia', 'Password', '127.0.0.1 · Firefox on Linux', 'Signed in'],
        ['ops', 'Password', '127.0.0.1 · Chrome on Linux', 'Signed in'],
      ],
    );
    await ui.page.getByRole('region', { name: 'Sign-in history' }).screenshot({ path: join(ui.workDir, 'sign-in-history.png') });
  });

  test('an Admin sets who the identity provider may bring in; a mistake is shown next to its field and nothing is saved', async () => {
    await ui.page.goto(`${ui.server.baseUrl}/admin/sign-in`);
    await shows(ui.page, 'OpenID Connect sign-in is not configured on this server');
    const form = ui.page.getByRole('form', { name: 'OpenID Connect sign-in policy' });
    await form.getByLabel('Allowed email domains').fill('acme.example, not a domain');
    await form.getByRole('button', { name: 'Save OpenID Connect settings' }).click();
    assert.match(await textOf(form.locator('.field-error')), /"not a domain" is not a domain/);
    assert.deepEqual(await (await ui.api('GET', '/api/admin/auth/oidc/settings')).json(), {
      enabled: false,
      autoCreate: true,
      defaultRootRole: 'Viewer',
      emailDomains: '',
    });

    await form.getByLabel('Allowed email domains').fill('acme.example, Corp.Acme.example');
    await form.getByLabel('Create an account for a person signing in for the first time').uncheck();
    await form.getByLabel('Role of new accounts').selectOption('Editor');
    await form.getByRole('button', { name: 'Save OpenID Connect settings' }).click();
    await shows(ui.page, 'Saved.');
    assert.deepEqual(await (await ui.api('GET', '/api/admin/auth/oidc/settings')).json(), {
      enabled: false,
      autoCreate: false,
      defaultRootRole: 'Editor',
      emailDomains: 'acme.example,corp.acme.example',
    });
    await ui.page.reload();
    assert.equal(await form.getByLabel('Allowed email domains').inputValue(), 'acme.example,corp.acme.example');
    assert.equal(await form.getByLabel('Create an account for a person signing in for the first time').isChecked(), false);
    assert.equal(await form.getByLabel('Role of new accounts').inputValue(), 'Editor');
    await ui.page.screenshot({ path: join(ui.workDir, 'sign-in-policy.png'), fullPage: true });
    assert.deepEqual(ui.problems, []);
  });

  test('an Admin turns SCIM provisioning on: the token shows once, people it brings in and deactivates show on the Users page', async () => {
    await ui.page.goto(`${ui.server.baseUrl}/admin/sign-in`);
    const provisioning = ui.page.getByRole('region', { name: 'Provisioning (SCIM)' });
    await shows(ui.page, 'Off: there is no SCIM token.');
    assert.match(await textOf(provisioning), new RegExp(`SCIM base URL: ${ui.server.baseUrl}/scim/v2`));
    await provisioning.getByRole('button', { name: 'Make a SCIM token' }).click();
    const token = await textOf(provisioning.getByTestId('secret'));
    assert.match(token, /^scim:[0-9a-f]{64}$/);
    assert.match(await textOf(provisioning.getByTestId('scim-status')), /^On: token made .* by ops; not used yet\.$/);
    await ui.page.screenshot({ path: join(ui.workDir, 'scim-token.png'), fullPage: true });

    // The identity provider brings Sam in and later deactivates him.
    const scim = (method: string, path: string, body: unknown) =>
      fetch(`${ui.server.baseUrl}/scim/v2${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' },
        body: JSON.stringify(body),
      });
    const created = await scim('POST', '/Users', { userName: 'sam@acme.example', name: { givenName: 'Sam', familyName: 'Scim' } });
    assert.equal(created.status, 201);
    const { id } = (await created.json()) as { id: string };
    const deactivated = await scim('PATCH', `/Users/${id}`, { Operations: [{ op: 'replace', value: { active: false } }] });
    assert.equal(deactivated.status, 200);

    await ui.page.goto(`${ui.server.baseUrl}/admin/users`);
    const samRow = ui.page.getByRole('table', { name: 'Users' }).locator('tr', { hasText: 'Sam Scim' });
    assert.match(await textOf(samRow), /Sam Scim Deactivated SCIM\s*sam@acme\.example/);
    assert.doesNotMatch(
      await textOf(ui.page.getByRole('table', { name: 'Users' }).locator('tr', { hasText: 'Mia Mobile' })),
      /SCIM|Deactivated/,
    );
    await ui.page.getByRole('table', { name: 'Users' }).screenshot({ path: join(ui.workDir, 'users-scim.png') });

    // Seen from the sign-in page: used; turned off, the provider is refused.
    await ui.page.goto(`${ui.server.baseUrl}/admin/sign-in`);
    assert.match(await textOf(provisioning.getByTestId('scim-status')), /; last used /);
    assert.equal(await provisioning.getByTestId('secret').count(), 0, 'the token is not shown again');
    await provisioning.getByRole('button', { name: 'Turn provisioning off' }).click();
    await shows(ui.page, 'Off: there is no SCIM token.');
    assert.equal((await scim('GET', '/Users', undefined)).status, 401);
    assert.deepEqual(ui.problems, []);
  });

  test('a reset link leads to choosing a new password once; the sign-in page asks for one by email without telling who has an account', async () => {
    // The Admin makes the link on the Users page, to hand over.
    await ui.page.goto(`${ui.server.baseUrl}/admin/users`);
    await ui.page
      .getByRole('table', { name: 'Users' })
      .locator('tr', { hasText: 'Rafa' })
      .getByRole('button', { name: 'Reset link' })
      .click();
    await ui.page.getByRole('button', { name: 'Make reset link' }).click();
    const link = new URL(await textOf(ui.page.getByTestId('secret')));
    assert.equal(link.pathname, '/reset-password');
    await ui.page.screenshot({ path: join(tmpdir(), 'vexil-reset-link.png'), fullPage: true });
    const context = await ui.browser.newContext({ viewport: { width: 1360, height: 900 } });
    const page = await context.newPage();
    watchForProblems(page, ui.problems);
    try {
      await page.goto(`${ui.server.baseUrl}${link.pathname}${link.search}`);
      assert.equal(await textOf(page.getByTestId('reset-for')), 'rafa@example.com');
      const form = page.getByRole('form', { name: 'New password' });
      await form.getByLabel('New password').fill('short');
      await form.getByLabel('The same again').fill('short');
      await form.getByRole('button', { name: 'Set password' }).click();
      await shows(page, 'The password is too weak');
      await form.getByLabel('New password').fill('Brand-New-Pass-77!');
      await form.getByLabel('The same again').fill('Brand-New-Pass-77!');
      await form.getByRole('button', { name: 'Set password' }).click();
      await shows(page, 'Your password is changed.');
      await page.screenshot({ path: join(tmpdir(), 'vexil-reset-password.png'), fullPage: true });
      await signIn(page, ui.server.baseUrl, 'rafa@example.com', 'Brand-New-Pass-77!');

      // Used once: the same link now says so.
      await page.goto(`${ui.server.baseUrl}${link.pathname}${link.search}`);
      await shows(page, 'This link is unknown, used or expired.');
      assert.equal(page.url().includes('/reset-password'), true, 'the page stays, not sent to sign in');

      await page.getByRole('link', { name: 'Back to sign in' }).click();
      await page
        .getByRole('button', { name: 'Sign out' })
        .click()
        .catch(() => undefined);
      await page.goto(`${ui.server.baseUrl}/login`);
      await page.getByRole('button', { name: 'Forgot your password?' }).click();
      const ask = page.getByRole('form', { name: 'Reset password' });
      await ask.getByLabel('Your email').fill('nobody@example.com');
      await ask.getByRole('button', { name: 'Email me a reset link' }).click();
      await shows(page, 'If someone who signs in with a password has this address');
      await page.screenshot({ path: join(tmpdir(), 'vexil-forgot-password.png'), fullPage: true });
    } finally {
      await context.close();
    }
  });

  test('an invite link made on the Users page leads a newcomer to make a Viewer account; turned off, it says so', async () => {
    await ui.page.goto(`${ui.server.baseUrl}/admin/users`);
    const invites = ui.page.getByRole('region', { name: 'Invite links' });
    await invites.getByLabel('Name').fill('Join the flag team');
    await invites.getByLabel('Works for').selectOption('30');
    await invites.getByRole('button', { name: 'Make invite link' }).click();
    const link = new URL(await textOf(invites.getByTestId('secret')));
    assert.match(link.pathname, /^\/invite\/[A-Za-z0-9_-]{20,}$/);
    const row = invites.getByRole('table', { name: 'Invite links' }).locator('tr', { hasText: 'Join the flag team' });
    assert.match(await textOf(row), /Join the flag team\s*Working.*None/);
    await invites.screenshot({ path: join(tmpdir(), 'vexil-invite-links.png') });

    const context = await ui.browser.newContext({ viewport: { width: 1360, height: 900 } });
    const page = await context.newPage();
    watchForProblems(page, ui.problems);
    try {
      await page.goto(`${ui.server.baseUrl}${link.pathname}`);
      const form = page.getByRole('form', { name: 'Make your account' });
      await form.getByLabel('Name').fill('Nova Newcomer');
      await form.getByLabel('Email').fill('nova@example.com');
      await form.getByLabel('Password').fill('short');
      await form.getByRole('button', { name: 'Make my account' }).click();
      await shows(page, 'The password must be at least 10 characters long');
      await form.getByLabel('Password').fill('Nova-Strong-Pass-42!');
      await form.getByRole('button', { name: 'Make my account' }).click();
      await shows(page, 'Your account nova@example.com is made.');
      await page.screenshot({ path: join(tmpdir(), 'vexil-invite-signed-up.png'), fullPage: true });
      await signIn(page, ui.server.baseUrl, 'nova@example.com', 'Nova-Strong-Pass-42!');

      // The Admin sees who came in through the link, and turns it off: the link then says so.
      await ui.page.reload();
      assert.match(await textOf(row), /Working.*nova@example\.com/);
      await row.getByRole('button', { name: 'Turn off' }).click();
      await waitForTexts(row, (texts) => texts.some((text) => /\bOff\b/.test(text)));
      const stranger = await ui.browser.newContext();
      const strangerPage = await stranger.newPage();
      await strangerPage.goto(`${ui.server.baseUrl}${link.pathname}`);
      await shows(strangerPage, 'This invite link is unknown, turned off or expired.');
      await strangerPage.screenshot({ path: join(tmpdir(), 'vexil-invite-off.png'), fullPage: true });
      await stranger.close();
    } finally {
      await context.close();
    }
    assert.deepEqual(ui.problems, []);
  });
});
