import { ServiceUnavailableError, TooManyRequestsError } from '../../../shared/errors.js';
import type { FlagCleanup, SourceText } from './flag-cleanup.js';
import { resultOfWorker } from './worker-result.js';

/**
 * A cleanup asked of the server (an agent's files over MCP) runs on a thread of its own, so its parsing never holds
 * the event loop, with a deadline, and at most two at a time: a caller who sends many gets a 429, not the CPU.
 */
const AT_ONCE = 2;
const DEADLINE_MS = 20_000;
let running = 0;

export async function cleanUpFlagOffThread(sources: SourceText[], flag: string, keep: boolean, wrappers: string[]): Promise<FlagCleanup> {
  if (running >= AT_ONCE) throw new TooManyRequestsError(`${AT_ONCE} cleanups are being worked out already; try again in a few seconds`);
  running++;
  try {
    return await resultOfWorker<FlagCleanup>(
      new URL('./cleanup-worker.js', import.meta.url),
      { sources, flag, keep, wrappers },
      {
        ms: DEADLINE_MS,
        error: () => new ServiceUnavailableError(`Working out the cleanup took longer than ${DEADLINE_MS / 1000} s; send fewer files`),
      },
    );
  } finally {
    running--;
  }
}
