import { Type, type Static } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { inUnitOfWork } from '../db/unit-of-work.js';
import { SYSTEM_ACTOR } from '../domain/access/actor.js';
import { registerClient } from '../domain/client-features/client-registration.js';
import { recordClientMetrics } from '../domain/usage/client-metrics.js';
import { BadDataError } from '../shared/errors.js';
import { assertTokenEnvironment, ClientRegistrationSchema, registrationOf } from './client-api.routes.js';
import { DateTime } from './common.schemas.js';
import type { RouteDeps, RouteModule } from './deps.js';
import { CLIENT, sdkTokenOf } from './plugins/access.js';

const Count = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER });

/**
 * SDKs send more than Vexil reads (platform, versions, connection ids), so unknown properties are accepted
 * and ignored here, unlike on the admin API: rejecting them would break every Unleash SDK.
 */
export const ClientMetricsSchema = Type.Object(
  {
    appName: Type.String({ minLength: 1, maxLength: 255 }),
    instanceId: Type.Optional(Type.String({ maxLength: 255 })),
    environment: Type.Optional(Type.String()),
    bucket: Type.Object({
      start: DateTime,
      stop: DateTime,
      toggles: Type.Record(
        Type.String({ minLength: 1, maxLength: 100 }),
        Type.Object({ yes: Count, no: Count, variants: Type.Optional(Type.Record(Type.String(), Count)) }),
        { maxProperties: 10_000 },
      ),
    }),
  },
  { $id: 'clientMetricsSchema' },
);

/** What Unleash Edge forwards: registrations and per-flag counts of many SDKs at once. */
export const BulkMetricsSchema = Type.Object(
  {
    applications: Type.Optional(Type.Array(Type.Ref(ClientRegistrationSchema), { maxItems: 1000 })),
    metrics: Type.Array(
      Type.Object({
        featureName: Type.String({ minLength: 1, maxLength: 100 }),
        appName: Type.String({ minLength: 1, maxLength: 255 }),
        environment: Type.String({ minLength: 1, maxLength: 100 }),
        timestamp: DateTime,
        yes: Count,
        no: Count,
        variants: Type.Optional(Type.Record(Type.String(), Count)),
      }),
      { maxItems: 10_000 },
    ),
  },
  { $id: 'bulkMetricsSchema' },
);

export const clientMetricsSchemas = [ClientMetricsSchema, BulkMetricsSchema];

/**
 * The handler of one SDK's metrics report, for server-side (client token) and frontend (frontend token) SDKs
 * alike: the token's environment and projects decide where the counts go.
 */
export function recordMetricsReport(deps: Pick<RouteDeps, 'db' | 'clock'>) {
  return async (request: FastifyRequest<{ Body: Static<typeof ClientMetricsSchema> }>, reply: FastifyReply) => {
    const { bucket } = request.body;
    if (Date.parse(bucket.stop) < Date.parse(bucket.start)) {
      throw new BadDataError('The metrics bucket ends before it starts', [
        { path: '/body/bucket/stop', message: `stop must not be before start (got ${JSON.stringify(bucket.stop)})` },
      ]);
    }
    await recordClientMetrics(deps.db, sdkTokenOf(request), request.body, deps.clock.now());
    return reply.status(202).send();
  };
}

export const clientMetricsRoutes: RouteModule = async (app, { deps }) => {
  app.post(
    '/api/client/metrics',
    { schema: { tags: ['Client'], body: Type.Ref(ClientMetricsSchema) }, config: { access: CLIENT } },
    recordMetricsReport(deps),
  );

  app.post(
    '/api/client/metrics/bulk',
    { schema: { tags: ['Client'], body: Type.Ref(BulkMetricsSchema) }, config: { access: CLIENT } },
    async (request, reply) => {
      const token = sdkTokenOf(request);
      const { applications = [], metrics } = request.body;
      applications.forEach((application, i) => assertTokenEnvironment(token, application.environment, `/body/applications/${i}/environment`));
      metrics.forEach((metric, i) => assertTokenEnvironment(token, metric.environment, `/body/metrics/${i}/environment`));
      if (applications.length > 0) {
        await inUnitOfWork(deps, SYSTEM_ACTOR, async (uow) => {
          for (const application of applications) {
            await registerClient(uow, registrationOf(application, token, request.ip));
          }
        });
      }
      // One bucket per application and hour, as single SDKs send them.
      const buckets = new Map<string, { appName: string; start: string; stop: string; toggles: Record<string, { yes: number; no: number }> }>();
      for (const metric of metrics) {
        const at = new Date(metric.timestamp).toISOString();
        const key = `${metric.appName}\u0000${at.slice(0, 13)}`;
        const bucket = buckets.get(key) ?? { appName: metric.appName, start: at, stop: at, toggles: {} };
        if (at < bucket.start) bucket.start = at;
        if (at > bucket.stop) bucket.stop = at;
        const counts = (bucket.toggles[metric.featureName] ??= { yes: 0, no: 0 });
        counts.yes += metric.yes;
        counts.no += metric.no;
        buckets.set(key, bucket);
      }
      for (const { appName, ...bucket } of buckets.values()) {
        await recordClientMetrics(deps.db, token, { appName, bucket }, deps.clock.now());
      }
      return reply.status(202).send();
    },
  );
};
