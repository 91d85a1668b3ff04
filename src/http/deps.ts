import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifySchema } from 'fastify';
import type { Config } from '../config.js';
import type { DatabaseHandle, Db } from '../db/database.js';
import type { ClientFeatureStore } from '../domain/client-features/client-feature-store.js';
import type { NewApplicationLimit } from '../domain/client-features/new-application-limit.js';
import type { FrontendApiOrigins } from '../domain/settings/frontend-api-origins.js';
import type { OidcSignIn } from '../domain/sign-in/oidc-sign-in.js';
import type { UsageTally } from '../domain/usage/usage-tally.js';
import type { LoginThrottle } from '../domain/users/login-throttle.js';
import type { EventStreams } from './event-streams.js';
import type { RouteAccess } from './plugins/access.js';
import type { Clock } from '../shared/clock.js';
import type { Metrics } from '../shared/metrics.js';

/** What the app is built from: the database (and how to hear its notifications), the clock, the configuration. */
export interface AppDeps {
  db: Db;
  clock: Clock;
  config: Config;
  listen: DatabaseHandle['listen'];
  /** How busy the connection pool is (PostgreSQL), for the metrics. */
  poolUse?: DatabaseHandle['poolUse'];
}

/** The long-lived services the app holds for its lifetime, built by the composition root (src/server.ts). */
export interface AppServices {
  clientFeatures: ClientFeatureStore;
  newApplicationLimit: NewApplicationLimit;
  frontendApiOrigins: FrontendApiOrigins;
  metrics: Metrics;
  /** OFREP evaluations, written as usage by a worker. */
  evaluationUsage: UsageTally;
  loginThrottle: LoginThrottle;
  /** Present when OpenID Connect sign-in is configured. */
  oidc: OidcSignIn | undefined;
  /** The server-sent events streams of the streaming client API and OFREP, ended together at shutdown. */
  streams: EventStreams;
}

/** What route modules are given: the app's dependencies and its services. */
export interface RouteDeps extends AppDeps, AppServices {}

export type RouteModule = FastifyPluginAsyncTypebox<{ deps: RouteDeps }>;

/**
 * The options of a route module's routes: `route(access, schema)` is `{ schema: { tags, ...schema }, config: {
 * access } }`, the module's OpenAPI tags with what the route takes and answers, and who may call it.
 */
export function routesTagged(tags: string[]) {
  return <S extends FastifySchema>(access: RouteAccess, schema: S = {} as S) => ({ schema: { tags, ...schema }, config: { access } });
}
