import type { FastifyReply } from 'fastify';
import { scimResourceTypes, scimSchemas, scimServiceProviderConfig } from '../domain/scim/scim-discovery.js';
import { createScimGroup, getScimGroup, listScimGroups, patchScimGroup, replaceScimGroup } from '../domain/scim/scim-groups.js';
import { idOf, listResponse, pageOf, SCIM, selectAttributes } from '../domain/scim/scim-protocol.js';
import { createScimUser, getScimUser, listScimUsers, patchScimUser, replaceScimUser, type ScimContext } from '../domain/scim/scim-users.js';
import { OPEN_SIGN_IN_POLICY, type SignInPolicy } from '../domain/settings/sign-in-policy.js';
import { deleteGroup } from '../domain/groups/groups.js';
import { deleteUser } from '../domain/users/users.js';
import { NotFoundError } from '../shared/errors.js';
import { routesTagged, type RouteModule } from './deps.js';
import { errorHandler } from './plugins/error-handler.js';
import { SCIM_PROVIDER_TOKEN } from './plugins/route-access.js';
import {
  ScimDiscoveryListSchema,
  ScimDiscoverySchema,
  ScimGroupInputSchema,
  ScimGroupListSchema,
  ScimGroupSchema,
  ScimIdParams,
  ScimListQuery,
  ScimPatchSchema,
  ScimReadQuery,
  ScimUserInputSchema,
  ScimUserListSchema,
  ScimUserSchema,
} from './scim.schemas.js';

const SCIM_JSON = 'application/scim+json; charset=utf-8';

/** The resource named by a path: SCIM ids are opaque text, so one that is no id of Vexil's is a 404, not a 400. */
function resourceId(text: string, kind: 'user' | 'group'): number {
  const id = idOf(text);
  if (id === undefined) throw new NotFoundError(`Could not find ${kind} ${text}`);
  return id;
}

/**
 * SCIM 2.0 (RFC 7643/7644) at `/scim/v2`, for an identity provider (Okta, Entra ID) that provisions people and
 * groups with the SCIM token an Admin made. Answers and errors are `application/scim+json`; errors carry SCIM's
 * `schemas`, `status`, `scimType` and `detail` beside Unleash's fields. Every change is recorded in the event log
 * as the `scim` identity provider, in the change's transaction.
 */
