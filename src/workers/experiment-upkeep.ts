import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../db/database.js';
import { inUnitOfWork } from '../db/unit-of-work.js';
import { SYSTEM_ACTOR } from '../domain/access/actor.js';
import { followStrategyChanges, runningExperiments } from '../domain/experiments/experiments.js';
import { forgetTrackedEvents } from '../domain/experiments/ingest.js';
import type { ExperimentAnalyses } from '../domain/experiments/results.js';
import type { Config } from '../config.js';
import type { Clock } from '../shared/clock.js';
import { runHourly } from './hourly-task.js';

/**
 * Every hour: each running experiment follows its strategy (a weight changed since: a new phase) and is analysed,
 * the results kept as a snapshot, so results read fast and their history draws the cumulative chart; tracked events
 * older than their retention are forgotten.
 */
export function startExperimentUpkeep(deps: {
  db: Db;
  clock: Clock;
  config: Pick<Config, 'experiments' | 'database'>;
  analyses: ExperimentAnalyses;
  log: Pick<FastifyBaseLogger, 'info' | 'error'>;
}): { stop(): Promise<void> } {
  const never = new AbortController().signal;
  return runHourly(
    deps.db,
    async () => {
      for (const experiment of await runningExperiments(deps.db)) {
        await inUnitOfWork(deps, SYSTEM_ACTOR, (uow) => followStrategyChanges(uow, experiment.id));
        const [current] = (await runningExperiments(deps.db)).filter((candidate) => candidate.id === experiment.id);
        if (!current) continue;
        const bounds = { engine: deps.config.database.kind, timeoutMs: deps.config.experiments.analysisTimeoutMs, signal: never };
        await deps.analyses
          .refresh(current, undefined, bounds)
          .catch((error: unknown) =>
            deps.log.error({ err: error, experiment: experiment.name }, 'Could not analyse the experiment; trying again in an hour'),
          );
      }
      const forgotten = await forgetTrackedEvents(deps.db, deps.clock.now(), deps.config.experiments.trackedEventRetentionDays);
      if (forgotten > 0) deps.log.info({ forgotten }, 'Forgot tracked events past their retention');
    },
    (error) => deps.log.error({ err: error }, 'Experiment upkeep failed; trying again in an hour'),
  );
}
