import { Type } from '@sinclair/typebox';
import { inUnitOfWork } from '../db/unit-of-work.js';
import {
  createEnvironment,
  deleteEnvironment,
  getEnvironment,
  listEnvironments,
  setEnvironmentEnabled,
  updateEnvironment,
} from '../domain/environments/environments.js';
import { UrlFriendlyName } from './common.schemas.js';
import { routesTagged, type RouteModule } from './deps.js';
import { actorOf, can } from './plugins/access.js';
import { CreateEnvironmentSchema, EnvironmentSchema, EnvironmentsSchema, UpdateEnvironmentSchema } from './projects.schemas.js';

const route = routesTagged(['Environments']);
const EnvironmentParams = Type.Object({ name: UrlFriendlyName });

export const environmentRoutes: RouteModule = async (app, { deps }) => {
  app.get('/api/admin/environments', route(can('READ'), { response: { 200: Type.Ref(EnvironmentsSchema) } }), async () => ({
    version: 1 as const,
    environments: await listEnvironments(deps.db),
  }));

  app.post(
    '/api/admin/environments',
    route(can('CREATE_ENVIRONMENT'), { body: Type.Ref(CreateEnvironmentSchema), response: { 201: Type.Ref(EnvironmentSchema) } }),
    async (request, reply) => {
      const environment = await inUnitOfWork(deps, actorOf(request), (uow) => createEnvironment(uow, request.body));
      return reply.status(201).send(environment);
    },
  );

  app.get(
    '/api/admin/environments/:name',
    route(can('READ'), { params: EnvironmentParams, response: { 200: Type.Ref(EnvironmentSchema) } }),
    async (request) => getEnvironment(deps.db, request.params.name),
  );

  app.put(
    '/api/admin/environments/:name',
    route(can('UPDATE_ENVIRONMENT'), {
      params: EnvironmentParams,
      body: Type.Ref(UpdateEnvironmentSchema),
      response: { 200: Type.Ref(EnvironmentSchema) },
    }),
    async (request) => inUnitOfWork(deps, actorOf(request), (uow) => updateEnvironment(uow, request.params.name, request.body)),
  );

  for (const [action, enabled] of [
    ['on', true],
    ['off', false],
  ] as const) {
    app.post(
      `/api/admin/environments/:name/${action}`,
      route(can('UPDATE_ENVIRONMENT'), { params: EnvironmentParams }),
      async (request, reply) => {
        await inUnitOfWork(deps, actorOf(request), (uow) => setEnvironmentEnabled(uow, request.params.name, enabled));
        return reply.status(204).send();
      },
    );
  }

  app.delete('/api/admin/environments/:name', route(can('DELETE_ENVIRONMENT'), { params: EnvironmentParams }), async (request, reply) => {
    await inUnitOfWork(deps, actorOf(request), (uow) => deleteEnvironment(uow, request.params.name));
    return reply.status(200).send();
  });
};
