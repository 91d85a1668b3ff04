import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { signIn, watchForProblems, shows, textOf, waitForTexts, waitUntil } from '../helpers/browser.js';
import { logIn } from '../helpers/server-process.js';
import { useUiServer } from '../helpers/ui-server.js';
import { STRONG_PASSWORD } from '../helpers/test-app.js';

// The admin pages in a real browser: each creates, edits and deletes what it manages, shows what the server
// keeps, and shows the API's refusal next to its cause.
const ui = useUiServer('admin');

/** A set-up request through the API that must succeed. */
function expectOk(response: Response): void {
  assert.ok(response.ok, `set-up request answered ${response.status}`);
}

const cells = (row: ReturnType<Page['locator']>) =>
  row
    .locator('td')
    .allInnerTexts()
    .then((texts) => texts.map((text) => text.trim()));

describe('the admin pages in a browser', { timeout: 180_000 }, () => {
  test('segments: created with a constraint, edited, and the name clash is refused on the form', async () => {
    await ui.page.goto(`${ui.server.baseUrl}/admin/segments`);
    const form = ui.page.getByRole('form', { name: 'New segment' });
    await form.getByLabel('Name').fill('beta-testers');
    await form.getByRole('button', { name: 'Add constraint' }).click();
    await form.getByLabel('Context field', { exact: true }).selectOption('userId');
    await form.getByLabel('Values (comma-separated)').fill('alice, bob');
    await form.getByRole('button', { name: 'Create segment' }).click();
    await shows(ui.page, 'userId IN alice, bob');

    await form.getByLabel('Name').fill('beta-testers');
    await form.getByRole('button', { name: 'Create segment' }).click();
    assert.match(await textOf(form.getByRole('alert')), /beta-testers/);

    await ui.page.getByRole('button', { name: 'Edit' }).click();
    const edit = ui.page.getByRole('form', { name: 'Edit segment beta-testers' });
    await edit.getByLabel('Description').fill('Our beta programme');
    await edit.getByLabel('Operator', { exact: true }).selectOption('NOT_IN');
    await edit.getByRole('button', { name: 'Save segment' }).click();
    await shows(ui.page, 'userId NOT_IN alice, bob');
    const stored = (await (await ui.api('GET', '/api/admin/segments')).json()) as {
      segments: Array<{ name: string; description: string; constraints: unknown[] }>;
    };
    assert.deepEqual(
      stored.segments.map(({ name, description, constraints }) => ({ name, description, constraints })),
      [
        {
          name: 'beta-testers',
          description: 'Our beta programme',
          constraints: [{ contextName: 'userId', operator: 'NOT_IN', values: ['alice', 'bob'], caseInsensitive: false, inverted: false }],
        },
      ],
    );
  });

  test('context fields: created with legal values, edited, deleted', async () => {
    await ui.page.goto(`${ui.server.baseUrl}/admin/context-fields`);
    const form = ui.page.getByRole('form', { name: 'New context field' });
    await form.getByLabel('Name').fill('region');
    await form.getByLabel('Legal values (comma-separated, optional)').fill('eu, us');
    await form.getByRole('button', { name: 'Create context field' }).click();
    const row = ui.page
      .getByRole('table', { name: 'Context fields' })
      .locator('tr', { has: ui.page.getByRole('cell', { name: 'region', exact: true }) });
    await waitForTexts(row.locator('td'), (texts) => texts[2] === 'eu, us');

    await row.getByRole('button', { name: 'Edit' }).click();
    const edit = ui.page.getByRole('form', { name: 'Edit context field region' });
    await edit.getByLabel('Description').fill('Where the user is');
    await edit.getByLabel('Legal values (comma-separated, optional)').fill('eu, us, apac');
    await edit.getByRole('button', { name: 'Save context field' }).click();
    await waitForTexts(row.locator('td'), (texts) => texts[2] === 'eu, us, apac');
    assert.deepEqual((await cells(row)).slice(0, 4), ['region', 'Where the user is', 'eu, us, apac', 'no']);

    await row.getByRole('button', { name: 'Delete' }).click();
    await row.waitFor({ state: 'detached' });
    assert.equal((await ui.api('GET', '/api/admin/context/region')).status, 404);
  });

  test('tag types: created, described, deleted', async () => {
    await ui.page.goto(`${ui.server.baseUrl}/admin/tag-types`);
    const form = ui.page.getByRole('form', { name: 'New tag type' });
    await form.getByLabel('Name').fill('team');
    await form.getByRole('button', { name: 'Create tag type' }).click();
    const row = ui.page
      .getByRole('table', { name: 'Tag types' })
      .locator('tr', { has: ui.page.getByRole('cell', { name: 'team', exact: true }) });
    await row.getByRole('button', { name: 'Edit' }).click();
    await row.getByLabel('Description of team').fill('Who owns the flag');
    await row.getByRole('button', { name: 'Save' }).click();
    await waitForTexts(row.locator('td'), (texts) => texts[1] === 'Who owns the flag');
    await row.getByRole('button', { name: 'Delete' }).click();
    await row.waitFor({ state: 'detached' });
    assert.equal((await ui.api('GET', '/api/admin/tag-types/team')).status, 404);
  });

  test('environments: created, typed, switched off; users: created and given a role', async () => {
    await ui.page.goto(`${ui.server.baseUrl}/admin/environments`);
    const form = ui.page.getByRole('form', { name: 'New environment' });
    await form.getByLabel('Name').fill('staging');
    await form.getByLabel('Type').selectOption('test');
    await form.getByRole('button', { name: 'Create environment' }).click();
    const row = ui.page
      .getByRole('table', { name: 'Environments' })
      .locator('tr', { has: ui.page.getByRole('cell', { name: 'staging', exact: true }) });
    await row.waitFor();
    await row.getByLabel('Type of staging').selectOption('preproduction');
    await row.getByRole('switch').click();
    await waitForTexts(row.locator('.switch span'), (texts) => texts[0] === 'Off');
    const staging = (await (await ui.api('GET', '/api/admin/environments/staging')).json()) as { type: string; enabled: boolean };
    assert.deepEqual({ type: staging.type, enabled: staging.enabled }, { type: 'preproduction', enabled: false });

    await ui.page.goto(`${ui.server.baseUrl}/admin/users`);
    const userForm = ui.page.getByRole('form', { name: 'New user' });
    assert.equal(await userForm.getByLabel('Role').inputValue(), 'Editor', 'a new user is an Editor unless chosen otherwise');
    await userForm.getByLabel('Username').fill('viewer-vic');
    await userForm.getByLabel('Role').selectOption('Viewer');
    await userForm.getByLabel('Password').fill('short');
    await userForm.getByRole('button', { name: 'Create user' }).click();
    assert.match(await textOf(userForm.locator('.field-error')), /at least 10 characters/);
    await userForm.getByLabel('Password').fill(STRONG_PASSWORD);
    await userForm.getByRole('button', { name: 'Create user' }).click();
    await shows(ui.page, 'Created viewer-vic.');
    const userRow = ui.page.getByRole('table', { name: 'Users' }).locator('tr', { hasText: 'viewer-vic' });
    assert.equal(await userRow.getByLabel('Role of viewer-vic').inputValue(), 'Viewer');
    await userRow.getByLabel('Role of viewer-vic').selectOption('Editor');
    // Stored by the server (role 2 is Editor), and still shown after a reload.
    await waitUntil(async () => {
      const users = (await (await ui.api('GET', '/api/admin/user-admin')).json()) as {
        users: Array<{ username: string; rootRole: number }>;
      };
      return users.users.find((user) => user.username === 'viewer-vic')?.rootRole === 2;
    });
    await ui.page.reload();
    assert.equal(await ui.page.getByLabel('Role of viewer-vic').inputValue(), 'Editor');

    // An admin sets the user's password in a form under their row; a weak one is refused next to the field.
    await ui.page
      .getByRole('table', { name: 'Users' })
      .locator('tr', { hasText: 'viewer-vic' })
      .getByRole('button', { name: 'Set password' })
      .click();
    const passwordForm = ui.page.getByRole('form', { name: 'Password of viewer-vic' });
    await passwordForm.getByLabel('New password for viewer-vic').fill('weakpassword');
    await passwordForm.getByRole('button', { name: 'Set password' }).click();
    assert.match(await textOf(passwordForm.locator('.field-error')), /upper case|uppercase|digit|symbol/i);
    assert.equal(await logIn(ui.server.baseUrl, 'viewer-vic', STRONG_PASSWORD), 200);
    const newPassword = `${STRONG_PASSWORD}-reset`;
    await passwordForm.getByLabel('New password for viewer-vic').fill(newPassword);
    await passwordForm.getByRole('button', { name: 'Set password' }).click();
    await shows(ui.page, 'Password set; the user’s sessions were ended.');
    await passwordForm.waitFor({ state: 'detached' });
    assert.equal(await logIn(ui.server.baseUrl, 'viewer-vic', STRONG_PASSWORD), 401);
    assert.equal(await logIn(ui.server.baseUrl, 'viewer-vic', newPassword), 200);
  });

  test('a Viewer is told their access is read-only, and cannot switch, mark stale or archive flags', async () => {
    assert.equal(
      (await ui.api('POST', '/api/admin/user-admin', { username: 'watcher', rootRole: 'Viewer', password: STRONG_PASSWORD })).status,
      201,
    );
    assert.equal((await ui.api('POST', '/api/admin/projects/default/features', { name: 'watched-flag' })).status, 201);
    const context = await ui.browser.newContext({ viewport: { width: 1360, height: 900 } });
    const viewer = await context.newPage();
    watchForProblems(viewer, ui.problems);
    await signIn(viewer, ui.server.baseUrl, 'watcher', STRONG_PASSWORD);
    assert.match(await textOf(viewer.getByRole('note')), /read-only access/);
    await viewer.goto(`${ui.server.baseUrl}/projects/default/flags/watched-flag`);
    assert.equal(await viewer.getByTestId('environment-development').getByRole('switch').isDisabled(), true);
    assert.equal(await viewer.getByRole('heading', { name: /watched-flag/ }).count(), 1);
    assert.equal(await viewer.getByRole('button', { name: /^(Mark stale|Archive)$/ }).count(), 0);
    // The same page for an Admin: no notice, the switch works, the flag can be marked stale and archived.
    await ui.page.goto(`${ui.server.baseUrl}/projects/default/flags/watched-flag`);
    assert.equal(await ui.page.getByTestId('environment-development').getByRole('switch').isDisabled(), false);
    assert.equal(await ui.page.getByRole('note').count(), 0);
    assert.deepEqual(await ui.page.getByRole('button', { name: /^(Mark stale|Archive)$/ }).allTextContents(), ['Mark stale', 'Archive']);
    await context.close();
  });

  test("an Editor is offered only pages they can use: the event log shows the flags' events, Admin pages are not listed", async () => {
    assert.equal(
      (await ui.api('POST', '/api/admin/user-admin', { username: 'ellis', rootRole: 'Editor', password: STRONG_PASSWORD })).status,
      201,
    );
    assert.equal((await ui.api('POST', '/api/admin/projects/default/features', { name: 'edited-flag' })).status, 201);
    const context = await ui.browser.newContext({ viewport: { width: 1360, height: 900 } });
    const editor = await context.newPage();
    // A refused request (a 403 in the console) fails the file's last check.
    watchForProblems(editor, ui.problems);
    await signIn(editor, ui.server.baseUrl, 'ellis', STRONG_PASSWORD);
    const offered = await editor.getByRole('navigation', { name: 'Main' }).getByRole('link').allTextContents();
    for (const page of ['Flags', 'Event log', 'Change requests', 'Roles', 'Segments']) assert.ok(offered.includes(page), page);
    for (const page of ['API tokens', 'Users', 'Sign-in', 'Groups', 'Service accounts', 'Instance']) {
      assert.equal(offered.includes(page), false, `${page} is offered to an Editor`);
    }
    await editor.goto(`${ui.server.baseUrl}/projects/default/flags/edited-flag`);
    await shows(editor, 'edited-flag');
    await editor.getByRole('link', { name: 'Event log' }).click();
    await editor.getByRole('form', { name: 'Event filters' }).getByLabel('Flag').fill('edited-flag');
    await editor.getByRole('button', { name: 'Search' }).click();
    await waitForTexts(editor.getByTestId('event').locator('.event-label'), (texts) => texts.join() === 'Flag created');
    await editor.screenshot({ path: join(tmpdir(), 'vexil-editor-event-log.png') });
    await context.close();
  });

  test('an Editor changing a segment used in a protected environment proposes it in a change request', async () => {
    const created = async (response: Promise<Response>) => {
      const answer = await response;
      assert.ok(answer.ok, `${answer.status} ${await answer.clone().text()}`);
      return (await answer.json().catch(() => ({}))) as { id: number };
    };
    await created(ui.api('POST', '/api/admin/projects', { id: 'shop', name: 'Shop', environments: ['development', 'production'] }));
    await created(ui.api('POST', '/api/admin/projects/shop/features', { name: 'shop-flag' }));
    const vip = await created(
      ui.api('POST', '/api/admin/segments', { name: 'vip', constraints: [{ contextName: 'userId', operator: 'IN', values: ['ann'] }] }),
    );
    await created(
      ui.api('POST', '/api/admin/projects/shop/features/shop-flag/environments/production/strategies', {
        name: 'default',
        segments: [vip.id],
      }),
    );
    assert.equal(
      (
        await ui.api('PUT', '/api/admin/projects/shop/environments/production/change-requests/config', {
          changeRequestsEnabled: true,
          requiredApprovals: 1,
        })
      ).status,
      204,
    );
    await created(ui.api('POST', '/api/admin/user-admin', { username: 'edna', rootRole: 'Editor', password: STRONG_PASSWORD }));

    const context = await ui.browser.newContext({ viewport: { width: 1360, height: 900 } });
    const editor = await context.newPage();
    watchForProblems(editor, ui.problems);
    editor.on('dialog', (dialog) => void dialog.accept());
    await signIn(editor, ui.server.baseUrl, 'edna', STRONG_PASSWORD);
    await editor.goto(`${ui.server.baseUrl}/admin/segments`);
    await editor.getByRole('table', { name: 'Segments' }).locator('tr', { hasText: 'vip' }).getByRole('button', { name: 'Edit' }).click();
    const form = editor.getByRole('form', { name: 'Edit segment vip' });
    await form.getByLabel('Values (comma-separated)').fill('ann, ben');
    await form.getByRole('button', { name: 'Save segment' }).click();
    assert.match(await textOf(form.getByRole('alert')), /used by strategies in environments with change requests/);

    await form.getByRole('button', { name: 'Propose in a change request for production of shop' }).click();
    await form.getByRole('status').getByRole('link').click();
    await editor.waitForURL(/\/projects\/shop\/change-requests\/\d+$/);
    const change = editor.getByRole('region', { name: 'Changes to segment vip' });
    assert.match(await textOf(change.getByRole('heading')), /Segment vip: updateSegment/);
    const added = change.locator('tr', { hasText: 'constraints[0].values[1]' });
    await added.waitFor();
    assert.deepEqual(await added.locator('td').allInnerTexts(), ['constraints[0].values[1]', '', '"ben"']);
    // Not changed yet.
    const stored = (await (await ui.api('GET', `/api/admin/segments/${vip.id}`)).json()) as { constraints: Array<{ values: string[] }> };
    assert.deepEqual(stored.constraints[0]!.values, ['ann']);
    await context.close();
  });

  test('the Instance page: maintenance mode refuses changes until switched off; a lifetime edited makes a flag potentially stale', async () => {
    expectOk(await ui.api('POST', '/api/admin/projects', { id: 'store', name: 'Store', environments: ['development', 'production'] }));
    expectOk(await ui.api('POST', '/api/admin/projects/store/features', { name: 'quick-fix', type: 'operational' }));
    await ui.page.goto(`${ui.server.baseUrl}/admin/instance`);
    const maintenance = ui.page.getByRole('region', { name: 'Maintenance mode' });
    await maintenance.getByRole('switch', { name: 'Maintenance mode' }).click();
    await shows(ui.page, 'Changes are refused');
    const refused = await ui.api('POST', '/api/admin/projects/store/features', { name: 'during-maintenance' });
    assert.equal(refused.status, 503);
    await ui.page.screenshot({ path: join(tmpdir(), 'vexil-admin-instance.png'), fullPage: true });
    await maintenance.getByRole('switch', { name: 'Maintenance mode' }).click();
    await waitUntil(async () => (await maintenance.getByText('Changes are refused').count()) === 0);
    expectOk(await ui.api('POST', '/api/admin/projects/store/features', { name: 'after-maintenance' }));

    // Operational flags live 7 days; emptied, the type is permanent (never potentially stale).
    const lifetime = ui.page.getByLabel('Lifetime of Operational flags, in days');
    assert.equal(await lifetime.inputValue(), '7');
    await lifetime.fill('');
    await lifetime.press('Enter');
    await waitUntil(async () => {
      const types = (await (await ui.api('GET', '/api/admin/feature-types')).json()) as {
        types: Array<{ id: string; lifetimeDays: number | null }>;
      };
      return types.types.find((type) => type.id === 'operational')?.lifetimeDays === null;
    });
    await ui.page.reload();
    assert.equal(await ui.page.getByLabel('Lifetime of Operational flags, in days').inputValue(), '');
    const figures = ui.page.getByRole('region', { name: 'Instance statistics' });
    const statistics = (await (await ui.api('GET', '/api/admin/instance-admin/statistics')).json()) as {
      projects: number;
      featureToggles: number;
    };
    assert.equal(await textOf(figures.getByTestId('figure-projects')), String(statistics.projects));
    assert.equal(await textOf(figures.getByTestId('figure-featureToggles')), String(statistics.featureToggles));
    await ui.page.getByLabel('Lifetime of Operational flags, in days').fill('7');
    await ui.page.getByLabel('Lifetime of Operational flags, in days').press('Enter');
  });

  test("a project's page shows its status, and its members make and delete its API tokens", async () => {
    await ui.page.goto(`${ui.server.baseUrl}/projects/store`);
    const status = ui.page.getByRole('region', { name: 'Project status' });
    assert.equal(await textOf(status.getByTestId('project-health')), '100%');
    assert.match(await textOf(status.getByTestId('stage-initial')), /^2\b/);
    const tokens = ui.page.getByRole('region', { name: 'Project API tokens' });
    const form = tokens.getByRole('form', { name: 'New project token' });
    await form.getByLabel('Token name').fill('store-backend');
    await form.getByLabel('Environment').selectOption('production');
    await form.getByRole('button', { name: 'Create token' }).click();
    const secret = await textOf(tokens.getByTestId('secret'));
    assert.match(secret, /^store:production\.[0-9a-f]{64}$/);
    const row = tokens.getByRole('table', { name: 'Project API tokens' }).locator('tr', { hasText: 'store-backend' });
    assert.deepEqual((await cells(row)).slice(0, 3), ['store-backend', 'client', 'production']);
    await waitUntil(async () => (await textOf(status)).includes('1 API token '));
    await ui.page.screenshot({ path: join(tmpdir(), 'vexil-project-page.png'), fullPage: true });
    const features = await fetch(`${ui.server.baseUrl}/api/client/features`, { headers: { authorization: secret } });
    assert.equal(features.status, 200);
    await row.getByRole('button', { name: 'Delete' }).click();
    await waitUntil(async () => (await tokens.getByRole('table', { name: 'Project API tokens' }).count()) === 0);
    assert.equal((await fetch(`${ui.server.baseUrl}/api/client/features`, { headers: { authorization: secret } })).status, 401);
  });

  test("a project's default strategy and own context fields are set on its page", async () => {
    await ui.page.goto(`${ui.server.baseUrl}/projects/store`);
    const defaults = ui.page.getByRole('region', { name: 'Default strategies' });
    const production = defaults.getByRole('form', { name: 'Default strategy in production' });
    await production.getByLabel('Rollout in production, per cent').fill('25');
    await production.getByLabel('Stickiness in production').fill('userId');
    await production.getByRole('button', { name: 'Save' }).click();
    await waitUntil(async () => {
      const environments = (await (await ui.api('GET', '/api/admin/environments/project/store')).json()) as {
        environments: Array<{ name: string; defaultStrategy?: { parameters: Record<string, string> } }>;
      };
      const stored = environments.environments.find((environment) => environment.name === 'production')?.defaultStrategy?.parameters;
      return stored?.rollout === '25' && stored.stickiness === 'userId';
    });
    // A flag turned on in production without strategies of its own gets that rollout.
    expectOk(await ui.api('POST', '/api/admin/projects/store/features', { name: 'gets-default' }));
    expectOk(await ui.api('POST', '/api/admin/projects/store/features/gets-default/environments/production/on'));
    const flag = (await (await ui.api('GET', '/api/admin/projects/store/features/gets-default')).json()) as {
      environments: Array<{ name: string; strategies: Array<{ parameters: Record<string, string> }> }>;
    };
    assert.equal(flag.environments.find((environment) => environment.name === 'production')?.strategies[0]?.parameters.rollout, '25');

    const fields = ui.page.getByRole('region', { name: 'Project context fields' });
    const form = fields.getByRole('form', { name: 'New project context field' });
    await form.getByLabel('Field name').fill('tenant');
    await form.getByLabel('Legal values (comma-separated, optional)').fill('acme, globex');
    await form.getByRole('button', { name: 'Add context field' }).click();
    const row = fields.getByRole('table', { name: 'Project context fields' }).locator('tr', { hasText: 'tenant' });
    await row.waitFor();
    assert.deepEqual((await cells(row)).slice(0, 2), ['tenant', 'acme, globex']);
    await ui.page.screenshot({ path: join(tmpdir(), 'vexil-project-defaults-and-fields.png'), fullPage: true });
    const global = (await (await ui.api('GET', '/api/admin/context')).json()) as Array<{ name: string }>;
    assert.ok(!global.some((field) => field.name === 'tenant'), "the instance's list leaves the project's field out");
  });

  test('an unknown ui.page of the app says so, inside the app', async () => {
    await ui.page.goto(`${ui.server.baseUrl}/no/such/page`);
    assert.equal(await textOf(ui.page.getByRole('heading', { level: 1 })), 'Page not found');
  });

  test('no ui.page threw a script error or had content refused by its security policy', () => {
    assert.deepEqual(ui.problems, []);
  });
});
