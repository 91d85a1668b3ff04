import type { FastifyBaseLogger } from 'fastify';
import { inUnitOfWork, type UnitOfWorkDeps } from '../db/unit-of-work.js';
import { SYSTEM_ACTOR } from '../domain/access/actor.js';
import { recordClientMetrics } from '../domain/usage/client-metrics.js';
import type { UsageTally } from '../domain/usage/usage-tally.js';
import { RepeatingPass } from './repeating-pass.js';

/** Every few seconds: a write per evaluation would put the database on the evaluation path. */
const WRITE_EVERY_MS = 5_000;

/**
 * Flags per unit of work. A bulk evaluation counts every flag of its scope, thousands of them: written at once,
 * they would hold the embedded database's one connection (and PGlite the event loop) for seconds, and every
 * request meanwhile. Parts this size leave room for requests between them.
 */
const FLAGS_PER_WRITE = 250;

/** Writes what the tally counted since the last write, as an SDK's report would be, a part of a report per unit of work. */
export async function writeEvaluationUsage(deps: UnitOfWorkDeps, tally: UsageTally): Promise<void> {
  for (const { token, report } of tally.takeReports(deps.clock.now())) {
    const toggles = Object.entries(report.bucket.toggles);
    for (let start = 0; start < toggles.length; start += FLAGS_PER_WRITE) {
      const part = { ...report, bucket: { ...report.bucket, toggles: Object.fromEntries(toggles.slice(start, start + FLAGS_PER_WRITE)) } };
      await inUnitOfWork(deps, SYSTEM_ACTOR, (uow) => recordClientMetrics(uow.tx, token, part, uow.now), { inMaintenance: 'SDK reports' });
      // Other work waiting for the connection or the event loop goes first.
      await new Promise((resolve) => setImmediate(resolve));
    }
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
