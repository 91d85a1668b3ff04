import { randomUUID } from 'node:crypto';
import { setImmediate } from 'node:timers/promises';
import type { PGlite } from '@electric-sql/pglite';
import { createRequire } from 'node:module';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { Kysely, PostgresDialect, type Transaction } from 'kysely';
import type pg from 'pg';
import type { DatabaseConfig, PostgresConfig } from '../config.js';
import { lockDataDir } from './data-dir-lock.js';
import type { Database } from './schema.js';
import type { PoolUse } from '../shared/metrics.js';

/** Any handle on the database: the root one or a transaction. Reads take it. */
export type Db = Kysely<Database>;
/** A transaction: what row locks need (on the root handle a lock would end with its own statement). */
export type Tx = Transaction<Database>;

/**
 * The handle a read that may lock its rows takes: a transaction when it locks (`lock: true`), any handle otherwise. A
 * row lock outside a transaction ends with its statement and protects nothing; with this type, asking for one on the
 * root handle does not compile.
 */
export type LockingHandle<Lock extends boolean> = Lock extends true ? Tx : Db;

/** Stops listening. */
export type Unlisten = () => Promise<void>;

/** A channel listened to. */
export interface Listening {
  /**
   * Whether notifications reach this instance. Behind a pooler in transaction mode LISTEN is accepted but nothing
   * arrives (the server connection that listened is handed to other clients): then the caller polls for what it
   * follows instead.
   */
  readonly hears: boolean;
  stop: Unlisten;
}

export interface DatabaseHandle {
  db: Db;
  engine: DatabaseConfig['kind'];
  /**
   * Calls `onNotify` with the payload of every `NOTIFY <channel>` committed by any connection (on PostgreSQL,
   * by any instance sharing the database), and once more with `undefined` whenever listening (re)starts, since
   * notifications sent meanwhile are lost: then anything may have changed. Notifications are a wake-up call
   * with at most a hint of what changed, never a carrier of data.
   */
  listen(channel: string, onNotify: (payload: string | undefined) => void): Promise<Listening>;
  /**
   * For background workers (integration deliveries, the change-request scheduler, retention): on PostgreSQL a
   * small pool of their own, so their queries never queue behind a burst of API transactions and deliveries
   * keep flowing exactly when writes pile up. On the embedded engine, the one connection (`db`).
   */
  workerDb: Db;
  /** PostgreSQL only: how the connection pool is used, for metrics. */
  poolUse?(): PoolUse;
  /** PostgreSQL only: whether it answers, as this instance last saw it (a lost connection until it answers again). */
  databaseUp?(): boolean;
  /** The embedded engine only: a consistent copy of the whole database, loadable as `initialContents`. */
  dump?(): Promise<Blob>;
  close(): Promise<void>;
}

const INT8_OID = 20;

// pg returns int8 (bigint ids, count(*)) as strings and PGlite as numbers; both engines give numbers here.
// Event ids stay far below 2^53.
const parseInt8 = (value: string) => Number(value);

/** Where errors of connections go: they must be handled, or Node ends the process. */
export type ConnectionErrorHandler = (error: Error) => void;

/**
 * How long a request waits for a connection (a new one, or one of the pool's when all are busy) before it is a 503:
 * an address that answers nothing (a partition, a failed-over host) would otherwise hold requests for minutes.
 */
const CONNECT_TIMEOUT_MS = 10_000;

/** How often a lost PostgreSQL is asked whether it answers again. */
const REACHABILITY_PROBE_MS = 1_000;

const logLine = (level: number, fields: Record<string, unknown>) =>
  process.stderr.write(`${JSON.stringify({ level, time: Date.now(), ...fields })}\n`);

/**
 * Whether PostgreSQL answers, as this instance last saw it. A lost connection (a restart, a failover, a killed
 * backend) is told once, and asked about every second until PostgreSQL answers, which is told once too, with how long
 * it took: an outage writes two lines, not one per connection and retry.
 */
class Reachability {
  private lostAt: number | undefined;
  private probe: NodeJS.Timeout | undefined;

  constructor(private readonly answers: () => Promise<unknown>) {}

  get up(): boolean {
    return this.lostAt === undefined;
  }

  readonly lost: ConnectionErrorHandler = (error) => {
    if (this.lostAt !== undefined) return;
    this.lostAt = Date.now();
    logLine(40, { reason: error.message, msg: 'PostgreSQL does not answer: requests that need it get a 503 until it is back' });
    this.askAgain();
  };

  private askAgain(): void {
    this.probe = setTimeout(() => {
      this.answers().then(
        () => {
          logLine(30, { downForMs: Date.now() - this.lostAt!, msg: 'PostgreSQL answers again' });
          this.lostAt = undefined;
        },
        () => this.askAgain(),
      );
    }, REACHABILITY_PROBE_MS);
    this.probe.unref();
  }

  stop(): void {
    clearTimeout(this.probe);
  }
}

