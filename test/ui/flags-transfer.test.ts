import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { buildWebUi, launchBrowser, shows, signIn, textOf, waitForTexts, watchForProblems } from '../helpers/browser.js';
import { startServer, stopServer, type RunningServer } from '../helpers/server-process.js';
import { createServerDatabase } from '../helpers/test-database.js';
import { STRONG_PASSWORD } from '../helpers/test-app.js';

// Export and import on the Flags page, in a real browser: a file downloaded from one project, refused where its
// flags belong elsewhere, previewed, and imported into a protected environment as a change request.
let server: RunningServer;
let browser: Browser;
let page: Page;
const pageProblems: string[] = [];
let workDir: string;
let database: Awaited<ReturnType<typeof createServerDatabase>> | undefined;
const TOKEN = '*:*.flags-transfer-test-token-0123456789';

async function api(method: string, path: string, body?: unknown): Promise<Response> {
  const response = await fetch(`${server.baseUrl}${path}`, {
    method,
    headers: { authorization: TOKEN, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  assert.ok(response.ok, `${method} ${path}: ${response.status} ${await response.clone().text()}`);
  return response;
}

describe('export and import on the Flags page', { timeout: 180_000 }, () => {
  before(async () => {
    buildWebUi();
    workDir = await mkdtemp(join(tmpdir(), 'vexil-ui-transfer-'));
    database = await createServerDatabase();
    server = await startServer({ DATA_DIR: join(workDir, 'data'), ...database.env, INIT_ADMIN_API_TOKENS: TOKEN });
    await api('POST', '/api/admin/user-admin', { username: 'ops', rootRole: 'Admin', password: STRONG_PASSWORD });
    await api('POST', '/api/admin/projects', { id: 'checkout', name: 'Checkout' });
    await api('POST', '/api/admin/projects', { id: 'payments', name: 'Payments' });
    await api('POST', '/api/admin/projects/checkout/features', { name: 'one-page-checkout', description: 'The new checkout' });
    await api('POST', '/api/admin/projects/checkout/features/one-page-checkout/environments/production/strategies', {
      name: 'flexibleRollout',
      parameters: { rollout: '25', stickiness: 'default', groupId: 'one-page-checkout' },
    });
    await api('POST', '/api/admin/projects/checkout/features/one-page-checkout/environments/production/on');
    await api('POST', '/api/admin/projects/checkout/features', { name: 'saved-cards' });

    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1360, height: 1000 }, acceptDownloads: true });
    watchForProblems(page, pageProblems);
    await signIn(page, server.baseUrl, 'ops', STRONG_PASSWORD);
  });

  after(async () => {
    await browser?.close();
    if (server) await stopServer(server);
    await database?.drop();
    await rm(workDir, { recursive: true, force: true });
  });

  test('the flags ticked in the list download as an export file of the chosen environment', async () => {
    await page.goto(`${server.baseUrl}/flags?sortBy=name`);
    await page.getByRole('button', { name: 'Export / import' }).click();
    await page.getByLabel('Select one-page-checkout for export').check();
    const exportPanel = page.getByRole('region', { name: 'Export' });
    await exportPanel.getByLabel('Environment').selectOption('production');
    await exportPanel.getByLabel('The 1 flag ticked below').check();
    const [download] = await Promise.all([page.waitForEvent('download'), exportPanel.getByRole('button', { name: 'Download' }).click()]);
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
    await writeFile(join(workDir, 'export.json'), JSON.stringify(file));
  });

  test('a file whose flags live in another project is refused before anything is imported', async () => {
    const importPanel = page.getByRole('region', { name: 'Import' });
    await importPanel.getByLabel('Project to import into').selectOption('payments');
    await importPanel.getByLabel('Environment to import into').selectOption('production');
    await importPanel.getByLabel('Export file').setInputFiles(join(workDir, 'export.json'));
    const findings = await textOf(importPanel.getByTestId('import-validation'));
    assert.match(findings, /Cannot be imported/);
    assert.match(findings, /already exist in other projects.*one-page-checkout \(in project checkout\)/s);
    assert.equal(await importPanel.getByRole('button', { name: 'Import' }).isDisabled(), true);
  });

  test('into a protected environment the preview shows the change, and the import makes a change request', async () => {
    await api('PUT', '/api/admin/projects/checkout/environments/production/change-requests/config', {
      changeRequestsEnabled: true,
      requiredApprovals: 1,
    });
    await api('POST', '/api/admin/projects/checkout/features/one-page-checkout/environments/production/off');
    await page.goto(`${server.baseUrl}/flags`);
    await page.getByRole('button', { name: 'Export / import' }).click();
    const importPanel = page.getByRole('region', { name: 'Import' });
    await importPanel.getByLabel('Project to import into').selectOption('checkout');
    await importPanel.getByLabel('Environment to import into').selectOption('production');
    await importPanel.getByLabel('Export file').setInputFiles(join(workDir, 'export.json'));

    const warnings = await textOf(importPanel.getByTestId('import-validation'));
    assert.match(warnings, /already exist in this project and will be overwritten: one-page-checkout/);
    const preview = await waitForTexts(importPanel.getByTestId('import-preview').locator('li'), (texts) => texts.length > 0);
    assert.deepEqual(preview, ['proposed flag "one-page-checkout" in "production": enabled → true (new change request)']);
    await page.screenshot({ path: join(workDir, 'import-preview.png') });

    await importPanel.getByRole('button', { name: 'Import' }).click();
    const done = await textOf(importPanel.getByRole('status'));
    assert.match(done, /Imported: 1 change\./);
    const id = done.match(/The changes to production, which requires review, are in change request #(\d+)\./)?.[1];
    assert.ok(id, done);
    await importPanel.getByRole('link', { name: `change request #${id}` }).click();
    await page.waitForURL(new RegExp(`/projects/checkout/change-requests/${id}$`));
    await shows(page, 'one-page-checkout');
    assert.deepEqual(pageProblems, []);
  });
});
