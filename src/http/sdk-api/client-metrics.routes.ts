import { Type } from '@sinclair/typebox';
import { admitReportingApplication, registerClients } from '../../domain/client-features/client-registration.js';
import { recordClientMetrics } from '../../domain/usage/client-metrics.js';
import { assertBulkReport, assertTokenEnvironment } from '../../domain/usage/sdk-report-checks.js';
import { routesTagged, type RouteModule } from '../deps.js';
import { CLIENT, FRONTEND, sdkTokenOf } from '../plugins/route-access.js';
import { BulkMetricsSchema, ClientMetricsSchema, ClientRegistrationSchema } from '../sdk.schemas.js';
import { jsonLengthOf, recordMetricsReport, registrationOf } from './sdk-reports.js';

const clientRoute = routesTagged(['Client']);
const frontendRoute = routesTagged(['Frontend API']);

/** What SDKs report: registrations and usage, from server-side and frontend SDKs. */
export const clientMetricsRoutes: RouteModule = async (app, { deps }) => {
  app.post('/api/client/register', clientRoute(CLIENT, { body: ClientRegistrationSchema }), async (request, reply) => {
    const token = sdkTokenOf(request);
    assertTokenEnvironment(token, request.body.environment, '/body/environment');
    const registration = registrationOf(request.body, token, request.ip);
    await deps.sdkReports.write('registration', jsonLengthOf(request.body), (uow) =>
      registerClients(uow, token.id, [registration], deps.newApplicationLimit),
    );
    return reply.status(202).send();
  });

  for (const base of ['/api/frontend', '/api/proxy']) {
    // Unleash answers a frontend SDK's reports with 200, a server-side SDK's with 202.
    app.post(`${base}/client/metrics`, frontendRoute(FRONTEND, { body: ClientMetricsSchema }), recordMetricsReport(deps, 200));
    // Browser SDKs register too; there is nothing to keep from them beyond the metrics they send.
    app.post(`${base}/client/register`, frontendRoute(FRONTEND, { body: ClientRegistrationSchema }), async (_request, reply) =>
      reply.status(200).send(),
    );
  }

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
      assertBulkReport(token, request.body, deps.clock.now());
      // One bucket per application and hour, as single SDKs send them.
      const buckets = new Map<
        string,
        { appName: string; start: string; stop: string; toggles: Record<string, { yes: number; no: number }> }
      >();
      for (const metric of metrics) {
        const at = new Date(metric.timestamp).toISOString();
        const key = `${metric.appName}\u0000${at.slice(0, 13)}`;
        // Flag names are keys here: a map without a prototype, where `__proto__` is a name like any other.
        const bucket = buckets.get(key) ?? { appName: metric.appName, start: at, stop: at, toggles: Object.create(null) };
        if (at < bucket.start) bucket.start = at;
        if (at > bucket.stop) bucket.stop = at;
        const counts = (bucket.toggles[metric.featureName] ??= { yes: 0, no: 0 });
        counts.yes += metric.yes;
        counts.no += metric.no;
        buckets.set(key, bucket);
      }
      // All of it or nothing, like a single SDK's report: Edge sends a refused report again.
      await deps.sdkReports.write('metrics', jsonLengthOf(request.body), async (uow) => {
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
