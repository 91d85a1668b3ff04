import { Type } from '@sinclair/typebox';
import {
  addDependency,
  removeAllDependencies,
  removeDependency,
  listParentVariants,
  listPossibleParents,
} from '../../../domain/features/dependencies.js';
import { UrlFriendlyName } from '../../common.schemas.js';
import { routesTagged, type RouteModule } from '../../deps.js';
import { CreateDependentFeatureSchema, ParentFeatureOptionsSchema, ParentVariantOptionsSchema } from './feature-dependencies.schemas.js';
import { can, PROJECT_PARAM } from '../../plugins/access.js';

const route = routesTagged(['Dependencies']);
const FeatureParams = Type.Object({ projectId: UrlFriendlyName, featureName: UrlFriendlyName });
const DependencyParams = Type.Object({ projectId: UrlFriendlyName, featureName: UrlFriendlyName, parent: UrlFriendlyName });

const FEATURE = '/api/admin/projects/:projectId/features/:featureName';

/** Dependencies of a child flag on parent flags, on Unleash's paths; `:featureName` is the child. */
export const featureDependencyRoutes: RouteModule = async (app, { deps, act }) => {
  app.post(
    `${FEATURE}/dependencies`,
    route(can('UPDATE_FEATURE_DEPENDENCY', PROJECT_PARAM), { params: FeatureParams, body: CreateDependentFeatureSchema }),
    async (request, reply) => {
      const { projectId, featureName } = request.params;
      await act(request, (uow) => addDependency(uow, projectId, featureName, request.body));
      return reply.status(200).send();
    },
  );

  app.delete(
    `${FEATURE}/dependencies/:parent`,
    route(can('UPDATE_FEATURE_DEPENDENCY', PROJECT_PARAM), { params: DependencyParams }),
    async (request, reply) => {
      const { projectId, featureName, parent } = request.params;
      await act(request, (uow) => removeDependency(uow, projectId, featureName, parent));
      return reply.status(200).send();
    },
  );

  app.delete(
    `${FEATURE}/dependencies`,
    route(can('UPDATE_FEATURE_DEPENDENCY', PROJECT_PARAM), { params: FeatureParams }),
    async (request, reply) => {
      const { projectId, featureName } = request.params;
      await act(request, (uow) => removeAllDependencies(uow, projectId, featureName));
      return reply.status(200).send();
    },
  );

  app.get(`${FEATURE}/parents`, route(can('READ'), { params: FeatureParams, ok: ParentFeatureOptionsSchema }), async (request) =>
    listPossibleParents(deps.db, request.params.projectId, request.params.featureName),
  );

  app.get(`${FEATURE}/parent-variants`, route(can('READ'), { params: FeatureParams, ok: ParentVariantOptionsSchema }), async (request) =>
    listParentVariants(deps.db, request.params.projectId, request.params.featureName),
  );
};
