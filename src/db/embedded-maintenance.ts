import { sql } from 'kysely';
import type { Db } from './database.js';

const ANALYZE_EVERY_MS = 60 * 60 * 1000;
// Statistics are stored with the data, so the first refresh waits: ANALYZE blocks the embedded engine (and
// the event loop) for seconds on a large database, which start-up must not wait for.
const FIRST_ANALYZE_AFTER_MS = 60 * 1000;

/**
 * The embedded engine has no autovacuum, so nothing refreshes the planner's statistics: without them a keyset
 * page of the event log was planned as a sort of the whole project (30 ms instead of 1 ms per batch). ANALYZE
 * runs a minute after start-up and then hourly. Returns the stop function.
 */
export function startEmbeddedMaintenance(db: Db, log: { error(details: object, message: string): void }): () => void {
  const analyze = () =>
    sql`ANALYZE`.execute(db).catch((error: unknown) => log.error({ err: error }, 'ANALYZE of the embedded database failed'));
  let interval: NodeJS.Timeout | undefined;
  const first = setTimeout(() => {
    void analyze();
    interval = setInterval(analyze, ANALYZE_EVERY_MS);
    interval.unref();
  }, FIRST_ANALYZE_AFTER_MS);
  first.unref();
  return () => {
    clearTimeout(first);
    clearInterval(interval);
  };
}
