import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, RouteOptions } from 'fastify';
import { Type } from '@sinclair/typebox';
import { ErrorSchema } from '../common.schemas.js';

const ERROR_STATUSES = [400, 401, 403, 404, 409, 415] as const;

/**
 * The API documents itself: routes' TypeBox schemas become the OpenAPI document, shared schemas become named
 * components (their `$id`, i.e. Unleash's component names), and every route lists the error body.
 */
export async function registerOpenApi(app: FastifyInstance, version: string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      info: {
        title: 'Vexil admin API',
        description: "Feature-flag management speaking Unleash's admin API. Authenticate with an admin API token or a personal access token in the Authorization header.",
        version,
      },
      components: { securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'Authorization' } } },
      security: [{ apiKey: [] }],
    },
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, index) => (typeof json.$id === 'string' ? json.$id : `def-${index}`),
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/docs/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}

/** Adds the shared error body to a route's documented responses (they are what the error handler sends). */
export function documentErrorResponses(route: RouteOptions): void {
  const schema = (route.schema ??= {});
  const responses = (schema.response ??= {}) as Record<string, unknown>;
  for (const status of ERROR_STATUSES) responses[status] ??= Type.Ref(ErrorSchema);
}
