import { Type } from '@sinclair/typebox';
import {
  answerAuthorizationRequest,
  checkAuthorizationRequest,
  listMcpTokens,
  revokeMcpToken,
  type AuthorizationRequest,
} from '../../domain/agent-authorization/agent-authorization.js';
import { signedInPersonOf } from '../../domain/users/profile.js';
import { NumericId } from '../common.schemas.js';
import {
  AuthorizationQuery,
  AuthorizationAnswerSchema,
  AuthorizationRequestViewSchema,
  AuthorizationRedirectSchema,
  McpTokensSchema,
} from './agent-access.schemas.js';
import { routesTagged, type RouteModule } from '../deps.js';
import { oauthAddresses } from '../oauth-addresses.js';
import { can } from '../plugins/access.js';
import { actorOf, bearerToken } from '../plugins/route-access.js';
import { BadDataError } from '../../shared/errors.js';
import type { FastifyRequest } from 'fastify';

const route = routesTagged(['MCP authorization']);

function requestOf(parameters: Record<string, string | undefined>): AuthorizationRequest {
  return {
    clientId: parameters.client_id!,
    redirectUri: parameters.redirect_uri!,
    responseType: parameters.response_type!,
    codeChallenge: parameters.code_challenge!,
    codeChallengeMethod: parameters.code_challenge_method!,
    state: parameters.state,
    scope: parameters.scope,
    resource: parameters.resource,
  };
}

/** Granting an agent access is a person's act in a browser: a token (an agent itself) cannot grant one. */
function personInBrowser(request: FastifyRequest): number {
  if (bearerToken(request)) throw new BadDataError('Only a person signed in to Vexil in a browser can grant an agent access');
  return signedInPersonOf(actorOf(request), 'agents to grant access to');
}

/**
 * The person's side of MCP's authorization: the consent page (`/oauth/authorize` in the admin UI) reads the request
 * and answers it; the profile lists the agents holding a token and revokes them.
 */
export const agentAccessRoutes: RouteModule = async (app, { deps, act }) => {
  const { resource } = oauthAddresses(deps.config.baseUrl);

  app.get(
    '/api/admin/oauth/authorization',
    route(can('READ'), { querystring: AuthorizationQuery, ok: AuthorizationRequestViewSchema }),
    async (request) => {
      personInBrowser(request);
      const client = await checkAuthorizationRequest(deps.db, requestOf(request.query), resource);
      return { clientName: client.name, redirectUri: request.query.redirect_uri, resource, expiresInHours: deps.config.mcpTokenTtlHours };
    },
  );

  app.post(
    '/api/admin/oauth/authorization',
    route(can('READ'), { body: AuthorizationAnswerSchema, ok: AuthorizationRedirectSchema }),
    async (request) => {
      personInBrowser(request);
      const { approve, ...parameters } = request.body;
      const redirectTo = await act(request, (uow) => answerAuthorizationRequest(uow, requestOf(parameters), approve, resource));
      return { redirectTo };
    },
  );

  app.get('/api/admin/user/mcp-tokens', route(can('READ'), { ok: McpTokensSchema }), async (request) => ({
    tokens: await listMcpTokens(deps.db, signedInPersonOf(actorOf(request), 'agent tokens'), deps.clock.now()),
  }));

  app.delete('/api/admin/user/mcp-tokens/:id', route(can('READ'), { params: Type.Object({ id: NumericId }) }), async (request, reply) => {
    await act(request, (uow) => revokeMcpToken(uow, Number(request.params.id)));
    return reply.status(204).send();
  });
};
