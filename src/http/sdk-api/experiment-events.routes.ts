import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { IngestScope } from '../../domain/experiments/ingest.js';
import { StrictObject } from '../common.schemas.js';
import { routesTagged, type RouteModule } from '../deps.js';
import { CLIENT, FRONTEND, sdkTokenOf } from '../plugins/route-access.js';

/** The most items one batch carries, and the most fields a context of one has: what one request may ask Vexil to do. */
const MAX_BATCH = 1000;
const Context = Type.Object({}, { additionalProperties: true, maxProperties: 50, errorMessage: 'a context has at most 50 fields' });
const Timestamp = Type.String({ maxLength: 40 });

const ExposuresSchema = StrictObject(
  {
    exposures: Type.Array(
      StrictObject({
        featureName: Type.String({ minLength: 1, maxLength: 255 }),
        variant: Type.Optional(Type.String({ maxLength: 255 })),
        context: Context,
        timestamp: Type.Optional(Timestamp),
      }),
      { maxItems: MAX_BATCH, errorMessage: `a batch has at most ${MAX_BATCH} exposures` },
    ),
  },
  { $id: 'experimentExposuresSchema' },
);

const TrackedEventsSchema = StrictObject(
  {
    events: Type.Array(
      StrictObject({
        event: Type.String({ minLength: 1, maxLength: 100 }),
        context: Type.Optional(Context),
        targetingKey: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
        value: Type.Optional(Type.Number({ minimum: -1e15, maximum: 1e15, errorMessage: 'value is a number of at most 1e15 either way' })),
        timestamp: Type.Optional(Timestamp),
      }),
      { maxItems: MAX_BATCH, errorMessage: `a batch has at most ${MAX_BATCH} events` },
    ),
  },
  { $id: 'trackedEventsSchema' },
);

const RunningExperimentsSchema = Type.Object(
  {
    experiments: Type.Array(
      Type.Object({ project: Type.String(), featureName: Type.String(), strategyId: Type.String(), stickiness: Type.String() }),
    ),
  },
  { $id: 'runningExperimentsSchema' },
);

const IngestReportSchema = Type.Object(
  { accepted: Type.Integer(), dropped: Type.Record(Type.String(), Type.Integer()) },
  { $id: 'experimentIngestReportSchema' },
);

/** A batch is at most 1,000 items of a few hundred bytes: 1 MiB is room enough, and the most a request may send. */
const BODY_LIMIT = 1024 * 1024;

/**
 * What SDKs send for experiments: exposures from SDKs that evaluate locally, and tracked events (OpenFeature's
 * `track()`), from server-side (client token) and frontend SDKs (frontend token).
 */
export const experimentEventRoutes: RouteModule = async (app, { deps }) => {
  const scopeOf = (request: FastifyRequest): IngestScope => {
    const token = sdkTokenOf(request);
    return { environment: token.environment, projects: token.projects, tokenKey: `${token.type}:${token.id}` };
  };

  // Which flags are in a running experiment: what an edge forwards assignments for, and what OpenFeature's exposure
  // hook sends exposures for.
  for (const [path, access, tag] of [
    ['/api/client/experiments', CLIENT, 'Client'],
    ['/api/frontend/experiments', FRONTEND, 'Frontend API'],
  ] as const) {
    app.get(path, routesTagged([tag])(access, { ok: RunningExperimentsSchema }), async (request) => {
      const token = sdkTokenOf(request);
      return { experiments: await deps.experimentIngest.runningIn({ environment: token.environment, projects: token.projects }) };
    });
  }

  for (const [base, access, tag] of [
    ['/api/client', CLIENT, 'Client'],
    ['/api/frontend', FRONTEND, 'Frontend API'],
  ] as const) {
    const route = routesTagged([tag]);
    app.post(
      `${base}/exposures`,
      { ...route(access, { body: ExposuresSchema, response: { 202: Type.Ref(IngestReportSchema) } }), bodyLimit: BODY_LIMIT },
      async (request, reply) => {
        const scope = scopeOf(request);
        const token = sdkTokenOf(request);
        const { configuration } = await deps.clientFeatures.snapshot({ environment: token.environment, projects: token.projects });
        return reply.status(202).send(await deps.experimentIngest.recordExposures(scope, configuration, request.body.exposures));
      },
    );
    app.post(
      `${base}/track`,
      { ...route(access, { body: TrackedEventsSchema, response: { 202: Type.Ref(IngestReportSchema) } }), bodyLimit: BODY_LIMIT },
      async (request, reply) => reply.status(202).send(await deps.experimentIngest.track(scopeOf(request), request.body.events)),
    );
  }
};

export const experimentEventSchemas = [ExposuresSchema, TrackedEventsSchema, IngestReportSchema, RunningExperimentsSchema];
