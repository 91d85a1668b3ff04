import type { Db } from '../db/database.js';
import { maintenanceModeIn } from '../db/maintenance-gate.js';

const HOUR_MS = 60 * 60_000;

/**
 * Runs `task` at start and every hour until stopped, never two runs at once; a failed run goes to `onError`
 * and is tried again the next hour. Housekeeping that several instances may do at the same time, and none does
 * while maintenance mode is on (it stops every write).
 */
export function runHourly(db: Db, task: () => Promise<void>, onError: (error: unknown) => void): { stop(): Promise<void> } {
  let running: Promise<void> | undefined;
  const run = () => {
    if (running) return;
    running = maintenanceModeIn(db)
      .then((paused) => (paused ? undefined : task()))
      .catch(onError)
      .finally(() => {
        running = undefined;
      });
  };
  run();
  const timer = setInterval(run, HOUR_MS);
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
