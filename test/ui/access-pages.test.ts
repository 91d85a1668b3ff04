import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { shows, signIn, textOf, waitForTexts, waitUntil } from '../helpers/browser.js';
import { useUiServer } from '../helpers/ui-server.js';
import { STRONG_PASSWORD } from '../helpers/test-app.js';

// Groups, a project's people and service accounts in a real browser, and a project role deciding what a person
// may do on a flag's page.

const ui = useUiServer('access', {
  seed: async (api) => {
    await api('POST', '/api/admin/user-admin', { username: 'dev', rootRole: 'Viewer', password: STRONG_PASSWORD });
    for (const project of ['payments', 'search']) {
      await api('POST', '/api/admin/projects', { id: project, name: project });
      await api('POST', `/api/admin/projects/${project}/features`, { name: `${project}-flag` });
    }
  },
});

const rowOf = (table: string, text: string) => ui.page.getByRole('table', { name: table }).locator('tr', { hasText: text });

/** The on/off switch of a flag's environment, as a second person sees it on the flag's page. */
async function switchOf(viewer: Page, project: string, flag: string) {
  await viewer.goto(`${ui.server.baseUrl}/projects/${project}/flags/${flag}`);
  const control = viewer.getByRole('switch', { name: `${flag} in development` });
  await control.waitFor();
  return control;
}

