import { actorOf } from '../../plugins/route-access.js';
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
} from '../../../domain/context-fields/context-fields.js';
import { assertProject } from '../../../domain/features/feature-lookup.js';
import { NameParams, ProjectParams, UrlFriendlyName } from '../../common.schemas.js';
import {
  ContextFieldNameSchema,
  LegalValueSchema,
  ContextFieldSchema,
  ContextFieldsSchema,
  ContextFieldStrategiesSchema,
  ContextFieldsQuerySchema,
  CreateContextFieldSchema,
  CreateProjectContextFieldSchema,
  UpdateContextFieldSchema,
} from './context-fields.schemas.js';
import { routesTagged, type RouteModule } from '../../deps.js';
import { can, PROJECT_PARAM } from '../../plugins/access.js';

const route = routesTagged(['Context']);
const CONTEXT = '/api/admin/context';

const PROJECT_CONTEXT = '/api/admin/projects/:projectId/context';
/** The global routes change the instance's own fields; a project's own are changed by who may change the project. */
const INSTANCE_FIELDS = { project: null };
const ProjectFieldParams = Type.Object({ projectId: UrlFriendlyName, name: UrlFriendlyName });
const ProjectLegalValueParams = Type.Object({
  projectId: UrlFriendlyName,
  name: UrlFriendlyName,
  value: Type.String({ minLength: 1, maxLength: 100 }),
});

export const contextFieldRoutes: RouteModule = async (app, { deps, act }) => {
  app.get(CONTEXT, route(can('READ'), { querystring: ContextFieldsQuerySchema, ok: ContextFieldsSchema }), async (request) =>
    listContextFields(deps.db, { includeProjects: request.query.include === 'project', visibleTo: actorOf(request) }),
  );

  // A project's own fields, managed by whoever may change the project (its Owners, and Admins).
  const manage = can('UPDATE_PROJECT', PROJECT_PARAM);
  app.get(PROJECT_CONTEXT, route(can('READ'), { params: ProjectParams, ok: ContextFieldsSchema }), async (request) => {
    await assertProject(deps.db, request.params.projectId);
    return listContextFields(deps.db, { project: request.params.projectId });
  });

  app.post(
    PROJECT_CONTEXT,
    route(manage, { params: ProjectParams, body: CreateProjectContextFieldSchema, created: ContextFieldSchema }),
    async (request, reply) => {
      const field = await act(request, (uow) => createContextField(uow, { ...request.body, project: request.params.projectId }));
      return reply.status(201).send(field);
    },
  );

  app.post(
    `${PROJECT_CONTEXT}/validate`,
    route(manage, { params: ProjectParams, body: ContextFieldNameSchema }),
    async (request, reply) => {
      await assertContextFieldNameFree(deps.db, request.body.name);
      return reply.status(200).send();
    },
  );

  app.get(`${PROJECT_CONTEXT}/:name`, route(can('READ'), { params: ProjectFieldParams, ok: ContextFieldSchema }), async (request) =>
    findContextField(deps.db, request.params.name, false, { project: request.params.projectId }),
  );

  app.get(
    `${PROJECT_CONTEXT}/:name/strategies`,
    route(can('READ'), { params: ProjectFieldParams, ok: ContextFieldStrategiesSchema }),
    async (request) => {
      await findContextField(deps.db, request.params.name, false, { project: request.params.projectId });
      return { strategies: await listContextFieldStrategies(deps.db, actorOf(request), request.params.name, request.params.projectId) };
    },
  );

  app.put(
    `${PROJECT_CONTEXT}/:name`,
    route(manage, { params: ProjectFieldParams, body: UpdateContextFieldSchema, ok: ContextFieldSchema }),
    async (request) =>
      act(request, (uow) => updateContextField(uow, request.params.name, request.body, { project: request.params.projectId })),
  );

  app.post(
    `${PROJECT_CONTEXT}/:name/legal-values`,
    route(manage, { params: ProjectFieldParams, body: LegalValueSchema }),
    async (request, reply) => {
      await act(request, (uow) => setLegalValue(uow, request.params.name, request.body, { project: request.params.projectId }));
      return reply.status(200).send();
    },
  );

  app.delete(`${PROJECT_CONTEXT}/:name/legal-values/:value`, route(manage, { params: ProjectLegalValueParams }), async (request, reply) => {
    const { projectId, name, value } = request.params;
    await act(request, (uow) => removeLegalValue(uow, name, value, { project: projectId }));
    return reply.status(200).send();
  });

  app.delete(`${PROJECT_CONTEXT}/:name`, route(manage, { params: ProjectFieldParams }), async (request, reply) => {
    await act(request, (uow) => deleteContextField(uow, request.params.name, { project: request.params.projectId }));
    return reply.status(200).send();
  });

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
    findContextField(deps.db, request.params.name, false, { visibleTo: actorOf(request) }),
  );

  app.get(`${CONTEXT}/:name/strategies`, route(can('READ'), { params: NameParams, ok: ContextFieldStrategiesSchema }), async (request) => ({
    strategies: await listContextFieldStrategies(deps.db, actorOf(request), request.params.name),
  }));

  app.put(
    `${CONTEXT}/:name`,
    route(can('UPDATE_CONTEXT_FIELD'), { params: NameParams, body: UpdateContextFieldSchema, ok: ContextFieldSchema }),
    async (request) => act(request, (uow) => updateContextField(uow, request.params.name, request.body, INSTANCE_FIELDS)),
  );

  app.post(
    `${CONTEXT}/:name/legal-values`,
    route(can('UPDATE_CONTEXT_FIELD'), { params: NameParams, body: LegalValueSchema }),
    async (request, reply) => {
      await act(request, (uow) => setLegalValue(uow, request.params.name, request.body, INSTANCE_FIELDS));
      return reply.status(200).send();
    },
  );

  app.delete(
    `${CONTEXT}/:name/legal-values/:value`,
    route(can('UPDATE_CONTEXT_FIELD'), {
      params: Type.Object({ name: UrlFriendlyName, value: Type.String({ minLength: 1, maxLength: 100 }) }),
    }),
    async (request, reply) => {
      await act(request, (uow) => removeLegalValue(uow, request.params.name, request.params.value, INSTANCE_FIELDS));
      return reply.status(200).send();
    },
  );

  app.delete(`${CONTEXT}/:name`, route(can('DELETE_CONTEXT_FIELD'), { params: NameParams }), async (request, reply) => {
    await act(request, (uow) => deleteContextField(uow, request.params.name, INSTANCE_FIELDS));
    return reply.status(200).send();
  });
};
