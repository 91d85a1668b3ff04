import { Type } from '@sinclair/typebox';
import type { ApiTokenType } from '../../../db/schema.js';
import {
  ALL,
  createApiToken,
  createProjectApiToken,
  deleteApiToken,
  deleteProjectApiToken,
  listApiTokens,
  listProjectApiTokens,
  setApiTokenExpiry,
} from '../../../domain/api-tokens/api-tokens.js';
import { BadDataError } from '../../../shared/errors.js';
import {
  ApiTokenSchema,
  ApiTokensSchema,
  CreateApiTokenSchema,
  CreateProjectApiTokenSchema,
  UpdateApiTokenSchema,
} from './api-tokens.schemas.js';
import { ProjectParams } from '../../common.schemas.js';
import { routesTagged, type RouteModule } from '../../deps.js';
import { can, PROJECT_PARAM } from '../../plugins/access.js';

const route = routesTagged(['API tokens']);
const TokenReference = Type.Object({ token: Type.String({ minLength: 1, maxLength: 500, description: 'The token secret or its id' }) });

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

  // Token names are not unique: Unleash answers every token of the name, an empty list when there is none.
  app.get(
    '/api/admin/api-tokens/:name',
    route(can('READ_API_TOKEN'), { params: Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }) }), ok: ApiTokensSchema }),
    async (request) => ({ tokens: await listApiTokens(deps.db, request.params.name) }),
  );

  // Moving a token's expiry gives it as much life as creating one would: the same permission.
  app.put(
    '/api/admin/api-tokens/:token',
    route(can('CREATE_API_TOKEN'), { params: TokenReference, body: UpdateApiTokenSchema }),
    async (request, reply) => {
      await act(request, (uow) => setApiTokenExpiry(uow, request.params.token, new Date(request.body.expiresAt)));
      return reply.status(200).send();
    },
  );

  app.delete('/api/admin/api-tokens/:token', route(can('DELETE_API_TOKEN'), { params: TokenReference }), async (request, reply) => {
    await act(request, (uow) => deleteApiToken(uow, request.params.token));
    return reply.status(200).send();
  });

  // A project's own SDK tokens, which its members hand out (Unleash's project "API access").
  const PROJECT_TOKENS = '/api/admin/projects/:projectId/api-tokens';
  app.get(
    PROJECT_TOKENS,
    route(can('READ_PROJECT_API_TOKEN', PROJECT_PARAM), { params: ProjectParams, ok: ApiTokensSchema }),
    async (request) => ({
      tokens: await listProjectApiTokens(deps.db, request.params.projectId),
    }),
  );

  app.post(
    PROJECT_TOKENS,
    route(can('CREATE_PROJECT_API_TOKEN', PROJECT_PARAM), {
      params: ProjectParams,
      body: CreateProjectApiTokenSchema,
      created: ApiTokenSchema,
    }),
    async (request, reply) => {
      const { tokenName, type, environment, expiresAt } = request.body;
      const token = await act(request, (uow) =>
        createProjectApiToken(uow, request.params.projectId, {
          tokenName,
          type: tokenType(type),
          environment,
          expiresAt: expiresAt === undefined ? undefined : new Date(expiresAt),
        }),
      );
      return reply.status(201).send(token);
    },
  );

  app.delete(
    `${PROJECT_TOKENS}/:token`,
    route(can('DELETE_PROJECT_API_TOKEN', PROJECT_PARAM), { params: Type.Composite([ProjectParams, TokenReference]) }),
    async (request, reply) => {
      await act(request, (uow) => deleteProjectApiToken(uow, request.params.projectId, request.params.token));
      return reply.status(200).send();
    },
  );
};
