import { Type } from '@sinclair/typebox';
import type { ApiTokenType } from '../db/schema.js';
import { createApiToken, deleteApiToken, ALL, listApiTokens } from '../domain/api-tokens/api-tokens.js';
import { BadDataError } from '../shared/errors.js';
import { ApiTokenSchema, ApiTokensSchema, CreateApiTokenSchema } from './api-tokens.schemas.js';
import { routesTagged, type RouteModule } from './deps.js';
import { can } from './plugins/access.js';

const route = routesTagged(['API tokens']);

/** Unleash 6 renamed client tokens "backend"; both names are accepted and stored as `client`. */
function tokenType(type: string): ApiTokenType {
  const lower = type.toLowerCase();
  return lower === 'backend' ? 'client' : (lower as ApiTokenType);
}

export const apiTokenRoutes: RouteModule = async (app, { deps, act }) => {
  app.get('/api/admin/api-tokens', route(can('READ_API_TOKEN'), { ok: ApiTokensSchema }), async () => ({
    tokens: await listApiTokens(deps.db),
  }));

  app.post(
    '/api/admin/api-tokens',
    route(can('CREATE_API_TOKEN'), { body: CreateApiTokenSchema, created: ApiTokenSchema }),
    async (request, reply) => {
      const body = request.body;
      const tokenName = body.tokenName ?? body.username;
      if (!tokenName) {
        throw new BadDataError('A token needs a name', [{ path: '/body/tokenName', message: '"tokenName" is required' }]);
      }
      if (body.project !== undefined && body.projects !== undefined) {
        throw new BadDataError('Give either project or projects, not both', [
          { path: '/body/project', message: '"project" cannot be combined with "projects"' },
        ]);
      }
      const token = await act(request, (uow) =>
        createApiToken(uow, {
          tokenName,
          type: tokenType(body.type),
          environment: body.environment,
          projects: body.projects ?? [body.project ?? ALL],
          expiresAt: body.expiresAt === undefined ? undefined : new Date(body.expiresAt),
        }),
      );
      return reply.status(201).send(token);
    },
  );

  app.delete(
    '/api/admin/api-tokens/:token',
    route(can('DELETE_API_TOKEN'), {
      params: Type.Object({ token: Type.String({ minLength: 1, description: 'The token secret or its id' }) }),
    }),
    async (request, reply) => {
      await act(request, (uow) => deleteApiToken(uow, request.params.token));
      return reply.status(200).send();
    },
  );
};
