import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type TRefUnsafe, type TSchema } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import { inUnitOfWork, type UnitOfWork, type UnitOfWorkDeps, type UnitOfWorkOptions } from '../db/unit-of-work.js';
import type { Config } from '../config.js';
import type { DatabaseHandle, Db } from '../db/database.js';
import type { ChangeFeed } from '../domain/events/change-feed.js';
import type { ClientFeatureStore } from '../domain/client-features/client-feature-store.js';
import type { NewApplicationLimit } from '../domain/client-features/new-application-limit.js';
import type { FrontendApiOrigins } from '../domain/settings/frontend-api-origins.js';
import type { MaintenanceMode } from '../domain/settings/maintenance-mode.js';
import type { OidcSignIn } from '../domain/sign-in/oidc-sign-in.js';
import type { SamlSignIn } from '../domain/sign-in/saml-sign-in.js';
import type { SdkReportWriter } from '../domain/usage/sdk-report-writer.js';
import type { UsageTally } from '../domain/usage/usage-tally.js';
import type { LoginThrottle } from '../domain/users/login-throttle.js';
import type { ResetEmailLimit } from '../domain/users/password-reset.js';
import type { HourlyCount } from '../shared/hourly-count.js';
import type { Mailer } from '../shared/mailer.js';
import type { EventStreams } from './sdk-api/event-streams.js';
import type { McpSessions } from './mcp/mcp-sessions.js';
import { actorOf, type RouteAccess } from './plugins/route-access.js';
import type { Clock } from '../shared/clock.js';
import type { AssignmentRecorder, ExperimentIngest } from '../domain/experiments/ingest.js';
import type { ExperimentAnalyses } from '../domain/experiments/results.js';
import type { Metrics } from '../shared/metrics.js';

/** What the app is built from: the database (and how to hear its notifications), the clock, the configuration. */
export interface AppDeps {
  db: Db;
  clock: Clock;
  config: Config;
  listen: DatabaseHandle['listen'];
  /** How busy the connection pool is (PostgreSQL), for the metrics. */
  poolUse?: DatabaseHandle['poolUse'];
  databaseUp?: DatabaseHandle['databaseUp'];
}

/** The long-lived services the app holds for its lifetime, built by the composition root (src/server.ts). */
export interface AppServices {
  /** What every committed change tells this process, for whatever keeps something a change may outdate. */
  changeFeed: ChangeFeed;
  clientFeatures: ClientFeatureStore;
  newApplicationLimit: NewApplicationLimit;
  frontendApiOrigins: FrontendApiOrigins;
  /** Whether admin writes are refused for now (Unleash's maintenance mode). */
  maintenanceMode: MaintenanceMode;
  metrics: Metrics;
  /** OFREP evaluations, written as usage by a worker. */
  evaluationUsage: UsageTally;
  /** Writes SDK registrations and metrics, holding them while the database is away. */
  sdkReports: SdkReportWriter;
  loginThrottle: LoginThrottle;
  /** Experiments' exposures and tracked events from SDKs, bounded per token. */
  experimentIngest: ExperimentIngest;
  /** The same ingest, as the SDK read routes record the assignments of their evaluations. */
  assignments: AssignmentRecorder;
  /** Experiments' analyses, one at a time per experiment and not again within 30 seconds. */
  experimentAnalyses: ExperimentAnalyses;
  /** MCP client registrations per client address over the last hour (anyone may register). */
  oauthRegistrations: HourlyCount;
  /** Sends password reset emails; absent without EMAIL_HOST. */
  mailer: Mailer | undefined;
  resetEmailLimit: ResetEmailLimit;
  /** Present when OpenID Connect sign-in is configured. */
  oidc: OidcSignIn | undefined;
  /** Present when SAML sign-in is configured. */
  saml: SamlSignIn | undefined;
  /** The server-sent events streams of the streaming client API and OFREP, ended together at shutdown. */
  streams: EventStreams;
  /** The MCP sessions agents hold on this instance (Streamable HTTP), bounded per identity. */
  mcpSessions: McpSessions;
}

/** What route modules are given: the app's dependencies and its services. */
export interface RouteDeps extends AppDeps, AppServices {}

/**
 * Sends a body the domain serialised itself (a cached SDK answer, an evaluation built from serialised parts),
 * past the route's response serialiser, which would only copy it.
 */
export const sendJson = (reply: FastifyReply, json: string | Buffer) => reply.type('application/json; charset=utf-8').send(json);

/** A route module: its routes, given the app's dependencies and `act`, the request's unit of work. */
export type RouteModule = FastifyPluginAsyncTypebox<{ deps: RouteDeps; act: ReturnType<typeof actingFor> }>;

/** What the SDK read routes need: a store of configurations, the streams, the OFREP usage tally; no database. */
export type SdkReadDeps = Pick<RouteDeps, 'clientFeatures' | 'streams' | 'evaluationUsage'> & {
  /** Records experiments' assignments of the evaluations answered here: the server keeps them, an edge forwards them. */
  assignments?: AssignmentRecorder;
};

/**
 * A route module of what SDKs read (client API, frontend API, OFREP), which Vexil Edge registers too, with the
 * store it feeds from upstream.
 */
export type SdkReadRoutes = FastifyPluginAsyncTypebox<{ deps: SdkReadDeps }>;

/**
 * What a route takes and answers as `route` is given it: the body and a 200 (`ok`) or 201 (`created`) answer as
 * schemas; one shared by `$id` is referred to, so the OpenAPI document names it once.
 */
export interface RouteSchema extends Omit<FastifySchema, 'body'> {
  body?: TSchema;
  ok?: TSchema;
  created?: TSchema;
}

/** A shared schema (one with an `$id`) as a reference to it; any other as it is. */
const referred = (schema: TSchema) => (schema.$id ? Type.Ref(schema) : schema);

/** Fastify's schema for a `RouteSchema` (a reference reads as the schema it names): answers by status. */
type FastifySchemaOf<S extends RouteSchema> = Omit<S, 'body' | 'ok' | 'created'> & { tags: string[] } & (S extends {
    body: infer B extends TSchema;
  }
    ? { body: TRefUnsafe<B> }
    : unknown) &
  (S extends { ok: infer R extends TSchema }
    ? { response: { 200: TRefUnsafe<R> } }
    : S extends { created: infer C extends TSchema }
      ? { response: { 201: TRefUnsafe<C> } }
      : unknown);

/**
 * The options of a route module's routes: `route(access, schema)` gives the route the module's OpenAPI tags, what
 * it takes and answers (a body and a 200 or 201 answer named by their shared schemas), and who may call it.
 */
export function routesTagged(tags: string[]) {
  return <S extends RouteSchema = Record<never, never>>(access: RouteAccess, schema?: S) => {
    const { body, ok, created, ...rest } = schema ?? {};
    const response = ok ? { 200: referred(ok) } : created ? { 201: referred(created) } : undefined;
    const fastifySchema = { tags, ...rest, ...(body ? { body: referred(body) } : {}), ...(response ? { response } : {}) };
    return { schema: fastifySchema as unknown as FastifySchemaOf<S>, config: { access } };
  };
}

/** `act(request, work)`: runs `work` in a unit of work of the request's actor, as every writing admin route does. */
export function actingFor(deps: UnitOfWorkDeps) {
  return <T>(request: FastifyRequest, work: (uow: UnitOfWork) => Promise<T>, options?: UnitOfWorkOptions): Promise<T> =>
    inUnitOfWork(deps, actorOf(request), work, options);
}
