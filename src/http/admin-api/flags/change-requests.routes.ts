import { Type } from '@sinclair/typebox';
import { updateChangeRequestConfig } from '../../../domain/change-requests/change-request-config.js';
import { changeChangeRequestState } from '../../../domain/change-requests/change-request-states.js';
import {
  addChanges,
  addComment,
  discardChange,
  discardChangeRequest,
  editChange,
  updateTitle,
} from '../../../domain/change-requests/change-request-contents.js';
import {
  getChangeRequest,
  getChangeRequestConfig,
  listChangeRequests,
  listPendingChangeRequests,
  openChangeRequestsOf,
  listPendingChangeRequestsForFeature,
} from '../../../domain/change-requests/change-request-views.js';
import { parseWholeNumber } from '../../../shared/filters.js';
import {
  ChangeRequestAddCommentSchema,
  ChangeRequestConfigSchema,
  ChangeRequestCreateSchema,
  ChangeRequestOneOrManyCreateSchema,
  ChangeRequestSchema,
  ChangeRequestsSchema,
  ChangeRequestStateSchema,
  ChangeRequestUpdateTitleSchema,
  OpenChangeRequestsSchema,
  UpdateChangeRequestEnvironmentConfigSchema,
} from './change-requests.schemas.js';
import { NumericId, UrlFriendlyName, ProjectParams } from '../../common.schemas.js';
import { routesTagged, type RouteModule } from '../../deps.js';
import { can, PROJECT_PARAM } from '../../plugins/access.js';
import { actorOf } from '../../plugins/route-access.js';

const route = routesTagged(['Change Requests']);
const PROJECT = '/api/admin/projects/:projectId';
const CHANGE_REQUEST = `${PROJECT}/change-requests/:id`;
const EnvironmentParams = Type.Object({ projectId: UrlFriendlyName, environment: UrlFriendlyName });
const ChangeRequestParams = Type.Object({ projectId: UrlFriendlyName, id: NumericId });
const ChangeParams = Type.Object({ projectId: UrlFriendlyName, id: NumericId, changeId: NumericId });
const one = { 200: Type.Ref(ChangeRequestSchema) };
const many = { 200: Type.Ref(ChangeRequestsSchema) };

/**
 * Change requests on Unleash Enterprise's paths. Proposing a change needs the permission of its direct route
 * as well (checked per change); a state change needs the permission of the state asked for (checked by the
 * command, since it depends on the body).
 */
