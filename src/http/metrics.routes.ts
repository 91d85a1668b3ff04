import { Type } from '@sinclair/typebox';
import type { RouteModule } from './deps.js';
import { PUBLIC } from './plugins/route-access.js';

/** Unleash's path. Public as in Unleash: it shows counts and timings, never names of flags or secrets. */
export const metricsRoutes: RouteModule = async (app, { deps }) => {
  app.get(
    '/internal-backstage/prometheus',
    {
      schema: {
        tags: ['Operational'],
        response: { 200: { content: { 'text/plain': { schema: Type.String({ description: 'Prometheus text format 0.0.4' }) } } } },
      },
      config: { access: PUBLIC },
    },
    async (_request, reply) => {
      const { contentType, body } = await deps.metrics.exposition();
      return reply.type(contentType).send(body);
    },
  );
};
