import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import type { Unleash } from 'unleash-client';
import { expectStatus } from '../helpers/assertions.js';
import { shows, signedInPage, startUiApp, textOf, waitForTexts } from '../helpers/browser.js';
import { startRemovalReadinessWatch } from '../../src/workers/removal-readiness-watch.js';
import { createFlag } from '../helpers/projects.js';
import { createSdkToken, startNodeSdk } from '../helpers/sdk-fixtures.js';
import type { TestApp } from '../helpers/test-app.js';

// What the SDKs see, in the browser: the applications the real Node SDK registered, with the flags it
// evaluated and the names it asked for that no flag has.
let ui: Awaited<ReturnType<typeof startUiApp>>;
let ctx: TestApp;
let baseUrl: string;
let page: Page;
const sdks: Unleash[] = [];
let problems: string[];

describe('the pages about SDKs in a browser', { timeout: 180_000 }, () => {
  before(async () => {
    ui = await startUiApp();
    ({ ctx, baseUrl } = ui);
    ({ page, problems } = await signedInPage(ui, { username: 'obs', rootRole: 'Editor' }));
  });

  after(async () => {
    for (const sdk of sdks) sdk.destroy();
    await ui?.close();
  });

  test('applications: the list, and one application with its instances, flags and a missing flag', async () => {
    const flag = await createFlag(ctx, 'default', {
      environment: 'development',
      enabled: true,
      variants: ['blue', 'green'].map((name) => ({ name, weight: 500, weightType: 'variable', stickiness: 'default' })),
    });
    const token = await createSdkToken(ctx, 'client', 'development');
    const sdk = await startNodeSdk(baseUrl, token, {
      appName: 'checkout-web',
      instanceId: 'pod-a',
      disableMetrics: false,
      metricsInterval: 3_600_000,
    });
    sdks.push(sdk);
    const given = { blue: 0, green: 0 };
    for (let i = 0; i < 12; i++) given[sdk.getVariant(flag, { userId: `u${i}` }).name as 'blue' | 'green'] += 1;
    sdk.isEnabled('checkout-typo');
    await sdk.flushMetrics();

    await page.goto(`${baseUrl}/applications`);
    const row = page.getByRole('table', { name: 'Applications' }).locator('tr', { hasText: 'checkout-web' });
    await waitForTexts(row.locator('td'), (texts) => texts[1] === '1' && texts[3] === 'development');
    assert.match((await row.locator('td').allInnerTexts())[2]!, /^unleash-node-sdk:\d/);
    await page.getByRole('searchbox', { name: 'Search applications' }).fill('no-such-app');
    await shows(page, 'No application matches.');
    await page.getByRole('searchbox', { name: 'Search applications' }).fill('checkout');

    await row.getByRole('link', { name: 'checkout-web' }).click();
    await page.waitForURL(/\/applications\/checkout-web/);
    assert.match(await textOf(page.getByTestId('missing-flags')), /It evaluates flags that do not exist: checkout-typo \(development/);
    const flagRow = page.getByRole('table', { name: 'Flags evaluated' }).locator('tr', { hasText: flag });
    await waitForTexts(flagRow.locator('td'), (texts) => texts.slice(0, 4).join('|') === `${flag}|development|12|0`);
    await waitForTexts(
      page.getByRole('table', { name: 'Instances' }).locator('tbody tr td:first-child'),
      (texts) => texts.join() === 'pod-a',
    );
    await page.screenshot({ path: join(tmpdir(), 'vexil-application.png'), fullPage: true });

    // The flag's chart has a line per variant, its legend the counts the SDK gave.
    await flagRow.getByRole('link', { name: flag }).click();
    const rollout = page.getByRole('region', { name: 'Rollout in development' });
    await waitForTexts(rollout.getByTestId('total-Variant blue'), (texts) => texts[0] === `Variant blue: ${given.blue}`);
    assert.equal(await textOf(rollout.getByTestId('total-Variant green')), `Variant green: ${given.green}`);
    assert.equal(await textOf(rollout.getByTestId('total-Yes')), 'Yes: 12');
    assert.deepEqual(problems, []);
  });

  test('strategies: a custom one is defined with typed parameters, used on a flag through its own fields, kept while in use, deprecated and reactivated', async () => {
    await page.goto(`${baseUrl}/admin/strategies`);
    const form = page.getByRole('form', { name: 'New strategy' });
    await form.getByLabel('Name').fill('tenant');
    await form.getByLabel('Description').fill('Tenants on the new billing');
    await form.getByRole('button', { name: 'Add parameter' }).click();
    await form.getByLabel('Parameter 1', { exact: true }).fill('tenants');
    await form.getByLabel('Type').first().selectOption('list');
    await form.getByLabel('Required').first().check();
    await form.getByRole('button', { name: 'Add parameter' }).click();
    await form.getByLabel('Parameter 2', { exact: true }).fill('share');
    await form.getByLabel('Type').nth(1).selectOption('percentage');
    await form.getByRole('button', { name: 'Create strategy' }).click();
    const row = page.getByRole('table', { name: 'Strategies' }).locator('tr', { hasText: 'Tenants on the new billing' });
    await waitForTexts(row.locator('td'), (texts) => texts[1] === 'tenants (list, required), share (percentage)' && texts[2] === 'custom');

    const flag = await createFlag(ctx, 'default');
    await page.goto(`${baseUrl}/projects/default/flags/${flag}`);
    const environment = page.getByTestId('environment-development');
    await environment.getByRole('button', { name: 'Add strategy' }).click();
    const strategyForm = environment.getByRole('form', { name: 'Add strategy' });
    await strategyForm.getByLabel('Strategy').selectOption('tenant');
    assert.equal(await strategyForm.getByLabel('share').getAttribute('type'), 'number', 'a percentage is a number field');
    await strategyForm.getByLabel('tenants').fill('acme,globex');
    await strategyForm.getByLabel('share').fill('30');
    await strategyForm.getByRole('button', { name: 'Save strategy' }).click();
    await environment.getByText('tenant', { exact: true }).first().waitFor();
    const stored = (await ctx.admin.get(`/api/admin/projects/default/features/${flag}`)).json() as {
      environments: Array<{ name: string; strategies: Array<{ name: string; parameters: Record<string, string> }> }>;
    };
    assert.deepEqual(
      stored.environments.find((entry) => entry.name === 'development')!.strategies.map(({ name, parameters }) => ({ name, parameters })),
      [{ name: 'tenant', parameters: { tenants: 'acme,globex', share: '30' } }],
    );

    await page.goto(`${baseUrl}/admin/strategies`);
    await row.getByRole('button', { name: 'Delete' }).click();
    assert.match(await textOf(page.getByRole('alert')), new RegExp(`Strategy "tenant" is used by .*${flag}`));
    await row.getByRole('button', { name: 'Deprecate' }).click();
    await waitForTexts(row.locator('.badge'), (texts) => texts.join() === 'deprecated');
    await row.getByRole('button', { name: 'Reactivate' }).click();
    await waitForTexts(row.locator('.badge'), (texts) => texts.length === 0);
    await page.screenshot({ path: join(tmpdir(), 'vexil-strategies.png'), fullPage: true });
    assert.deepEqual(problems, []);
  });

  test('playground: a context evaluated in two environments, with the reason for each flag', async () => {
    expectStatus(await ctx.admin.post('/api/admin/context', { name: 'tenant', description: 'The customer', stickiness: false }), 201);
    const flag = await createFlag(ctx, 'default', {
      environment: 'development',
      strategies: [
        {
          name: 'userWithId',
          parameters: { userIds: 'alice' },
          constraints: [{ contextName: 'tenant', operator: 'IN', values: ['acme'] }],
        },
      ],
    });
    await page.goto(`${baseUrl}/playground`);
    const form = page.getByRole('form', { name: 'Playground' });
    await form.getByLabel('userId').fill('alice');
    await form.getByLabel('tenant').fill('acme');
    await form.getByRole('button', { name: 'Evaluate' }).click();
    const row = page.getByTestId(`result-${flag}`);
    await waitForTexts(row.locator('td'), (texts) => texts.slice(1, 3).join('|') === 'On|Off (disabled here)');
    await row.getByRole('button', { name: 'Why' }).click();
    const why = page.getByRole('region', { name: `Why ${flag} in development` });
    assert.match(await textOf(why), /userWithId → true \(userIds: alice\)\s+tenant IN acme → true/);

    await form.getByLabel('tenant').fill('globex');
    await form.getByRole('button', { name: 'Evaluate' }).click();
    await waitForTexts(row.locator('td'), (texts) => texts[1] === 'Off');
    assert.match(await textOf(why), /tenant IN acme → false/);
    await page.screenshot({ path: join(tmpdir(), 'vexil-playground.png'), fullPage: true });
    assert.deepEqual(problems, []);
  });

  test('flag health: the project page counts the flags that need attention, and one click marks stale or archives', async () => {
    const realNow = ctx.clock.now();
    ctx.clock.set(new Date(realNow.getTime() - 60 * 86_400_000));
    const projectResponse = await ctx.admin.post('/api/admin/projects', { id: 'cleanup', name: 'Cleanup' });
    expectStatus(projectResponse, 201);
    const oldRelease = await createFlag(ctx, 'cleanup', { name: 'old-release', type: 'release' });
    const oldExperiment = await createFlag(ctx, 'cleanup', { name: 'old-experiment', type: 'experiment' });
    ctx.clock.set(realNow);
    await page.goto(`${baseUrl}/projects/cleanup`);
    const stale = page.getByTestId('health-potentially-stale');
    const neverSeen = page.getByTestId('health-never-seen');
    await waitForTexts(stale.getByTestId('count'), (texts) => texts[0] === '2');
    await waitForTexts(neverSeen.getByTestId('count'), (texts) => texts[0] === '2');
    await stale.getByRole('button', { name: `Mark ${oldRelease} stale` }).click();
    await waitForTexts(stale.getByTestId('count'), (texts) => texts[0] === '1');
    await neverSeen.getByRole('button', { name: `Archive ${oldExperiment}` }).click();
    await waitForTexts(neverSeen.getByTestId('count'), (texts) => texts[0] === '1');
    await waitForTexts(stale.getByTestId('count'), (texts) => texts[0] === '0');
    await page.getByRole('region', { name: 'Flag health' }).screenshot({ path: join(tmpdir(), 'vexil-flag-health.png') });

    await page.goto(`${baseUrl}/flags?project=IS:cleanup&health=IS:never-seen`);
    await waitForTexts(page.getByRole('table').locator('tbody tr a').filter({ hasText: /^old-/ }), (texts) => texts.join() === oldRelease);
    assert.deepEqual(problems, []);
  });

  test('flag health lists the flags ready to leave the code, as the hourly watch judged them, with how to take them out', async () => {
    const realNow = ctx.clock.now();
    ctx.clock.set(new Date(realNow.getTime() - 30 * 86_400_000));
    expectStatus(await ctx.admin.post('/api/admin/projects', { id: 'leaving', name: 'Leaving' }), 201);
    const settled = await createFlag(ctx, 'leaving', {
      name: 'settled-checkout',
      environment: 'production',
      strategies: [{ name: 'default' }],
    });
    ctx.clock.set(realNow);
    const fresh = await createFlag(ctx, 'leaving', { name: 'fresh-banner', environment: 'production', strategies: [{ name: 'default' }] });
    await startRemovalReadinessWatch({ db: ctx.db, clock: ctx.clock, log: ctx.app.log }).stop();
    await page.goto(`${baseUrl}/projects/leaving`);
    const ready = page.getByTestId('readiness-ready-to-remove');
    await waitForTexts(ready.getByTestId('count'), (texts) => texts[0] === '1');
    assert.deepEqual(await ready.locator('li a').allInnerTexts(), [settled]);
    assert.match(
      await textOf(ready),
      /Ready to leave the code: 1\s+Production has served one branch for three weeks .*vexil refs cleanup FLAG --keep on\|off/s,
    );
    assert.equal(await textOf(page.getByTestId('readiness-ready-to-archive').getByTestId('count')), '0');
    assert.equal(await page.getByRole('link', { name: fresh }).count(), 1, 'the fresh flag is listed among the project flags only');
    await page.getByRole('region', { name: 'Flag health' }).screenshot({ path: join(tmpdir(), 'vexil-removal-readiness.png') });

    // Its page says how to take it out; a flag production has not settled on says nothing of the kind.
    await ready.getByRole('link', { name: settled }).click();
    const card = page.getByRole('region', { name: 'Code references' });
    assert.match(
      await textOf(card.getByTestId('cleanup-command')),
      /^Take it out of the code, keeping the on branch: npx vexil refs cleanup settled-checkout --keep on /,
    );
    await card.screenshot({ path: join(tmpdir(), 'vexil-cleanup-command.png') });
    await page.goto(`${baseUrl}/projects/leaving/flags/${fresh}`);
    await waitForTexts(page.getByTestId('removal-readiness'), (texts) => texts[0]?.startsWith('production: keep') ?? false);
    assert.equal(await page.getByTestId('cleanup-command').count(), 0);
    assert.deepEqual(problems, []);
  });

  test('connecting an SDK: a token made for the environment, Node code that works as pasted, and its registration seen arriving', async () => {
    const { page: adminPage } = await signedInPage(ui, { username: 'boss', rootRole: 'Admin' });
    const flag = await createFlag(ctx, 'default', { environment: 'development', enabled: true });
    const failedReads: string[] = [];
    adminPage.on('response', (response) => {
      if (response.status() >= 400) failedReads.push(`${response.status()} ${response.url()}`);
    });
    await adminPage.goto(`${baseUrl}/connect?project=default&flag=${flag}`);
    await adminPage.getByLabel('Environment').selectOption('development');
    await adminPage.getByRole('button', { name: 'Create a client token for development' }).click();
    const secret = await textOf(adminPage.getByTestId('secret'));
    const snippet = await textOf(adminPage.getByTestId('snippet'));
    assert.ok(snippet.includes(secret) && snippet.includes(`${baseUrl}/api/`), 'the code carries the token and this server');

    // The code as a person would paste it, run by node with the project's unleash-client.
    const file = join(tmpdir(), `vexil-connect-${process.pid}.cjs`);
    await writeFile(file, snippet);
    const child = spawn(process.execPath, [file], { env: { ...process.env, NODE_PATH: join(import.meta.dirname, '../../node_modules') } });
    try {
      const output = await new Promise<string>((resolve, reject) => {
        let text = '';
        const timer = setTimeout(() => reject(new Error(`the pasted code printed nothing useful: ${text}`)), 15_000);
        child.stdout.on('data', (chunk: Buffer) => {
          text += chunk.toString();
          if (text.includes(' is ')) {
            clearTimeout(timer);
            resolve(text.trim());
          }
        });
        child.stderr.on('data', (chunk: Buffer) => {
          text += chunk.toString();
        });
      });
      assert.equal(output, `${flag} is on`);
      await waitForTexts(
        adminPage.getByTestId('arrival'),
        (texts) => /^Connected: node-quickstart-\w+ registered/.test(texts[0] ?? ''),
        20_000,
      );
    } finally {
      child.kill();
      await rm(file, { force: true });
    }
    await adminPage.screenshot({ path: join(tmpdir(), 'vexil-connect.png'), fullPage: true });
    assert.deepEqual(failedReads, [], 'waiting for the registration reads nothing that is not there');

    await adminPage.goto(`${baseUrl}/admin/sdk-settings`);
    const form = adminPage.getByRole('form', { name: 'Frontend API origins' });
    await form.getByLabel('Origins allowed to call the frontend API').fill('not an origin');
    await form.getByRole('button', { name: 'Save origins' }).click();
    await form.getByRole('alert').first().waitFor();
    await form.getByLabel('Origins allowed to call the frontend API').fill('https://shop.example.com\nhttps://admin.example.com');
    await form.getByRole('button', { name: 'Save origins' }).click();
    await shows(adminPage, 'Saved: https://shop.example.com, https://admin.example.com');
    const config = (await ctx.admin.get('/api/admin/ui-config')).json() as { frontendApiOrigins: string[] };
    assert.deepEqual(config.frontendApiOrigins, ['https://shop.example.com', 'https://admin.example.com']);
    await adminPage.context().close();
  });
});
