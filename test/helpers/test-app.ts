import { after, before } from 'node:test';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { loadConfig, type Config, type DatabaseConfig, type LogLevel } from '../../src/config.js';
import type { DatabaseHandle, Db } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { bootstrap, composeApp } from '../../src/server.js';
import { startEvaluationUsageWriter } from '../../src/workers/evaluation-usage-writer.js';
import type { BuildAppOptions } from '../../src/http/app.js';
import type { Clock } from '../../src/shared/clock.js';
import type { Metrics } from '../../src/shared/metrics.js';
import { hardenPrototypes } from '../../src/shared/prototype-hardening.js';
import { createTestDatabase } from './test-database.js';

export const ADMIN_TOKEN = '*:*.test-admin-token-0123456789abcdef';
export const STRONG_PASSWORD = 'Correct-Horse-9-Battery';

/** A clock the test moves by hand; starts at the real time so tokens created "now" behave normally. */
export class TestClock implements Clock {
  private current = new Date();
  now(): Date {
    return new Date(this.current);
  }
  advance(milliseconds: number): void {
    this.current = new Date(this.current.getTime() + milliseconds);
  }
  set(instant: Date | string): void {
    this.current = new Date(instant);
  }
}

export interface TestApp {
  app: FastifyInstance;
  db: Db;
  /** Where `db` points, so a test can open a second handle to the same database, as another instance would. */
  databaseConfig: DatabaseConfig;
  /** The configuration the app runs with, for workers a test starts beside it. */
  config: Config;
  /** LISTEN on the app's own database handle (the only way to hear an in-memory PGlite's NOTIFY). */
  listen: DatabaseHandle['listen'];
  clock: TestClock;
  /** The app's metrics, to hand to workers a test runs beside it. */
  metrics: Metrics;
  /** Requests as the built-in admin token. */
  admin: Client;
  /** Requests with the given Authorization header value, or none. */
  as(authorization?: string): Client;
  /** Requests carrying a session cookie. */
  withCookie(cookie: string): Client;
  close(): Promise<void>;
}

export interface Client {
  get(url: string): Promise<LightMyRequestResponse>;
  post(url: string, body?: unknown): Promise<LightMyRequestResponse>;
  put(url: string, body?: unknown): Promise<LightMyRequestResponse>;
  patch(url: string, body?: unknown): Promise<LightMyRequestResponse>;
  delete(url: string): Promise<LightMyRequestResponse>;
  inject(options: InjectOptions): Promise<LightMyRequestResponse>;
}

function makeClient(app: FastifyInstance, headers: Record<string, string>): Client {
  const send = (method: InjectOptions['method'], url: string, body?: unknown) =>
    app.inject({ method, url, headers, ...(body === undefined ? {} : { payload: body as object }) });
  return {
    get: (url) => send('GET', url),
    post: (url, body) => send('POST', url, body),
    put: (url, body) => send('PUT', url, body),
    patch: (url, body) => send('PATCH', url, body),
    delete: (url) => send('DELETE', url),
    inject: (options) => app.inject({ ...options, headers: { ...headers, ...(options.headers ?? {}) } }),
  };
}

/** The server as `npm start` builds it, on a fresh migrated database, with one admin token. */
export async function startTestApp(
  options: Omit<BuildAppOptions, 'logLevel'> & {
    logLevel?: LogLevel;
    /** Environment variables the configuration is read from, e.g. `{ INTEGRATIONS_ALLOW_PRIVATE_NETWORKS: 'true' }`. */
    env?: Record<string, string>;
  } = {},
): Promise<TestApp> {
  // The app is tested as it runs: in a process whose prototypes a request cannot change (see main.ts).
  hardenPrototypes();
  const { env = {}, ...appOptions } = options;
  const database = await createTestDatabase();
  const handle = await database.open();
  await migrateToLatest(handle.db);
  const clock = new TestClock();
  const config = { ...loadConfig(env), database: database.config, initAdminApiTokens: [ADMIN_TOKEN] };
  const deps = { db: handle.db, clock, config, listen: handle.listen, poolUse: handle.poolUse, databaseUp: handle.databaseUp };
  await bootstrap(deps, config.initAdminApiTokens);
  const { app, services } = await composeApp(deps, { logLevel: 'silent', ...appOptions });
  await app.ready();
  // The one worker a test cannot drive through HTTP: OFREP evaluations reach the usage only through it.
  const evaluationUsageWriter = startEvaluationUsageWriter(deps, services.evaluationUsage, app.log);
  return {
    app,
    db: handle.db,
    databaseConfig: database.config,
    config,
    listen: handle.listen,
    clock,
    metrics: services.metrics,
    admin: makeClient(app, { authorization: ADMIN_TOKEN }),
    as: (authorization) => makeClient(app, authorization === undefined ? {} : { authorization }),
    withCookie: (cookie) => makeClient(app, { cookie }),
    close: async () => {
      await evaluationUsageWriter.stop();
      await app.close();
      await handle.close();
      await database.drop();
    },
  };
}

/**
 * The app a test file shares: started before its tests, closed after them. The object returned is filled in
 * when the file's tests start. Set-up that needs the app goes in `setUp`, run right after it starts: Node 20
 * runs a file's top-level `before` hooks concurrently, so a second hook could not wait for this one.
 */
export function useTestApp(options: Parameters<typeof startTestApp>[0] = {}, setUp?: (ctx: TestApp) => Promise<void>): TestApp {
  const shared = {} as TestApp;
  before(async () => {
    Object.assign(shared, await startTestApp(options));
    await setUp?.(shared);
  });
  after(() => shared.close());
  return shared;
}
