import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { type Unleash, UnleashEvents } from 'unleash-client';
import { expectStatus } from '../helpers/assertions.js';
import { shows, signedInPage, startUiApp, textOf, waitForTexts } from '../helpers/browser.js';
import { uniqueName } from '../helpers/fixtures.js';
import { createExperiment } from '../helpers/experiments.js';
import { createFlag } from '../helpers/projects.js';
import { createSdkToken, startNodeSdk } from '../helpers/sdk-fixtures.js';
import { seededRandom } from '../helpers/seeded-random.js';
import type { TestApp } from '../helpers/test-app.js';

// An experiment in the browser: a metric defined and an experiment drafted and started on the project page, the real
// Unleash Node SDK's impression events forwarded as exposures (the three lines docs/experiments.md gives), events
// tracked, and the results read: the sentence first, each metric's table, the chart; a skewed split raises the
// sample-ratio alarm above everything else.
let ui: Awaited<ReturnType<typeof startUiApp>>;
let ctx: TestApp;
let baseUrl: string;
let page: Page;
let problems: string[];
let sdk: Unleash | undefined;

const variantStrategy = (groupId: string) => ({
  name: 'flexibleRollout',
  parameters: { rollout: '100', stickiness: 'userId', groupId },
  variants: ['control', 'treatment'].map((name) => ({ name, weight: 500, weightType: 'variable', stickiness: 'userId' })),
});

