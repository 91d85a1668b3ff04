import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import pg from 'pg';
import { adminQuery } from './test-database.js';

/** The real unleash-server from npm, run as a child process for import and parity tests. */
export interface RunningUnleash {
  baseUrl: string;
  adminToken: string;
  /** Its own database, for what its API cannot make (data left from another edition). */
  databaseUrl: string;
  version: string;
  stop(): Promise<void>;
}

const MAIN = join(import.meta.dirname, '../peers/unleash-server-main.mjs');

/** The PostgreSQL server of the test run: TEST_DATABASE_URL, or the local one; undefined when none answers. */
export async function reachablePostgres(): Promise<string | undefined> {
  const url = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.end();
    return url;
  } catch {
    return undefined;
  }
}

/** The releases of unleash-server the peer tests run, as npm packages (dev dependencies): 7.x and 8.x. */
export const UNLEASH_PACKAGES = ['unleash-server', 'unleash-server-8'] as const;

/** Starts Unleash on a database of its own on that server; stop() ends the process by its PID and drops the database. */
export async function startUnleash(
  serverUrl: string,
  packageName: (typeof UNLEASH_PACKAGES)[number] = 'unleash-server',
): Promise<RunningUnleash> {
  const name = `unleash_peer_${process.pid}_${randomBytes(4).toString('hex')}`;
  await adminQuery(serverUrl, `CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const adminToken = `*:*.unleash-peer-${randomBytes(8).toString('hex')}`;
  const child = spawn(process.execPath, [MAIN], {
    env: {
      PATH: process.env.PATH ?? '',
      UNLEASH_PACKAGE: packageName,
      UNLEASH_DATABASE_URL: url.toString(),
      UNLEASH_ADMIN_TOKEN: adminToken,
      // Installations from before strategy variants keep flag variants, which Unleash 7 and 8 still serve and
      // edit for them; this lets a test make such flags.
      UNLEASH_EXPERIMENTAL_ENABLE_LEGACY_VARIANTS: 'true',
      TZ: 'UTC',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stopping = false;
  let output = '';
  const exited = new Promise<void>((resolve) =>
    child.on('exit', (code, signal) => {
      // A peer that dies under a test fails it with "fetch failed"; its own last words say why.
      if (!stopping)
        process.stderr.write(`unleash-server exited on its own (${signal ?? code}); its last output:\n${output.slice(-8000)}\n`);
      resolve();
    }),
  );
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`unleash-server did not start within 120 s: ${output}`)), 120_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const listening = output.match(/UNLEASH_LISTENING (\d+)/);
      if (listening) {
        clearTimeout(timer);
        resolve(Number(listening[1]));
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    exited.then(() => reject(new Error(`unleash-server exited: ${output}`)));
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  const health = (await (await fetch(`${baseUrl}/api/admin/ui-config`, { headers: { authorization: adminToken } })).json()) as {
    version: string;
  };
  return {
    baseUrl,
    adminToken,
    databaseUrl: url.toString(),
    version: health.version,
    stop: async () => {
      stopping = true;
      if (child.pid !== undefined && child.exitCode === null) process.kill(child.pid, 'SIGTERM');
      await exited;
      await adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}
