import { Type } from '@sinclair/typebox';
import { inUnitOfWork } from '../db/unit-of-work.js';
import { createSegment, deleteSegment, updateSegment } from '../domain/segments/segments.commands.js';
import { assertSegmentNameFree, getSegment, listSegments, listSegmentStrategies } from '../domain/segments/segments.queries.js';
import { NumericId } from './common.schemas.js';
import type { RouteModule } from './deps.js';
import { actorOf, can } from './plugins/access.js';
import {
  AdminSegmentSchema,
  NameSchema,
  SegmentSchema,
  SegmentsSchema,
  SegmentStrategiesSchema,
  UpsertSegmentSchema,
} from './segments.schemas.js';

const tags = ['Segments'];
const SegmentParams = Type.Object({ id: NumericId });
const SEGMENTS = '/api/admin/segments';

// Status codes are Unleash's (204 for update and delete): clients generated from its OpenAPI document expect them.

export const segmentRoutes: RouteModule = async (app, { deps }) => {
  app.get(SEGMENTS, { schema: { tags, response: { 200: Type.Ref(SegmentsSchema) } }, config: { access: can('READ') } }, async () => ({
    segments: await listSegments(deps.db),
  }));

  app.post(
    SEGMENTS,
    {
      schema: { tags, body: Type.Ref(UpsertSegmentSchema), response: { 201: Type.Ref(SegmentSchema) } },
      config: { access: can('CREATE_SEGMENT') },
    },
    async (request, reply) => {
      const segment = await inUnitOfWork(deps, actorOf(request), (uow) => createSegment(uow, request.body));
      return reply.status(201).send(segment);
    },
  );

  // Unleash's create form asks whether a name is free before creating: 204 when it is, 409 when taken.
  app.post(
    `${SEGMENTS}/validate`,
    { schema: { tags, body: Type.Ref(NameSchema) }, config: { access: can('CREATE_SEGMENT') } },
    async (request, reply) => {
      await assertSegmentNameFree(deps.db, request.body.name);
      return reply.status(204).send();
    },
  );

  app.get(
    `${SEGMENTS}/:id`,
    {
      schema: { tags, params: SegmentParams, response: { 200: Type.Ref(AdminSegmentSchema) } },
      config: { access: can('READ') },
    },
    async (request) => getSegment(deps.db, Number(request.params.id)),
  );

  app.put(
    `${SEGMENTS}/:id`,
    {
      schema: { tags, params: SegmentParams, body: Type.Ref(UpsertSegmentSchema) },
      config: { access: can('UPDATE_SEGMENT') },
    },
    async (request, reply) => {
      await inUnitOfWork(deps, actorOf(request), (uow) => updateSegment(uow, Number(request.params.id), request.body));
      return reply.status(204).send();
    },
  );

  app.delete(
    `${SEGMENTS}/:id`,
    { schema: { tags, params: SegmentParams }, config: { access: can('DELETE_SEGMENT') } },
    async (request, reply) => {
      await inUnitOfWork(deps, actorOf(request), (uow) => deleteSegment(uow, Number(request.params.id)));
      return reply.status(204).send();
    },
  );

  app.get(
    `${SEGMENTS}/:id/strategies`,
    {
      schema: { tags, params: SegmentParams, response: { 200: Type.Ref(SegmentStrategiesSchema) } },
      config: { access: can('READ') },
    },
    async (request) => ({ strategies: await listSegmentStrategies(deps.db, Number(request.params.id)) }),
  );
};
