import { Type } from '@sinclair/typebox';
import { inUnitOfWork } from '../../../db/unit-of-work.js';
import {
  actionSetsMatching,
  actorOfActionSet,
  createActionSet,
  deleteActionSet,
  getActionSet,
  listActionSetEvents,
  listActionSets,
  listSignals,
  recordRun,
  recordSignal,
  runActionSet,
  setActionSetEnabled,
  type ActionSetOutcome,
  updateActionSet,
} from '../../../domain/signals/action-sets.js';
import {
  createSignalEndpoint,
  createSignalEndpointToken,
  deleteSignalEndpoint,
  deleteSignalEndpointToken,
  getSignalEndpoint,
  listSignalEndpoints,
  setSignalEndpointEnabled,
  updateSignalEndpoint,
} from '../../../domain/signals/signal-endpoints.js';
import { ApiError } from '../../../shared/errors.js';
import { NumericId, UrlFriendlyName, IdParams, ProjectParams } from '../../common.schemas.js';
import { routesTagged, type RouteModule } from '../../deps.js';
import { can } from '../../plugins/access.js';
import { SIGNAL_ENDPOINT, signalSourceOf } from '../../plugins/route-access.js';
import {
  ActionSetEventsSchema,
  ActionSetSchema,
  ActionSetsSchema,
  CreateActionSetSchema,
  CreateSignalEndpointSchema,
  CreateSignalEndpointTokenSchema,
  SignalEndpointSchema,
  SignalEndpointsSchema,
  SignalEndpointTokenSchema,
  SignalReceivedSchema,
  SignalsSchema,
} from './signals.schemas.js';

const ENDPOINTS = '/api/admin/signal-endpoints';
const TokenParams = Type.Object({ id: NumericId, tokenId: NumericId });
const ACTIONS = '/api/admin/projects/:projectId/actions';
const ActionSetParams = Type.Object({ projectId: UrlFriendlyName, actionSetId: NumericId });
/** What a monitoring tool may post as one signal. */
const SIGNAL_BODY_LIMIT = 64 * 1024;

