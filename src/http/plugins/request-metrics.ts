import type { FastifyInstance } from 'fastify';
import type { Metrics } from '../../shared/metrics.js';

const SDK_API = /^\/api\/(client|frontend|proxy)(\/|$)/;

/** Times every answered request by its route pattern (never the URL: names and ids would explode the series). */
export function registerRequestMetrics(app: FastifyInstance, metrics: Metrics): void {
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const statusCode = String(reply.statusCode);
    metrics.httpRequestDuration.observe({ method: request.method, route, status_code: statusCode }, reply.elapsedTime / 1000);
    if (SDK_API.test(route)) metrics.clientApiRequests.inc({ endpoint: `${request.method} ${route}`, status_code: statusCode });
    done();
  });
}
