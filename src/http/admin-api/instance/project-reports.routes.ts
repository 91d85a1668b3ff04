import {
  projectHealthReport,
  projectInsights,
  projectLeadTime,
  projectOverview,
  projectStatus,
} from '../../../domain/insights/project-reports.js';
import { personalDashboard, personalDashboardProject } from '../../../domain/insights/personal-dashboard.js';
import { ProjectParams } from '../../common.schemas.js';
import { routesTagged, type RouteModule } from '../../deps.js';
import { can } from '../../plugins/access.js';
import { actorOf } from '../../plugins/route-access.js';
import {
  HealthReportSchema,
  PersonalDashboardProjectDetailsSchema,
  PersonalDashboardSchema,
  ProjectDoraSchema,
  ProjectInsightsSchema,
  ProjectOverviewSchema,
  ProjectStatusSchema,
} from './project-reports.schemas.js';

const route = routesTagged(['Projects']);
const PROJECT = '/api/admin/projects/:projectId';

/** Unleash's reports on a project's state (what its project pages and stale-flag scripts read) and a person's dashboard. */
export const projectReportRoutes: RouteModule = async (app, { deps }) => {
  app.get(`${PROJECT}/overview`, route(can('READ'), { params: ProjectParams, ok: ProjectOverviewSchema }), async (request) =>
    projectOverview(deps.db, request.params.projectId, actorOf(request), deps.clock.now()),
  );

  app.get(`${PROJECT}/health-report`, route(can('READ'), { params: ProjectParams, ok: HealthReportSchema }), async (request) =>
    projectHealthReport(deps.db, request.params.projectId, actorOf(request), deps.clock.now()),
  );

  app.get(`${PROJECT}/status`, route(can('READ'), { params: ProjectParams, ok: ProjectStatusSchema }), async (request) =>
    projectStatus(deps.db, request.params.projectId, deps.clock.now()),
  );

  app.get(`${PROJECT}/insights`, route(can('READ'), { params: ProjectParams, ok: ProjectInsightsSchema }), async (request) =>
    projectInsights(deps.db, request.params.projectId, deps.clock.now()),
  );

  app.get(`${PROJECT}/dora`, route(can('READ'), { params: ProjectParams, ok: ProjectDoraSchema }), async (request) =>
    projectLeadTime(deps.db, request.params.projectId),
  );

  const dashboardRoute = routesTagged(['Personal dashboard']);
  app.get('/api/admin/personal-dashboard', dashboardRoute(can('READ'), { ok: PersonalDashboardSchema }), async (request) =>
    personalDashboard(deps.db, actorOf(request), deps.clock.now()),
  );

  app.get(
    '/api/admin/personal-dashboard/:projectId',
    dashboardRoute(can('READ'), { params: ProjectParams, ok: PersonalDashboardProjectDetailsSchema }),
    async (request) => personalDashboardProject(deps.db, actorOf(request), request.params.projectId, deps.clock.now()),
  );
};