/**
 * Each engine's driver is loaded when it is opened, so a server on PostgreSQL never loads the embedded engine
 * (and its WebAssembly) and the other way round: start-up time and memory go to the engine in use.
 */
async function openPostgres({ url, listenUrl, poolSize, changePollMs }: PostgresConfig): Promise<DatabaseHandle> {
  // Required, not imported: OpenTelemetry's pg instrumentation patches modules as require() loads them.
  const pg = createRequire(import.meta.url)('pg') as typeof import('pg');
  let pool: pg.Pool | undefined;
  const reachability = new Reachability(() => pool!.query('SELECT 1'));
  const onConnectionError = reachability.lost;
  const openPool = (max: number) => {
    const pool = new pg.Pool({
      connectionString: url,
      max,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      keepAlive: true,
      types: {
        getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
          oid === INT8_OID ? parseInt8 : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
      },
    });
    // A server restart or failover closes idle connections; the pool reports it here instead of crashing. A
    // connection lost while checked out (in a query or transaction) emits on its own client, which the pool does
    // not listen to then: without a listener of its own, that error would end the process.
    pool.on('error', onConnectionError);
    pool.on('connect', (client) => client.on('error', onConnectionError));
    return pool;
  };
  pool = openPool(poolSize);
  let toldDeaf = false;
  const deaf = () => {
    if (toldDeaf) return;
    toldDeaf = true;
    logLine(40, {
      msg: `LISTEN hears no notifications through ${listenUrl ? 'DATABASE_LISTEN_URL' : 'DATABASE_URL'} (a pooler in transaction mode?): changes other instances commit are read from the event log every ${changePollMs} ms (DATABASE_CHANGE_POLL_MS) instead; give DATABASE_LISTEN_URL a direct connection to hear them at once`,
    });
  };
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  const workerDb = new Kysely<Database>({ dialect: new PostgresDialect({ pool: openPool(WORKER_POOL_SIZE) }) });
  return {
    db,
    workerDb,
    engine: 'postgres',
    listen: (channel, onNotify) =>
      listenOnPostgres({ pgDriver: pg, url: listenUrl ?? url, pool: pool!, onConnectionError, deaf }, channel, onNotify),
    poolUse: () => ({ max: poolSize, open: pool!.totalCount, idle: pool!.idleCount, waiting: pool!.waitingCount }),
    databaseUp: () => reachability.up,
    close: async () => {
      reachability.stop();
      await Promise.all([db.destroy(), workerDb.destroy()]);
    },
  };
}

/** Connections of the background workers' own pool, beside `DATABASE_POOL_SIZE`. */
const WORKER_POOL_SIZE = 2;

const LISTEN_RECONNECT_DELAY_MS = 1000;

/** Where a listening connection checks that it hears: a notification sent through the pool must reach it. */
const LISTEN_CHECK_CHANNEL = 'vexil_listen_check';
const LISTEN_CHECK_TIMEOUT_MS = 2_000;

interface PostgresListener {
  pgDriver: typeof pg;
  /** `DATABASE_LISTEN_URL` when given (a direct connection past a pooler), else `DATABASE_URL`. */
  url: string;
  /** The connections requests use, through which the check's notification is sent. */
  pool: pg.Pool;
  onConnectionError: ConnectionErrorHandler;
  /** Told when the check heard nothing. */
  deaf: () => void;
}

/**
 * LISTEN needs a connection of its own that stays open (a pooled one would be handed to other queries), so it
 * gets a dedicated client, reopened after a server restart or failover. Each time it opens, it checks that it
 * hears a notification sent through the pool: behind PgBouncer in transaction mode it does not, and the
 * connection is closed for good and the caller told to poll (`hears`), since no retry would hear either.
 */
async function listenOnPostgres(
  { pgDriver, url, pool, onConnectionError, deaf }: PostgresListener,
  channel: string,
  onNotify: (payload: string | undefined) => void,
): Promise<Listening> {
  let client: pg.Client | undefined;
  let stopped = false;
  let hears = true;
  let reconnectTimer: NodeJS.Timeout | undefined;

  const scheduleReconnect = () => {
    if (stopped || !hears || reconnectTimer) return;
    reconnectTimer = setTimeout(() => {
      reconnectTimer = undefined;
      connect().catch((error: Error) => {
        onConnectionError(error);
        scheduleReconnect();
      });
    }, LISTEN_RECONNECT_DELAY_MS);
  };

  const connect = async () => {
    const next = new pgDriver.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, keepAlive: true });
    const checks = new Map<string, () => void>();
    next.on('notification', (message) => {
      if (message.channel === channel) onNotify(message.payload ?? '');
      else if (message.channel === LISTEN_CHECK_CHANNEL) checks.get(message.payload ?? '')?.();
    });
    next.on('error', onConnectionError);
    // Only an established connection that ends is reopened here; a failed connect is retried by its caller.
    next.on('end', () => {
      if (client !== next) return;
      client = undefined;
      scheduleReconnect();
    });
    let heard: boolean;
    try {
      await next.connect();
      await next.query(`LISTEN "${channel.replace(/"/g, '""')}"`);
      await next.query(`LISTEN ${LISTEN_CHECK_CHANNEL}`);
      const nonce = randomUUID();
      heard = await new Promise<boolean>((resolve, reject) => {
        const timer = setTimeout(() => resolve(false), LISTEN_CHECK_TIMEOUT_MS);
        checks.set(nonce, () => {
          clearTimeout(timer);
          resolve(true);
        });
        pool.query('SELECT pg_notify($1, $2)', [LISTEN_CHECK_CHANNEL, nonce]).catch((error: Error) => {
          clearTimeout(timer);
          reject(error);
        });
      });
    } catch (error) {
      await next.end().catch(() => undefined);
      throw error;
    }
    if (stopped || !heard) {
      hears = heard;
      if (!heard) deaf();
      await next.end();
      return;
    }
    client = next;
    onNotify(undefined);
  };

  await connect();
  return {
    get hears() {
      return hears;
    },
    stop: async () => {
      stopped = true;
      clearTimeout(reconnectTimer);
      await client?.end();
    },
  };
}

