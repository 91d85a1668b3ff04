import { agentAccessRoutes } from './sign-in/agent-access.routes.js';
import { agentAccessSchemas } from './sign-in/agent-access.schemas.js';
import { oauthRoutes } from './sign-in/oauth.routes.js';
import { mcpRoutes } from './mcp/mcp.routes.js';
import type { TSchema } from '@sinclair/typebox';
import { accessRoutes } from './admin-api/instance/access.routes.js';
import { accessSchemas } from './admin-api/instance/access.schemas.js';
import { addonRoutes } from './admin-api/instance/addons.routes.js';
import { addonSchemas } from './admin-api/instance/addons.schemas.js';
import { apiTokenRoutes } from './admin-api/instance/api-tokens.routes.js';
import { applicationRoutes } from './admin-api/instance/applications.routes.js';
import { apiTokenSchemas } from './admin-api/instance/api-tokens.schemas.js';
import { authRoutes } from './sign-in/auth.routes.js';
import { changeRequestRoutes } from './admin-api/flags/change-requests.routes.js';
import { changeRequestSchemas } from './admin-api/flags/change-requests.schemas.js';
import { clientApiRoutes } from './sdk-api/client-api.routes.js';
import { clientMetricsRoutes } from './sdk-api/client-metrics.routes.js';
import { frontendApiRoutes } from './sdk-api/frontend-api.routes.js';
import { playgroundRoutes } from './admin-api/flags/playground.routes.js';
import { commonSchemas } from './common.schemas.js';
import { contextFieldRoutes } from './admin-api/flags/context-fields.routes.js';
import { contextFieldSchemas } from './admin-api/flags/context-fields.schemas.js';
import type { RouteModule } from './deps.js';
import { edgeRoutes } from './sdk-api/edge.routes.js';
import { edgeSchemas } from './sdk-api/edge.schemas.js';
import { environmentRoutes } from './admin-api/instance/environments.routes.js';
import { eventRoutes } from './admin-api/instance/events.routes.js';
import { eventSchemas } from './admin-api/instance/events.schemas.js';
import { favoriteRoutes } from './admin-api/flags/favorites.routes.js';
import { featureDependencyRoutes } from './admin-api/flags/feature-dependencies.routes.js';
import { codeReferenceRoutes } from './admin-api/flags/code-references.routes.js';
import { codeReferenceSchemas } from './admin-api/flags/code-references.schemas.js';
import { dependencySchemas } from './admin-api/flags/feature-dependencies.schemas.js';
import { featureLifecycleRoutes } from './admin-api/flags/feature-lifecycle.routes.js';
import { lifecycleSchemas } from './admin-api/flags/feature-lifecycle.schemas.js';
import { featureSearchRoutes } from './admin-api/flags/feature-search.routes.js';
import { featureSearchSchemas } from './admin-api/flags/feature-search.schemas.js';
import { featureRoutes } from './admin-api/flags/features.routes.js';
import { featureSchemas } from './features.schemas.js';
import { featuresBatchRoutes } from './admin-api/flags/features-batch.routes.js';
import { featuresBatchSchemas } from './admin-api/flags/features-batch.schemas.js';
import { flagsFileRoutes } from './admin-api/flags/flags-file.routes.js';
import { ofrepRoutes } from './sdk-api/ofrep.routes.js';
import { ofrepSchemas } from './sdk-api/ofrep.schemas.js';
import { flagsFileSchemas } from './admin-api/flags/flags-file.schemas.js';
import { healthRoutes } from './health.routes.js';
import { metricsRoutes } from './metrics.routes.js';
import { projectRoutes } from './admin-api/instance/projects.routes.js';
import { projectReportRoutes } from './admin-api/instance/project-reports.routes.js';
import { projectReportSchemas } from './admin-api/instance/project-reports.schemas.js';
import { projectSchemas } from './admin-api/instance/projects.schemas.js';
import { sdkSchemas } from './sdk.schemas.js';
import { segmentRoutes } from './admin-api/flags/segments.routes.js';
import { segmentSchemas } from './admin-api/flags/segments.schemas.js';
import { strategyRoutes } from './admin-api/flags/strategies.routes.js';
import { strategyDefinitionRoutes } from './admin-api/flags/strategy-definitions.routes.js';
import { strategyDefinitionSchemas } from './admin-api/flags/strategy-definitions.schemas.js';
import { releasePlanRoutes } from './admin-api/flags/release-plans.routes.js';
import { experimentRoutes } from './admin-api/flags/experiments.routes.js';
import { experimentSchemas } from './admin-api/flags/experiments.schemas.js';
import { experimentEventRoutes, experimentEventSchemas } from './sdk-api/experiment-events.routes.js';
import { releasePlanSchemas } from './admin-api/flags/release-plans.schemas.js';
import { signalRoutes } from './admin-api/instance/signals.routes.js';
import { signalSchemas } from './admin-api/instance/signals.schemas.js';
import { tagRoutes } from './admin-api/flags/tags.routes.js';
import { tagSchemas } from './admin-api/flags/tags.schemas.js';
import { uiConfigRoutes } from './admin-api/instance/ui-config.routes.js';
import { uiConfigSchemas } from './admin-api/instance/ui-config.schemas.js';
import { userRoutes } from './admin-api/instance/users.routes.js';
import { inviteLinkRoutes } from './sign-in/invite-links.routes.js';
import { userSchemas } from './users.schemas.js';
import { scimRoutes } from './sign-in/scim.routes.js';
import { roleRoutes } from './admin-api/instance/roles.routes.js';
import { roleSchemas } from './admin-api/instance/roles.schemas.js';
import { scimSchemas } from './sign-in/scim.schemas.js';

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
  codeReferenceRoutes,
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
  experimentRoutes,
  experimentEventRoutes,
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
  ...codeReferenceSchemas,
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
  ...experimentSchemas,
  ...experimentEventSchemas,
  ...signalSchemas,
  ...agentAccessSchemas,
];
