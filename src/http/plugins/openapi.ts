import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, FastifySchema, RouteOptions } from 'fastify';
import { Type } from '@sinclair/typebox';
import { ErrorSchema } from '../common.schemas.js';
import { OPERATIONS } from '../operations.js';
import type { RouteAccess } from './route-access.js';

/** Removes Ajv's `errorMessage` keyword: it words validation errors and means nothing to OpenAPI tools. */
function withoutValidationMessages<T>(value: T): T {
  if (Array.isArray(value)) return value.map(withoutValidationMessages) as T;
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== 'errorMessage')
      .map(([key, inner]) => [key, withoutValidationMessages(inner)]),
  ) as T;
}

/**
 * The API documents itself: routes' TypeBox schemas become the OpenAPI document, shared schemas become named
 * components (their `$id`, i.e. Unleash's component names), and every route lists the error body.
 */
export async function registerOpenApi(app: FastifyInstance, version: string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      // 3.1 takes JSON Schema as it is: the routes' schemas need no translation (const, null, patternProperties).
      openapi: '3.1.0',
      info: {
        title: 'Vexil admin API',
        description:
          "Feature-flag management speaking Unleash's admin API. Authenticate with an admin API token or a personal access token in the Authorization header.",
        version,
      },
      components: { securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'Authorization' } } },
      security: [{ apiKey: [] }],
    },
    transformObject: (document) =>
      'openapiObject' in document ? withoutValidationMessages(document.openapiObject) : document.swaggerObject,
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, index) => (typeof json.$id === 'string' ? json.$id : `def-${index}`),
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', theme: { title: 'Vexil API' } });
  app.get('/docs/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/**
 * A route whose errors leave in another protocol's shape (OFREP) says so in its config: that body, for exactly
 * the statuses it names, instead of Unleash's error body for the statuses its inputs and access imply.
 */
export interface DocumentedErrors {
  schema: unknown;
  statuses: number[];
}

declare module 'fastify' {
  interface FastifyContextConfig {
    errors?: DocumentedErrors;
  }
}

/** The error statuses a route can answer, from what it takes and who may call it. */
function errorStatuses(method: string, route: RouteOptions): number[] {
  const schema = route.schema ?? {};
  const access = (route.config as { access?: RouteAccess } | undefined)?.access;
  const statuses = new Set<number>();
  if (schema.body || schema.querystring || schema.params) statuses.add(400);
  if (access && access.kind !== 'public') statuses.add(401);
  // A signal endpoint's, a stream channel's or the SCIM token is all or nothing: it has no permissions to lack.
  if (access && !['public', 'signal-endpoint', 'sdk-channel', 'scim'].includes(access.kind)) statuses.add(403);
  // A path names something that may not exist, and so may a body (an environment, a project, a template).
  if (route.url.includes(':') || schema.body) statuses.add(404);
  if (BODY_METHODS.has(method) || method === 'DELETE') statuses.add(409);
  if (schema.body) statuses.add(413).add(415);
  return [...statuses].sort((a, b) => a - b);
}

/**
 * Names and documents each operation from the catalogue (src/http/operations.ts): its operationId and summary,
 * its success answer when it has no body, and the error body for each status it can answer. A route missing
 * from the catalogue, or answering a body it does not declare, stops start-up.
 */
export function documentOperation(route: RouteOptions): void {
  const schema = (route.schema ??= {}) as FastifySchema & { hide?: boolean; operationId?: string; summary?: string };
  if (schema.hide) return;
  const methods = (Array.isArray(route.method) ? route.method : [route.method]).filter((method) => method !== 'HEAD');
  for (const method of methods) {
    const key = `${method} ${route.url}`;
    const operation = OPERATIONS[key];
    if (!operation) throw new Error(`${key} has no operation name; add it to src/http/operations.ts`);
    schema.operationId = operation.id;
    schema.summary = operation.summary;
    // The permission the route asks for, as its declaration says: what a caller needs, and what MCP's tools are held to.
    const access = (route.config as { access?: RouteAccess } | undefined)?.access;
    if (access?.kind === 'permission') (schema as Record<string, unknown>)['x-permission'] = access.permission;
    const responses = (schema.response ??= {}) as Record<string, unknown>;
    const declaresSuccess = Object.keys(responses).some((status) => status.startsWith('2'));
    if (!declaresSuccess) {
      if (!operation.status) throw new Error(`${key} answers a body its schema does not declare`);
      const description = { 200: 'Done; no body', 202: 'Accepted', 204: 'Done; no body', 302: 'Redirects the browser' }[operation.status];
      responses[operation.status] = { type: 'null', description };
    }
    const own = route.config?.errors;
    const statuses = own ? own.statuses : [...errorStatuses(method, route), ...(operation.errors ?? [])];
    for (const status of statuses) responses[status] ??= own ? own.schema : Type.Ref(ErrorSchema);
  }
}
