import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { inUnitOfWork } from '../../db/unit-of-work.js';
import { SYSTEM_ACTOR } from '../../domain/access/actor.js';
import { userActor } from '../../domain/access/authenticate.js';
import {
  codeOwner,
  issueMcpToken,
  MCP_SCOPE,
  OAuthError,
  redeemCode,
  registerClient,
} from '../../domain/agent-authorization/agent-authorization.js';
import { ApiError } from '../../shared/errors.js';
import { translateDatabaseError } from '../../db/pg-errors.js';
import * as schemas from './agent-access.schemas.js';
import { routesTagged, type RouteModule, type RouteSchema } from '../deps.js';
import { MCP_ENDPOINT } from '../plugins/access.js';
import { oauthAddresses } from '../oauth-addresses.js';
import { PUBLIC } from '../plugins/route-access.js';

const route = routesTagged(['MCP authorization']);

/** A public endpoint of the OAuth protocol: what it takes and answers, a small body limit, errors in OAuth's body. */
const oauthEndpoint = <S extends RouteSchema>(schema: S, bodyLimit: number) => ({
  ...route(PUBLIC, schema),
  bodyLimit,
  config: { access: PUBLIC, errors: { schema: Type.Ref(schemas.OAuthErrorSchema), statuses: [400, 503] } },
});

/** OAuth's error body, for what the protocol's endpoints refuse (its own errors, bad input, the database away). */
function oauthErrorHandler(invalidInput: string) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (error instanceof OAuthError) return reply.status(error.status).send({ error: error.code, error_description: error.message });
    if (error.validation) return reply.status(400).send({ error: invalidInput, error_description: error.message });
    const apiError = error instanceof ApiError ? error : translateDatabaseError(error);
    if (apiError && apiError.statusCode < 500) return reply.status(400).send({ error: invalidInput, error_description: apiError.message });
    if (apiError)
      return reply.status(503).headers(apiError.headers()).send({ error: 'temporarily_unavailable', error_description: apiError.message });
    request.log.error({ err: error }, 'An OAuth request failed');
    return reply.status(500).send({ error: 'server_error', error_description: 'Vexil failed to answer; the server log has the details' });
  };
}

/**
 * MCP's authorization server (OAuth 2.1): metadata, dynamic client registration and the token endpoint. The person's
 * consent runs in the admin UI (`/oauth/authorize`, a page of the UI; agent-access.routes.ts answers it).
 */
export const oauthRoutes: RouteModule = async (app, { deps }) => {
  const addresses = oauthAddresses(deps.config.baseUrl);

  for (const path of [`/.well-known/oauth-protected-resource${MCP_ENDPOINT}`, '/.well-known/oauth-protected-resource']) {
    app.get(path, route(PUBLIC, { ok: schemas.ProtectedResourceSchema }), async () => ({
      resource: addresses.resource,
      authorization_servers: [addresses.issuer],
      bearer_methods_supported: ['header'],
      scopes_supported: [MCP_SCOPE],
      resource_name: 'Vexil MCP',
    }));
  }

  app.get('/.well-known/oauth-authorization-server', route(PUBLIC, { ok: schemas.AuthorizationServerSchema }), async () => ({
    issuer: addresses.issuer,
    authorization_endpoint: addresses.authorize,
    token_endpoint: addresses.token,
    registration_endpoint: addresses.register,
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none'],
    scopes_supported: [MCP_SCOPE],
  }));

  await app.register(async (scope) => {
    const registration = scope.withTypeProvider<TypeBoxTypeProvider>();
    registration.setErrorHandler(oauthErrorHandler('invalid_client_metadata'));
    registration.post(
      '/oauth/register',
      oauthEndpoint({ body: schemas.RegistrationSchema, created: schemas.RegisteredClientSchema }, 32 * 1024),
      async (request, reply) => {
        const body = request.body;
        if (body.grant_types?.some((grant) => grant !== 'authorization_code' && grant !== 'refresh_token')) {
          throw new OAuthError('invalid_client_metadata', 'Only the authorization_code grant is offered');
        }
        if (!deps.oauthRegistrations.take(request.ip, deps.clock.now().getTime())) {
          throw new OAuthError('temporarily_unavailable', 'Too many clients were registered from this address in the last hour', 429);
        }
        const client = await inUnitOfWork(deps, SYSTEM_ACTOR, (uow) =>
          registerClient(uow, { clientName: body.client_name?.trim() || 'An MCP client', redirectUris: body.redirect_uris }),
        );
        return reply.status(201).send({
          client_id: client.clientId,
          client_id_issued_at: Math.floor(client.issuedAt.getTime() / 1000),
          client_name: client.clientName,
          redirect_uris: client.redirectUris,
          token_endpoint_auth_method: 'none' as const,
          grant_types: ['authorization_code'],
          response_types: ['code'],
          scope: MCP_SCOPE,
        });
      },
    );
  });

  await app.register(async (scope) => {
    const tokens = scope.withTypeProvider<TypeBoxTypeProvider>();
    tokens.setErrorHandler(oauthErrorHandler('invalid_request'));
    // The token endpoint takes a form (RFC 6749 §4.1.3); a parameter given twice is refused, as the RFC asks.
    tokens.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
      const parameters = new URLSearchParams(body.toString());
      const repeated = [...new Set(parameters.keys())].find((name) => parameters.getAll(name).length > 1);
      if (repeated) done(new OAuthError('invalid_request', `${repeated} was given more than once`), undefined);
      else done(null, Object.fromEntries(parameters));
    });
    tokens.post(
      '/oauth/token',
      oauthEndpoint({ body: schemas.TokenRequestSchema, ok: schemas.TokenSchema }, 16 * 1024),
      async (request, reply) => {
        const { grant_type, code, redirect_uri, client_id, code_verifier, resource } = request.body;
        if (grant_type !== 'authorization_code')
          throw new OAuthError('unsupported_grant_type', 'Only grant_type=authorization_code is offered');
        if (resource !== undefined && resource.replace(/\/$/, '') !== addresses.resource) {
          throw new OAuthError('invalid_target', `Tokens are issued for ${addresses.resource} only`);
        }
        // The token is issued as the person who granted the code, in the transaction that uses the code up.
        const person = await codeOwner(deps.db, code);
        const issued = await inUnitOfWork(deps, await userActor(deps.db, person), async (uow) => {
          const redeemed = await redeemCode(uow, { code, clientId: client_id, redirectUri: redirect_uri, codeVerifier: code_verifier });
          return 'refused' in redeemed ? redeemed : issueMcpToken(uow, redeemed.client, deps.config.mcpTokenTtlHours);
        });
        if ('refused' in issued) throw issued.refused;
        return reply
          .header('cache-control', 'no-store')
          .send({ access_token: issued.secret, token_type: 'Bearer' as const, expires_in: issued.expiresInSeconds, scope: MCP_SCOPE });
      },
    );
  });
};
