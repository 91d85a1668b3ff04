import { createHash, randomBytes } from 'node:crypto';
import { readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrateToLatest } from '../../src/db/migrate.js';
import pg from 'pg';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import type { DatabaseConfig } from '../../src/config.js';

/**
 * A fresh database for one test file: in-memory PGlite by default, or, when TEST_DATABASE_URL points at a
 * PostgreSQL server, a new database created there and dropped afterwards.
 */
export interface TestDatabase {
  config: DatabaseConfig;
  open(): Promise<DatabaseHandle>;
  drop(): Promise<void>;
}

/** One statement on the server's maintenance connection (CREATE and DROP DATABASE cannot run in a transaction). */
export async function adminQuery(url: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

const MIGRATIONS_DIR = join(import.meta.dirname, '../../src/db/migrations');

/**
 * A dump of a freshly migrated embedded database, made once per version of the migrations and shared by every
 * test process: creating a PGlite database from nothing takes seconds, loading a dump well under one.
 */
async function migratedTemplate(): Promise<Blob> {
  const hash = createHash('sha256');
  for (const file of (await readdir(MIGRATIONS_DIR)).sort()) hash.update(file).update(await readFile(join(MIGRATIONS_DIR, file)));
  const path = join(tmpdir(), `vexil-test-template-${hash.digest('hex').slice(0, 16)}.tar`);
  try {
    return new Blob([await readFile(path)]);
  } catch {
    const handle = await openDatabase({ kind: 'pglite' });
    await migrateToLatest(handle.db);
    const dump = await handle.dump!();
    await handle.close();
    // Written whole under another name, then renamed: a concurrent test process reads the old or the new file.
    const partial = `${path}.${process.pid}`;
    await writeFile(partial, Buffer.from(await dump.arrayBuffer()));
    await rename(partial, path);
    return dump;
  }
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (!serverUrl) {
    const config: DatabaseConfig = { kind: 'pglite', initialContents: await migratedTemplate() };
    return { config, open: () => openDatabase(config), drop: async () => {} };
  }
  const name = `vexil_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  await adminQuery(serverUrl, `CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const config: DatabaseConfig = { kind: 'postgres', url: url.toString(), poolSize: 5, waitMs: 0, changePollMs: 1000 };
  return {
    config,
    open: () => openDatabase(config),
    drop: () => adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

export const usingPostgres = () => Boolean(process.env.TEST_DATABASE_URL);

/**
 * The database of a Vexil a test starts as a process: the embedded one under its DATA_DIR (no variables), or,
 * when TEST_DATABASE_URL is set, a new PostgreSQL database given to it as DATABASE_URL.
 */
export async function createServerDatabase(): Promise<{ env: Record<string, string>; drop(): Promise<void> }> {
  if (!usingPostgres()) return { env: {}, drop: async () => {} };
  const database = await createTestDatabase();
  if (database.config.kind !== 'postgres') throw new Error('TEST_DATABASE_URL is set, so the test database is on PostgreSQL');
  return { env: { DATABASE_URL: database.config.url }, drop: database.drop };
}
