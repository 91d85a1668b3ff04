import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { shows, textOf, waitForTexts } from '../helpers/browser.js';
import { useUiServer } from '../helpers/ui-server.js';

// Export and import on the Flags page, in a real browser: a file downloaded from one project, refused where its
// flags belong elsewhere, previewed, and imported into a protected environment as a change request.

describe('export and import on the Flags page', { timeout: 180_000 }, () => {
  const ui = useUiServer('transfer', {
    seed: async (api) => {
      await api('POST', '/api/admin/projects', { id: 'checkout', name: 'Checkout' });
      await api('POST', '/api/admin/projects', { id: 'payments', name: 'Payments' });
      await api('POST', '/api/admin/projects/checkout/features', { name: 'one-page-checkout', description: 'The new checkout' });
      await api('POST', '/api/admin/projects/checkout/features/one-page-checkout/environments/production/strategies', {
        name: 'flexibleRollout',
        parameters: { rollout: '25', stickiness: 'default', groupId: 'one-page-checkout' },
      });
      await api('POST', '/api/admin/projects/checkout/features/one-page-checkout/environments/production/on');
      await api('POST', '/api/admin/projects/checkout/features', { name: 'saved-cards' });
    },
    page: { viewport: { width: 1360, height: 1000 }, acceptDownloads: true },
  });

  test('the flags ticked in the list download as an export file of the chosen environment', async () => {
    await ui.page.goto(`${ui.server.baseUrl}/flags?sortBy=name`);
    await ui.page.getByRole('button', { name: 'Export / import' }).click();
    await ui.page.getByLabel('Select one-page-checkout for export').check();
    const exportPanel = ui.page.getByRole('region', { name: 'Export' });
    await exportPanel.getByLabel('Environment').selectOption('production');
    await exportPanel.getByLabel('The 1 flag ticked below').check();
    const [download] = await Promise.all([ui.page.waitForEvent('download'), exportPanel.getByRole('button', { name: 'Download' }).click()]);
    assert.equal(download.suggestedFilename(), 'vexil-flags-production.json');
    const file = JSON.parse(await readFile((await download.path())!, 'utf8')) as {
      features: Array<{ name: string }>;
      featureStrategies: Array<{ name: string; parameters: Record<string, string> }>;
    };
    assert.deepEqual(
      file.features.map((f) => f.name),
      ['one-page-checkout'],
    );
    assert.deepEqual(
      file.featureStrategies.map((s) => [s.name, s.parameters.rollout]),
      [['flexibleRollout', '25']],
    );
    assert.equal(await textOf(exportPanel.getByRole('status')), 'Exported 1 flag to vexil-flags-production.json.');
    await writeFile(join(ui.workDir, 'export.json'), JSON.stringify(file));
  });

  test('a file whose flags live in another project is refused before anything is imported', async () => {
    const importPanel = ui.page.getByRole('region', { name: 'Import' });
    await importPanel.getByLabel('Project to import into').selectOption('payments');
    await importPanel.getByLabel('Environment to import into').selectOption('production');
    await importPanel.getByLabel('Export file').setInputFiles(join(ui.workDir, 'export.json'));
    const findings = await textOf(importPanel.getByTestId('import-validation'));
    assert.match(findings, /Cannot be imported/);
    assert.match(findings, /already exist in other projects.*one-page-checkout \(in project checkout\)/s);
    assert.equal(await importPanel.getByRole('button', { name: 'Import' }).isDisabled(), true);
  });

  test('into a protected environment the preview shows the change, and the import makes a change request', async () => {
    await ui.api('PUT', '/api/admin/projects/checkout/environments/production/change-requests/config', {
      changeRequestsEnabled: true,
      requiredApprovals: 1,
    });
    await ui.api('POST', '/api/admin/projects/checkout/features/one-page-checkout/environments/production/off');
    await ui.page.goto(`${ui.server.baseUrl}/flags`);
    await ui.page.getByRole('button', { name: 'Export / import' }).click();
    const importPanel = ui.page.getByRole('region', { name: 'Import' });
    await importPanel.getByLabel('Project to import into').selectOption('checkout');
    await importPanel.getByLabel('Environment to import into').selectOption('production');
    await importPanel.getByLabel('Export file').setInputFiles(join(ui.workDir, 'export.json'));

    const warnings = await textOf(importPanel.getByTestId('import-validation'));
    assert.match(warnings, /already exist in this project and will be overwritten: one-page-checkout/);
    const preview = await waitForTexts(importPanel.getByTestId('import-preview').locator('li'), (texts) => texts.length > 0);
    assert.deepEqual(preview, ['proposed flag "one-page-checkout" in "production": enabled → true (new change request)']);
    await ui.page.screenshot({ path: join(ui.workDir, 'import-preview.png') });

    await importPanel.getByRole('button', { name: 'Import' }).click();
    const done = await textOf(importPanel.getByRole('status'));
    assert.match(done, /Imported: 1 change\./);
    const id = done.match(/The changes to production, which requires review, are in change request #(\d+)\./)?.[1];
    assert.ok(id, done);
    await importPanel.getByRole('link', { name: `change request #${id}` }).click();
    await ui.page.waitForURL(new RegExp(`/projects/checkout/change-requests/${id}$`));
    await shows(ui.page, 'one-page-checkout');
    assert.deepEqual(ui.problems, []);
  });
});
