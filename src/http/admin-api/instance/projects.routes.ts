import { projectsHiddenFrom } from '../../../domain/access/project-visibility.js';
import { Type } from '@sinclair/typebox';
import {
  addProjectEnvironment,
  createProject,
  deleteProject,
  getProject,
  listProjects,
  removeProjectEnvironment,
  updateProject,
} from '../../../domain/projects/projects.js';
import { BadDataError } from '../../../shared/errors.js';
import { ProjectParams, StrictObject, UrlFriendlyName } from '../../common.schemas.js';
import { listFlagCreators, projectHasDependencies, searchFlagCreators, validateArchive } from '../../../domain/features/project-flags.js';
import { parseWholeNumber } from '../../../shared/filters.js';
import { routesTagged, type RouteModule } from '../../deps.js';
import { can, PROJECT_PARAM } from '../../plugins/access.js';
import { actorOf } from '../../plugins/route-access.js';
import {
  CreateProjectSchema,
  ProjectDefaultStrategySchema,
  ProjectEnvironmentSchema,
  ProjectSchema,
  ProjectsSchema,
  UpdateProjectSchema,
} from './projects.schemas.js';
import { CreateFeatureStrategySchema } from '../../features.schemas.js';
import { setProjectDefaultStrategy } from '../../../domain/projects/default-strategies.js';

const route = routesTagged(['Projects']);

/** Unleash derives a missing project id from the name; a name that yields nothing URL-friendly needs an id. */
function idFromName(name: string): string {
  const id = name
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9~_.-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 100);
  if (!id || id === '.' || id === '..') {
    throw new BadDataError('Give the project an id', [
      { path: '/body/id', message: `No URL-friendly id can be made from the name ${JSON.stringify(name)}` },
    ]);
  }
  return id;
}

export const projectRoutes: RouteModule = async (app, { deps, act }) => {
  app.get('/api/admin/projects', route(can('READ'), { ok: ProjectsSchema }), async (request) => {
    const hidden = await projectsHiddenFrom(deps.db, actorOf(request));
    return { version: 1 as const, projects: (await listProjects(deps.db)).filter((project) => !hidden.has(project.id)) };
  });

  app.post(
    '/api/admin/projects',
    route(can('CREATE_PROJECT'), { body: CreateProjectSchema, created: ProjectSchema }),
    async (request, reply) => {
      const { id, ...fields } = request.body;
      const project = await act(request, (uow) => createProject(uow, { ...fields, id: id ?? idFromName(fields.name) }));
      return reply.status(201).send(project);
    },
  );

  app.get('/api/admin/projects/:projectId', route(can('READ'), { params: ProjectParams, ok: ProjectSchema }), async (request) =>
    getProject(deps.db, request.params.projectId),
  );

  app.put(
    '/api/admin/projects/:projectId',
    route(can('UPDATE_PROJECT', PROJECT_PARAM), { params: ProjectParams, body: UpdateProjectSchema, ok: ProjectSchema }),
    async (request) => {
      const { projectId } = request.params;
      const { id, ...fields } = request.body;
      if (id !== undefined && id !== projectId) {
        throw new BadDataError('A project id cannot be changed', [
          { path: '/body/id', message: `id must match the path's project "${projectId}" (got ${JSON.stringify(id)})` },
        ]);
      }
      return act(request, (uow) => updateProject(uow, projectId, fields));
    },
  );

  app.delete(
    '/api/admin/projects/:projectId',
    route(can('DELETE_PROJECT', PROJECT_PARAM), { params: ProjectParams }),
    async (request, reply) => {
      await act(request, (uow) => deleteProject(uow, request.params.projectId));
      return reply.status(200).send();
    },
  );

  app.post(
    '/api/admin/projects/:projectId/environments',
    route(can('UPDATE_PROJECT', PROJECT_PARAM), { params: ProjectParams, body: ProjectEnvironmentSchema }),
    async (request, reply) => {
      await act(request, (uow) => addProjectEnvironment(uow, request.params.projectId, request.body.environment));
      return reply.status(200).send();
    },
  );

  app.get(
    '/api/admin/flag-creators',
    routesTagged(['Users'])(can('READ'), {
      querystring: Type.Object({
        q: Type.Optional(Type.String({ maxLength: 100, description: 'A name anywhere, or the start of a username or email' })),
        offset: Type.Optional(Type.String({ description: 'People to skip; default 0' })),
        limit: Type.Optional(Type.String({ description: 'Page size, 1 to 10000; default 50' })),
      }),
      ok: Type.Object({ total: Type.Integer(), flagCreators: Type.Array(Type.Object({ id: Type.Integer(), name: Type.String() })) }),
    }),
    async (request) =>
      searchFlagCreators(deps.db, {
        ...(request.query.q ? { query: request.query.q } : {}),
        limit: parseWholeNumber('limit', request.query.limit, 50, 1, 10_000),
        offset: parseWholeNumber('offset', request.query.offset, 0, 0, Number.MAX_SAFE_INTEGER),
      }),
  );

  app.get(
    '/api/admin/projects/:projectId/flag-creators',
    route(can('READ'), { params: ProjectParams, ok: Type.Array(Type.Object({ id: Type.Integer(), name: Type.String() })) }),
    async (request) => listFlagCreators(deps.db, request.params.projectId),
  );

  app.get(
    '/api/admin/projects/:projectId/dependencies',
    route(can('READ'), { params: ProjectParams, ok: Type.Boolean() }),
    async (request) => projectHasDependencies(deps.db, request.params.projectId),
  );

  app.post(
    '/api/admin/projects/:projectId/archive/validate',
    route(can('READ'), {
      params: ProjectParams,
      body: StrictObject({ features: Type.Array(UrlFriendlyName, { maxItems: 1000 }) }),
      ok: Type.Object({ parentsWithChildFeatures: Type.Array(Type.String()), hasDeletedDependencies: Type.Boolean() }),
    }),
    async (request) => validateArchive(deps.db, request.params.projectId, request.body.features),
  );

  app.post(
    '/api/admin/projects/:projectId/environments/:environment/default-strategy',
    route(can('UPDATE_PROJECT', PROJECT_PARAM), {
      params: Type.Object({ projectId: UrlFriendlyName, environment: UrlFriendlyName }),
      body: CreateFeatureStrategySchema,
      ok: ProjectDefaultStrategySchema,
    }),
    async (request) =>
      act(request, (uow) =>
        setProjectDefaultStrategy(uow, { project: request.params.projectId, environment: request.params.environment }, request.body),
      ),
  );

  app.delete(
    '/api/admin/projects/:projectId/environments/:environment',
    route(can('UPDATE_PROJECT', PROJECT_PARAM), { params: Type.Object({ projectId: UrlFriendlyName, environment: UrlFriendlyName }) }),
    async (request, reply) => {
      await act(request, (uow) => removeProjectEnvironment(uow, request.params.projectId, request.params.environment));
      return reply.status(200).send();
    },
  );
};