const tracer = trace.getTracer('vexil');

/**
 * An embedded query as a database span, as OpenTelemetry's pg instrumentation makes one for PostgreSQL: the statement
 * (Kysely keeps values apart, so none is in it) under the span of the request that ran it. Without telemetry the
 * tracer is a no-op.
 */
function traced<T>(statement: string, run: () => Promise<T>): Promise<T> {
  const operation = /^\s*(\w+)/.exec(statement)?.[1]?.toUpperCase() ?? 'QUERY';
  return tracer.startActiveSpan(
    operation,
    {
      kind: SpanKind.CLIENT,
      attributes: { 'db.system.name': 'postgresql', 'db.namespace': 'pglite', 'db.operation.name': operation, 'db.query.text': statement },
    },
    async (span) => {
      try {
        return await run();
      } catch (error) {
        span.recordException(error as Error);
        span.setStatus({ code: SpanStatusCode.ERROR });
        throw error;
      } finally {
        span.end();
      }
    },
  );
}

/**
 * PGlite runs each query synchronously on the event loop, and the dialect hands its one connection straight to
 * the next waiter. Waiting one turn of the event loop before each query lets pending I/O in between (a
 * liveness probe, a request's first bytes, a stream's drain), so long exports and bursts share the engine
 * with everything else instead of running back to back.
 */
function takingTurns(pglite: PGlite): PGlite {
  const turns = {
    query: async (...args: Parameters<PGlite['query']>) => {
      await setImmediate();
      return traced(args[0], () => pglite.query(...args));
    },
    close: () => pglite.close(),
  };
  return turns as unknown as PGlite;
}

async function openPglite(dataDir: string | undefined, initialContents?: Blob): Promise<DatabaseHandle> {
  const [{ PGlite }, { pg_trgm }, { PGliteDialect }] = await Promise.all([
    import('@electric-sql/pglite'),
    import('@electric-sql/pglite/contrib/pg_trgm'),
    import('kysely-pglite-dialect'),
  ]);
  // An in-memory database (tests) has nothing to share; a directory is this process's alone while it runs.
  const unlock = dataDir === undefined ? () => undefined : await lockDataDir(dataDir);
  // PGlite has one connection; kysely-pglite-dialect queues callers so a transaction owns it until it ends.
  // Extensions must be passed every time PGlite opens; pg_trgm backs the event log's text search.
  let pglite: PGlite;
  try {
    pglite = await PGlite.create(dataDir, {
      parsers: { [INT8_OID]: parseInt8 },
      extensions: { pg_trgm },
      ...(initialContents ? { loadDataDir: initialContents } : {}),
    });
  } catch (error) {
    unlock();
    throw error;
  }
  const db = new Kysely<Database>({ dialect: new PGliteDialect(takingTurns(pglite)) });
  return {
    db,
    workerDb: db,
    engine: 'pglite',
    // One in-process connection: PGlite delivers a NOTIFY to its listeners when the notifying transaction commits.
    // (UN)LISTEN goes to PGlite directly, so it holds Kysely's connection meanwhile: run inside another caller's
    // open transaction, it would be undone by that transaction's rollback.
    listen: async (channel, onNotify) => {
      const unlisten = await db.connection().execute(() => pglite.listen(channel, (payload) => onNotify(payload)));
      onNotify(undefined);
      return { hears: true, stop: () => db.connection().execute(() => unlisten()) };
    },
    // Taken while holding the connection, so no transaction is half-way through it.
    dump: () => db.connection().execute(() => pglite.dumpDataDir('none')),
    close: async () => {
      await db.destroy();
      unlock();
    },
  };
}

export async function openDatabase(config: DatabaseConfig): Promise<DatabaseHandle> {
  return config.kind === 'postgres' ? openPostgres(config) : openPglite(config.dataDir, config.initialContents);
}
