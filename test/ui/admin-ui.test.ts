import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import {
  accessibilityViolations,
  buildWebUi,
  launchBrowser,
  signIn,
  watchForProblems,
  shows,
  textOf,
  waitForTexts,
  waitUntil,
} from '../helpers/browser.js';
import { startHttpReceiver, type HttpReceiver } from '../helpers/http-receiver.js';
import { startServer, stopServer, waitForOutput, type RunningServer } from '../helpers/server-process.js';
import { createServerDatabase } from '../helpers/test-database.js';
import { STRONG_PASSWORD } from '../helpers/test-app.js';

// One story through the admin UI in a real browser against a real server, each step building on the last, as a
// team would use Vexil on its first day. The tests assert what the pages show.
let server: RunningServer;
let browser: Browser;
let page: Page;
/** Script errors and refused content (CSP) the pages caused; failed API answers are the tests' own doing. */
const pageProblems: string[] = [];
let receiver: HttpReceiver;
let dataDir: string;
let database: Awaited<ReturnType<typeof createServerDatabase>> | undefined;
let adminPassword: string;
let changeRequestUrl: string;

const PROJECT = 'checkout';
const FLAG = 'new-checkout';

async function signInAs(username: string, password: string): Promise<void> {
  await signIn(page, server.baseUrl, username, password);
  assert.equal(await textOf(page.getByTestId('signed-in-as')), username);
}

async function signOut(): Promise<void> {
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL(/\/login/);
}

const flagUrl = () => `${server.baseUrl}/projects/${PROJECT}/flags/${FLAG}`;

