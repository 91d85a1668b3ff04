import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Config } from '../config.js';
import type { DatabaseHandle, Db } from '../db/database.js';
import type { ClientFeatureStore } from '../domain/client-features/client-feature-store.js';
import type { NewApplicationLimit } from '../domain/client-features/new-application-limit.js';
import type { FrontendApiOrigins } from '../domain/settings/frontend-api-origins.js';
import type { Clock } from '../shared/clock.js';
import type { Metrics } from '../shared/metrics.js';

/** What the app is built from: the database (and how to hear its notifications), the clock, the configuration. */
export interface AppDeps {
  db: Db;
  clock: Clock;
  config: Config;
  listen: DatabaseHandle['listen'];
  /** Shared with the workers beside the app; the app makes its own when none is given (tests). */
  metrics?: Metrics;
}

/** What route modules are given: the app's dependencies and the services the app holds for its lifetime. */
export interface RouteDeps extends AppDeps {
  clientFeatures: ClientFeatureStore;
  newApplicationLimit: NewApplicationLimit;
  frontendApiOrigins: FrontendApiOrigins;
  metrics: Metrics;
}

export type RouteModule = FastifyPluginAsyncTypebox<{ deps: RouteDeps }>;
