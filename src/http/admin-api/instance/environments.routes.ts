import {
  createEnvironment,
  deleteEnvironment,
  getEnvironment,
  listEnvironments,
  setEnvironmentEnabled,
  setEnvironmentSortOrders,
  updateEnvironment,
} from '../../../domain/environments/environments.js';
import { listProjectEnvironments } from '../../../domain/features/project-environments.js';
import { guardDirectChange } from '../../../domain/protected-environments/guard.js';
import { NameParams, ProjectParams } from '../../common.schemas.js';
import { routesTagged, type RouteModule } from '../../deps.js';
import { can } from '../../plugins/access.js';
import {
  CreateEnvironmentSchema,
  EnvironmentSchema,
  EnvironmentSortOrderSchema,
  EnvironmentsSchema,
  ProjectEnvironmentsSchema,
  UpdateEnvironmentSchema,
} from './projects.schemas.js';

const route = routesTagged(['Environments']);

export const environmentRoutes: RouteModule = async (app, { deps, act }) => {
  app.get('/api/admin/environments', route(can('READ'), { ok: EnvironmentsSchema }), async () => ({
    version: 1 as const,
    environments: await listEnvironments(deps.db),
  }));

  app.get(
    '/api/admin/environments/project/:projectId',
    route(can('READ'), { params: ProjectParams, ok: ProjectEnvironmentsSchema }),
    async (request) => ({ version: 1 as const, environments: await listProjectEnvironments(deps.db, request.params.projectId) }),
  );

  app.post(
    '/api/admin/environments',
    route(can('CREATE_ENVIRONMENT'), { body: CreateEnvironmentSchema, created: EnvironmentSchema }),
    async (request, reply) => {
      const environment = await act(request, (uow) => createEnvironment(uow, request.body));
      return reply.status(201).send(environment);
    },
  );

  app.put(
    '/api/admin/environments/sort-order',
    route(can('UPDATE_ENVIRONMENT'), { body: EnvironmentSortOrderSchema }),
    async (request, reply) => {
      await act(request, (uow) => setEnvironmentSortOrders(uow, request.body));
      return reply.status(200).send();
    },
  );

  app.get('/api/admin/environments/:name', route(can('READ'), { params: NameParams, ok: EnvironmentSchema }), async (request) =>
    getEnvironment(deps.db, request.params.name),
  );

  app.put(
    '/api/admin/environments/:name',
    route(can('UPDATE_ENVIRONMENT'), { params: NameParams, body: UpdateEnvironmentSchema, ok: EnvironmentSchema }),
    async (request) => act(request, (uow) => updateEnvironment(uow, request.params.name, request.body)),
  );

  for (const [action, enabled] of [
    ['on', true],
    ['off', false],
  ] as const) {
    app.post(
      `/api/admin/environments/:name/${action}`,
      route(can('UPDATE_ENVIRONMENT'), { params: NameParams }),
      async (request, reply) => {
        await act(request, (uow) => setEnvironmentEnabled(uow, request.params.name, enabled));
        return reply.status(204).send();
      },
    );
  }

  app.delete('/api/admin/environments/:name', route(can('DELETE_ENVIRONMENT'), { params: NameParams }), async (request, reply) => {
    await act(request, async (uow) => {
      await guardDirectChange(uow, { kind: 'environment', environment: request.params.name });
      await deleteEnvironment(uow, request.params.name);
    });
    return reply.status(200).send();
  });
};
