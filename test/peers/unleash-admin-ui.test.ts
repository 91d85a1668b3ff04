import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { CHROMIUM } from '../helpers/browser.js';
import { STRONG_PASSWORD } from '../helpers/test-app.js';
import { useUiServer } from '../helpers/ui-server.js';

// Unleash's own admin UI (the build in the unleash-server 8.2.0 package) in front of Vexil's API, as a team moving
// in might keep it: a small server gives the UI's files and passes /api and /auth to Vexil, as a reverse proxy would.
// Chromium signs in through the page Unleash draws from Vexil's 401 and opens the pages a team uses every day; every
// call the UI makes must find its route (no "Could not find <method> <path>") and none may fail with a 5xx.

const BUILD = join(import.meta.dirname, '../../node_modules/unleash-server-8/frontend/build');
const skip = !existsSync(join(BUILD, 'index.html'))
  ? "unleash-server-8's frontend build is missing"
  : !existsSync(CHROMIUM)
    ? `${CHROMIUM} is missing`
    : false;

const ui = useUiServer('unleash-ui', {
  seed: async (api) => {
    await api('POST', '/api/admin/projects', { id: 'checkout', name: 'Checkout', environments: ['development', 'production'] });
    await api('POST', '/api/admin/projects/checkout/features', { name: 'new-basket', type: 'release', description: 'The new basket' });
    await api('POST', '/api/admin/projects/checkout/features/new-basket/environments/development/strategies', {
      name: 'flexibleRollout',
      parameters: { rollout: '50', stickiness: 'default', groupId: 'new-basket' },
    });
    await api('POST', '/api/admin/projects/checkout/features/new-basket/environments/development/on');
  },
});

const TYPES: Record<string, string> = {
  '.html': 'text/html',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
};
const API = /^\/(api|auth|logout)(\/|$|\?)/;

/** Unleash's index.html as its server writes it: no base path, no CDN, no UI flags. */
const indexHtml = () =>
  readFileSync(join(BUILD, 'index.html'), 'utf8')
    .replace(/::baseUriPath::|::cdnPrefix::|::faviconPrefix::|::unleashToken::/gi, '')
    .replace(/::uiFlags::/gi, '{}');

async function forward(request: IncomingMessage, response: ServerResponse, upstream: string) {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || ['host', 'connection', 'content-length', 'accept-encoding'].includes(name)) continue;
    headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  // One origin, as behind a reverse proxy: the browser's origin is the proxy's.
  if (headers.has('origin')) headers.set('origin', upstream);
  const answer = await fetch(`${upstream}${request.url}`, {
    method: request.method,
    headers,
    redirect: 'manual',
    ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}),
  });
  const out: Record<string, string | string[]> = {};
  answer.headers.forEach((value, name) => {
    if (!['content-encoding', 'content-length', 'transfer-encoding', 'set-cookie'].includes(name)) out[name] = value;
  });
  const cookies = answer.headers.getSetCookie();
  if (cookies.length > 0) out['set-cookie'] = cookies;
  response.writeHead(answer.status, out).end(Buffer.from(await answer.arrayBuffer()));
}

let proxy: Server;
let baseUrl: string;

function serve(request: IncomingMessage, response: ServerResponse) {
  const path = new URL(request.url ?? '/', 'http://x').pathname;
  if (API.test(path)) {
    forward(request, response, ui.server.baseUrl).catch((error: unknown) => response.writeHead(502).end(String(error)));
    return;
  }
  const file = normalize(join(BUILD, path));
  if (file.startsWith(BUILD) && extname(file) !== '' && existsSync(file)) {
    response.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(readFileSync(file));
    return;
  }
  response.writeHead(200, { 'content-type': 'text/html' }).end(indexHtml());
}

/** Every call the UI made to the API, with its answer, and what in them is wrong. */
interface Call {
  method: string;
  path: string;
  status: number;
  body: string;
}

function watchCalls(page: Page, calls: Call[]) {
  page.on('response', (response) => {
    const url = new URL(response.url());
    if (!API.test(url.pathname)) return;
    const call = { method: response.request().method(), path: url.pathname + url.search, status: response.status(), body: '' };
    calls.push(call);
    response.text().then(
      (body) => {
        call.body = body;
      },
      () => undefined,
    );
  });
}

const missingRoutes = (calls: Call[]) =>
  calls
    .filter((call) => call.status === 404 && /Could not find (GET|POST|PUT|PATCH|DELETE) /.test(call.body))
    .map((call) => `${call.method} ${call.path}`);
const failures = (calls: Call[]) => calls.filter((call) => call.status >= 500).map((call) => `${call.status} ${call.method} ${call.path}`);

describe("Unleash's own admin UI in front of Vexil", { skip, timeout: 240_000 }, () => {
  before(async () => {
    proxy = createServer(serve);
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => (proxy ? proxy.close(() => resolve()) : resolve())));

  test("signs in on the page drawn from Vexil's 401, and its everyday pages find every route they call", async () => {
    const context = await ui.browser.newContext({ viewport: { width: 1440, height: 960 } });
    const page = await context.newPage();
    const calls: Call[] = [];
    watchCalls(page, calls);
    try {
      await page.goto(`${baseUrl}/login`);
      // Unleash draws its password form from the 401's sign-in description; its "Email" field takes a username too.
      await page.getByLabel('Email').fill('ops');
      await page.getByLabel('Password', { exact: true }).fill(STRONG_PASSWORD);
      await page.screenshot({ path: join(tmpdir(), 'vexil-unleash-ui-sign-in.png'), fullPage: true });
      const signedIn = page.waitForResponse((response) => new URL(response.url()).pathname === '/auth/simple/login');
      await page.getByRole('button', { name: 'Sign in' }).click();
      assert.equal((await signedIn).status(), 200, "signed in through the path Vexil's 401 named");
      await page.waitForURL((url) => !url.pathname.startsWith('/login'), { timeout: 30_000 });

      for (const path of [
        '/personal',
        '/projects',
        '/projects/checkout',
        '/projects/checkout/settings/api-access',
        '/projects/checkout/settings/default-strategy',
        '/projects/checkout/features/new-basket',
        '/projects/checkout/features/new-basket/metrics',
        '/search',
        '/archive',
        '/playground',
        '/applications',
        '/segments',
        '/context',
        '/strategies',
        '/tag-types',
        '/environments',
        '/admin/users',
        '/admin/api',
        '/admin/roles',
        '/admin/groups',
        '/admin/maintenance',
        '/admin/logins',
        '/history',
      ]) {
        await page.goto(`${baseUrl}${path}`);
        await page.waitForLoadState('networkidle', { timeout: 30_000 }).catch(() => undefined);
      }
      await page.goto(`${baseUrl}/projects/checkout/features/new-basket`);
      // What Vexil answered, drawn by Unleash: the flag's description, on in development with its one strategy.
      await page.getByText('The new basket').first().waitFor({ timeout: 30_000 });
      await page.getByText('1 strategy added').first().waitFor({ timeout: 30_000 });
      await page.screenshot({ path: join(tmpdir(), 'vexil-unleash-ui-flag.png'), fullPage: true });

      await page.waitForTimeout(1000);
      assert.ok(calls.length > 20, `the UI called the API (${calls.length} calls)`);
      assert.deepEqual([...new Set(missingRoutes(calls))], [], 'calls Vexil has no route for');
      assert.deepEqual([...new Set(failures(calls))], [], 'calls that failed');
    } finally {
      await context.close();
    }
  });
});
