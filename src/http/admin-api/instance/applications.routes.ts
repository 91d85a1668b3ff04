import { actorOf } from '../../plugins/route-access.js';
import { Type } from '@sinclair/typebox';
import { boundedRead } from '../../../db/bounded-read.js';
import { getApplication, listApplications } from '../../../domain/client-features/applications.js';
import { deleteApplication } from '../../../domain/client-features/client-registration.js';
import {
  applicationOverview,
  describeApplication,
  outdatedSdks,
  projectApplications,
  recentEnvironmentInstances,
} from '../../../domain/client-features/application-overview.js';
import { flagUsageOverTime, flagUsageSummary, listUnknownFlags } from '../../../domain/usage/usage-over-time.js';
import { NotFoundError } from '../../../shared/errors.js';
import { ProjectParams, UrlFriendlyName } from '../../common.schemas.js';
import { routesTagged, type RouteModule } from '../../deps.js';
import {
  ApplicationEnvironmentInstancesSchema,
  ApplicationOverviewSchema,
  ApplicationSchema,
  ApplicationsQuerySchema,
  CreateApplicationSchema,
  OutdatedSdksSchema,
  ProjectApplicationsQuerySchema,
  ProjectApplicationsSchema,
  ApplicationsSchema,
  FeatureUsageOverTimeSchema,
  FeatureUsageSummarySchema,
  UnknownFlagsSchema,
} from '../../sdk.schemas.js';
import { readBoundsOf } from '../../read-bounds.js';
import { can, FLAG_NAME_PARAM } from '../../plugins/access.js';

const route = routesTagged(['Metrics']);
const AppName = Type.String({ minLength: 1, maxLength: 255 });

/** Applications as SDKs registered them (`POST /api/client/register`), by name, paged and searchable. */
export const applicationRoutes: RouteModule = async (app, { deps, act }) => {
  app.get(
    '/api/admin/metrics/applications',
    route(can('READ'), { querystring: ApplicationsQuerySchema, ok: ApplicationsSchema }),
    async (request, reply) => boundedRead(deps.db, readBoundsOf(deps, reply), (db) => listApplications(db, request.query)),
  );

  app.get(
    '/api/admin/metrics/applications/:appName',
    route(can('READ'), {
      params: Type.Object({ appName: Type.String({ minLength: 1, maxLength: 255 }) }),
      ok: ApplicationSchema,
    }),
    async (request) => {
      const application = await getApplication(deps.db, actorOf(request), request.params.appName, deps.clock.now());
      if (!application) throw new NotFoundError(`Could not find the application "${request.params.appName}"`);
      return application;
    },
  );

  app.post(
    '/api/admin/metrics/applications/:appName',
    route(can('ADMIN'), { params: Type.Object({ appName: AppName }), body: CreateApplicationSchema }),
    async (request, reply) => {
      await act(request, (uow) => describeApplication(uow, request.params.appName, request.body));
      return reply.status(202).send();
    },
  );

  app.get(
    '/api/admin/metrics/applications/:appName/overview',
    route(can('READ'), { params: Type.Object({ appName: AppName }), ok: ApplicationOverviewSchema }),
    async (request, reply) =>
      boundedRead(deps.db, readBoundsOf(deps, reply), (db) =>
        applicationOverview(db, actorOf(request), request.params.appName, deps.clock.now()),
      ),
  );

  app.get(
    '/api/admin/metrics/instances/:appName/environment/:environment',
    route(can('READ'), {
      params: Type.Object({ appName: AppName, environment: UrlFriendlyName }),
      ok: ApplicationEnvironmentInstancesSchema,
    }),
    async (request) => recentEnvironmentInstances(deps.db, request.params.appName, request.params.environment, deps.clock.now()),
  );

  app.get('/api/admin/metrics/sdks/outdated', route(can('READ'), { ok: OutdatedSdksSchema }), async (_request, reply) =>
    boundedRead(deps.db, readBoundsOf(deps, reply), (db) => outdatedSdks(db)),
  );

  app.get(
    '/api/admin/projects/:projectId/sdks/outdated',
    route(can('READ'), { params: ProjectParams, ok: OutdatedSdksSchema }),
    async (request, reply) => boundedRead(deps.db, readBoundsOf(deps, reply), (db) => outdatedSdks(db, request.params.projectId)),
  );

  app.get(
    '/api/admin/projects/:projectId/applications',
    route(can('READ'), { params: ProjectParams, querystring: ProjectApplicationsQuerySchema, ok: ProjectApplicationsSchema }),
    async (request, reply) =>
      boundedRead(deps.db, readBoundsOf(deps, reply), (db) => projectApplications(db, request.params.projectId, request.query)),
  );

  app.delete(
    '/api/admin/metrics/applications/:appName',
    route(can('ADMIN'), { params: Type.Object({ appName: Type.String({ minLength: 1, maxLength: 255 }) }) }),
    async (request, reply) => {
      await act(request, (uow) => deleteApplication(uow, request.params.appName));
      return reply.status(200).send();
    },
  );

  app.get('/api/admin/metrics/unknown-flags', route(can('READ'), { ok: UnknownFlagsSchema }), async (_request, reply) => ({
    unknownFlags: await boundedRead(deps.db, readBoundsOf(deps, reply), (db) => listUnknownFlags(db)),
  }));

  app.get(
    '/api/admin/client-metrics/features/:name',
    route(can('READ', FLAG_NAME_PARAM), { params: Type.Object({ name: UrlFriendlyName }), ok: FeatureUsageSummarySchema }),
    async (request) => ({
      version: 1,
      maturity: 'stable',
      featureName: request.params.name,
      ...(await flagUsageSummary(deps.db, request.params.name, deps.clock.now())),
    }),
  );

  app.get(
    '/api/admin/client-metrics/features/:name/raw',
    route(can('READ', FLAG_NAME_PARAM), {
      params: Type.Object({ name: UrlFriendlyName }),
      querystring: Type.Object({
        hoursBack: Type.Optional(Type.Integer({ minimum: 1, maximum: 720, default: 24, errorMessage: 'hoursBack is 1 to 720 (30 days)' })),
      }),
      ok: FeatureUsageOverTimeSchema,
    }),
    async (request) => {
      const hoursBack = request.query.hoursBack ?? 24;
      return {
        version: 1,
        maturity: 'stable',
        featureName: request.params.name,
        hoursBack,
        lastHourUsage: await flagUsageOverTime(deps.db, request.params.name, hoursBack, deps.clock.now()),
      };
    },
  );
};
