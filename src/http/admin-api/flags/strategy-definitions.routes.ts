import {
  createStrategyDefinition,
  deleteStrategyDefinition,
  findStrategyDefinition,
  listStrategyDefinitions,
  setStrategyDeprecated,
  updateStrategyDefinition,
} from '../../../domain/strategies/strategy-definitions.js';
import { BadDataError } from '../../../shared/errors.js';
import { NameParams } from '../../common.schemas.js';
import { routesTagged, type RouteModule } from '../../deps.js';
import { can } from '../../plugins/access.js';
import { CreateStrategySchema, StrategiesSchema, StrategyDefinitionSchema, UpdateStrategySchema } from './strategy-definitions.schemas.js';

const route = routesTagged(['Strategies']);
const STRATEGIES = '/api/admin/strategies';

/** Strategy definitions: the built-in strategies and custom ones for SDKs' own strategy implementations. */
export const strategyDefinitionRoutes: RouteModule = async (app, { deps, act }) => {
  app.get(STRATEGIES, route(can('READ'), { ok: StrategiesSchema }), async () => ({
    version: 1 as const,
    strategies: await listStrategyDefinitions(deps.db),
  }));

  app.get(`${STRATEGIES}/:name`, route(can('READ'), { params: NameParams, ok: StrategyDefinitionSchema }), async (request) =>
    findStrategyDefinition(deps.db, request.params.name),
  );

  app.post(
    STRATEGIES,
    route(can('CREATE_STRATEGY'), { body: CreateStrategySchema, created: StrategyDefinitionSchema }),
    async (request, reply) => {
      const { editable: _editable, ...input } = request.body;
      const definition = await act(request, (uow) => createStrategyDefinition(uow, input));
      return reply
        .status(201)
        .header('location', `${STRATEGIES}/${encodeURIComponent(definition.name)}`)
        .send(definition);
    },
  );

  app.put(
    `${STRATEGIES}/:name`,
    route(can('UPDATE_STRATEGY'), { params: NameParams, body: UpdateStrategySchema, ok: StrategyDefinitionSchema }),
    async (request) => {
      const { name, ...input } = request.body;
      // Unleash's form resends the name; a different one would read as a rename, which strategies do not have.
      if (name !== undefined && name !== request.params.name) {
        throw new BadDataError(`A strategy cannot be renamed (the body names "${name}", the path "${request.params.name}")`, [
          { path: '/body/name', message: `name must be ${JSON.stringify(request.params.name)} or left out` },
        ]);
      }
      return act(request, (uow) => updateStrategyDefinition(uow, request.params.name, input));
    },
  );

  app.delete(`${STRATEGIES}/:name`, route(can('DELETE_STRATEGY'), { params: NameParams }), async (request, reply) => {
    await act(request, (uow) => deleteStrategyDefinition(uow, request.params.name));
    return reply.status(200).send();
  });

  for (const [action, deprecated] of [
    ['deprecate', true],
    ['reactivate', false],
  ] as const) {
    app.post(`${STRATEGIES}/:name/${action}`, route(can('UPDATE_STRATEGY'), { params: NameParams }), async (request, reply) => {
      await act(request, (uow) => setStrategyDeprecated(uow, request.params.name, deprecated));
      return reply.status(200).send();
    });
  }
};
