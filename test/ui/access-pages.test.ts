import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { buildWebUi, launchBrowser, shows, signIn, textOf, waitForTexts, waitUntil, watchForProblems } from '../helpers/browser.js';
import { startServer, stopServer, type RunningServer } from '../helpers/server-process.js';
import { createServerDatabase } from '../helpers/test-database.js';
import { STRONG_PASSWORD } from '../helpers/test-app.js';

// Groups, a project's people and service accounts in a real browser, and a project role deciding what a person
// may do on a flag's page.
let server: RunningServer;
let browser: Browser;
let page: Page;
const pageProblems: string[] = [];
let dataDir: string;
let database: Awaited<ReturnType<typeof createServerDatabase>> | undefined;
const TOKEN = '*:*.access-pages-test-token-0123456789';

async function api(method: string, path: string, body?: unknown, authorization = TOKEN): Promise<Response> {
  return fetch(`${server.baseUrl}${path}`, {
    method,
    headers: { authorization, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

const rowOf = (table: string, text: string) => page.getByRole('table', { name: table }).locator('tr', { hasText: text });

/** The on/off switch of a flag's environment, as a second person sees it on the flag's page. */
async function switchOf(viewer: Page, project: string, flag: string) {
  await viewer.goto(`${server.baseUrl}/projects/${project}/flags/${flag}`);
  const control = viewer.getByRole('switch', { name: `${flag} in development` });
  await control.waitFor();
  return control;
}

describe('groups, project access and service accounts in a browser', { timeout: 180_000 }, () => {
  before(async () => {
    buildWebUi();
    dataDir = await mkdtemp(join(tmpdir(), 'vexil-ui-access-'));
    database = await createServerDatabase();
    server = await startServer({ DATA_DIR: dataDir, ...database.env, INIT_ADMIN_API_TOKENS: TOKEN });
    for (const [username, rootRole] of [
      ['ops', 'Admin'],
      ['dev', 'Viewer'],
    ]) {
      assert.equal((await api('POST', '/api/admin/user-admin', { username, rootRole, password: STRONG_PASSWORD })).status, 201);
    }
    for (const project of ['payments', 'search']) {
      assert.equal((await api('POST', '/api/admin/projects', { id: project, name: project })).status, 201);
      assert.equal((await api('POST', `/api/admin/projects/${project}/features`, { name: `${project}-flag` })).status, 201);
    }
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1360, height: 900 } });
    watchForProblems(page, pageProblems);
    page.on('dialog', (dialog) => void dialog.accept());
    await signIn(page, server.baseUrl, 'ops', STRONG_PASSWORD);
  });

  after(async () => {
    await browser?.close();
    if (server) await stopServer(server);
    await database?.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  test('a group is created with SSO names and a member, then edited', async () => {
    await page.goto(`${server.baseUrl}/admin/groups`);
    await shows(page, 'No groups yet.');
    const form = page.getByRole('form', { name: 'New group' });
    await form.getByLabel('Name').fill('Payments team');
    await form.getByLabel('SSO groups').fill('payments, payments-oncall, payments');
    await form.getByLabel('Members').selectOption({ label: 'dev' });
    await form.getByRole('button', { name: 'Create group' }).click();
    const row = rowOf('Groups', 'Payments team');
    await waitForTexts(row.locator('td'), (texts) => texts[1] === 'payments, payments-oncall');
    assert.deepEqual((await row.locator('td').allInnerTexts()).slice(0, 5), [
      'Payments team',
      'payments, payments-oncall',
      '—',
      'dev',
      '—',
    ]);

    await row.getByRole('button', { name: 'Edit' }).click();
    const edit = page.getByRole('form', { name: 'Edit group Payments team' });
    await edit.getByLabel('Description').fill('Ships the checkout');
    await edit.getByRole('button', { name: 'Save group' }).click();
    await shows(page, 'Ships the checkout');
    const stored = (await (await api('GET', '/api/admin/groups')).json()) as {
      groups: Array<{ name: string; description: string; mappingsSSO: string[]; users: Array<{ user: { username: string } }> }>;
    };
    assert.deepEqual(
      stored.groups.map((group) => [group.name, group.description, group.mappingsSSO, group.users.map((member) => member.user.username)]),
      [['Payments team', 'Ships the checkout', ['payments', 'payments-oncall'], ['dev']]],
    );
  });

  test("a project role given to the group decides what its member may do on that project's flags, and only there", async () => {
    const devPage = await (await browser.newContext()).newPage();
    await signIn(devPage, server.baseUrl, 'dev', STRONG_PASSWORD);
    assert.equal(await (await switchOf(devPage, 'payments', 'payments-flag')).isDisabled(), true, 'a root Viewer cannot switch');

    await page.goto(`${server.baseUrl}/projects/payments/access`);
    await shows(page, 'nobody has a role in this project yet');
    const grant = page.getByRole('form', { name: 'Give access' });
    await grant.getByLabel('To a').selectOption('group');
    await grant.getByLabel('Group').selectOption({ label: 'Payments team' });
    await grant.getByLabel('Role').selectOption({ label: 'Member' });
    await grant.getByRole('button', { name: 'Give access' }).click();
    const row = rowOf('Project access', 'Payments team');
    await waitForTexts(row.locator('td'), (texts) => texts[1] === 'group of 1');
    assert.equal(await row.getByLabel('Role of Payments team').inputValue(), '5');

    const paymentsSwitch = await switchOf(devPage, 'payments', 'payments-flag');
    assert.equal(await paymentsSwitch.isDisabled(), false, 'a Member of payments switches its flags');
    await paymentsSwitch.click();
    await waitUntil(async () => {
      const flag = (await (await api('GET', '/api/admin/projects/payments/features/payments-flag')).json()) as {
        environments: Array<{ name: string; enabled: boolean }>;
      };
      return flag.environments.find((environment) => environment.name === 'development')?.enabled === true;
    });
    assert.equal(await (await switchOf(devPage, 'search', 'search-flag')).isDisabled(), true, 'and nothing in another project');

    // The project page offers a Member what a Member may do there, and nothing more; another project nothing.
    await devPage.goto(`${server.baseUrl}/projects/payments`);
    await devPage.getByRole('form', { name: 'New flag' }).waitFor();
    await shows(devPage, "Only a project Owner, an Editor or an Admin changes the project's settings.");
    assert.equal(await devPage.getByRole('button', { name: 'Delete project' }).count(), 0);
    assert.equal(await devPage.getByRole('button', { name: 'Save project' }).count(), 0);
    assert.equal(await devPage.getByRole('button', { name: 'Remove development from the project' }).count(), 0);
    await devPage.goto(`${server.baseUrl}/projects/search`);
    await devPage.getByRole('heading', { name: 'Flag health' }).waitFor();
    assert.equal(await devPage.getByRole('form', { name: 'New flag' }).count(), 0);
    assert.equal(await devPage.getByRole('button', { name: 'Delete project' }).count(), 0);
    await devPage.screenshot({ path: join(dataDir, 'project-as-member.png'), fullPage: true });

    await row.getByLabel('Role of Payments team').selectOption({ label: 'Viewer' });
    await waitUntil(async () => {
      const access = (await (await api('GET', '/api/admin/projects/payments/access')).json()) as { groups: Array<{ roles: number[] }> };
      return access.groups[0]?.roles[0] === 6;
    });
    assert.equal(await (await switchOf(devPage, 'payments', 'payments-flag')).isDisabled(), true, 'a project Viewer cannot switch');
    await page.screenshot({ path: join(dataDir, 'project-access.png') });
    await devPage.context().close();
  });

  test('a service account gets a token shown once, its use is listed, and deleting the token ends it', async () => {
    await page.goto(`${server.baseUrl}/admin/service-accounts`);
    const form = page.getByRole('form', { name: 'New service account' });
    await form.getByLabel('Username').fill('ci-bot');
    await form.getByLabel('Role').selectOption({ label: 'Editor' });
    await form.getByRole('button', { name: 'Create service account' }).click();
    await shows(page, 'Created ci-bot.');
    const tokenForm = page.getByRole('form', { name: 'New token for ci-bot' });
    await tokenForm.getByLabel('Token description').fill('deploys');
    await tokenForm.getByRole('button', { name: 'Create token' }).click();
    const secret = await textOf(page.getByTestId('secret'));
    assert.match(secret, /^user:/);

    assert.equal((await api('POST', '/api/admin/projects/search/features', { name: 'from-ci' }, secret)).status, 201);
    await page.reload();
    const row = rowOf('Service accounts', 'ci-bot');
    await waitForTexts(row.locator('td'), (texts) => texts[2] === '1' && texts[3] !== 'never');
    const events = (await (await api('GET', '/api/admin/events?type=feature-created')).json()) as {
      events: Array<{ featureName: string; createdBy: string }>;
    };
    assert.equal(events.events.find((event) => event.featureName === 'from-ci')?.createdBy, 'ci-bot');

    await row.getByRole('button', { name: 'Tokens' }).click();
    await rowOf('Tokens of ci-bot', 'deploys').getByRole('button', { name: 'Delete token' }).click();
    await shows(page, 'No tokens yet.');
    assert.equal((await api('GET', '/api/admin/projects', undefined, secret)).status, 401);
    await page.screenshot({ path: join(dataDir, 'service-accounts.png') });
    assert.deepEqual(pageProblems, []);
  });
});
