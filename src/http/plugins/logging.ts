import type { FastifyInstance } from 'fastify';
import { pino, type DestinationStream, type Logger } from 'pino';
import type { LogLevel } from '../../config.js';
import { redactUrl } from '../../shared/redact-url.js';

/** Structured JSON logs (pino) that never carry credentials; to standard output unless a stream is given. */
export function createLogger(level: LogLevel, stream?: DestinationStream): Logger {
  const options = {
    level,
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]'],
      censor: '[redacted]',
    },
    serializers: {
      req: (request: { method: string; url: string; hostname?: string; ip?: string }) => ({
        method: request.method,
        url: redactUrl(request.url),
        host: request.hostname,
        remoteAddress: request.ip,
      }),
    },
  };
  return stream ? pino(options, stream) : pino(options);
}

/**
 * Probes an orchestrator or Prometheus sends every few seconds: logged at `debug`, so they do not bury the
 * requests people make.
 */
const PROBE_PATHS = new Set(['/health', '/health/live', '/ready', '/health/ready', '/internal-backstage/prometheus']);

/**
 * One line per request, written when it is answered (Fastify's own logging writes two: received and completed).
 * Set with `disableRequestLogging: true`. `level` is `info` on the server; Vexil Edge, all of whose traffic is
 * SDKs polling, writes them at `debug`.
 */
export function registerRequestLog(app: FastifyInstance, level: 'info' | 'debug' = 'info'): void {
  app.addHook('onResponse', (request, reply, done) => {
    const line = {
      req: request,
      res: { statusCode: reply.statusCode },
      responseTime: Math.round(reply.elapsedTime * 10) / 10,
    };
    if (PROBE_PATHS.has(request.routeOptions.url ?? '')) request.log.debug(line, 'request completed');
    else request.log[level](line, 'request completed');
    done();
  });
}
