import { Type } from '@sinclair/typebox';
import type { Operation } from 'fast-json-patch';
import { validateConstraint } from '../../../domain/features/constraints.js';
import { applyPatch } from '../../../domain/features/features.js';
import { assertProjectEnvironment, findFeature } from '../../../domain/features/feature-lookup.js';
import { loadStrategies } from '../../../domain/features/feature-views.js';
import {
  addStrategy,
  deleteStrategy,
  getStrategy,
  setStrategySortOrder,
  updateStrategy,
  type StrategyInput,
  type StrategyTarget,
} from '../../../domain/features/strategies.js';
import { UrlFriendlyName } from '../../common.schemas.js';
import { routesTagged, type RouteModule } from '../../deps.js';
import {
  ConstraintSchema,
  CreateFeatureStrategySchema,
  FeatureStrategySchema,
  PatchesSchema,
  SetStrategySortOrderSchema,
  UpdateFeatureStrategySchema,
} from '../../features.schemas.js';
import { can, PROJECT_PARAM } from '../../plugins/access.js';
import { validationError } from '../../plugins/error-handler.js';
import { validateDocument } from '../../plugins/validation.js';

const route = routesTagged(['Strategies']);
const EnvironmentParams = Type.Object({
  projectId: UrlFriendlyName,
  featureName: UrlFriendlyName,
  environment: UrlFriendlyName,
});
const StrategyParams = Type.Object({
  projectId: UrlFriendlyName,
  featureName: UrlFriendlyName,
  environment: UrlFriendlyName,
  strategyId: Type.String({ format: 'uuid', errorMessage: 'strategyId must be a UUID' }),
});

const STRATEGIES = '/api/admin/projects/:projectId/features/:featureName/environments/:environment/strategies';

function targetOf(params: { projectId: string; featureName: string; environment: string }): StrategyTarget {
  return { project: params.projectId, featureName: params.featureName, environment: params.environment };
}

/** A strategy as a create/update body: what a JSON Patch of a strategy is applied to. */
function asInput(strategy: Awaited<ReturnType<typeof getStrategy>>): StrategyInput {
  const { id: _id, featureName: _featureName, ...input } = strategy;
  return input;
}

export const strategyRoutes: RouteModule = async (app, { deps, act }) => {
  // Whether a strategy would take this constraint, asked before saving it (Unleash answers 204 when it would).
  app.post('/api/admin/constraints/validate', route(can('READ'), { body: ConstraintSchema }), async (request, reply) => {
    validateConstraint(request.body, '/body');
    return reply.status(204).send();
  });

  app.get(
    STRATEGIES,
    route(can('READ'), { params: EnvironmentParams, response: { 200: Type.Array(Type.Ref(FeatureStrategySchema)) } }),
    async (request) => {
      const target = targetOf(request.params);
      await findFeature(deps.db, target.project, target.featureName);
      await assertProjectEnvironment(deps.db, target.project, target.environment);
      const strategies = await loadStrategies(deps.db, [target.featureName]);
      return strategies
        .filter((strategy) => strategy.environment === target.environment)
        .map(({ environment: _environment, ...strategy }) => strategy);
    },
  );

  app.post(
    STRATEGIES,
    route(can('CREATE_FEATURE_STRATEGY', PROJECT_PARAM), {
      params: EnvironmentParams,
      body: CreateFeatureStrategySchema,
      ok: FeatureStrategySchema,
    }),
    async (request) => act(request, (uow) => addStrategy(uow, targetOf(request.params), request.body)),
  );

  app.post(
    `${STRATEGIES}/set-sort-order`,
    route(can('UPDATE_FEATURE_STRATEGY', PROJECT_PARAM), { params: EnvironmentParams, body: SetStrategySortOrderSchema }),
    async (request, reply) => {
      await act(request, (uow) => setStrategySortOrder(uow, targetOf(request.params), request.body));
      return reply.status(200).send();
    },
  );

  app.get(`${STRATEGIES}/:strategyId`, route(can('READ'), { params: StrategyParams, ok: FeatureStrategySchema }), async (request) => {
    const target = targetOf(request.params);
    await findFeature(deps.db, target.project, target.featureName);
    return getStrategy(deps.db, target, request.params.strategyId);
  });

  app.put(
    `${STRATEGIES}/:strategyId`,
    route(can('UPDATE_FEATURE_STRATEGY', PROJECT_PARAM), {
      params: StrategyParams,
      body: UpdateFeatureStrategySchema,
      ok: FeatureStrategySchema,
    }),
    async (request) => {
      const { id: _id, featureName: _featureName, ...input } = request.body;
      return act(request, (uow) => updateStrategy(uow, targetOf(request.params), request.params.strategyId, input));
    },
  );

  app.patch(
    `${STRATEGIES}/:strategyId`,
    route(can('UPDATE_FEATURE_STRATEGY', PROJECT_PARAM), { params: StrategyParams, body: PatchesSchema, ok: FeatureStrategySchema }),
    async (request) => {
      const target = targetOf(request.params);
      return act(request, async (uow) => {
        const current = await getStrategy(uow.tx, target, request.params.strategyId);
        const patched = applyPatch(asInput(current), request.body as Operation[]);
        const problems = validateDocument(CreateFeatureStrategySchema, patched);
        if (problems.length > 0) throw validationError('body', problems);
        return updateStrategy(uow, target, request.params.strategyId, patched);
      });
    },
  );

  app.delete(
    `${STRATEGIES}/:strategyId`,
    route(can('DELETE_FEATURE_STRATEGY', PROJECT_PARAM), { params: StrategyParams }),
    async (request, reply) => {
      await act(request, (uow) => deleteStrategy(uow, targetOf(request.params), request.params.strategyId));
      return reply.status(200).send();
    },
  );
};
