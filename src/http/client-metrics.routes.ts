import { Type } from '@sinclair/typebox';
import { recordClientMetrics } from '../domain/usage/client-metrics.js';
import { BadDataError } from '../shared/errors.js';
import { DateTime } from './common.schemas.js';
import type { RouteModule } from './deps.js';
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

export const clientMetricsSchemas = [ClientMetricsSchema];

export function assertBucketInOrder(bucket: { start: string; stop: string }): void {
  if (Date.parse(bucket.stop) < Date.parse(bucket.start)) {
    throw new BadDataError('The metrics bucket ends before it starts', [
      { path: '/body/bucket/stop', message: `stop must not be before start (got ${JSON.stringify(bucket.stop)})` },
    ]);
  }
}

export const clientMetricsRoutes: RouteModule = async (app, { deps }) => {
  app.post(
    '/api/client/metrics',
    { schema: { tags: ['Client'], body: Type.Ref(ClientMetricsSchema) }, config: { access: CLIENT } },
    async (request, reply) => {
      assertBucketInOrder(request.body.bucket);
      await recordClientMetrics(deps.db, sdkTokenOf(request), request.body, deps.clock.now());
      return reply.status(202).send();
    },
  );
};
