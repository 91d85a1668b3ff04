import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import { pruneClientBookkeeping } from '../domain/client-features/client-registration.js';
import type { Clock } from '../shared/clock.js';
import { runHourly } from './hourly-task.js';

/** Forgets SDK instances and applications not seen for their retention, at start and every hour. */
export function startClientRetention(deps: {
  db: Db;
  clock: Clock;
  config: Pick<Config, 'sdkBookkeeping'>;
  log: Pick<FastifyBaseLogger, 'info' | 'error'>;
}): { stop(): Promise<void> } {
  return runHourly(
    deps.db,
    async () => {
      const pruned = await pruneClientBookkeeping(deps.db, deps.clock.now(), deps.config.sdkBookkeeping);
      if (pruned.instances + pruned.applications > 0) deps.log.info(pruned, 'Forgot SDK instances and applications no longer seen');
    },
    (error) => deps.log.error({ err: error }, 'Could not forget old SDK instances and applications; retrying in an hour'),
  );
}
