import type { FastifyBaseLogger } from 'fastify';
import type { UsageTally } from '../domain/usage/usage-tally.js';
import { RepeatingPass } from './repeating-pass.js';

/** Every few seconds: a write per evaluation would put the database on the evaluation path. */
const WRITE_EVERY_MS = 5_000;

/** Writes the evaluations Vexil counted itself (OFREP) as usage, every few seconds, and once more when stopped. */
export function startEvaluationUsageWriter(tally: UsageTally, log: Pick<FastifyBaseLogger, 'error'>): { stop(): Promise<void> } {
  const onError = (error: unknown) => log.error({ err: error }, 'Recording the usage of OpenFeature evaluations failed');
  const pass = new RepeatingPass(() => tally.flush(), onError, WRITE_EVERY_MS);
  pass.start();
  return {
    async stop() {
      await pass.stop();
    },
  };
}
