import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { shows, signIn, textOf, waitForTexts, watchForProblems } from '../helpers/browser.js';
import { STRONG_PASSWORD } from '../helpers/test-app.js';
import { useUiServer } from '../helpers/ui-server.js';

// The role editor in a real browser: an Admin makes a project role that may switch flags in development only,
// gives it to a person in a project, and that person's flag page offers development and refuses production.

const ui = useUiServer('roles', {
  seed: async (api) => {
    await api('POST', '/api/admin/user-admin', { username: 'dana', name: 'Dana Developer', rootRole: 'Viewer', password: STRONG_PASSWORD });
    await api('POST', '/api/admin/projects', { id: 'shop', name: 'Shop', environments: ['development', 'production'] });
    await api('POST', '/api/admin/projects/shop/features', { name: 'new-checkout' });
  },
});

const rowOf = (table: string, text: string) => ui.page.getByRole('table', { name: table }).locator('tr', { hasText: text });

describe('roles in a browser', { timeout: 180_000 }, () => {
  test('an Admin makes a development-only project role; its holder may switch the flag in development, not in production', async () => {
    await ui.page.goto(`${ui.server.baseUrl}/admin/roles`);
    const builtIn = await waitForTexts(ui.page.getByRole('table', { name: 'Roles' }).locator('tbody tr'), (texts) => texts.length === 6);
    assert.deepEqual(
      builtIn.map((row) => row.split('\t').slice(0, 2)),
      [
        ['Admin', 'Root (built in)'],
        ['Editor', 'Root (built in)'],
        ['Viewer', 'Root (built in)'],
        ['Owner', 'Project (built in)'],
        ['Member', 'Project (built in)'],
        ['Viewer', 'Project (built in)'],
      ],
    );
    assert.equal(await rowOf('Roles', 'Editor').getByRole('button', { name: 'Edit' }).count(), 0, 'built-in roles cannot be edited');

    const form = ui.page.getByRole('form', { name: 'New role' });
    await form.getByLabel('Name').fill('Developer');
    await form.getByLabel('Description').fill('Changes flags in development');
    await form.getByLabel('Create feature', { exact: true }).check();
    await form.getByLabel('Update feature environment in development').check();
    await form.getByLabel('Create feature strategy in development').check();
    await ui.page.screenshot({ path: join(ui.workDir, 'role-editor.png'), fullPage: true });
    await form.getByRole('button', { name: 'Create role' }).click();
    await waitForTexts(rowOf('Roles', 'Developer').locator('td'), (texts) => texts[1] === 'Project');
    const roles = (await (await ui.api('GET', '/api/admin/roles')).json()) as { roles: Array<{ id: number; name: string }> };
    const developer = roles.roles.find((role) => role.name === 'Developer')!;
    const stored = (await (await ui.api('GET', `/api/admin/roles/${developer.id}`)).json()) as { permissions: unknown[] };
    assert.deepEqual(stored.permissions, [
      { name: 'CREATE_FEATURE' },
      { name: 'CREATE_FEATURE_STRATEGY', environment: 'development' },
      { name: 'UPDATE_FEATURE_ENVIRONMENT', environment: 'development' },
    ]);

    // The project's access page offers the new role; Dana gets it there.
    await ui.page.goto(`${ui.server.baseUrl}/projects/shop/access`);
    const grant = ui.page.getByRole('form', { name: 'Give access' });
    await grant.getByLabel('User', { exact: true }).selectOption({ label: 'Dana Developer' });
    await grant.getByLabel('Role').selectOption({ label: 'Developer' });
    await grant.getByRole('button', { name: 'Give access' }).click();
    const danaRow = rowOf('Project access', 'Dana Developer');
    await danaRow.waitFor();
    assert.equal(await danaRow.getByLabel('Role of Dana Developer').inputValue(), String(developer.id));

    // Dana's flag page: development can be switched, production cannot, and the API refuses it too.
    const context = await ui.browser.newContext({ viewport: { width: 1360, height: 900 } });
    const dana = await context.newPage();
    watchForProblems(dana, ui.problems);
    await signIn(dana, ui.server.baseUrl, 'dana', STRONG_PASSWORD);
    await dana.goto(`${ui.server.baseUrl}/projects/shop/flags/new-checkout`);
    const development = dana.getByRole('switch', { name: 'new-checkout in development' });
    const production = dana.getByRole('switch', { name: 'new-checkout in production' });
    await development.waitFor();
    assert.equal(await development.isDisabled(), false);
    assert.equal(await production.isDisabled(), true);
    // Strategies: added in development (CREATE_FEATURE_STRATEGY there), not in production; neither edited nor removed.
    const addIn = (environment: string) => dana.getByTestId(`environment-${environment}`).getByRole('button', { name: 'Add strategy' });
    assert.deepEqual([await addIn('development').count(), await addIn('production').count()], [1, 0]);
    assert.equal(
      await dana.getByText('You have read-only access').count(),
      0,
      'a person with a role that changes things is not told they only read',
    );
    await development.click();
    await waitForTexts(dana.getByTestId('environment-development').locator('label.switch span'), (texts) => texts[0] === 'On');
    await dana.screenshot({ path: join(ui.workDir, 'developer-flag-page.png'), fullPage: true });
    const refused = await dana.evaluate(async () => {
      const response = await fetch('/api/admin/projects/shop/features/new-checkout/environments/production/on', { method: 'POST' });
      return { status: response.status, body: (await response.json()) as { message: string } };
    });
    assert.equal(refused.status, 403);
    assert.match(refused.body.message, /UPDATE_FEATURE_ENVIRONMENT.* in production/);
    const flag = (await (await ui.api('GET', '/api/admin/projects/shop/features/new-checkout')).json()) as {
      environments: Array<{ name: string; enabled: boolean }>;
    };
    assert.deepEqual(
      flag.environments.map(({ name, enabled }) => [name, enabled]),
      [
        ['development', true],
        ['production', false],
      ],
    );
    await context.close();

    // While Dana holds it, the role cannot be deleted; the page says who holds it.
    await ui.page.goto(`${ui.server.baseUrl}/admin/roles`);
    await rowOf('Roles', 'Developer').getByRole('button', { name: 'Delete' }).click();
    await shows(ui.page, /The role is in use and cannot be deleted: user dana in project shop/);
    assert.match(await textOf(rowOf('Roles', 'Developer')), /Developer/);
    assert.deepEqual(
      ui.problems.filter((problem) => !problem.includes('409')),
      [],
    );
  });
});
