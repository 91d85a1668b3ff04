import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../db/database.js';
import { pruneResetLinks } from '../domain/users/password-reset.js';
import type { Clock } from '../shared/clock.js';
import { runHourly } from './hourly-task.js';

/** Deletes used and expired password reset links, at start and every hour. */
export function startResetLinkRetention(deps: { db: Db; clock: Clock; log: Pick<FastifyBaseLogger, 'info' | 'error'> }): {
  stop(): Promise<void>;
} {
  return runHourly(
    deps.db,
    async () => {
      const pruned = await pruneResetLinks(deps.db, deps.clock.now());
      if (pruned > 0) deps.log.info({ pruned }, 'Deleted used and expired password reset links');
    },
    (error) => deps.log.error({ err: error }, 'Could not delete old password reset links; retrying in an hour'),
  );
}
