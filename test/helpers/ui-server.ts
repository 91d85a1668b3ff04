import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import { buildWebUi, launchBrowser, signIn, watchForProblems } from './browser.js';
import { startServer, stopServer, type RunningServer } from './server-process.js';
import { createServerDatabase } from './test-database.js';
import { STRONG_PASSWORD } from './test-app.js';

/** The admin token every browser-test server is started with. */
export const UI_ADMIN_TOKEN = '*:*.browser-test-admin-token-0123456789';

export interface UiServer {
  server: RunningServer;
  browser: Browser;
  /** Signed in as `ops`, an Admin. */
  page: Page;
  /** The server's data directory, and a place for the test's own files. */
  workDir: string;
  /** What the pages of the file reported (errors, failed requests): a file's last test expects none. */
  problems: string[];
  /** The admin API, with the admin token unless another credential is given. */
  api(method: string, path: string, body?: unknown, authorization?: string): Promise<Response>;
}

/**
 * A Vexil process on a database of its own, and Chromium with an Admin (`ops`) signed in, for one file's browser
 * tests: started before them (with what `seed` creates through the API first, each request expected to succeed),
 * stopped after them. The object is
 * filled in when the file's tests start.
 */
export function useUiServer(
  name: string,
  options: {
    seed?: (api: UiServer['api']) => Promise<void>;
    page?: BrowserContextOptions;
    /** More of the server's environment, made when it starts (a port and the BASE_URL naming it). */
    env?: () => Promise<Record<string, string>>;
  } = {},
): UiServer {
  const ui = { problems: [] as string[] } as UiServer;
  let database: Awaited<ReturnType<typeof createServerDatabase>> | undefined;
  ui.api = (method, path, body, authorization = UI_ADMIN_TOKEN) =>
    fetch(`${ui.server.baseUrl}${path}`, {
      method,
      headers: { authorization, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  before(async () => {
    buildWebUi();
    ui.workDir = await mkdtemp(join(tmpdir(), `vexil-ui-${name}-`));
    database = await createServerDatabase();
    ui.server = await startServer({
      DATA_DIR: join(ui.workDir, 'data'),
      ...database.env,
      INIT_ADMIN_API_TOKENS: UI_ADMIN_TOKEN,
      ...(await options.env?.()),
    });
    const created = await ui.api('POST', '/api/admin/user-admin', { username: 'ops', rootRole: 'Admin', password: STRONG_PASSWORD });
    if (created.status !== 201) throw new Error(`Creating the signed-in Admin answered ${created.status}`);
    await options.seed?.(async (method, path, body, authorization) => {
      const response = await ui.api(method, path, body, authorization);
      if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${await response.text()}`);
      return response;
    });
    ui.browser = await launchBrowser();
    ui.page = await ui.browser.newPage({ viewport: { width: 1360, height: 900 }, ...options.page });
    watchForProblems(ui.page, ui.problems);
    ui.page.on('dialog', (dialog) => void dialog.accept());
    await signIn(ui.page, ui.server.baseUrl, 'ops', STRONG_PASSWORD);
  });
  after(async () => {
    await ui.browser?.close();
    if (ui.server) await stopServer(ui.server);
    await database?.drop();
    if (ui.workDir) await rm(ui.workDir, { recursive: true, force: true });
  });
  return ui;
}
