import { PGlite } from '@electric-sql/pglite';
import { Kysely, PostgresDialect } from 'kysely';
import { PGliteDialect } from 'kysely-pglite-dialect';
import pg from 'pg';
import type { DatabaseConfig } from '../config.js';
import type { Database } from './schema.js';

export type Db = Kysely<Database>;

export interface DatabaseHandle {
  db: Db;
  engine: DatabaseConfig['kind'];
  close(): Promise<void>;
}

const INT8_OID = 20;

// pg returns int8 (bigint ids, count(*)) as strings and PGlite as numbers; both engines give numbers here.
// Event ids stay far below 2^53.
const parseInt8 = (value: string) => Number(value);

function openPostgres(url: string, poolSize: number): DatabaseHandle {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8_OID ? parseInt8 : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return { db, engine: 'postgres', close: () => db.destroy() };
}

async function openPglite(dataDir: string | undefined): Promise<DatabaseHandle> {
  // PGlite has one connection; kysely-pglite-dialect queues callers so a transaction owns it until it ends.
  const pglite = await PGlite.create(dataDir, { parsers: { [INT8_OID]: parseInt8 } });
  const db = new Kysely<Database>({ dialect: new PGliteDialect(pglite) });
  return { db, engine: 'pglite', close: () => db.destroy() };
}

export async function openDatabase(config: DatabaseConfig): Promise<DatabaseHandle> {
  return config.kind === 'postgres' ? openPostgres(config.url, config.poolSize) : openPglite(config.dataDir);
}
