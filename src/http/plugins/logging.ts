import type { FastifyInstance } from 'fastify';
import { pino, type DestinationStream, type Logger } from 'pino';
import type { LogLevel } from '../../config.js';

/**
 * Paths whose segment after the match is a secret: API token secrets (the instance's and a project's), invite link
 * secrets (their sign-up and validation pages, and the Admin's routes of a link).
 */
const SECRET_PATH_SEGMENT = /(\/api\/admin\/(?:projects\/[^/?#]+\/)?api-tokens\/|\/invite\/|\/api\/admin\/invite-link\/tokens\/)[^/?#]+/g;

/**
 * Query parameters that carry a credential: reset tokens, one-time authorization codes, stream channels (an SDK
 * token's hash, which opens its stream), and any parameter named for a secret.
 */
const SECRET_QUERY_PARAMETER = /([?&](?:token|secret|code|channel|password|api[_-]?key)=)[^&#]*/gi;

/** A URL as logs show it: every secret it carries, in its path or its query, masked. */
export function redactUrl(url: string): string {
  return url.replace(SECRET_PATH_SEGMENT, '$1[redacted]').replace(SECRET_QUERY_PARAMETER, '$1[redacted]');
}

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
const PROBE_PATHS = new Set(['/health', '/ready', '/health/ready', '/internal-backstage/prometheus']);

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
