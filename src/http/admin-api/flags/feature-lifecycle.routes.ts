import { Type } from '@sinclair/typebox';
import { completeFeature, countFlagsByLifecycleStage, getFeatureLifecycle, uncompleteFeature } from '../../../domain/features/lifecycle.js';
import { UrlFriendlyName } from '../../common.schemas.js';
import { routesTagged, type RouteModule } from '../../deps.js';
import { FeatureLifecycleCompletedSchema, FeatureLifecycleCountSchema, FeatureLifecycleSchema } from './feature-lifecycle.schemas.js';
import { can, PROJECT_PARAM } from '../../plugins/access.js';

const route = routesTagged(['Lifecycle']);
const FeatureParams = Type.Object({ projectId: UrlFriendlyName, featureName: UrlFriendlyName });

const LIFECYCLE = '/api/admin/projects/:projectId/features/:featureName/lifecycle';

export const featureLifecycleRoutes: RouteModule = async (app, { deps, act }) => {
  app.get('/api/admin/lifecycle/count', route(can('READ'), { ok: FeatureLifecycleCountSchema }), async () =>
    countFlagsByLifecycleStage(deps.db),
  );

  app.get(LIFECYCLE, route(can('READ'), { params: FeatureParams, ok: FeatureLifecycleSchema }), async (request) =>
    getFeatureLifecycle(deps.db, request.params.projectId, request.params.featureName),
  );

  app.post(
    `${LIFECYCLE}/complete`,
    route(can('UPDATE_FEATURE', PROJECT_PARAM), { params: FeatureParams, body: FeatureLifecycleCompletedSchema }),
    async (request, reply) => {
      const { projectId, featureName } = request.params;
      await act(request, (uow) => completeFeature(uow, projectId, featureName, request.body));
      return reply.status(200).send();
    },
  );

  app.post(`${LIFECYCLE}/uncomplete`, route(can('UPDATE_FEATURE', PROJECT_PARAM), { params: FeatureParams }), async (request, reply) => {
    const { projectId, featureName } = request.params;
    await act(request, (uow) => uncompleteFeature(uow, projectId, featureName));
    return reply.status(200).send();
  });
};
