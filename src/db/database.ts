import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
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

/** Where errors of idle connections go: they must be handled, or Node ends the process. */
export type ConnectionErrorHandler = (error: Error) => void;

const reportConnectionError: ConnectionErrorHandler = (error) => {
  process.stderr.write(
    `${JSON.stringify({ level: 50, time: Date.now(), msg: 'A PostgreSQL connection was lost; the pool opens a new one when needed', err: error.message })}\n`,
  );
};

function openPostgres(url: string, poolSize: number, onConnectionError: ConnectionErrorHandler): DatabaseHandle {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8_OID ? parseInt8 : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  // A server restart or failover closes idle connections; the pool reports it here instead of crashing.
  pool.on('error', onConnectionError);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return { db, engine: 'postgres', close: () => db.destroy() };
}

async function openPglite(dataDir: string | undefined): Promise<DatabaseHandle> {
  // PGlite has one connection; kysely-pglite-dialect queues callers so a transaction owns it until it ends.
  // Extensions must be passed every time PGlite opens; pg_trgm backs the event log's text search.
  const pglite = await PGlite.create(dataDir, { parsers: { [INT8_OID]: parseInt8 }, extensions: { pg_trgm } });
  const db = new Kysely<Database>({ dialect: new PGliteDialect(pglite) });
  return { db, engine: 'pglite', close: () => db.destroy() };
}

export async function openDatabase(
  config: DatabaseConfig,
  onConnectionError: ConnectionErrorHandler = reportConnectionError,
): Promise<DatabaseHandle> {
  return config.kind === 'postgres' ? openPostgres(config.url, config.poolSize, onConnectionError) : openPglite(config.dataDir);
}