describe('groups, project access and service accounts in a browser', { timeout: 180_000 }, () => {
  test('a group is created with SSO names and a member, then edited', async () => {
    await ui.page.goto(`${ui.server.baseUrl}/admin/groups`);
    await shows(ui.page, 'No groups yet.');
    const form = ui.page.getByRole('form', { name: 'New group' });
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
    const edit = ui.page.getByRole('form', { name: 'Edit group Payments team' });
    await edit.getByLabel('Description').fill('Ships the checkout');
    await edit.getByRole('button', { name: 'Save group' }).click();
    await shows(ui.page, 'Ships the checkout');
    const stored = (await (await ui.api('GET', '/api/admin/groups')).json()) as {
      groups: Array<{ name: string; description: string; mappingsSSO: string[]; users: Array<{ user: { username: string } }> }>;
    };
    assert.deepEqual(
      stored.groups.map((group) => [group.name, group.description, group.mappingsSSO, group.users.map((member) => member.user.username)]),
      [['Payments team', 'Ships the checkout', ['payments', 'payments-oncall'], ['dev']]],
    );
  });

  test("a project role given to the group decides what its member may do on that project's flags, and only there", async () => {
    const devPage = await (await ui.browser.newContext()).newPage();
    await signIn(devPage, ui.server.baseUrl, 'dev', STRONG_PASSWORD);
    assert.equal(await (await switchOf(devPage, 'payments', 'payments-flag')).isDisabled(), true, 'a root Viewer cannot switch');

    await ui.page.goto(`${ui.server.baseUrl}/projects/payments/access`);
    await shows(ui.page, 'nobody has a role in this project yet');
    const grant = ui.page.getByRole('form', { name: 'Give access' });
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
      const flag = (await (await ui.api('GET', '/api/admin/projects/payments/features/payments-flag')).json()) as {
        environments: Array<{ name: string; enabled: boolean }>;
      };
      return flag.environments.find((environment) => environment.name === 'development')?.enabled === true;
    });
    assert.equal(await (await switchOf(devPage, 'search', 'search-flag')).isDisabled(), true, 'and nothing in another project');

    // The project ui.page offers a Member what a Member may do there, and nothing more; another project nothing.
    await devPage.goto(`${ui.server.baseUrl}/projects/payments`);
    await devPage.getByRole('form', { name: 'New flag' }).waitFor();
    await shows(devPage, "Only a project Owner, an Editor or an Admin changes the project's settings.");
    assert.equal(await devPage.getByRole('button', { name: 'Delete project' }).count(), 0);
    assert.equal(await devPage.getByRole('button', { name: 'Save project' }).count(), 0);
    assert.equal(await devPage.getByRole('button', { name: 'Remove development from the project' }).count(), 0);
    await devPage.goto(`${ui.server.baseUrl}/projects/search`);
    await devPage.getByRole('heading', { name: 'Flag health' }).waitFor();
    assert.equal(await devPage.getByRole('form', { name: 'New flag' }).count(), 0);
    assert.equal(await devPage.getByRole('button', { name: 'Delete project' }).count(), 0);
    await devPage.screenshot({ path: join(ui.workDir, 'project-as-member.png'), fullPage: true });

    await row.getByLabel('Role of Payments team').selectOption({ label: 'Viewer' });
    await waitUntil(async () => {
      const access = (await (await ui.api('GET', '/api/admin/projects/payments/access')).json()) as { groups: Array<{ roles: number[] }> };
      return access.groups[0]?.roles[0] === 6;
    });
    assert.equal(await (await switchOf(devPage, 'payments', 'payments-flag')).isDisabled(), true, 'a project Viewer cannot switch');
    await ui.page.screenshot({ path: join(ui.workDir, 'project-access.png') });
    await devPage.context().close();
  });

  test('a service account gets a token shown once, its use is listed, and deleting the token ends it', async () => {
    await ui.page.goto(`${ui.server.baseUrl}/admin/service-accounts`);
    const form = ui.page.getByRole('form', { name: 'New service account' });
    await form.getByLabel('Username').fill('ci-bot');
    assert.equal(await form.getByLabel('Role').locator('option:checked').textContent(), 'Editor', 'Editor unless chosen otherwise');
    await form.getByRole('button', { name: 'Create service account' }).click();
    await shows(ui.page, 'Created ci-bot.');
    const tokenForm = ui.page.getByRole('form', { name: 'New token for ci-bot' });
    await tokenForm.getByLabel('Token description').fill('deploys');
    await tokenForm.getByRole('button', { name: 'Create token' }).click();
    const secret = await textOf(ui.page.getByTestId('secret'));
    assert.match(secret, /^user:/);

    assert.equal((await ui.api('POST', '/api/admin/projects/search/features', { name: 'from-ci' }, secret)).status, 201);
    await ui.page.reload();
    const row = rowOf('Service accounts', 'ci-bot');
    await waitForTexts(row.locator('td'), (texts) => texts[2] === '1' && texts[3] !== 'never');
    const events = (await (await ui.api('GET', '/api/admin/events?type=feature-created')).json()) as {
      events: Array<{ featureName: string; createdBy: string }>;
    };
    assert.equal(events.events.find((event) => event.featureName === 'from-ci')?.createdBy, 'ci-bot');

    await row.getByRole('button', { name: 'Tokens' }).click();
    await rowOf('Tokens of ci-bot', 'deploys').getByRole('button', { name: 'Delete token' }).click();
    await shows(ui.page, 'No tokens yet.');
    assert.equal((await ui.api('GET', '/api/admin/projects', undefined, secret)).status, 401);
    await ui.page.screenshot({ path: join(ui.workDir, 'service-accounts.png') });
    assert.deepEqual(ui.problems, []);
  });

  test('a service account may be given a custom root role, offered beside the built-in ones', async () => {
    const created = await ui.api('POST', '/api/admin/roles', {
      name: 'Segment keeper',
      type: 'root-custom',
      permissions: [{ name: 'CREATE_SEGMENT' }],
    });
    const role = (await created.json()) as { id: number };
    await ui.page.goto(`${ui.server.baseUrl}/admin/service-accounts`);
    const form = ui.page.getByRole('form', { name: 'New service account' });
    const choices = await waitForTexts(form.getByLabel('Role').locator('option'), (texts) => texts.includes('Segment keeper'));
    assert.deepEqual(choices.slice(0, 3), ['Admin', 'Editor', 'Viewer']);
    await form.getByLabel('Username').fill('segment-bot');
    await form.getByLabel('Role').selectOption({ label: 'Segment keeper' });
    await form.getByRole('button', { name: 'Create service account' }).click();
    await shows(ui.page, 'Created segment-bot.');
    const row = rowOf('Service accounts', 'segment-bot');
    assert.equal(await row.getByLabel('Role of segment-bot').locator('option:checked').textContent(), 'Segment keeper');
    const accounts = (await (await ui.api('GET', '/api/admin/service-account')).json()) as {
      serviceAccounts: Array<{ username: string; rootRole: number }>;
    };
    assert.equal(accounts.serviceAccounts.find((account) => account.username === 'segment-bot')?.rootRole, role.id);
    await ui.page.screenshot({ path: join(ui.workDir, 'service-account-custom-role.png') });
    assert.deepEqual(ui.problems, []);
  });
});
