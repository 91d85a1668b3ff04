import { actorOf } from '../../plugins/route-access.js';
import { Type } from '@sinclair/typebox';
import {
  createSegment,
  deleteSegment,
  updateSegment,
  assertSegmentNameFree,
  getSegment,
  listSegments,
  listSegmentStrategies,
  listStrategySegments,
} from '../../../domain/segments/segments.js';
import { locateStrategy, setStrategySegmentsOnly } from '../../../domain/features/strategies.js';
import { IdParams } from '../../common.schemas.js';
import type { FastifyRequest } from 'fastify';
import { routesTagged, type RouteModule } from '../../deps.js';
import { can } from '../../plugins/access.js';
import {
  AdminSegmentSchema,
  NameSchema,
  SegmentSchema,
  SegmentsSchema,
  SegmentStrategiesSchema,
  UpdateStrategySegmentsSchema,
  UpsertSegmentSchema,
} from './segments.schemas.js';

const route = routesTagged(['Segments']);
const strategyPlace = (request: FastifyRequest) => request.body as { projectId: string; environmentId: string };
const SEGMENTS = '/api/admin/segments';

// Status codes are Unleash's (204 for update and delete): clients generated from its OpenAPI document expect them.

export const segmentRoutes: RouteModule = async (app, { deps, act }) => {
  app.get(
    `${SEGMENTS}/strategies/:strategyId`,
    route(can('READ'), {
      params: Type.Object({ strategyId: Type.String({ format: 'uuid', errorMessage: 'strategyId must be a UUID' }) }),
      ok: SegmentsSchema,
    }),
    async (request) => ({ segments: await listStrategySegments(deps.db, request.params.strategyId) }),
  );

  // The permission is asked in the project and environment the body names; the strategy is then found from its id
  // and must be in exactly those, so naming others reaches nothing.
  app.post(
    `${SEGMENTS}/strategies`,
    route(
      can(
        'UPDATE_FEATURE_STRATEGY',
        (request) => strategyPlace(request).projectId,
        (request: FastifyRequest) => strategyPlace(request).environmentId,
      ),
      {
        body: UpdateStrategySegmentsSchema,
        created: UpdateStrategySegmentsSchema,
      },
    ),
    async (request, reply) => {
      const { projectId, environmentId, strategyId, segmentIds } = request.body;
      const target = await locateStrategy(deps.db, strategyId, { project: projectId, environment: environmentId });
      const updated = await act(request, (uow) => setStrategySegmentsOnly(uow, target, strategyId, [...new Set(segmentIds)]));
      return reply.status(201).send({ projectId, environmentId, strategyId, segmentIds: updated.segments });
    },
  );

  app.get(SEGMENTS, route(can('READ'), { ok: SegmentsSchema }), async () => ({
    segments: await listSegments(deps.db),
  }));

  app.post(SEGMENTS, route(can('CREATE_SEGMENT'), { body: UpsertSegmentSchema, created: SegmentSchema }), async (request, reply) => {
    const segment = await act(request, (uow) => createSegment(uow, request.body));
    return reply.status(201).send(segment);
  });

  // Unleash's create form asks whether a name is free before creating: 204 when it is, 409 when taken.
  app.post(`${SEGMENTS}/validate`, route(can('CREATE_SEGMENT'), { body: NameSchema }), async (request, reply) => {
    await assertSegmentNameFree(deps.db, request.body.name);
    return reply.status(204).send();
  });

  app.get(`${SEGMENTS}/:id`, route(can('READ'), { params: IdParams, ok: AdminSegmentSchema }), async (request) =>
    getSegment(deps.db, Number(request.params.id)),
  );

  app.put(`${SEGMENTS}/:id`, route(can('UPDATE_SEGMENT'), { params: IdParams, body: UpsertSegmentSchema }), async (request, reply) => {
    await act(request, (uow) => updateSegment(uow, Number(request.params.id), request.body));
    return reply.status(204).send();
  });

  app.delete(`${SEGMENTS}/:id`, route(can('DELETE_SEGMENT'), { params: IdParams }), async (request, reply) => {
    await act(request, (uow) => deleteSegment(uow, Number(request.params.id)));
    return reply.status(204).send();
  });

  app.get(`${SEGMENTS}/:id/strategies`, route(can('READ'), { params: IdParams, ok: SegmentStrategiesSchema }), async (request) => ({
    strategies: await listSegmentStrategies(deps.db, actorOf(request), Number(request.params.id)),
  }));
};
