import { randomUUID } from 'node:crypto';
import { LogController, type FastifyBaseLogger, type FastifyServerOptions } from 'fastify';
import { schemaController } from './validation.js';

/** How Fastify is set up for the server and for Vexil Edge alike, with the logger each writes to. */
export function serverOptions(logger: FastifyBaseLogger) {
  return {
    loggerInstance: logger,
    genReqId: () => randomUUID(),
    // One line per request, written by registerRequestLog, instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    schemaController,
    // Node's default keeps idle sockets for 5 s; shutdown waits for in-flight requests, not for idle sockets.
    forceCloseConnections: 'idle',
    // Path parameters carry token secrets (`project:environment.secret`) and 100-character names.
    routerOptions: { maxParamLength: 500 },
  } satisfies FastifyServerOptions & { loggerInstance: FastifyBaseLogger };
}
