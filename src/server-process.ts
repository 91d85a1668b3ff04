import { existsSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { join, resolve } from 'node:path';
import { ConfigError, loadConfig, type Config } from './config.js';
import { DataDirInUseError } from './db/data-dir-lock.js';
import { openDatabase } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';
import { waitForDatabase } from './db/wait-for-database.js';

import { bootstrap, composeApp, startWorkers } from './server.js';
import { createLogger } from './http/plugins/logging.js';
import { listenWhileStarting } from './http/starting-probe.js';
import { systemClock } from './shared/clock.js';
import type { Telemetry } from './telemetry.js';
import { hardenPrototypes } from './shared/prototype-hardening.js';

function readConfig(): Config {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`Vexil cannot start: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

// V8 lets the old generation grow to about four times what survives a full collection before collecting
// again: a long export or a burst of SDK traffic then holds ~100 MiB of garbage. Growing by half instead keeps
// memory near the live set (an export of 1M events: +23 MiB instead of +95 MiB) at no measurable cost in
// throughput. The factor is read at each collection, so setting it as the process starts takes effect.
setFlagsFromString('--heap-growing-percent=50');

/** Milliseconds since the process started: static imports have been loaded by the time main runs. */
const sinceProcessStart = () => Math.round(performance.now());

/** The server, from its configuration to listening, and its graceful shutdown; `main.ts` starts it. */
export async function runServer(telemetry: Telemetry | undefined): Promise<void> {
  hardenPrototypes();
  const modulesLoadedAt = sinceProcessStart();
  const config = readConfig();
  const log = createLogger(config.logLevel);
  const { database: databaseConfig } = config;
  const embeddedDir = databaseConfig.kind === 'pglite' && databaseConfig.dataDir ? resolve(databaseConfig.dataDir) : undefined;
  if (embeddedDir && !existsSync(join(embeddedDir, 'PG_VERSION'))) {
    // A relative DATA_DIR follows the working directory: starting from elsewhere would silently begin anew.
    log.warn({ dataDir: embeddedDir }, `Creating a new embedded database in ${embeddedDir} (set DATA_DIR to keep it elsewhere)`);
  }
  const database = await openDatabase(databaseConfig).catch((error: unknown) => {
    if (error instanceof DataDirInUseError) {
      process.stderr.write(`Vexil cannot start: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  });
  // While PostgreSQL is awaited and migrated, the port answers the liveness path (starting) and 503 to everything else.
  const startingProbe = databaseConfig.kind === 'postgres' ? await listenWhileStarting(config.port, config.host) : undefined;
  if (startingProbe)
    log.info(
      { url: startingProbe.url },
      `Starting: /health/live answers "STARTING" and /health a 503 at ${startingProbe.url} until the server is ready`,
    );
  if (databaseConfig.kind === 'postgres') await waitForDatabase(database.db, databaseConfig.waitMs, log);
  const databaseOpenAt = sinceProcessStart();
  await migrateToLatest(database.db);
  const migratedAt = sinceProcessStart();
  const deps = {
    db: database.db,
    clock: systemClock,
    config,
    listen: database.listen,
    poolUse: database.poolUse,
    databaseUp: database.databaseUp,
  };
  const setUp = await bootstrap(deps, config.initAdminApiTokens);
  const bootstrappedAt = sinceProcessStart();
  const { app, services } = await composeApp(deps, { logger: log });
  telemetry?.exportMetricsOf(services.metrics.registry);
  await app.ready();
  const appBuiltAt = sinceProcessStart();
  app.log.info(
    { engine: database.engine, adminTokensCreated: setUp.adminTokensCreated },
    embeddedDir ? `Using the embedded database in ${embeddedDir}` : 'Using PostgreSQL',
  );
  const workers = await startWorkers({ ...deps, workerDb: database.workerDb, engine: database.engine }, services, app.log);
  if (!config.baseUrl.startsWith('https:')) {
    // Cookies are Secure only when the server says its address is HTTPS; behind a TLS proxy that must be BASE_URL.
    app.log.warn(
      { baseUrl: config.baseUrl },
      'BASE_URL is not https: session and sign-in cookies are sent without the Secure flag. Set BASE_URL to the https address people use.',
    );
  }

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'Shutting down: finishing requests in flight');
    try {
      await workers.stopScheduling();
      await Promise.all([app.close(), workers.stop()]);
      await database.close();
      await telemetry?.shutdown();
      process.exit(0);
    } catch (error) {
      app.log.error({ err: error }, 'Shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));

  await startingProbe?.close();
  await app.listen({ port: config.port, host: config.host });
  const listeningAt = sinceProcessStart();
  // Where start-up time goes, for operators and `npm run bench` (each figure in ms, from the previous one).
  app.log.info(
    {
      startupMs: listeningAt,
      phases: {
        modules: modulesLoadedAt,
        database: databaseOpenAt - modulesLoadedAt,
        migrations: migratedAt - databaseOpenAt,
        bootstrap: bootstrappedAt - migratedAt,
        app: appBuiltAt - bootstrappedAt,
        workersAndListen: listeningAt - appBuiltAt,
      },
    },
    'Vexil started',
  );
  if (setUp.initialAdmin) {
    // Printed once, straight to the terminal rather than into the structured log, and never stored in clear.
    process.stdout.write(
      `\nVexil created the first admin user. Log in at ${config.baseUrl} as "${setUp.initialAdmin.username}" ` +
        `with the password ${setUp.initialAdmin.password}\nIt is shown only this once: change it after logging in.\n\n`,
    );
  }
}
