import type { FastifyBaseLogger } from 'fastify';
import { inUnitOfWork, type UnitOfWorkDeps } from '../db/unit-of-work.js';
import { SYSTEM_ACTOR } from '../domain/access/actor.js';
import { recordClientMetrics } from '../domain/usage/client-metrics.js';
import type { UsageTally } from '../domain/usage/usage-tally.js';
import { RepeatingPass } from './repeating-pass.js';

/** Every few seconds: a write per evaluation would put the database on the evaluation path. */
const WRITE_EVERY_MS = 5_000;

/** Writes what the tally counted since the last write, a unit of work per token, as an SDK's report would be. */
export async function writeEvaluationUsage(deps: UnitOfWorkDeps, tally: UsageTally): Promise<void> {
  for (const { token, report } of tally.takeReports(deps.clock.now())) {
    await inUnitOfWork(deps, SYSTEM_ACTOR, (uow) => recordClientMetrics(uow.tx, token, report, uow.now));
  }
}

/** Writes the evaluations Vexil counted itself (OFREP) as usage, every few seconds until stopped. */
export function startEvaluationUsageWriter(
  deps: UnitOfWorkDeps,
  tally: UsageTally,
  log: Pick<FastifyBaseLogger, 'error'>,
): { stop(): Promise<void> } {
  const onError = (error: unknown) => log.error({ err: error }, 'Recording the usage of OpenFeature evaluations failed');
  const pass = new RepeatingPass(() => writeEvaluationUsage(deps, tally), onError, WRITE_EVERY_MS);
  pass.start();
  return { stop: () => pass.stop() };
}