describe('experiments in a browser', { timeout: 180_000 }, () => {
  before(async () => {
    ui = await startUiApp();
    ({ ctx, baseUrl } = ui);
    ({ page, problems } = await signedInPage(ui, { username: 'exp', rootRole: 'Editor' }, { width: 1360, height: 1000 }));
  });

  after(async () => {
    sdk?.destroy();
    await ui?.close();
  });

  test('defined, drafted and started on the project page; fed by the Unleash Node SDK; the results read as a sentence, tables and a chart', async () => {
    const flag = await createFlag(ctx, 'default', {
      name: uniqueName('button'),
      impressionData: true,
      strategies: [variantStrategy('button')],
    });
    await page.goto(`${baseUrl}/projects/default`);
    await shows(page, 'No experiments yet.');
    const metricForm = page.getByRole('form', { name: 'New metric' });
    await metricForm.getByLabel('Metric name').fill('checkout');
    await metricForm.getByLabel('Event SDKs track').fill('checkout');
    await metricForm.getByRole('button', { name: 'Define metric' }).click();
    await shows(page, 'Metric checkout defined.');

    const form = page.getByRole('form', { name: 'New experiment' });
    await form.getByLabel('Name', { exact: true }).fill('bigger-button');
    await form.getByLabel('Flag').fill(flag);
    await form.getByLabel('Hypothesis').fill('A bigger button sells more');
    await waitForTexts(
      form.getByLabel('Strategy whose variants are compared').locator('option'),
      (texts) => texts.join() === 'flexibleRollout: control vs treatment',
    );
    await form.getByLabel('Role of checkout').selectOption('goal');
    await form.getByRole('button', { name: 'Draft experiment' }).click();
    await page.waitForURL(/\/experiments\/bigger-button$/);
    await shows(page, 'Results appear once the experiment starts');
    await page.getByRole('button', { name: 'Start experiment' }).click();
    await waitForTexts(page.locator('h1 .chip'), (texts) => texts[0] === 'running');

    // The application: the Node SDK evaluates locally and its impression events are forwarded as exposures.
    const token = await createSdkToken(ctx, 'client', 'development');
    sdk = await startNodeSdk(baseUrl, token);
    const exposures: Array<{ featureName: string; variant?: string; context: unknown }> = [];
    sdk.on(UnleashEvents.Impression, (event: { eventType: string; featureName: string; variant?: string; context: unknown }) => {
      if (event.eventType === 'getVariant')
        exposures.push({ featureName: event.featureName, variant: event.variant, context: event.context });
    });
    const assigned = new Map<string, string>();
    for (let i = 0; i < 600; i++) assigned.set(`user-${i}`, sdk.getVariant(flag, { userId: `user-${i}` }).name);
    assert.equal(exposures.length, 600);
    const sent = await ctx.as(token).post('/api/client/exposures', { exposures });
    expectStatus(sent, 202);
    assert.deepEqual(sent.json(), { accepted: 600, dropped: {} });
    ctx.clock.advance(60_000);
    const random = seededRandom(7);
    const events = [...assigned]
      .filter(([, variant]) => random() < (variant === 'treatment' ? 0.55 : 0.3))
      .map(([userId]) => ({ event: 'checkout', context: { userId } }));
    expectStatus(await ctx.as(token).post('/api/client/track', { events }), 202);
    ctx.clock.advance(60_000);

    await page.getByRole('button', { name: 'Analyse now' }).click();
    // The page first showed the results of an experiment no unit had reached; the new analysis replaces them.
    const [summary] = await waitForTexts(page.getByLabel('Summary'), (texts) => !texts[0]?.startsWith('Too few units'));
    assert.match(
      summary!,
      /^treatment wins on checkout with (\d+%|over 99%) chance to beat control \(\+\d+\.\d%\)\. Ship it when the guardrails hold\.$/,
    );
    const count = (variant: string) => [...assigned.values()].filter((name) => name === variant).length;
    const rows = page.getByRole('table', { name: 'Results on checkout' }).locator('tbody tr');
    await waitForTexts(rows.locator('td:nth-child(2)'), (texts) => texts.join() === `${count('control')},${count('treatment')}`);
    assert.match(await textOf(rows.nth(1).locator('td').nth(5)), /^(\d+\.\d%|> 99\.9%) wins$/);
    // One analysis is a point, not a line: the chart waits for the next, which the hourly upkeep (here, a click) makes.
    await shows(page, 'The chart draws from the second analysis on');
    ctx.clock.advance(60_000);
    await page.getByRole('button', { name: 'Analyse now' }).click();
    await page.getByRole('figure', { name: 'Lift on checkout over time' }).locator('canvas').first().waitFor();
    assert.match(await textOf(page.getByTestId('total-treatment: lift on checkout')), /^treatment: lift on checkout: \+\d+\.\d%$/);
    assert.equal(await page.getByRole('alert').count(), 0, 'no alarm on an even split');
    await page.screenshot({ path: `${process.env.VEXIL_SCREENSHOT_DIR ?? '/tmp'}/experiment-results.png`, fullPage: true });
    assert.deepEqual(problems, []);
  });

  test('a skewed split raises the sample-ratio alarm, shown above the summary', async () => {
    const flag = await createFlag(ctx, 'default', { name: uniqueName('skew'), strategies: [variantStrategy('skew')] });
    const { name } = await createExperiment(ctx, flag, { goal: 'checkout' });
    // The Node SDK decides each user's variant where it runs: an evaluation by Vexil would record the assignment
    // itself, every user's, and hide the loss this test makes.
    const token = await createSdkToken(ctx, 'client', 'development');
    const local = await startNodeSdk(baseUrl, token);
    // Every control user's exposure arrives, a third of the treatment's are lost (a redirect that drops them).
    const exposures: Array<{ featureName: string; context: { userId: string } }> = [];
    let treatmentSeen = 0;
    try {
      for (let i = 0; i < 1500; i++) {
        const userId = `skew-${i}`;
        if (local.getVariant(flag, { userId }).name === 'treatment' && treatmentSeen++ % 3 === 0) continue;
        exposures.push({ featureName: flag, context: { userId } });
      }
    } finally {
      local.destroy();
    }
    assert.ok(treatmentSeen > 600 && exposures.length < 1300, `${treatmentSeen} treatment users, ${exposures.length} exposures sent`);
    for (let i = 0; i < exposures.length; i += 1000)
      expectStatus(await ctx.as(token).post('/api/client/exposures', { exposures: exposures.slice(i, i + 1000) }), 202);
    ctx.clock.advance(60_000);
    await page.goto(`${baseUrl}/projects/default/experiments/${name}`);
    const alarm = page.getByRole('alert', { name: 'Sample ratio mismatch' });
    assert.match(await textOf(alarm), /^Sample ratio mismatch\. Sample ratio mismatch \(p = .+\): units did not split as the weights say/);
    assert.match(await textOf(page.getByLabel('Summary')), /sample ratio mismatch/);
    // The alarm comes first: above the summary and every table.
    const [alarmBox, summaryBox, tableBox] = await Promise.all(
      [alarm, page.getByLabel('Summary'), page.getByRole('table', { name: 'Results on checkout' })].map((locator) => locator.boundingBox()),
    );
    assert.ok(alarmBox!.y < summaryBox!.y && summaryBox!.y < tableBox!.y, 'the alarm is above the summary, the summary above the table');
  });

  test("the form's analysis options: sequential testing, CUPED and a correction are kept and shown on the experiment's page", async () => {
    const flag = await createFlag(ctx, 'default', { name: uniqueName('options'), strategies: [variantStrategy('options')] });
    const metric = uniqueName('basket');
    expectStatus(
      await ctx.admin.post('/api/admin/environments/development/experiment-metrics', { name: metric, kind: 'mean', event: 'basket' }),
      201,
    );
    await page.goto(`${baseUrl}/projects/default`);
    const form = page.getByRole('form', { name: 'New experiment' });
    const name = uniqueName('careful');
    await form.getByLabel('Name', { exact: true }).fill(name);
    await form.getByLabel('Flag').fill(flag);
    await waitForTexts(
      form.getByLabel('Strategy whose variants are compared').locator('option'),
      (texts) => texts.join() === 'flexibleRollout: control vs treatment',
    );
    await form.getByLabel('Engine').selectOption('frequentist');
    await form.getByText('Sequential testing').click();
    await form.getByLabel('Units the experiment expects').fill('2000');
    await form.getByText('CUPED').click();
    await form.getByLabel('Days read before the exposure').fill('7');
    await form.getByLabel('Correction for several metrics').selectOption('holm');
    await form.getByLabel(`Role of ${metric}`).selectOption('goal');
    await form.screenshot({ path: `${process.env.VEXIL_SCREENSHOT_DIR ?? '/tmp'}/experiment-form.png` });
    await form.getByRole('button', { name: 'Draft experiment' }).click();
    await page.waitForURL(new RegExp(`/experiments/${name}$`));
    assert.match(
      await textOf(page.getByText(/^Variants of/)),
      new RegExp(`^Variants of ${flag} in development · frequentist, sequential, CUPED over 7 days, Holm correction · started`),
    );
    const kept = (await ctx.admin.get(`/api/admin/projects/default/experiments/${name}`)).json() as Record<string, unknown>;
    assert.deepEqual(
      [kept.engine, kept.sequential, kept.cuped, kept.correction],
      ['frequentist', { tuning: 2000 }, { lookbackDays: 7 }, 'holm'],
    );
  });
});