export const changeRequestRoutes: RouteModule = async (app, { deps, act }) => {
  app.get(
    `${PROJECT}/change-requests/config`,
    route(can('READ'), { params: ProjectParams, ok: ChangeRequestConfigSchema }),
    async (request) => getChangeRequestConfig(deps.db, request.params.projectId),
  );

  app.put(
    `${PROJECT}/environments/:environment/change-requests/config`,
    route(can('UPDATE_CHANGE_REQUEST_CONFIG', PROJECT_PARAM), {
      params: EnvironmentParams,
      body: UpdateChangeRequestEnvironmentConfigSchema,
    }),
    async (request, reply) => {
      const { projectId, environment } = request.params;
      await act(request, (uow) => updateChangeRequestConfig(uow, projectId, environment, request.body));
      return reply.status(204).send();
    },
  );

  app.post(
    `${PROJECT}/environments/:environment/change-requests`,
    route(can('UPDATE_FEATURE', PROJECT_PARAM), { params: EnvironmentParams, body: ChangeRequestOneOrManyCreateSchema, response: one }),
    async (request) => {
      const { projectId, environment } = request.params;
      const body = request.body;
      const changes = Array.isArray(body) ? body : [body];
      const pathOf = (index: number) => (Array.isArray(body) ? `/body/${index}` : '/body');
      const id = await act(request, (uow) => addChanges(uow, { project: projectId, environment }, changes, pathOf));
      return getChangeRequest(deps.db, projectId, id);
    },
  );

  app.get('/api/admin/change-requests/open', route(can('READ'), { ok: OpenChangeRequestsSchema }), async (request) =>
    openChangeRequestsOf(deps.db, actorOf(request)),
  );

  app.get(`${PROJECT}/change-requests/pending`, route(can('READ'), { params: ProjectParams, response: many }), async (request) =>
    listPendingChangeRequests(deps.db, request.params.projectId, actorOf(request)),
  );

  app.get(
    `${PROJECT}/change-requests/pending/:featureName`,
    route(can('READ'), { params: Type.Object({ projectId: UrlFriendlyName, featureName: UrlFriendlyName }), response: many }),
    async (request) => listPendingChangeRequestsForFeature(deps.db, request.params.projectId, request.params.featureName),
  );

  app.get(
    `${PROJECT}/change-requests`,
    route(can('READ'), {
      params: ProjectParams,
      querystring: Type.Object({
        limit: Type.Optional(Type.String({ description: 'Page size, 1 to 1000; default 50' })),
        offset: Type.Optional(Type.String({ description: 'Change requests to skip; default 0' })),
      }),
      response: many,
    }),
    async (request) =>
      listChangeRequests(deps.db, request.params.projectId, {
        limit: parseWholeNumber('limit', request.query.limit, 50, 1, 1000),
        offset: parseWholeNumber('offset', request.query.offset, 0, 0, Number.MAX_SAFE_INTEGER),
      }),
  );

  app.get(CHANGE_REQUEST, route(can('READ'), { params: ChangeRequestParams, response: one }), async (request) =>
    getChangeRequest(deps.db, request.params.projectId, Number(request.params.id)),
  );

  app.delete(CHANGE_REQUEST, route(can('UPDATE_FEATURE', PROJECT_PARAM), { params: ChangeRequestParams }), async (request, reply) => {
    const { projectId, id } = request.params;
    await act(request, (uow) => discardChangeRequest(uow, projectId, Number(id)));
    return reply.status(200).send();
  });

  app.put(
    `${CHANGE_REQUEST}/changes/:changeId`,
    route(can('UPDATE_FEATURE', PROJECT_PARAM), { params: ChangeParams, body: ChangeRequestCreateSchema, response: one }),
    async (request) => {
      const { projectId, id, changeId } = request.params;
      await act(request, (uow) => editChange(uow, projectId, Number(id), Number(changeId), request.body));
      return getChangeRequest(deps.db, projectId, Number(id));
    },
  );

  app.delete(
    `${CHANGE_REQUEST}/changes/:changeId`,
    route(can('UPDATE_FEATURE', PROJECT_PARAM), { params: ChangeParams }),
    async (request, reply) => {
      const { projectId, id, changeId } = request.params;
      await act(request, (uow) => discardChange(uow, projectId, Number(id), Number(changeId)));
      return reply.status(200).send();
    },
  );

  app.put(
    `${CHANGE_REQUEST}/title`,
    route(can('UPDATE_FEATURE', PROJECT_PARAM), { params: ChangeRequestParams, body: ChangeRequestUpdateTitleSchema }),
    async (request, reply) => {
      const { projectId, id } = request.params;
      await act(request, (uow) => updateTitle(uow, projectId, Number(id), request.body.title));
      return reply.status(204).send();
    },
  );

  app.post(
    `${CHANGE_REQUEST}/comments`,
    route(can('READ'), { params: ChangeRequestParams, body: ChangeRequestAddCommentSchema }),
    async (request, reply) => {
      const { projectId, id } = request.params;
      await act(request, (uow) => addComment(uow, projectId, Number(id), request.body.text));
      return reply.status(200).send();
    },
  );

  app.put(
    `${CHANGE_REQUEST}/state`,
    route(can('READ'), { params: ChangeRequestParams, body: ChangeRequestStateSchema, response: one }),
    async (request) => {
      const { projectId } = request.params;
      const id = Number(request.params.id);
      // Applying runs the changes' commands; the unit of work says which request they belong to.
      const options = request.body.state === 'Applied' ? { changeRequestId: id } : {};
      await act(request, (uow) => changeChangeRequestState(uow, projectId, id, request.body), options);
      return getChangeRequest(deps.db, projectId, id);
    },
  );
};