export const scimRoutes: RouteModule = async (app, { deps, act }) => {
  app.setErrorHandler(
    errorHandler({
      contentType: SCIM_JSON,
      extraFields: (error) => ({ schemas: [SCIM.error], status: String(error.statusCode), detail: error.message }),
    }),
  );
  const route = routesTagged(['SCIM']);
  const scim = (reply: FastifyReply) => reply.type(SCIM_JSON);
  const baseUrl = deps.config.baseUrl.replace(/\/$/, '');
  const startingPolicy: SignInPolicy = deps.oidc?.startingPolicy ?? OPEN_SIGN_IN_POLICY;
  const context: ScimContext = { baseUrl, startingPolicy };
  const created = <T extends { meta: { location: string } }>(reply: FastifyReply, resource: T) =>
    scim(reply).status(201).header('location', resource.meta.location).send(resource);

  app.get('/scim/v2/ServiceProviderConfig', route(SCIM_PROVIDER_TOKEN, { ok: ScimDiscoverySchema }), async (_request, reply) =>
    scim(reply).send(scimServiceProviderConfig(baseUrl)),
  );
  app.get('/scim/v2/ResourceTypes', route(SCIM_PROVIDER_TOKEN, { ok: ScimDiscoveryListSchema }), async (_request, reply) => {
    const types = scimResourceTypes(baseUrl);
    return scim(reply).send(listResponse(types, types.length, { startIndex: 1, count: types.length }));
  });
  app.get(
    '/scim/v2/ResourceTypes/:id',
    route(SCIM_PROVIDER_TOKEN, { params: ScimIdParams, ok: ScimDiscoverySchema }),
    async (request, reply) => {
      const type = scimResourceTypes(baseUrl).find((candidate) => candidate.id === request.params.id);
      if (!type) throw new NotFoundError(`There is no resource type ${request.params.id}; there are User and Group`);
      return scim(reply).send(type);
    },
  );
  app.get('/scim/v2/Schemas', route(SCIM_PROVIDER_TOKEN, { ok: ScimDiscoveryListSchema }), async (_request, reply) => {
    const schemas = scimSchemas(baseUrl);
    return scim(reply).send(listResponse(schemas, schemas.length, { startIndex: 1, count: schemas.length }));
  });
  app.get('/scim/v2/Schemas/:id', route(SCIM_PROVIDER_TOKEN, { params: ScimIdParams, ok: ScimDiscoverySchema }), async (request, reply) => {
    const schema = scimSchemas(baseUrl).find((candidate) => candidate.id === request.params.id);
    if (!schema) throw new NotFoundError(`There is no schema ${request.params.id}`);
    return scim(reply).send(schema);
  });

  app.get('/scim/v2/Users', route(SCIM_PROVIDER_TOKEN, { querystring: ScimListQuery, ok: ScimUserListSchema }), async (request, reply) => {
    const list = await listScimUsers(deps.db, request.query, pageOf(request.query), baseUrl);
    return scim(reply).send({ ...list, Resources: list.Resources.map((user) => selectAttributes(user, request.query, SCIM.user)) });
  });
  app.post('/scim/v2/Users', route(SCIM_PROVIDER_TOKEN, { body: ScimUserInputSchema, created: ScimUserSchema }), async (request, reply) =>
    created(reply, await act(request, (uow) => createScimUser(uow, request.body, context))),
  );
  app.get(
    '/scim/v2/Users/:id',
    route(SCIM_PROVIDER_TOKEN, { params: ScimIdParams, querystring: ScimReadQuery, ok: ScimUserSchema }),
    async (request, reply) => {
      const user = await getScimUser(deps.db, resourceId(request.params.id, 'user'), baseUrl);
      return scim(reply).send(selectAttributes(user, request.query, SCIM.user));
    },
  );
  app.put(
    '/scim/v2/Users/:id',
    route(SCIM_PROVIDER_TOKEN, { params: ScimIdParams, body: ScimUserInputSchema, ok: ScimUserSchema }),
    async (request, reply) => {
      const id = resourceId(request.params.id, 'user');
      return scim(reply).send(await act(request, (uow) => replaceScimUser(uow, id, request.body, baseUrl)));
    },
  );
  app.patch(
    '/scim/v2/Users/:id',
    route(SCIM_PROVIDER_TOKEN, { params: ScimIdParams, body: ScimPatchSchema, ok: ScimUserSchema }),
    async (request, reply) => {
      const id = resourceId(request.params.id, 'user');
      return scim(reply).send(await act(request, (uow) => patchScimUser(uow, id, request.body.Operations, baseUrl)));
    },
  );
  app.delete('/scim/v2/Users/:id', route(SCIM_PROVIDER_TOKEN, { params: ScimIdParams }), async (request, reply) => {
    const id = resourceId(request.params.id, 'user');
    await act(request, (uow) => deleteUser(uow, id));
    return reply.status(204).send();
  });

  app.get(
    '/scim/v2/Groups',
    route(SCIM_PROVIDER_TOKEN, { querystring: ScimListQuery, ok: ScimGroupListSchema }),
    async (request, reply) => {
      const list = await listScimGroups(deps.db, request.query, pageOf(request.query), baseUrl);
      return scim(reply).send({ ...list, Resources: list.Resources.map((group) => selectAttributes(group, request.query, SCIM.group)) });
    },
  );
  app.post(
    '/scim/v2/Groups',
    route(SCIM_PROVIDER_TOKEN, { body: ScimGroupInputSchema, created: ScimGroupSchema }),
    async (request, reply) => created(reply, await act(request, (uow) => createScimGroup(uow, request.body, baseUrl))),
  );
  app.get(
    '/scim/v2/Groups/:id',
    route(SCIM_PROVIDER_TOKEN, { params: ScimIdParams, querystring: ScimReadQuery, ok: ScimGroupSchema }),
    async (request, reply) => {
      const group = await getScimGroup(deps.db, resourceId(request.params.id, 'group'), baseUrl);
      return scim(reply).send(selectAttributes(group, request.query, SCIM.group));
    },
  );
  app.put(
    '/scim/v2/Groups/:id',
    route(SCIM_PROVIDER_TOKEN, { params: ScimIdParams, body: ScimGroupInputSchema, ok: ScimGroupSchema }),
    async (request, reply) => {
      const id = resourceId(request.params.id, 'group');
      return scim(reply).send(await act(request, (uow) => replaceScimGroup(uow, id, request.body, baseUrl)));
    },
  );
  app.patch(
    '/scim/v2/Groups/:id',
    route(SCIM_PROVIDER_TOKEN, { params: ScimIdParams, body: ScimPatchSchema, ok: ScimGroupSchema }),
    async (request, reply) => {
      const id = resourceId(request.params.id, 'group');
      return scim(reply).send(await act(request, (uow) => patchScimGroup(uow, id, request.body.Operations, baseUrl)));
    },
  );
  app.delete('/scim/v2/Groups/:id', route(SCIM_PROVIDER_TOKEN, { params: ScimIdParams }), async (request, reply) => {
    const id = resourceId(request.params.id, 'group');
    await act(request, (uow) => deleteGroup(uow, id));
    return reply.status(204).send();
  });
};
