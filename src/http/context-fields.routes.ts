import { Type } from '@sinclair/typebox';
import {
  createContextField,
  deleteContextField,
  updateContextField,
  assertContextFieldNameFree,
  findContextField,
  listContextFieldStrategies,
  listContextFields,
  removeLegalValue,
  setLegalValue,
} from '../domain/context-fields/context-fields.js';
import { NameParams, UrlFriendlyName } from './common.schemas.js';
import {
  ContextFieldNameSchema,
  LegalValueSchema,
  ContextFieldSchema,
  ContextFieldsSchema,
  ContextFieldStrategiesSchema,
  CreateContextFieldSchema,
  UpdateContextFieldSchema,
} from './context-fields.schemas.js';
import { routesTagged, type RouteModule } from './deps.js';
import { can } from './plugins/access.js';

const route = routesTagged(['Context']);
const CONTEXT = '/api/admin/context';

export const contextFieldRoutes: RouteModule = async (app, { deps, act }) => {
  app.get(CONTEXT, route(can('READ'), { ok: ContextFieldsSchema }), async () => listContextFields(deps.db));

  app.post(
    CONTEXT,
    route(can('CREATE_CONTEXT_FIELD'), { body: CreateContextFieldSchema, created: ContextFieldSchema }),
    async (request, reply) => {
      const field = await act(request, (uow) => createContextField(uow, request.body));
      return reply.status(201).send(field);
    },
  );

  // Unleash's create form asks whether a name is free before creating: 200 when it is, 409 when taken.
  app.post(`${CONTEXT}/validate`, route(can('CREATE_CONTEXT_FIELD'), { body: ContextFieldNameSchema }), async (request, reply) => {
    await assertContextFieldNameFree(deps.db, request.body.name);
    return reply.status(200).send();
  });

  app.get(`${CONTEXT}/:name`, route(can('READ'), { params: NameParams, ok: ContextFieldSchema }), async (request) =>
    findContextField(deps.db, request.params.name),
  );

  app.get(`${CONTEXT}/:name/strategies`, route(can('READ'), { params: NameParams, ok: ContextFieldStrategiesSchema }), async (request) => ({
    strategies: await listContextFieldStrategies(deps.db, request.params.name),
  }));

  app.put(
    `${CONTEXT}/:name`,
    route(can('UPDATE_CONTEXT_FIELD'), { params: NameParams, body: UpdateContextFieldSchema, ok: ContextFieldSchema }),
    async (request) => act(request, (uow) => updateContextField(uow, request.params.name, request.body)),
  );

  app.post(
    `${CONTEXT}/:name/legal-values`,
    route(can('UPDATE_CONTEXT_FIELD'), { params: NameParams, body: LegalValueSchema }),
    async (request, reply) => {
      await act(request, (uow) => setLegalValue(uow, request.params.name, request.body));
      return reply.status(200).send();
    },
  );

  app.delete(
    `${CONTEXT}/:name/legal-values/:value`,
    route(can('UPDATE_CONTEXT_FIELD'), {
      params: Type.Object({ name: UrlFriendlyName, value: Type.String({ minLength: 1, maxLength: 100 }) }),
    }),
    async (request, reply) => {
      await act(request, (uow) => removeLegalValue(uow, request.params.name, request.params.value));
      return reply.status(200).send();
    },
  );

  app.delete(`${CONTEXT}/:name`, route(can('DELETE_CONTEXT_FIELD'), { params: NameParams }), async (request, reply) => {
    await act(request, (uow) => deleteContextField(uow, request.params.name));
    return reply.status(200).send();
  });
};
