import { randomBytes } from 'node:crypto';
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

async function adminQuery(url: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (!serverUrl) {
    const config: DatabaseConfig = { kind: 'pglite' };
    return { config, open: () => openDatabase(config), drop: async () => {} };
  }
  const name = `vexil_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  await adminQuery(serverUrl, `CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const config: DatabaseConfig = { kind: 'postgres', url: url.toString(), poolSize: 5 };
  return {
    config,
    open: () => openDatabase(config),
    drop: () => adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

export const usingPostgres = () => Boolean(process.env.TEST_DATABASE_URL);
