import type { FastifyServerOptions } from 'fastify';
import type { DestinationStream } from 'pino';
import type { LogLevel } from '../../config.js';

/** Token secrets travel in one path (`DELETE /api/admin/api-tokens/:token`); logs show it masked. */
export function redactUrl(url: string): string {
  return url.replace(/(\/api\/admin\/api-tokens\/)[^/?#]+/, '$1[redacted]');
}

/** Structured JSON logs (pino) that never carry credentials. */
export function loggerOptions(level: LogLevel, stream?: DestinationStream): FastifyServerOptions['logger'] {
  return {
    level,
    ...(stream ? { stream } : {}),
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
}
