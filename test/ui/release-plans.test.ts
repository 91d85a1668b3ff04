import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import type { Unleash } from 'unleash-client';
import { shows, signedInPage, startUiApp, textOf, waitForTexts } from '../helpers/browser.js';
import { createFlag } from '../helpers/projects.js';
import { createSdkToken, startNodeSdk } from '../helpers/sdk-fixtures.js';
import type { TestApp } from '../helpers/test-app.js';

// A release in the browser: a template made on its page, a plan added to a flag and its milestones started,
// the evaluations the real Node SDK reports drawn on the flag's chart, and a safeguard tripped by the SDK's
// impact metric pausing the plan on the page.
let ui: Awaited<ReturnType<typeof startUiApp>>;
let ctx: TestApp;
let baseUrl: string;
let page: Page;
let sdk: Unleash | undefined;
let problems: string[];

describe('release plans in a browser', { timeout: 180_000 }, () => {
  before(async () => {
    ui = await startUiApp();
    ({ ctx, baseUrl } = ui);
    ({ page, problems } = await signedInPage(ui, { username: 'rel', rootRole: 'Editor' }, { width: 1360, height: 1000 }));
  });

  after(async () => {
    sdk?.destroy();
    await ui?.close();
  });

  test('a template is made on its page, with its milestones in order', async () => {
    await page.goto(`${baseUrl}/admin/release-templates`);
    await shows(page, 'No templates yet.');
    const form = page.getByRole('form', { name: 'New release template' });
    await form.getByLabel('Name').fill('Careful rollout');
    await form.getByRole('button', { name: 'Add milestone' }).click();
    await form.getByLabel('Milestone 4', { exact: true }).fill('Stragglers');
    await form.getByRole('button', { name: 'Remove milestone 4' }).click();
    await form.getByRole('button', { name: 'Create template' }).click();
    const row = page.getByRole('table', { name: 'Release templates' }).locator('tr', { hasText: 'Careful rollout' });
    await waitForTexts(row.locator('td'), (texts) => texts[1] === 'Internal 5% → 60 min · Half 50% → 120 min · Everyone 100%');
  });

  test("a plan on a flag: milestones started on the page, the SDK's evaluations charted, a safeguard tripped by its impact metric", async () => {
    const flag = await createFlag(ctx, 'default');
    await page.goto(`${baseUrl}/projects/default/flags/${flag}`);
    const rollout = page.getByRole('region', { name: 'Rollout in development' });
    await rollout.getByRole('button', { name: 'Add release plan' }).click();
    const plan = rollout.getByTestId('release-plan-development');
    await waitForTexts(plan.getByTestId('milestone').locator('strong'), (texts) => texts.join() === 'Internal,Half,Everyone');
    await plan.getByRole('button', { name: 'Start Internal' }).click();
    await waitForTexts(plan.getByTestId('milestone').locator('.badge'), (texts) => texts.join() === 'active,upcoming,upcoming');
    assert.match(await textOf(plan.getByTestId('milestone').first()), /Moves on 60 min after it starts · next step at/);
    await page.getByRole('switch', { name: `${flag} in development` }).click();
    await plan.getByRole('button', { name: 'Start Half' }).click();
    await waitForTexts(plan.getByTestId('milestone').locator('.badge'), (texts) => texts.join() === 'done,active,upcoming');

    const safeguard = rollout.getByRole('form', { name: 'Safeguard in development' });
    await safeguard.getByLabel('Impact metric').fill('checkout_failures');
    await safeguard.getByLabel('Threshold').fill('3');
    await safeguard.getByRole('button', { name: 'Add safeguard' }).click();
    await shows(page, 'Safeguard: checkout_failures count over 5 min > 3, pauses and rolls back');

    const token = await createSdkToken(ctx, 'client', 'development');
    sdk = await startNodeSdk(baseUrl, token, { appName: 'web-shop', disableMetrics: false, metricsInterval: 3_600_000 });
    let yes = 0;
    for (let i = 0; i < 200; i++) if (sdk.isEnabled(flag, { userId: `user-${i}` })) yes += 1;
    sdk.impactMetrics.defineCounter('checkout_failures', 'Failed checkouts');
    sdk.impactMetrics.incrementCounter('checkout_failures', 5);
    await sdk.flushMetrics();

    await page.reload();
    await shows(page, /Paused .*checkout_failures count over 5 min was 5 \(> 3\)/);
    await waitForTexts(plan.getByTestId('milestone').locator('.badge'), (texts) => texts.join() === 'active,upcoming,upcoming');
    assert.equal(await textOf(rollout.getByTestId('total-Yes')), `Yes: ${yes}`);
    assert.equal(await textOf(rollout.getByTestId('total-No')), `No: ${200 - yes}`);
    assert.equal(await textOf(rollout.getByTestId('usage-applications')), 'Evaluated by web-shop');
    assert.equal(await textOf(rollout.getByTestId('total-checkout_failures')), 'checkout_failures: 5');
    assert.ok(yes > 50 && yes < 150, `about half of 200 users at 50% (got ${yes})`);
    await rollout.screenshot({ path: join(tmpdir(), 'vexil-release-plan.png') });

    await plan.getByRole('button', { name: 'Resume' }).click();
    await page.getByRole('alert').filter({ hasText: 'Paused' }).waitFor({ state: 'detached' });
    assert.deepEqual(problems, []);
  });
});
