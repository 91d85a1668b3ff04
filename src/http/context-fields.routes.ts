import { Type } from '@sinclair/typebox';
import { inUnitOfWork } from '../db/unit-of-work.js';
import { createContextField, deleteContextField, updateContextField } from '../domain/context-fields/context-fields.commands.js';
import {
  assertContextFieldNameFree,
  findContextField,
  listContextFieldStrategies,
  listContextFields,
} from '../domain/context-fields/context-fields.queries.js';
import { UrlFriendlyName } from './common.schemas.js';
import {
  ContextFieldNameSchema,
  ContextFieldSchema,
  ContextFieldsSchema,
  ContextFieldStrategiesSchema,
  CreateContextFieldSchema,
  UpdateContextFieldSchema,
} from './context-fields.schemas.js';
import type { RouteModule } from './deps.js';
import { actorOf, can } from './plugins/access.js';

const tags = ['Context'];
const ContextFieldParams = Type.Object({ name: UrlFriendlyName });
const CONTEXT = '/api/admin/context';

export const contextFieldRoutes: RouteModule = async (app, { deps }) => {
  app.get(CONTEXT, { schema: { tags, response: { 200: Type.Ref(ContextFieldsSchema) } }, config: { access: can('READ') } }, async () =>
    listContextFields(deps.db),
  );

  app.post(
    CONTEXT,
    {
      schema: { tags, body: Type.Ref(CreateContextFieldSchema), response: { 201: Type.Ref(ContextFieldSchema) } },
      config: { access: can('CREATE_CONTEXT_FIELD') },
    },
    async (request, reply) => {
      const field = await inUnitOfWork(deps, actorOf(request), (uow) => createContextField(uow, request.body));
      return reply.status(201).send(field);
    },
  );

  // Unleash's create form asks whether a name is free before creating: 200 when it is, 409 when taken.
  app.post(
    `${CONTEXT}/validate`,
    { schema: { tags, body: Type.Ref(ContextFieldNameSchema) }, config: { access: can('CREATE_CONTEXT_FIELD') } },
    async (request, reply) => {
      await assertContextFieldNameFree(deps.db, request.body.name);
      return reply.status(200).send();
    },
  );

  app.get(
    `${CONTEXT}/:name`,
    {
      schema: { tags, params: ContextFieldParams, response: { 200: Type.Ref(ContextFieldSchema) } },
      config: { access: can('READ') },
    },
    async (request) => findContextField(deps.db, request.params.name),
  );

  app.get(
    `${CONTEXT}/:name/strategies`,
    {
      schema: { tags, params: ContextFieldParams, response: { 200: Type.Ref(ContextFieldStrategiesSchema) } },
      config: { access: can('READ') },
    },
    async (request) => ({ strategies: await listContextFieldStrategies(deps.db, request.params.name) }),
  );

  app.put(
    `${CONTEXT}/:name`,
    {
      schema: {
        tags,
        params: ContextFieldParams,
        body: Type.Ref(UpdateContextFieldSchema),
        response: { 200: Type.Ref(ContextFieldSchema) },
      },
      config: { access: can('UPDATE_CONTEXT_FIELD') },
    },
    async (request) => inUnitOfWork(deps, actorOf(request), (uow) => updateContextField(uow, request.params.name, request.body)),
  );

  app.delete(
    `${CONTEXT}/:name`,
    { schema: { tags, params: ContextFieldParams }, config: { access: can('DELETE_CONTEXT_FIELD') } },
    async (request, reply) => {
      await inUnitOfWork(deps, actorOf(request), (uow) => deleteContextField(uow, request.params.name));
      return reply.status(200).send();
    },
  );
};