/** Signal endpoints monitoring tools call, and the action sets that turn flags on and off when a signal matches. */
export const signalRoutes: RouteModule = async (app, { deps, act }) => {
  const route = routesTagged(['Signals']);
  const actionRoute = routesTagged(['Actions']);
  app.get(ENDPOINTS, route(can('ADMIN'), { ok: SignalEndpointsSchema }), async () => ({
    signalEndpoints: await listSignalEndpoints(deps.db),
  }));
  app.post(ENDPOINTS, route(can('ADMIN'), { body: CreateSignalEndpointSchema, created: SignalEndpointSchema }), async (request, reply) =>
    reply.status(201).send(await act(request, (uow) => createSignalEndpoint(uow, request.body))),
  );
  app.get(`${ENDPOINTS}/:id`, route(can('ADMIN'), { params: IdParams, ok: SignalEndpointSchema }), async (request) =>
    getSignalEndpoint(deps.db, Number(request.params.id)),
  );
  app.put(
    `${ENDPOINTS}/:id`,
    route(can('ADMIN'), { params: IdParams, body: CreateSignalEndpointSchema, ok: SignalEndpointSchema }),
    async (request) => act(request, (uow) => updateSignalEndpoint(uow, Number(request.params.id), request.body)),
  );
  for (const [state, enabled] of [
    ['on', true],
    ['off', false],
  ] as const) {
    app.post(`${ENDPOINTS}/:id/${state}`, route(can('ADMIN'), { params: IdParams, ok: SignalEndpointSchema }), async (request) =>
      act(request, (uow) => setSignalEndpointEnabled(uow, Number(request.params.id), enabled)),
    );
    app.post(
      `${ACTIONS}/:actionSetId/${state}`,
      actionRoute(can('ADMIN'), { params: ActionSetParams, ok: ActionSetSchema }),
      async (request) =>
        act(request, (uow) => setActionSetEnabled(uow, request.params.projectId, Number(request.params.actionSetId), enabled)),
    );
  }
  app.delete(`${ENDPOINTS}/:id`, route(can('ADMIN'), { params: IdParams }), async (request, reply) => {
    await act(request, (uow) => deleteSignalEndpoint(uow, Number(request.params.id)));
    return reply.status(200).send();
  });
  app.post(
    `${ENDPOINTS}/:id/tokens`,
    route(can('ADMIN'), { params: IdParams, body: CreateSignalEndpointTokenSchema, created: SignalEndpointTokenSchema }),
    async (request, reply) =>
      reply.status(201).send(await act(request, (uow) => createSignalEndpointToken(uow, Number(request.params.id), request.body.name))),
  );
  app.delete(`${ENDPOINTS}/:id/tokens/:tokenId`, route(can('ADMIN'), { params: TokenParams }), async (request, reply) => {
    await act(request, (uow) => deleteSignalEndpointToken(uow, Number(request.params.id), Number(request.params.tokenId)));
    return reply.status(200).send();
  });
  app.get(
    `${ENDPOINTS}/:id/signals`,
    route(can('ADMIN'), {
      params: IdParams,
      querystring: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })) }),
      ok: SignalsSchema,
    }),
    async (request) => {
      await getSignalEndpoint(deps.db, Number(request.params.id));
      return { signals: await listSignals(deps.db, Number(request.params.id), request.query.limit ?? 50) };
    },
  );

  app.post(
    '/api/signal-endpoint/:name',
    {
      bodyLimit: SIGNAL_BODY_LIMIT,
      ...route(SIGNAL_ENDPOINT, {
        params: Type.Object({ name: Type.String({ minLength: 1, maxLength: 100 }) }),
        body: Type.Object({}, { additionalProperties: true, maxProperties: 200 }),
        response: { 202: Type.Ref(SignalReceivedSchema) },
      }),
    },
    // Every matching action set runs in its own unit of work as its service account: one that cannot act (its
    // account lacks the permission, the flag is gone) changes nothing and is reported as failed.
    async (request, reply) => {
      const payload = request.body as Record<string, unknown>;
      const now = deps.clock.now();
      const source = signalSourceOf(request);
      const signalId = await recordSignal(deps.db, { ...source, payload }, now);
      const actionSets: ActionSetOutcome[] = [];
      for (const set of await actionSetsMatching(deps.db, source.endpointId, payload)) {
        const outcome: ActionSetOutcome = await inUnitOfWork(deps, await actorOfActionSet(deps.db, set), (uow) =>
          runActionSet(uow, set),
        ).then(
          () => ({ actionSetId: set.id, name: set.name, state: 'success' }),
          (error: unknown) => {
            if (!(error instanceof ApiError)) throw error;
            return { actionSetId: set.id, name: set.name, state: 'failed', message: error.message };
          },
        );
        await recordRun(deps.db, outcome, signalId, now);
        actionSets.push(outcome);
      }
      return reply.status(202).send({ signalId, actionSets });
    },
  );

  app.get(ACTIONS, actionRoute(can('ADMIN'), { params: ProjectParams, ok: ActionSetsSchema }), async (request) => ({
    actions: await listActionSets(deps.db, request.params.projectId),
  }));
  app.post(
    ACTIONS,
    actionRoute(can('ADMIN'), { params: ProjectParams, body: CreateActionSetSchema, created: ActionSetSchema }),
    async (request, reply) =>
      reply.status(201).send(await act(request, (uow) => createActionSet(uow, request.params.projectId, request.body))),
  );
  app.get(`${ACTIONS}/:actionSetId`, actionRoute(can('ADMIN'), { params: ActionSetParams, ok: ActionSetSchema }), async (request) =>
    getActionSet(deps.db, request.params.projectId, Number(request.params.actionSetId)),
  );
  app.put(
    `${ACTIONS}/:actionSetId`,
    actionRoute(can('ADMIN'), { params: ActionSetParams, body: CreateActionSetSchema, ok: ActionSetSchema }),
    async (request) =>
      act(request, (uow) => updateActionSet(uow, request.params.projectId, Number(request.params.actionSetId), request.body)),
  );
  app.get(
    `${ACTIONS}/:actionSetId/events`,
    actionRoute(can('ADMIN'), {
      params: ActionSetParams,
      querystring: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 50 })) }),
      ok: ActionSetEventsSchema,
    }),
    async (request) => ({
      actionSetEvents: await listActionSetEvents(
        deps.db,
        request.params.projectId,
        Number(request.params.actionSetId),
        request.query.limit ?? 50,
      ),
    }),
  );
  app.delete(`${ACTIONS}/:actionSetId`, actionRoute(can('ADMIN'), { params: ActionSetParams }), async (request, reply) => {
    await act(request, (uow) => deleteActionSet(uow, request.params.projectId, Number(request.params.actionSetId)));
    return reply.status(200).send();
  });
};
