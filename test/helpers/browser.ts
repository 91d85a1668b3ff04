import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { eventually } from './eventually.js';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { hardenPrototypes } from '../../src/shared/prototype-hardening.js';
import { STRONG_PASSWORD, startTestApp, type TestApp } from './test-app.js';

// Any test that drives a browser hardens this process as the app runs, but for one thing, and before it starts an app
// (the first hardening wins): Playwright's colour library sets `__proto__` when it writes a failing call's log, and
// with the accessor refused a failing browser test reports the refusal instead of what failed. The refusal is the
// API tests' to hold (prototype-keys).
hardenPrototypes({ refuseProtoAccessor: false });

/** Debian's Chromium (`apt-get install chromium`); `.ci/run` installs it when it is missing. */
export const CHROMIUM = '/usr/bin/chromium';

/** Builds the web UI into dist/web when its sources changed, as `npm start` does. */
export function buildWebUi(): void {
  const result = spawnSync(process.execPath, [join(import.meta.dirname, '../../scripts/build.mjs'), '--if-stale', 'web'], {
    stdio: 'inherit',
  });
  if (result.status !== 0) throw new Error('building the web UI failed');
}

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (apt-get install -y chromium)`);
  // Without the background-networking flags Chromium keeps calling Google's hosts, which this network refuses.
  // Shared memory goes to /tmp: a container's /dev/shm can be a few megabytes, and Debian's launcher, which should
  // notice, fails its own test where /dev/shm is mounted twice ("[: unexpected operator"); a browser that ran out of
  // it closed under a test ("Target page, context or browser has been closed").
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** Signs in on the sign-in page as a person would, and waits for the Flags page it leads to. */
export async function signIn(page: Page, baseUrl: string, username: string, password: string): Promise<void> {
  await page.goto(`${baseUrl}/login`);
  await page.getByLabel('Username or email').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/flags/);
}

/** Collects the page's uncaught script errors and console errors other than failed requests (CSP refusals among them). */
export function watchForProblems(page: Page, problems: string[]): void {
  page.on('pageerror', (error) => problems.push(`uncaught: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) problems.push(message.text());
  });
}

/**
 * What axe-core finds wrong on the page as it is now, for the rules named: `rule: target` per offending element.
 * Evaluated through the browser's debugging protocol, which the page's Content-Security-Policy does not govern.
 */
export async function accessibilityViolations(page: Page, rules: string[]): Promise<string[]> {
  // Its source read as text: loading the module would run axe in this process, whose prototypes are frozen.
  await page.evaluate(await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8'));
  // A string, run in the page: this file is compiled without the DOM's types.
  return page.evaluate(`axe.run(document, { runOnly: { type: 'rule', values: ${JSON.stringify(rules)} } }).then((result) =>
    result.violations.flatMap((violation) => violation.nodes.map((node) => violation.id + ': ' + node.target.join(' '))))`);
}

/** Waits until the locator's first match shows, then returns its text. */
export async function textOf(locator: Locator, timeout = 15_000): Promise<string> {
  await locator.first().waitFor({ state: 'visible', timeout });
  // biome-ignore lint/performance/useDomNodeTextContent: Playwright's innerText is the text as shown (CSS applied), which is what the tests assert.
  return (await locator.first().innerText()).trim();
}

/** Waits until the page shows the text somewhere. */
export async function shows(page: Page, text: string | RegExp, timeout = 15_000): Promise<void> {
  await page.getByText(text).first().waitFor({ state: 'visible', timeout });
}

/** Waits until the texts of the locator's matches (each trimmed) satisfy the predicate, as a list a user sees settles. */
export async function waitForTexts(locator: Locator, predicate: (texts: string[]) => boolean, timeout = 15_000): Promise<string[]> {
  const deadline = Date.now() + timeout;
  let texts: string[] = [];
  while (Date.now() < deadline) {
    texts = (await locator.allInnerTexts()).map((text) => text.trim());
    if (predicate(texts)) return texts;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the page never showed what was expected; it showed ${JSON.stringify(texts)}`);
}

/** Waits until the condition holds, e.g. a control the page updates once the server answered. */
export async function waitUntil(condition: () => Promise<boolean>, timeout = 15_000): Promise<void> {
  await eventually(condition, timeout).catch(() => {
    throw new Error('the page never reached the expected state');
  });
}

/** The app in this process on a free port, with the web UI built, and a browser to open its pages in. */
export async function startUiApp(): Promise<{ ctx: TestApp; baseUrl: string; browser: Browser; close(): Promise<void> }> {
  buildWebUi();
  const ctx = await startTestApp();
  const baseUrl = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const browser = await launchBrowser();
  return {
    ctx,
    baseUrl,
    browser,
    close: async () => {
      await browser.close();
      await ctx.close();
    },
  };
}

/**
 * A new user of the role, signed in on a page of its own browser context; dialogs are accepted, and the page's
 * script errors collect in `problems`.
 */
export async function signedInPage(
  ui: { ctx: TestApp; baseUrl: string; browser: Browser },
  user: { username: string; rootRole: 'Admin' | 'Editor' | 'Viewer' },
  viewport = { width: 1360, height: 900 },
): Promise<{ page: Page; problems: string[] }> {
  const created = await ui.ctx.admin.post('/api/admin/user-admin', { ...user, password: STRONG_PASSWORD });
  if (created.statusCode !== 201) throw new Error(`creating ${user.username} failed: ${created.statusCode} ${created.body}`);
  const page = await (await ui.browser.newContext({ viewport })).newPage();
  const problems: string[] = [];
  watchForProblems(page, problems);
  page.on('dialog', (dialog) => void dialog.accept());
  await signIn(page, ui.baseUrl, user.username, STRONG_PASSWORD);
  return { page, problems };
}
