import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import type { Clock } from '../shared/clock.js';
import { deleteIntegrationEventsBefore } from '../domain/events/delivery-outbox.js';
import { runHourly } from './hourly-task.js';

export interface RetentionDeps {
  db: Db;
  clock: Clock;
  config: Pick<Config, 'integrations'>;
}

const DAY_MS = 86_400_000;
/** Deleted per statement, so a large backlog never holds long locks or one huge transaction. */
const DELETE_BATCH = 5_000;

/**
 * Deletes the integration events older than the retention (INTEGRATIONS_RETENTION_DAYS), in batches; returns
 * how many. Several instances may run it at once: each batch deletes what is still there.
 */
export async function pruneIntegrationEvents(deps: RetentionDeps): Promise<number> {
  const cutoff = new Date(deps.clock.now().getTime() - deps.config.integrations.retentionDays * DAY_MS);
  let deleted = 0;
  for (;;) {
    const count = await deleteIntegrationEventsBefore(deps.db, cutoff, DELETE_BATCH);
    deleted += count;
    if (count < DELETE_BATCH) return deleted;
  }
}

/** Prunes at start and every hour until stopped. */
export function startIntegrationEventRetention(deps: RetentionDeps & { log: Pick<FastifyBaseLogger, 'info' | 'error'> }): {
  stop(): Promise<void>;
} {
  return runHourly(
    deps.db,
    async () => {
      const deleted = await pruneIntegrationEvents(deps);
      if (deleted > 0) deps.log.info({ deleted, retentionDays: deps.config.integrations.retentionDays }, 'Pruned old integration events');
    },
    (error) => deps.log.error({ err: error }, 'Could not prune old integration events; retrying in an hour'),
  );
}
