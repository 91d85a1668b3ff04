import type { FastifyReply } from 'fastify';
import type { ReadBounds } from '../db/bounded-read.js';
import type { AppDeps } from './deps.js';

/** The bounds of an API read: the configured timeout, and a signal that fires if the client disconnects first. */
export function readBoundsOf(deps: AppDeps, reply: FastifyReply): ReadBounds {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return { engine: deps.config.database.kind, timeoutMs: deps.config.readTimeoutMs, signal: controller.signal };
}
