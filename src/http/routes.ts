import { agentAccessRoutes } from './agent-access.routes.js';
import { agentAccessSchemas } from './agent-access.schemas.js';
import { oauthRoutes } from './oauth.routes.js';
import { mcpRoutes } from './mcp/mcp.routes.js';
import type { TSchema } from '@sinclair/typebox';
import { accessRoutes } from './access.routes.js';
import { accessSchemas } from './access.schemas.js';
import { addonRoutes } from './addons.routes.js';
import { addonSchemas } from './addons.schemas.js';
import { apiTokenRoutes } from './api-tokens.routes.js';
import { applicationRoutes } from './applications.routes.js';
import { apiTokenSchemas } from './api-tokens.schemas.js';
import { authRoutes } from './auth.routes.js';
import { changeRequestRoutes } from './change-requests.routes.js';
import { changeRequestSchemas } from './change-requests.schemas.js';
import { clientApiRoutes } from './client-api.routes.js';
import { clientMetricsRoutes } from './client-metrics.routes.js';
import { frontendApiRoutes } from './frontend-api.routes.js';
import { playgroundRoutes } from './playground.routes.js';
import { commonSchemas } from './common.schemas.js';
import { contextFieldRoutes } from './context-fields.routes.js';
import { contextFieldSchemas } from './context-fields.schemas.js';
import type { RouteModule } from './deps.js';
import { edgeRoutes } from './edge.routes.js';
import { edgeSchemas } from './edge.schemas.js';
import { environmentRoutes } from './environments.routes.js';
import { eventRoutes } from './events.routes.js';
import { eventSchemas } from './events.schemas.js';
import { favoriteRoutes } from './favorites.routes.js';
import { featureDependencyRoutes } from './feature-dependencies.routes.js';
import { dependencySchemas } from './feature-dependencies.schemas.js';
import { featureLifecycleRoutes } from './feature-lifecycle.routes.js';
import { lifecycleSchemas } from './feature-lifecycle.schemas.js';
import { featureSearchRoutes } from './feature-search.routes.js';
import { featureSearchSchemas } from './feature-search.schemas.js';
import { featureRoutes } from './features.routes.js';
import { featureSchemas } from './features.schemas.js';
import { featuresBatchRoutes } from './features-batch.routes.js';
import { featuresBatchSchemas } from './features-batch.schemas.js';
import { flagsFileRoutes } from './flags-file.routes.js';
import { ofrepRoutes } from './ofrep.routes.js';
import { ofrepSchemas } from './ofrep.schemas.js';
import { flagsFileSchemas } from './flags-file.schemas.js';
import { healthRoutes } from './health.routes.js';
import { metricsRoutes } from './metrics.routes.js';
import { projectRoutes } from './projects.routes.js';
import { projectReportRoutes } from './project-reports.routes.js';
import { projectReportSchemas } from './project-reports.schemas.js';
import { projectSchemas } from './projects.schemas.js';
import { sdkSchemas } from './sdk.schemas.js';
import { segmentRoutes } from './segments.routes.js';
import { segmentSchemas } from './segments.schemas.js';
import { strategyRoutes } from './strategies.routes.js';
import { strategyDefinitionRoutes } from './strategy-definitions.routes.js';
import { strategyDefinitionSchemas } from './strategy-definitions.schemas.js';
import { releasePlanRoutes } from './release-plans.routes.js';
import { releasePlanSchemas } from './release-plans.schemas.js';
import { signalRoutes } from './signals.routes.js';
import { signalSchemas } from './signals.schemas.js';
import { tagRoutes } from './tags.routes.js';
import { tagSchemas } from './tags.schemas.js';
import { uiConfigRoutes } from './ui-config.routes.js';
import { uiConfigSchemas } from './ui-config.schemas.js';
import { userRoutes } from './users.routes.js';
import { inviteLinkRoutes } from './invite-links.routes.js';
import { userSchemas } from './users.schemas.js';
import { scimRoutes } from './scim.routes.js';
import { roleRoutes } from './roles.routes.js';
import { roleSchemas } from './roles.schemas.js';
import { scimSchemas } from './scim.schemas.js';

/** Every route module of the server, in one explicit list. */
export const routeModules: RouteModule[] = [
  healthRoutes,
  metricsRoutes,
  authRoutes,
  userRoutes,
  inviteLinkRoutes,
  scimRoutes,
  roleRoutes,
  accessRoutes,
  apiTokenRoutes,
  projectRoutes,
  projectReportRoutes,
  environmentRoutes,
  featureRoutes,
  strategyRoutes,
  strategyDefinitionRoutes,
  tagRoutes,
  segmentRoutes,
  contextFieldRoutes,
  favoriteRoutes,
  featureDependencyRoutes,
  featureLifecycleRoutes,
  eventRoutes,
  featureSearchRoutes,
  mcpRoutes,
  oauthRoutes,
  agentAccessRoutes,
  changeRequestRoutes,
  addonRoutes,
  clientMetricsRoutes,
  clientApiRoutes,
  edgeRoutes,
  frontendApiRoutes,
  playgroundRoutes,
  applicationRoutes,
  uiConfigRoutes,
  flagsFileRoutes,
  featuresBatchRoutes,
  ofrepRoutes,
  releasePlanRoutes,
  signalRoutes,
];

/** Shared schemas, registered once so routes refer to them by `$id` and OpenAPI lists them as components. */
export const sharedSchemas: TSchema[] = [
  ...commonSchemas,
  ...userSchemas,
  ...scimSchemas,
  ...roleSchemas,
  ...accessSchemas,
  ...apiTokenSchemas,
  ...projectSchemas,
  ...projectReportSchemas,
  ...featureSchemas,
  ...strategyDefinitionSchemas,
  ...tagSchemas,
  ...segmentSchemas,
  ...contextFieldSchemas,
  ...dependencySchemas,
  ...lifecycleSchemas,
  ...eventSchemas,
  ...featureSearchSchemas,
  ...changeRequestSchemas,
  ...addonSchemas,
  ...uiConfigSchemas,
  ...sdkSchemas,
  ...edgeSchemas,
  ...flagsFileSchemas,
  ...featuresBatchSchemas,
  ...ofrepSchemas,
  ...releasePlanSchemas,
  ...signalSchemas,
  ...agentAccessSchemas,
];
