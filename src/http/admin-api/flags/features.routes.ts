import { Type } from '@sinclair/typebox';
import type { Operation } from 'fast-json-patch';
import { inUnitOfWork } from '../../../db/unit-of-work.js';
import {
  changeFeatureProject,
  createFeature,
  deleteArchivedFeature,
  deleteArchivedFeatures,
  patchFeature,
  reviveFeatureByName,
  reviveFeatures,
  setFeaturesStale,
  validateFeatureName,
  updateFeature,
  getFeature,
  listProjectFeatures,
} from '../../../domain/features/features.js';
import {
  getEnvironmentVariants,
  patchedEnvironmentVariants,
  setEnvironmentVariants,
  setFeatureEnvironmentEnabled,
  setFeaturesEnvironmentEnabled,
} from '../../../domain/features/feature-environments.js';
import { listFeatureTypes, setFeatureTypeLifetime } from '../../../domain/features/feature-types.js';
import { cloneFeature } from '../../../domain/features/clone.js';
import { NotFoundError } from '../../../shared/errors.js';
import { UrlFriendlyName, ProjectParams } from '../../common.schemas.js';
import { archiveFlags } from '../../../domain/release-plans/plans.js';
import { addFeatureLink, removeFeatureLink, updateFeatureLink } from '../../../domain/features/feature-links.js';
import { routesTagged, type RouteModule } from '../../deps.js';
import {
  BatchFeaturesSchema,
  BatchStaleSchema,
  ChangeProjectSchema,
  CloneFeatureSchema,
  CreateFeatureSchema,
  FeatureEnvironmentSchema,
  FeatureLinkSchema,
  FeatureSchema,
  FeaturesSchema,
  FeatureTypeSchema,
  FeatureTypesSchema,
  UpdateFeatureTypeLifetimeSchema,
  FeatureVariantsSchema,
  PatchesSchema,
  PushVariantsSchema,
  UpdateFeatureSchema,
  ValidateFeatureSchema,
  VariantsSchema,
} from '../../features.schemas.js';
import { alsoIn, can, FLAG_PARAM, PROJECT_PARAM } from '../../plugins/access.js';
import { actorOf } from '../../plugins/route-access.js';
import { validationError } from '../../plugins/error-handler.js';
import { validateDocument } from '../../plugins/validation.js';

const route = routesTagged(['Features']);
const FeatureParams = Type.Object({ projectId: UrlFriendlyName, featureName: UrlFriendlyName });
const EnvironmentParams = Type.Object({
  projectId: UrlFriendlyName,
  featureName: UrlFriendlyName,
  environment: UrlFriendlyName,
});

const FEATURE = '/api/admin/projects/:projectId/features/:featureName';

