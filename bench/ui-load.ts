/**
 * `npm run bench:ui`: what the admin UI costs a person opening it. Vexil as `npm start` runs it (dist/), a project
 * with flags, and Debian's Chromium with an empty cache for each load: the sign-in page and the flags page (signed
 * in), each loaded five times. Prints, per page, the bytes transferred (compressed, as they crossed the network), the
 * script bytes among them, and the median time until the page can be used (the sign-in button enabled; the flags
 * table showing its rows).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser } from '../test/helpers/browser.js';
import { startServer, TOKEN } from './server.js';

const LOADS = 5;
const PASSWORD = 'Correct-Horse-9-Battery';
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function api(baseUrl: string, method: string, path: string, body?: unknown): Promise<void> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: TOKEN, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${await response.text()}`);
}

/** One cold load: a fresh browser context (no cache), the bytes its responses carried, and the time until `ready`. */
async function load(
  browser: Browser,
  url: string,
  ready: (page: Page) => Promise<void>,
  cookies: Array<{ name: string; value: string; url: string }> = [],
) {
  const context = await browser.newContext();
  await context.addCookies(cookies);
  const page = await context.newPage();
  const sizes: Array<Promise<{ bytes: number; script: boolean }>> = [];
  page.on('requestfinished', (request) =>
    sizes.push(
      request
        .sizes()
        .then((size) => ({ bytes: size.responseBodySize + size.responseHeadersSize, script: request.resourceType() === 'script' })),
    ),
  );
  const started = performance.now();
  await page.goto(url);
  await ready(page);
  const usableMs = performance.now() - started;
  await page.waitForLoadState('networkidle');
  const finished = await Promise.all(sizes);
  await context.close();
  return {
    usableMs,
    bytes: finished.reduce((sum, size) => sum + size.bytes, 0),
    scriptBytes: finished.filter((size) => size.script).reduce((sum, size) => sum + size.bytes, 0),
  };
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'vexil-bench-ui-'));
  const server = await startServer({ DATA_DIR: dataDir });
  const browser = await launchBrowser();
  try {
    await api(server.baseUrl, 'POST', '/api/admin/user-admin', { username: 'bench', rootRole: 'Admin', password: PASSWORD });
    await api(server.baseUrl, 'POST', '/api/admin/projects', { id: 'web', name: 'Web' });
    for (let index = 0; index < 50; index += 1) {
      await api(server.baseUrl, 'POST', '/api/admin/projects/web/features', { name: `flag-${index}`, description: `Flag ${index}` });
    }
    const login = await fetch(`${server.baseUrl}/auth/simple/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'bench', password: PASSWORD }),
    });
    const session = /vexil-session=([^;]+)/.exec(login.headers.get('set-cookie') ?? '')?.[1];
    if (!session) throw new Error('signing in gave no session cookie');
    const cookie = [{ name: 'vexil-session', value: session, url: server.baseUrl }];

    const pages = [
      {
        name: 'sign-in page',
        run: () => load(browser, `${server.baseUrl}/login`, (page) => page.getByRole('button', { name: 'Sign in' }).waitFor()),
      },
      {
        name: 'flags page (50 flags)',
        run: () => load(browser, `${server.baseUrl}/flags`, (page) => page.getByTestId('flag-row').first().waitFor(), cookie),
      },
    ];
    console.log('page                     transferred   of it scripts   usable after (median of 5, cold cache)');
    for (const { name, run } of pages) {
      await run(); // the server's first answers (compression of the assets, the first query) are not the page's cost
      const runs = [];
      for (let index = 0; index < LOADS; index += 1) runs.push(await run());
      const kB = (bytes: number) => `${(bytes / 1024).toFixed(1)} kB`;
      console.log(
        `${name.padEnd(25)}${kB(median(runs.map((r) => r.bytes))).padStart(11)}${kB(median(runs.map((r) => r.scriptBytes))).padStart(16)}${`${median(runs.map((r) => r.usableMs)).toFixed(0)} ms`.padStart(17)}`,
      );
    }
  } finally {
    await browser.close();
    const exited = new Promise((resolve) => server.process.once('exit', resolve));
    server.process.kill();
    await exited;
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
