import { sql } from 'kysely';
import type { Db } from './database.js';

export interface ReadBounds {
  engine: 'postgres' | 'pglite';
  timeoutMs: number;
  /** Aborted when the client goes away: its query is cancelled instead of running on for nobody. */
  signal: AbortSignal;
}

/** How often a read past its deadline cancels what its connection runs, so a statement started late ends too. */
const CANCEL_REPEAT_MS = 100;

/**
 * Runs the queries of one API read so that none can hold PostgreSQL for long: in a read-only transaction with
 * a statement timeout, without JIT (compiling a large plan can cost more than running it), and cancelled with
 * pg_cancel_backend when the client disconnects. The timeout bounds the whole read too: once it has passed, any
 * statement the read still runs is cancelled, so a read of several statements cannot take several timeouts. A cancelled or timed-out query fails with SQLSTATE 57014,
 * which the error handler answers with a 503. The embedded engine has no timeouts or cancellation; its reads
 * are kept small by the bounds on what a request may ask for.
 */
export async function boundedRead<T>(db: Db, bounds: ReadBounds, work: (db: Db) => Promise<T>): Promise<T> {
  if (bounds.engine === 'pglite') return work(db);
  return db
    .transaction()
    .setAccessMode('read only')
    .execute(async (tx) => {
      const { rows } = await sql<{ pid: number }>`
        SELECT set_config('statement_timeout', ${String(bounds.timeoutMs)}, true),
               set_config('jit', 'off', true),
               pg_backend_pid() AS pid`.execute(tx);
      const pid = rows[0]!.pid;
      const cancel = () => {
        sql`SELECT pg_cancel_backend(${pid})`.execute(db).catch(() => undefined);
      };
      if (bounds.signal.aborted) cancel();
      bounds.signal.addEventListener('abort', cancel, { once: true });
      let cancelling: NodeJS.Timeout | undefined;
      const deadline = setTimeout(() => {
        cancel();
        cancelling = setInterval(cancel, CANCEL_REPEAT_MS);
      }, bounds.timeoutMs);
      try {
        return await work(tx);
      } finally {
        clearTimeout(deadline);
        clearInterval(cancelling);
        bounds.signal.removeEventListener('abort', cancel);
      }
    });
}