export const featureRoutes: RouteModule = async (app, { deps, act }) => {
  app.get(
    '/api/admin/projects/:projectId/features',
    route(can('READ'), { params: ProjectParams, ok: FeaturesSchema }),
    async (request) => ({
      version: 1 as const,
      features: await listProjectFeatures(deps.db, request.params.projectId, actorOf(request)),
    }),
  );

  app.post(
    '/api/admin/projects/:projectId/features',
    route(can('CREATE_FEATURE', PROJECT_PARAM), { params: ProjectParams, body: CreateFeatureSchema, created: FeatureSchema }),
    async (request, reply) => {
      const actor = actorOf(request);
      const { projectId } = request.params;
      // Named first so that a taken name is answered at /body/name, where a form shows it; the insert still decides.
      await validateFeatureName(deps.db, request.body.name, projectId);
      await inUnitOfWork(deps, actor, (uow) => createFeature(uow, { ...request.body, project: projectId }));
      return reply.status(201).send(await getFeature(deps.db, projectId, request.body.name, actor));
    },
  );

  app.get('/api/admin/feature-types', route(can('READ'), { ok: FeatureTypesSchema }), async () => ({
    version: 1 as const,
    types: await listFeatureTypes(deps.db),
  }));

  app.put(
    '/api/admin/feature-types/:id/lifetime',
    route(can('ADMIN'), {
      params: Type.Object({ id: Type.String({ maxLength: 100 }) }),
      body: UpdateFeatureTypeLifetimeSchema,
      ok: FeatureTypeSchema,
    }),
    async (request) => act(request, (uow) => setFeatureTypeLifetime(uow, request.params.id.toLowerCase(), request.body.lifetimeDays)),
  );

  // Unleash answers 200 with no body when the name is free: a flag could be created under it.
  app.post('/api/admin/features/validate', route(can('READ'), { body: ValidateFeatureSchema }), async (request, reply) => {
    await validateFeatureName(deps.db, request.body.name, request.body.projectId ?? undefined);
    return reply.status(200).send();
  });

  app.get(FEATURE, route(can('READ'), { params: FeatureParams, ok: FeatureSchema }), async (request) =>
    getFeature(deps.db, request.params.projectId, request.params.featureName, actorOf(request)),
  );

  app.put(
    FEATURE,
    route(can('UPDATE_FEATURE', PROJECT_PARAM), { params: FeatureParams, body: UpdateFeatureSchema, ok: FeatureSchema }),
    async (request) => {
      const { projectId, featureName } = request.params;
      const actor = actorOf(request);
      await inUnitOfWork(deps, actor, (uow) => updateFeature(uow, projectId, featureName, request.body));
      return getFeature(deps.db, projectId, featureName, actor);
    },
  );

  app.patch(
    FEATURE,
    route(can('UPDATE_FEATURE', PROJECT_PARAM), { params: FeatureParams, body: PatchesSchema, ok: FeatureSchema }),
    async (request) => {
      const { projectId, featureName } = request.params;
      const actor = actorOf(request);
      await inUnitOfWork(deps, actor, (uow) => patchFeature(uow, projectId, featureName, request.body as Operation[]));
      return getFeature(deps.db, projectId, featureName, actor);
    },
  );

  app.delete(FEATURE, route(can('DELETE_FEATURE', PROJECT_PARAM), { params: FeatureParams }), async (request, reply) => {
    const { projectId, featureName } = request.params;
    await act(request, (uow) => archiveFlags(uow, projectId, [featureName]));
    return reply.status(202).send();
  });

  app.get('/api/admin/archive/features/:projectId', route(can('READ'), { params: ProjectParams, ok: FeaturesSchema }), async (request) => ({
    version: 1 as const,
    features: await listProjectFeatures(deps.db, request.params.projectId, actorOf(request), true),
  }));

  app.post(
    '/api/admin/projects/:projectId/archive',
    route(can('DELETE_FEATURE', PROJECT_PARAM), { params: ProjectParams, body: BatchFeaturesSchema }),
    async (request, reply) => {
      await act(request, (uow) => archiveFlags(uow, request.params.projectId, request.body.features));
      return reply.status(202).send();
    },
  );

  app.post(
    '/api/admin/projects/:projectId/revive',
    route(can('UPDATE_FEATURE', PROJECT_PARAM), { params: ProjectParams, body: BatchFeaturesSchema }),
    async (request, reply) => {
      await act(request, (uow) => reviveFeatures(uow, request.params.projectId, request.body.features));
      return reply.status(200).send();
    },
  );

  app.post(
    '/api/admin/archive/revive/:featureName',
    route(can('UPDATE_FEATURE', FLAG_PARAM), { params: Type.Object({ featureName: UrlFriendlyName }) }),
    async (request, reply) => {
      await act(request, (uow) => reviveFeatureByName(uow, request.params.featureName));
      return reply.status(200).send();
    },
  );

  app.delete(
    '/api/admin/archive/:featureName',
    route(can('DELETE_FEATURE', FLAG_PARAM), { params: Type.Object({ featureName: UrlFriendlyName }) }),
    async (request, reply) => {
      await act(request, (uow) => deleteArchivedFeature(uow, request.params.featureName));
      return reply.status(200).send();
    },
  );

  app.post(
    '/api/admin/projects/:projectId/delete',
    route(can('DELETE_FEATURE', PROJECT_PARAM), { params: ProjectParams, body: BatchFeaturesSchema }),
    async (request, reply) => {
      await act(request, (uow) => deleteArchivedFeatures(uow, request.params.projectId, request.body.features));
      return reply.status(200).send();
    },
  );

  app.post(
    '/api/admin/projects/:projectId/stale',
    route(can('UPDATE_FEATURE', PROJECT_PARAM), { params: ProjectParams, body: BatchStaleSchema }),
    async (request, reply) => {
      const { features, stale } = request.body;
      await act(request, (uow) => setFeaturesStale(uow, request.params.projectId, features, stale));
      return reply.status(202).send();
    },
  );

  app.post(
    `${FEATURE}/changeProject`,
    // Moving a flag in is creating one there: the target project must be visible and allow it too.
    route(
      alsoIn(can('UPDATE_FEATURE', PROJECT_PARAM), 'CREATE_FEATURE', (request) => [
        (request.body as { newProjectId: string }).newProjectId,
      ]),
      { params: FeatureParams, body: ChangeProjectSchema },
    ),
    async (request, reply) => {
      const { projectId, featureName } = request.params;
      await act(request, (uow) => changeFeatureProject(uow, projectId, featureName, request.body.newProjectId));
      return reply.status(200).send();
    },
  );

  // Unleash answers a clone with 200 and the new flag.
  app.post(
    `${FEATURE}/clone`,
    route(can('CREATE_FEATURE', PROJECT_PARAM), { params: FeatureParams, body: CloneFeatureSchema, ok: FeatureSchema }),
    async (request) => {
      const { projectId, featureName } = request.params;
      await act(request, (uow) => cloneFeature(uow, projectId, featureName, request.body));
      return getFeature(deps.db, projectId, request.body.name, actorOf(request));
    },
  );

  // Links from a flag to what concerns it, changed as its metadata is.
  const LINK_PARAMS = Type.Object({ projectId: UrlFriendlyName, featureName: UrlFriendlyName });
  const LINK_ID_PARAMS = Type.Object({
    projectId: UrlFriendlyName,
    featureName: UrlFriendlyName,
    linkId: Type.String({ minLength: 1, maxLength: 100 }),
  });
  app.post(
    `${FEATURE}/link`,
    route(can('UPDATE_FEATURE', PROJECT_PARAM), { params: LINK_PARAMS, body: FeatureLinkSchema }),
    async (request, reply) => {
      const { projectId, featureName } = request.params;
      await act(request, (uow) => addFeatureLink(uow, { project: projectId, featureName }, request.body));
      return reply.status(204).send();
    },
  );
  app.put(
    `${FEATURE}/link/:linkId`,
    route(can('UPDATE_FEATURE', PROJECT_PARAM), { params: LINK_ID_PARAMS, body: FeatureLinkSchema }),
    async (request, reply) => {
      const { projectId, featureName, linkId } = request.params;
      await act(request, (uow) => updateFeatureLink(uow, { project: projectId, featureName }, linkId, request.body));
      return reply.status(204).send();
    },
  );
  app.delete(`${FEATURE}/link/:linkId`, route(can('UPDATE_FEATURE', PROJECT_PARAM), { params: LINK_ID_PARAMS }), async (request, reply) => {
    const { projectId, featureName, linkId } = request.params;
    await act(request, (uow) => removeFeatureLink(uow, { project: projectId, featureName }, linkId));
    return reply.status(204).send();
  });

  for (const [action, enabled] of [
    ['on', true],
    ['off', false],
  ] as const) {
    app.post(
      `${FEATURE}/environments/:environment/${action}`,
      route(can('UPDATE_FEATURE_ENVIRONMENT', PROJECT_PARAM), { params: EnvironmentParams }),
      async (request, reply) => {
        const { projectId, featureName, environment } = request.params;
        await act(request, (uow) => setFeatureEnvironmentEnabled(uow, { project: projectId, featureName, environment }, enabled));
        return reply.status(200).send();
      },
    );
  }

  app.get(
    `${FEATURE}/environments/:environment`,
    route(can('READ'), { params: EnvironmentParams, ok: FeatureEnvironmentSchema }),
    async (request) => {
      const { projectId, featureName, environment } = request.params;
      const feature = await getFeature(deps.db, projectId, featureName, actorOf(request));
      const found = feature.environments.find((entry) => entry.name === environment);
      if (!found)
        throw new NotFoundError(`Flag "${featureName}" has no environment "${environment}": it is not one of project "${projectId}"`);
      return found;
    },
  );

  for (const [action, enabled] of [
    ['on', true],
    ['off', false],
  ] as const) {
    app.post(
      `/api/admin/projects/:projectId/bulk_features/environments/:environment/${action}`,
      route(can('UPDATE_FEATURE_ENVIRONMENT', PROJECT_PARAM), {
        params: Type.Object({ projectId: UrlFriendlyName, environment: UrlFriendlyName }),
        body: BatchFeaturesSchema,
      }),
      async (request, reply) => {
        const { projectId, environment } = request.params;
        await act(request, (uow) =>
          setFeaturesEnvironmentEnabled(uow, { project: projectId, environment }, request.body.features, enabled),
        );
        return reply.status(200).send();
      },
    );
  }

  const VARIANTS = `${FEATURE}/environments/:environment/variants`;
  const variantsResponse = { 200: Type.Ref(FeatureVariantsSchema) };

  app.get(
    VARIANTS,
    { schema: { tags: ['Variants'], params: EnvironmentParams, response: variantsResponse }, config: { access: can('READ') } },
    async (request) => {
      const { projectId, featureName, environment } = request.params;
      const variants = await getEnvironmentVariants(deps.db, { project: projectId, featureName, environment });
      return { version: 1 as const, variants };
    },
  );

  app.put(
    VARIANTS,
    {
      schema: { tags: ['Variants'], params: EnvironmentParams, body: Type.Ref(VariantsSchema), response: variantsResponse },
      config: { access: can('UPDATE_FEATURE_ENVIRONMENT_VARIANTS', PROJECT_PARAM) },
    },
    async (request) => {
      const { projectId, featureName, environment } = request.params;
      const variants = await act(request, (uow) =>
        setEnvironmentVariants(uow, { project: projectId, featureName, environment }, request.body),
      );
      return { version: 1 as const, variants };
    },
  );

  // The environments are in the body, so a role that may change variants in some environments only uses VARIANTS.
  app.put(
    `${FEATURE}/variants-batch`,
    {
      schema: { tags: ['Variants'], params: FeatureParams, body: Type.Ref(PushVariantsSchema), response: variantsResponse },
      config: { access: can('UPDATE_FEATURE_ENVIRONMENT_VARIANTS', PROJECT_PARAM) },
    },
    async (request) => {
      const { projectId, featureName } = request.params;
      const { variants, environments } = request.body;
      const written = await act(request, async (uow) => {
        let last: Awaited<ReturnType<typeof setEnvironmentVariants>> = [];
        for (const environment of environments)
          last = await setEnvironmentVariants(uow, { project: projectId, featureName, environment }, variants, '/body/variants');
        return last;
      });
      return { version: 1 as const, variants: written };
    },
  );

  app.patch(
    VARIANTS,
    {
      schema: { tags: ['Variants'], params: EnvironmentParams, body: Type.Ref(PatchesSchema), response: variantsResponse },
      config: { access: can('UPDATE_FEATURE_ENVIRONMENT_VARIANTS', PROJECT_PARAM) },
    },
    async (request) => {
      const { projectId, featureName, environment } = request.params;
      const target = { project: projectId, featureName, environment };
      const variants = await act(request, async (uow) => {
        const patched = await patchedEnvironmentVariants(uow, target, request.body as Operation[]);
        const problems = validateDocument(VariantsSchema, patched);
        if (problems.length > 0) throw validationError('body', problems);
        return setEnvironmentVariants(uow, target, patched);
      });
      return { version: 1 as const, variants };
    },
  );
};
