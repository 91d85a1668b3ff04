import type { TSchema } from '@sinclair/typebox';
import { apiTokenRoutes } from './api-tokens.routes.js';
import { apiTokenSchemas } from './api-tokens.schemas.js';
import { authRoutes } from './auth.routes.js';
import { commonSchemas } from './common.schemas.js';
import type { RouteModule } from './deps.js';
import { environmentRoutes } from './environments.routes.js';
import { featureRoutes } from './features.routes.js';
import { featureSchemas } from './features.schemas.js';
import { healthRoutes } from './health.routes.js';
import { projectRoutes } from './projects.routes.js';
import { projectSchemas } from './projects.schemas.js';
import { strategyRoutes } from './strategies.routes.js';
import { userRoutes } from './users.routes.js';
import { userSchemas } from './users.schemas.js';

/** Every route module of the server, in one explicit list. */
export const routeModules: RouteModule[] = [
  healthRoutes,
  authRoutes,
  userRoutes,
  apiTokenRoutes,
  projectRoutes,
  environmentRoutes,
  featureRoutes,
  strategyRoutes,
];

/** Shared schemas, registered once so routes refer to them by `$id` and OpenAPI lists them as components. */
export const sharedSchemas: TSchema[] = [...commonSchemas, ...userSchemas, ...apiTokenSchemas, ...projectSchemas, ...featureSchemas];
