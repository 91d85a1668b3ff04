import { Type } from '@sinclair/typebox';
import { inUnitOfWork } from '../db/unit-of-work.js';
import { SYSTEM_ACTOR } from '../domain/access/actor.js';
import { admitReportingApplication, registerClients } from '../domain/client-features/client-registration.js';
import { assertReportTime, recordClientMetrics } from '../domain/usage/client-metrics.js';
import type { RouteModule } from './deps.js';
import { CLIENT, sdkTokenOf } from './plugins/access.js';
import { BulkMetricsSchema, ClientMetricsSchema } from './sdk.schemas.js';
import { assertTokenEnvironment, recordMetricsReport, registrationOf } from './sdk-reports.js';

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
      for (const [i, application] of applications.entries()) {
        assertTokenEnvironment(token, application.environment, `/body/applications/${i}/environment`);
      }
      const now = deps.clock.now();
      for (const [i, metric] of metrics.entries()) {
        assertTokenEnvironment(token, metric.environment, `/body/metrics/${i}/environment`);
        assertReportTime(metric.timestamp, now, `/body/metrics/${i}/timestamp`);
      }
      // One bucket per application and hour, as single SDKs send them.
      const buckets = new Map<
        string,
        { appName: string; start: string; stop: string; toggles: Record<string, { yes: number; no: number }> }
      >();
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
      // All of it or nothing, like a single SDK's report: Edge sends a refused report again.
      await inUnitOfWork(deps, SYSTEM_ACTOR, async (uow) => {
        const registrations = applications.map((application) => registrationOf(application, token, request.ip));
        await registerClients(uow, token.id, registrations, deps.newApplicationLimit);
        for (const { appName, ...bucket } of buckets.values()) {
          const reporter = { appName, instanceId: 'default', environment: token.environment };
          await admitReportingApplication(uow, token.id, reporter, deps.newApplicationLimit);
          await recordClientMetrics(uow.tx, token, { appName, bucket }, uow.now);
        }
      });
      return reply.status(202).send();
    },
  );
};