describe('the admin UI in a browser', { timeout: 240_000 }, () => {
  before(async () => {
    buildWebUi();
    dataDir = await mkdtemp(join(tmpdir(), 'vexil-ui-'));
    receiver = await startHttpReceiver();
    database = await createServerDatabase();
    server = await startServer({
      DATA_DIR: dataDir,
      ...database.env,
      INTEGRATIONS_ALLOW_PRIVATE_NETWORKS: 'true',
      INTEGRATIONS_MAX_ATTEMPTS: '1',
    });
    adminPassword = (await waitForOutput(server, /with the password (\S+)/))[1]!;
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1360, height: 900 } });
    watchForProblems(page, pageProblems);
    page.on('dialog', (dialog) => void dialog.accept());
  });

  after(async () => {
    await browser?.close();
    if (server) await stopServer(server);
    await receiver?.close();
    await database?.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  test('a wrong password is refused on the page; the first-start admin signs in', async () => {
    await page.goto(`${server.baseUrl}/flags`);
    await page.waitForURL(/\/login\?next=%2Fflags/);
    await page.getByLabel('Username or email').fill('admin');
    await page.getByLabel('Password').fill('not-the-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    assert.equal(await textOf(page.getByRole('alert')), 'Wrong username or password');
    await signInAs('admin', adminPassword);
    assert.equal(await textOf(page.getByRole('heading', { level: 1 })), 'Flags');
  });

  test('the first-start admin chooses their own password on the profile page', async () => {
    await page.getByTestId('signed-in-as').click();
    const form = page.getByRole('form', { name: 'Change your password' });
    await form.getByLabel('Current password').fill(adminPassword);
    await form.getByLabel('New password', { exact: true }).fill('weak');
    await form.getByLabel('New password again').fill('weak');
    await form.getByRole('button', { name: 'Change password' }).click();
    assert.match(await textOf(form.locator('.field-error')), /at least 10 characters/);

    adminPassword = 'Admin-Chose-This-7';
    await form.getByLabel('New password', { exact: true }).fill(adminPassword);
    await form.getByLabel('New password again').fill(adminPassword);
    await form.getByRole('button', { name: 'Change password' }).click();
    await shows(page, 'Your password was changed');
    await signOut();
    await signInAs('admin', adminPassword);
  });

  test('creates a project and a flag in it', async () => {
    await page.getByRole('link', { name: 'Projects' }).click();
    const form = page.getByRole('form', { name: 'New project' });
    await form.getByLabel('Id').fill(PROJECT);
    await form.getByLabel('Name').fill('Checkout');
    await form.getByRole('button', { name: 'Create project' }).click();
    await page.waitForURL(new RegExp(`/projects/${PROJECT}$`));
    // The URL changes before the project's page replaces the list's heading: wait for the page, then read it.
    const heading = page.getByRole('heading', { level: 1, name: /^Checkout \(checkout\)/ });
    await heading.waitFor();
    assert.match(await textOf(heading), /^Checkout \(checkout\)/);

    const flagForm = page.getByRole('form', { name: 'New flag' });
    await flagForm.getByLabel('Name').fill('bad name!');
    // Past the browser's own check of the pattern, to see what the API says.
    await flagForm.getByLabel('Name').evaluate((input: { removeAttribute(name: string): void }) => input.removeAttribute('pattern'));
    await flagForm.getByRole('button', { name: 'Create flag' }).click();
    // The API's own complaint, next to the field that caused it.
    assert.match(await textOf(flagForm.locator('.field-error')), /name/i);

    await flagForm.getByLabel('Name').fill(FLAG);
    await flagForm.getByLabel('Description').fill('The one-page checkout');
    await flagForm.getByRole('button', { name: 'Create flag' }).click();
    await page.waitForURL(flagUrl());
    // The project's page stays until the flag page's script has arrived: wait for the flag's heading.
    await page.getByRole('heading', { level: 1, name: new RegExp(`${FLAG}\\s+release`) }).waitFor();
    await shows(page, 'The one-page checkout');
  });

  test('turns the flag on in development with a gradual rollout and a constraint', async () => {
    const development = page.getByTestId('environment-development');
    await development.getByRole('button', { name: 'Add strategy' }).click();
    const form = development.getByRole('form', { name: 'Add strategy' });
    await form.getByLabel('Rollout (%)').fill('25');
    await form.getByRole('button', { name: 'Add constraint' }).click();
    await form.getByLabel('Context field', { exact: true }).selectOption('userId');
    await form.getByLabel('Operator', { exact: true }).selectOption('IN');
    await form.getByLabel('Values (comma-separated)').fill('alice, bob');
    await form.getByRole('button', { name: 'Save strategy' }).click();

    const strategy = development.getByTestId('strategy');
    await waitForTexts(strategy, (texts) => texts.length === 1 && texts[0]!.includes('25% of default'));
    assert.match(await textOf(strategy.getByRole('list', { name: 'Constraints' })), /userId IN alice, bob/);

    await development.getByRole('switch', { name: `${FLAG} in development` }).click();
    await waitForTexts(development.locator('.switch span'), (texts) => texts[0] === 'On');
    // As the server keeps it: read back after a reload.
    await page.reload();
    assert.equal(await page.getByTestId('environment-development').getByRole('switch').isChecked(), true);
    assert.equal(await page.getByTestId('environment-production').getByRole('switch').isChecked(), false);
  });

  test('links the flag to its ticket; an address that would run a script is refused on the page', async () => {
    const links = page.getByRole('region', { name: 'Links' });
    await links.getByLabel('Link address').fill('github.com/acme/checkout/issues/7');
    await links.getByLabel('Link title').fill('Checkout ticket');
    await links.getByRole('button', { name: 'Add link' }).click();
    const link = links.getByRole('link', { name: 'Checkout ticket' });
    await link.waitFor();
    assert.equal(await link.getAttribute('href'), 'https://github.com/acme/checkout/issues/7');
    assert.equal(await link.getAttribute('rel'), 'noopener noreferrer');

    // The form empties itself once the list has the new link: typing before that would be wiped (seen on a busy machine).
    await waitUntil(async () => (await links.getByLabel('Link address').inputValue()) === '');
    await links.getByLabel('Link address').fill('javascript:alert(1)');
    await links.getByRole('button', { name: 'Add link' }).click();
    await links
      .getByText(/http or https/)
      .first()
      .waitFor();
    assert.equal(await links.getByRole('link').count(), 1);
    await page.screenshot({ path: join(tmpdir(), 'vexil-flag-links.png'), fullPage: true });
  });

  test('finds the flag with two filters, kept in the URL', async () => {
    // A second flag that the filters must leave out.
    await page.goto(`${server.baseUrl}/projects/${PROJECT}`);
    const flagForm = page.getByRole('form', { name: 'New flag' });
    await flagForm.getByLabel('Name').fill('legacy-cart');
    await flagForm.getByRole('button', { name: 'Create flag' }).click();
    await page.waitForURL(/legacy-cart$/);

    await page.getByRole('link', { name: 'Flags', exact: true }).click();
    const names = page.getByTestId('flag-row').locator('a[href*="/flags/"]');
    await waitForTexts(names, (texts) => texts.length === 2);

    await page.getByLabel('Add a filter').selectOption('project');
    await page.getByLabel('Project values').fill(PROJECT);
    await page.getByLabel('Project values').press('Enter');
    await page.getByLabel('Add a filter').selectOption('status');
    await page.getByLabel('Status environment').selectOption('development');
    await page.getByLabel('Status', { exact: true }).selectOption('enabled');
    assert.deepEqual(await waitForTexts(names, (texts) => texts.length === 1), [FLAG]);

    const shared = new URL(page.url());
    assert.equal(shared.searchParams.get('project'), `IS:${PROJECT}`);
    assert.deepEqual(shared.searchParams.getAll('status'), ['development:enabled']);
    // The URL is the view: opened afresh, it shows the same flags and filters.
    await page.goto(shared.toString());
    assert.deepEqual(await waitForTexts(names, (texts) => texts.length === 1), [FLAG]);
    assert.equal(await page.getByLabel('Project values').inputValue(), PROJECT);
  });

  test("shows the flag's events with a side-by-side diff", async () => {
    await page.getByRole('link', { name: 'Event log' }).click();
    await page.getByRole('form', { name: 'Event filters' }).getByLabel('Flag').fill(FLAG);
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/feature=IS%3Anew-checkout/);
    const labels = page.getByTestId('event').locator('.event-label');
    const expected = ['Flag link added', 'Flag enabled', 'Strategy added', 'Flag created'];
    await waitForTexts(labels, (texts) => texts.join() === expected.join());
    assert.equal(await textOf(page.getByTestId('event-total')), '4 events');

    const strategyEvent = page.getByTestId('event').filter({ hasText: 'Strategy added' });
    await strategyEvent.getByText('What changed').click();
    const rollout = strategyEvent.getByRole('table', { name: 'Changes' }).locator('tr', { hasText: 'parameters.rollout' });
    assert.deepEqual(await rollout.locator('td').allInnerTexts(), ['parameters.rollout', '', '"25"']);

    const enabledEvent = page.getByTestId('event').filter({ hasText: 'Flag enabled' });
    assert.match(await textOf(enabledEvent.locator('.summary')), /admin enabled new-checkout in development/);
    assert.deepEqual(await accessibilityViolations(page, ['nested-interactive']), [], 'no link inside a disclosure summary');
    await page.goto(flagUrl());
    await page.getByTestId('event').first().waitFor();
    assert.deepEqual(await accessibilityViolations(page, ['nested-interactive']), [], "the flag's history too");
  });

  test('protects production: a change goes into a change request, a second user approves it, and it is applied', async () => {
    await page.goto(`${server.baseUrl}/admin/users`);
    const userForm = page.getByRole('form', { name: 'New user' });
    await userForm.getByLabel('Username').fill('reviewer');
    await userForm.getByLabel('Password').fill(STRONG_PASSWORD);
    await userForm.getByRole('button', { name: 'Create user' }).click();
    await shows(page, 'Created reviewer.');

    await page.goto(`${server.baseUrl}/projects/${PROJECT}`);
    await page.getByTestId('cr-config-production').getByRole('checkbox').click();
    await waitUntil(() => page.getByTestId('cr-config-production').getByRole('checkbox').isChecked());

    await page.goto(flagUrl());
    const production = page.getByTestId('environment-production');
    await shows(page, 'Changes in production need approval');
    await production.getByRole('switch').click();
    const notice = page.getByRole('status').filter({ hasText: 'Your change went into change request' });
    assert.match(await textOf(notice), /change request #\d+ for production/);
    // Not made yet: production stays off.
    assert.equal(await production.getByRole('switch').isChecked(), false);

    await notice.getByRole('link').click();
    await page.waitForURL(/\/change-requests\/\d+$/);
    changeRequestUrl = page.url();
    assert.equal(await textOf(page.getByTestId('cr-state')), 'Draft');
    const change = page.getByTestId('change');
    assert.match(await textOf(change.locator('strong')), /updateEnabled/);
    assert.deepEqual(await change.locator('tr.changed td').allInnerTexts(), ['enabled', 'false', 'true']);
    await page.getByRole('button', { name: 'Send to review' }).click();
    await waitForTexts(page.getByTestId('cr-state'), (texts) => texts[0] === 'In review');
    // The author cannot approve their own change request.
    assert.equal(await page.getByRole('button', { name: 'Approve' }).isDisabled(), true);
    await signOut();

    await signInAs('reviewer', STRONG_PASSWORD);
    await page.goto(changeRequestUrl);
    await page.getByRole('textbox', { name: 'Comment' }).fill('Looks right to me');
    await page.getByRole('button', { name: 'Comment' }).click();
    await waitForTexts(page.getByTestId('comment'), (texts) => texts.length === 1 && texts[0]!.includes('Looks right to me'));
    await page.getByRole('button', { name: 'Approve' }).click();
    await waitForTexts(page.getByTestId('cr-state'), (texts) => texts[0] === 'Approved');
    await shows(page, /Approved by reviewer/);
    await signOut();

    await signInAs('admin', adminPassword);
    await page.goto(changeRequestUrl);
    await page.getByRole('button', { name: 'Apply now' }).click();
    await waitForTexts(page.getByTestId('cr-state'), (texts) => texts[0] === 'Applied');
    // Once applied, the request shows what it changed then, not a diff against today's flag.
    const applied = page.getByTestId('applied-change').filter({ hasText: 'feature-environment-enabled' });
    assert.match(await textOf(applied.locator('h3')), new RegExp(`^feature-environment-enabled · ${FLAG} event #\\d+$`));
    assert.deepEqual(await applied.locator('tr.changed td').allInnerTexts(), ['enabled', 'false', 'true']);
    await page.screenshot({ path: join(tmpdir(), 'vexil-change-request-applied.png'), fullPage: true });
    await page.goto(flagUrl());
    await page.getByTestId('environment-production').getByRole('switch').waitFor();
    assert.equal(await page.getByTestId('environment-production').getByRole('switch').isChecked(), true);
  });

  test("an API token's secret is shown once, with a copy button, and never again", async () => {
    await page.getByRole('link', { name: 'API tokens' }).click();
    const form = page.getByRole('form', { name: 'New token' });
    await form.getByLabel('Name').fill('checkout-backend');
    await form.getByLabel('Environment').selectOption('production');
    await form.getByRole('checkbox', { name: 'Checkout' }).check();
    await form.getByRole('button', { name: 'Create token' }).click();
    const secret = await textOf(page.getByTestId('secret'));
    assert.match(secret, /^checkout:production\.[A-Za-z0-9_-]+$/);
    await page.getByRole('button', { name: 'Copy' }).waitFor();
    const row = page.getByRole('table', { name: 'API tokens' }).locator('tr', { hasText: 'checkout-backend' });
    assert.deepEqual((await row.locator('td').allInnerTexts()).slice(0, 4), ['checkout-backend', 'client', 'checkout', 'production']);
    await page.reload();
    await row.waitFor();
    assert.equal(await page.getByTestId('secret').count(), 0);
    assert.ok(!(await page.content()).includes(secret));
  });

  test('a webhook to a failing receiver shows the failed delivery; once fixed, redelivery succeeds', async () => {
    receiver.answer(() => ({ status: 500 }));
    await page.goto(`${server.baseUrl}/integrations`);
    await page.getByLabel('Provider').selectOption('webhook');
    const form = page.getByRole('form', { name: 'Webhook configuration' });
    await form.getByLabel(/^Webhook URL/).fill(`${receiver.origin}/hooks/vexil`);
    assert.equal(await form.getByLabel(/^Webhook URL/).getAttribute('type'), 'text', 'a URL is checked by eye as it is typed');
    await form.getByLabel('Description').fill('Deploy bot');
    await form.getByText('Events delivered: all').click();
    await form.getByLabel('Find event types').fill('feature-stale');
    assert.deepEqual(await form.locator('label.check').filter({ hasText: 'feature-stale' }).allInnerTexts(), [
      'feature-stale-on',
      'feature-stale-off',
    ]);
    assert.equal(await form.locator('.grid2.small label.check').count(), 2, 'only the event types found are shown');
    await form.getByLabel('Find event types').fill('');
    await form.getByRole('button', { name: 'Create integration' }).click();
    assert.match(await textOf(page.getByTestId('secret')), /^whsec_/);
    assert.equal(await page.getByRole('form', { name: 'Webhook configuration' }).count(), 0, 'the form is not left filled');
    await page.getByRole('link', { name: 'Open the integration' }).click();
    await page.waitForURL(/\/integrations\/\d+$/);
    // The list stays until the integration's page has drawn: wait for its heading.
    await page.getByRole('heading', { level: 1, name: 'Deploy bot', exact: true }).waitFor();

    // A change to deliver: mark the flag stale.
    const integrationUrl = page.url();
    await page.goto(flagUrl());
    await page.getByRole('button', { name: 'Mark stale' }).click();
    await page.getByRole('button', { name: 'Mark active' }).waitFor();
    await receiver.waitForRequests(1);

    await page.goto(integrationUrl);
    const deliveries = page.getByTestId('delivery');
    const failed = deliveries.filter({ hasText: 'Flag marked stale' });
    assert.match(await textOf(failed.locator('.badge')), /^failed$/);
    assert.match(await textOf(failed.getByTestId('delivery-outcome')), /status code 500 \(attempt 1 of 1\)/);

    receiver.answer(() => ({ status: 200 }));
    await failed.getByRole('button', { name: 'Redeliver' }).click();
    await shows(page, /is delivered again/);
    await receiver.waitForRequests(2);
    const states = await waitForTexts(deliveries.getByTestId('delivery-state'), (texts) => texts.includes('success'), 20_000);
    assert.deepEqual(states.slice(0, 2), ['success', 'failed']);
    assert.deepEqual(await accessibilityViolations(page, ['nested-interactive']), [], 'no button inside a disclosure summary');
    // The redelivery is told apart from the original delivery it repeats.
    assert.deepEqual(await deliveries.filter({ hasText: 'redelivery' }).getByTestId('delivery-state').allInnerTexts(), ['success']);
    assert.equal(JSON.parse(receiver.requests[1]!.body).type, 'feature-stale-on');
  });

  test('no page threw a script error or had content refused by its security policy', () => {
    assert.deepEqual(pageProblems, []);
  });
});
