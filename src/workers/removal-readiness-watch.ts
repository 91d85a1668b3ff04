import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../db/database.js';
import { watchRemovalReadiness } from '../domain/code-references/readiness-watch.js';
import type { Clock } from '../shared/clock.js';
import { runHourly } from './hourly-task.js';

/**
 * Every hour: each flag's removal readiness is judged again and kept, so search and project health read it, and a
 * flag that has just become ready is announced by an event (and through it to the integrations that take it).
 */
export function startRemovalReadinessWatch(deps: { db: Db; clock: Clock; log: Pick<FastifyBaseLogger, 'info' | 'error'> }): {
  stop(): Promise<void>;
} {
  return runHourly(
    deps.db,
    async () => {
      const { judged, becameReady } = await watchRemovalReadiness(deps);
      if (becameReady.length > 0) deps.log.info({ judged, becameReady: becameReady.length }, 'Flags became ready to leave the code');
    },
    (error) => deps.log.error({ err: error }, 'Judging removal readiness failed; trying again in an hour'),
  );
}
