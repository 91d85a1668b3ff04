import { Type } from '@sinclair/typebox';
import { favoriteFeature, unfavoriteFeature } from '../../../domain/features/favorites.js';
import { favoriteProject, unfavoriteProject } from '../../../domain/projects/project-favorites.js';
import { UrlFriendlyName, ProjectParams } from '../../common.schemas.js';
import { routesTagged, type RouteModule } from '../../deps.js';
import { can } from '../../plugins/access.js';

const route = routesTagged(['Favorites']);
const FeatureParams = Type.Object({ projectId: UrlFriendlyName, featureName: UrlFriendlyName });

const PROJECT_FAVORITES = '/api/admin/projects/:projectId/favorites';
const FEATURE_FAVORITES = '/api/admin/projects/:projectId/features/:featureName/favorites';

/** The calling user's favorites; anyone who can read may keep them. */
export const favoriteRoutes: RouteModule = async (app, { act }) => {
  app.post(FEATURE_FAVORITES, route(can('READ'), { params: FeatureParams }), async (request, reply) => {
    const { projectId, featureName } = request.params;
    await act(request, (uow) => favoriteFeature(uow, projectId, featureName));
    return reply.status(200).send();
  });

  app.delete(FEATURE_FAVORITES, route(can('READ'), { params: FeatureParams }), async (request, reply) => {
    const { projectId, featureName } = request.params;
    await act(request, (uow) => unfavoriteFeature(uow, projectId, featureName));
    return reply.status(200).send();
  });

  app.post(PROJECT_FAVORITES, route(can('READ'), { params: ProjectParams }), async (request, reply) => {
    await act(request, (uow) => favoriteProject(uow, request.params.projectId));
    return reply.status(200).send();
  });

  app.delete(PROJECT_FAVORITES, route(can('READ'), { params: ProjectParams }), async (request, reply) => {
    await act(request, (uow) => unfavoriteProject(uow, request.params.projectId));
    return reply.status(200).send();
  });
};
