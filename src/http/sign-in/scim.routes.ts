import type { FastifyReply } from 'fastify';
import type { TSchema } from '@sinclair/typebox';
import type { Db } from '../../db/database.js';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { scimResourceTypes, scimSchemas, scimServiceProviderConfig } from '../../domain/scim/scim-discovery.js';
import {
  createScimGroup,
  deleteScimGroup,
  getScimGroup,
  listScimGroups,
  patchScimGroup,
  replaceScimGroup,
} from '../../domain/scim/scim-groups.js';
import { idOf, listResponse, type Page, type PatchOperation, pageOf, SCIM, selectAttributes } from '../../domain/scim/scim-protocol.js';
import {
  createScimUser,
  deleteScimUser,
  getScimUser,
  listScimUsers,
  patchScimUser,
  replaceScimUser,
  type ScimContext,
} from '../../domain/scim/scim-users.js';
import { OPEN_SIGN_IN_POLICY, type SignInPolicy, type SignInProvider } from '../../domain/settings/sign-in-policy.js';
import { NotFoundError } from '../../shared/errors.js';
import { routesTagged, type RouteModule } from '../deps.js';
import { errorHandler } from '../plugins/error-handler.js';
import { SCIM_PROVIDER_TOKEN } from '../plugins/route-access.js';
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

/** A resource with where it lives, as every SCIM answer about one carries it. */
interface ScimResource {
  meta: { location: string };
}

/** What the routes of a resource type (Users, Groups) are made from: its schemas and its domain operations. */
interface ScimResourceType {
  path: 'Users' | 'Groups';
  kind: 'user' | 'group';
  schema: string;
  resource: TSchema;
  list: TSchema;
  input: TSchema;
  find(db: Db, query: { filter?: string }, page: Page, baseUrl: string): Promise<{ Resources: object[] }>;
  read(db: Db, id: number, baseUrl: string): Promise<ScimResource>;
  create(uow: UnitOfWork, body: Record<string, unknown>): Promise<ScimResource>;
  replace(uow: UnitOfWork, id: number, body: Record<string, unknown>, baseUrl: string): Promise<ScimResource>;
  patch(uow: UnitOfWork, id: number, operations: PatchOperation[], baseUrl: string): Promise<ScimResource>;
  remove(uow: UnitOfWork, id: number): Promise<void>;
}

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
  // People the provider pushes sign in through it, OpenID Connect or SAML: that provider's policy gives their role.
  const [policyProvider, startingPolicy]: [SignInProvider, SignInPolicy] = deps.oidc
    ? ['oidc', deps.oidc.startingPolicy]
    : deps.saml
      ? ['saml', deps.saml.startingPolicy]
      : ['oidc', OPEN_SIGN_IN_POLICY];
  const context: ScimContext = { baseUrl, policyProvider, startingPolicy };
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

  // Users and Groups take the same seven requests; each resource type names its own domain operations.
  const resourceTypes: ScimResourceType[] = [
    {
      path: 'Users',
      kind: 'user' as const,
      schema: SCIM.user,
      resource: ScimUserSchema,
      list: ScimUserListSchema,
      input: ScimUserInputSchema,
      find: listScimUsers,
      read: getScimUser,
      create: (uow: UnitOfWork, body: Record<string, unknown>) => createScimUser(uow, body, context),
      replace: replaceScimUser,
      patch: patchScimUser,
      remove: deleteScimUser,
    },
    {
      path: 'Groups',
      kind: 'group' as const,
      schema: SCIM.group,
      resource: ScimGroupSchema,
      list: ScimGroupListSchema,
      input: ScimGroupInputSchema,
      find: listScimGroups,
      read: getScimGroup,
      create: (uow: UnitOfWork, body: Record<string, unknown>) => createScimGroup(uow, body, baseUrl),
      replace: replaceScimGroup,
      patch: patchScimGroup,
      remove: deleteScimGroup,
    },
  ];
  for (const type of resourceTypes) {
    const collection = `/scim/v2/${type.path}`;
    const one = `${collection}/:id`;
    app.get(collection, route(SCIM_PROVIDER_TOKEN, { querystring: ScimListQuery, ok: type.list }), async (request, reply) => {
      const list = await type.find(deps.db, request.query, pageOf(request.query), baseUrl);
      const resources = list.Resources.map((resource) => selectAttributes(resource, request.query, type.schema));
      return scim(reply).send({ ...list, Resources: resources });
    });
    app.post(collection, route(SCIM_PROVIDER_TOKEN, { body: type.input, created: type.resource }), async (request, reply) =>
      created(reply, await act(request, (uow) => type.create(uow, request.body as Record<string, unknown>))),
    );
    app.get(
      one,
      route(SCIM_PROVIDER_TOKEN, { params: ScimIdParams, querystring: ScimReadQuery, ok: type.resource }),
      async (request, reply) => {
        const resource = await type.read(deps.db, resourceId(request.params.id, type.kind), baseUrl);
        return scim(reply).send(selectAttributes(resource, request.query, type.schema));
      },
    );
    app.put(one, route(SCIM_PROVIDER_TOKEN, { params: ScimIdParams, body: type.input, ok: type.resource }), async (request, reply) => {
      const id = resourceId(request.params.id, type.kind);
      return scim(reply).send(await act(request, (uow) => type.replace(uow, id, request.body as Record<string, unknown>, baseUrl)));
    });
    app.patch(
      one,
      route(SCIM_PROVIDER_TOKEN, { params: ScimIdParams, body: ScimPatchSchema, ok: type.resource }),
      async (request, reply) => {
        const id = resourceId(request.params.id, type.kind);
        return scim(reply).send(await act(request, (uow) => type.patch(uow, id, request.body.Operations, baseUrl)));
      },
    );
    app.delete(one, route(SCIM_PROVIDER_TOKEN, { params: ScimIdParams }), async (request, reply) => {
      const id = resourceId(request.params.id, type.kind);
      await act(request, (uow) => type.remove(uow, id));
      return reply.status(204).send();
    });
  }
};
