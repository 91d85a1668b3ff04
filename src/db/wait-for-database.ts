import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Db } from './database.js';

const FIRST_DELAY_MS = 250;
const LONGEST_DELAY_MS = 5_000;

/**
 * Errors that say the server is not there yet (starting, restarting, not resolvable, refusing connections), as
 * opposed to one that answers and refuses us (wrong password, no such database), which waiting cannot fix.
 */
function isNotUpYet(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string') return true;
  if (/^[0-9A-Z]{5}$/.test(code)) return code.startsWith('08') || code === '57P03' || code === '53300';
  return true;
}

function describe(error: unknown): string {
  const { code, message } = error as { code?: unknown; message?: unknown };
  return typeof code === 'string' ? code : typeof message === 'string' ? message : String(error);
}

/**
 * Waits until PostgreSQL answers, retrying with a doubling delay (250 ms up to 5 s), so a Vexil started beside
 * its database (compose, a pod) serves once the database does instead of exiting. Gives up after `waitMs` with
 * the last error; an error that waiting cannot fix is thrown at once.
 */
export async function waitForDatabase(db: Db, waitMs: number, log: Logger): Promise<void> {
  const deadline = Date.now() + waitMs;
  let delay = FIRST_DELAY_MS;
  for (let attempt = 1; ; attempt++) {
    try {
      await sql`SELECT 1`.execute(db);
      if (attempt > 1) log.info({ attempts: attempt }, 'PostgreSQL answers');
      return;
    } catch (error) {
      const remaining = deadline - Date.now();
      if (!isNotUpYet(error) || remaining <= 0) throw error;
      const wait = Math.min(delay, remaining);
      log.warn({ attempt, reason: describe(error), retryInMs: wait }, 'PostgreSQL does not answer yet; trying again');
      await sleep(wait);
      delay = Math.min(delay * 2, LONGEST_DELAY_MS);
    }
  }
}
