import cors from '@fastify/cors';
import type { AssignmentRecorder } from '../domain/experiments/ingest.js';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type, type Static } from '@sinclair/typebox';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest, type RouteOptions } from 'fastify';
import type { Logger } from 'pino';
import type { ClientFeatureStore } from '../domain/client-features/client-feature-store.js';
import type { UsageTally } from '../domain/usage/usage-tally.js';
import { assertBulkReport, assertReportBucket, assertTokenEnvironment } from '../domain/usage/sdk-report-checks.js';
import { clientApiRoutes } from '../http/sdk-api/client-api.routes.js';
import { commonSchemas } from '../http/common.schemas.js';
import { edgeSchemas, TokenStringListSchema, ValidatedEdgeTokensSchema } from '../http/sdk-api/edge.schemas.js';
import { routesTagged, type SdkReadDeps } from '../http/deps.js';
import type { EventStreams } from '../http/sdk-api/event-streams.js';
import { frontendApiRoutes } from '../http/sdk-api/frontend-api.routes.js';
import { ofrepRoutes } from '../http/sdk-api/ofrep.routes.js';
import { ofrepSchemas } from '../http/sdk-api/ofrep.schemas.js';
import { bearerToken, CLIENT, FRONTEND, PUBLIC, sdkTokenOf, type RouteAccess, wrongTokenKind } from '../http/plugins/route-access.js';
import { browserCorsOptions } from '../http/plugins/browser-cors.js';
import { registerErrorHandler } from '../http/plugins/error-handler.js';
import { registerJsonBodyParser } from '../http/plugins/json-body.js';
import { registerRequestLog } from '../http/plugins/logging.js';
import { registerRequestMetrics } from '../http/plugins/request-metrics.js';
import { registerRequestTracing } from '../http/plugins/request-tracing.js';
import { serverOptions } from '../http/plugins/server-options.js';
import { BulkMetricsSchema, ClientMetricsSchema, ClientRegistrationSchema, sdkSchemas } from '../http/sdk.schemas.js';
import { AuthenticationRequired, PermissionError, ServiceUnavailableError, UnauthorizedError } from '../shared/errors.js';
import type { AddressRanges } from '../shared/address-ranges.js';
import type { Metrics } from '../shared/metrics.js';
import type { ConfigurationFeed } from './configuration-feed.js';
import type { TokenCheck, TokenChecker } from './edge-tokens.js';
import type { EdgeUsage } from './edge-usage.js';
import { NotModifiedShortcut, serverWithShortcut } from './not-modified-shortcut.js';

/** What the edge's HTTP app is built from (src/edge/edge-server.ts builds them). */
export interface EdgeServices {
  store: ClientFeatureStore;
  /** The flags: mirrored from upstream, or read from a bootstrap file (offline mode). */
  flags: ConfigurationFeed;
  tokens: TokenChecker;
  usage: EdgeUsage;
  evaluationUsage: UsageTally;
  streams: EventStreams;
  metrics: Metrics;
  /** Follow a client token that is not covered yet (no TOKENS given: Unleash Edge's dynamic mode), or refuse it. */
  followNewTokens: boolean;
  trustProxy: boolean;
  /** Forwards experiments' assignments of the edge's own evaluations upstream (following an upstream only). */
  assignments?: AssignmentRecorder;
  /** Which of Unleash Edge's backstage views are switched off. */
  backstage: { disableTokens: boolean; disableFeatures: boolean; disableMetrics: boolean };
  /** How long an SDK's request may take, and an idle connection stay open. */
  timeouts: { requestMs: number; keepAliveMs: number };
  /** ALLOW_LIST and DENY_LIST, when set. */
  allowList: AddressRanges | undefined;
  denyList: AddressRanges | undefined;
  now: () => Date;
}

const clientRoute = routesTagged(['Client']);
const frontendRoute = routesTagged(['Frontend API']);
const operationalRoute = routesTagged(['Operational']);
const edgeRoute = routesTagged(['Unleash Edge']);

const HealthSchema = Type.Object({ status: Type.Literal('OK') });
const ReadySchema = Type.Object({
  status: Type.Union([Type.Literal('READY'), Type.Literal('NOTREADY')]),
  error: Type.Optional(Type.String()),
  upstream: Type.Object({
    reachable: Type.Boolean(),
    lastSuccessAt: Type.Union([Type.String(), Type.Null()]),
    lastError: Type.Union([Type.String(), Type.Null()]),
    changes: Type.Union([Type.Literal('streamed'), Type.Literal('polled'), Type.Literal('file')]),
  }),
});

const SDK_KINDS = new Set<RouteAccess['kind']>(['client', 'frontend', 'sdk']);

/**
 * Who may call an edge route: the same declarations as the server's routes, checked against the tokens the edge
 * knows (asked of the upstream on first sight) and the flags it follows. A token that sees more than the edge follows
 * is refused: the edge would otherwise answer it with less than the server would.
 */
function registerEdgeAccess(app: FastifyInstance, services: EdgeServices): void {
  app.addHook('onRoute', (route: RouteOptions) => {
    if (!route.config?.access) throw new Error(`Route ${route.method} ${route.url} must declare config.access`);
  });
  app.addHook('onRequest', async (request) => {
    const access = request.routeOptions.config.access;
    if (!access || access.kind === 'public') return;
    let check: TokenCheck;
    if (access.kind === 'sdk-channel') {
      const { channel } = request.query as { channel?: unknown };
      if (typeof channel !== 'string') return;
      check = services.tokens.byHash(channel);
      if (check.kind !== 'valid') throw new UnauthorizedError('The event stream channel is unknown');
    } else {
      if (!SDK_KINDS.has(access.kind)) throw new PermissionError('Vexil Edge serves SDKs only');
      const secret = bearerToken(request);
      if (!secret) throw new AuthenticationRequired('Send an SDK token in the Authorization header');
      check = await services.tokens.check(secret);
      if (check.kind === 'unavailable') {
        throw new ServiceUnavailableError('The edge has not seen this token before and cannot check it while its upstream is unreachable');
      }
      if (check.kind === 'invalid') throw new UnauthorizedError('The API token is unknown or has expired');
      if (access.kind !== 'sdk' && access.kind !== check.token.type) {
        throw new PermissionError(wrongTokenKind(access, check.token.type));
      }
      if (!services.flags.covers(check.scope)) {
        if (services.followNewTokens && check.scope.type === 'client') await services.flags.follow(secret, check.scope);
        else {
          const projects = check.scope.projects.join(', ');
          throw new PermissionError(
            `This token sees more than this edge follows (environment "${check.scope.environment}", projects ${projects}); add a client token that covers it to the edge's TOKENS`,
          );
        }
      }
    }
    request.sdkToken = check.token;
  });
}

/**
 * ALLOW_LIST and DENY_LIST: who may call the edge at all, by the caller's address (X-Forwarded-For's with
 * TRUST_PROXY). Health, readiness and metrics stay open to the orchestrator's probes.
 */
function registerAddressLists(app: FastifyInstance, services: EdgeServices): void {
  const { allowList, denyList } = services;
  if (!allowList && !denyList) return;
  app.addHook('onRequest', async (request) => {
    if (request.url.startsWith('/internal-backstage/')) return;
    if (denyList?.includes(request.ip) || (allowList && !allowList.includes(request.ip))) {
      throw new PermissionError(`This edge does not take requests from ${request.ip} (its ALLOW_LIST and DENY_LIST)`);
    }
  });
}

/** Health, readiness and metrics, at Unleash Edge's paths. */
function registerOperationalRoutes(app: FastifyInstance, services: EdgeServices): void {
  app.get('/internal-backstage/health', operationalRoute(PUBLIC, { ok: HealthSchema }), async () => ({ status: 'OK' as const }));

  // Ready once it holds flags to serve (from the upstream or a backup); an upstream that went away afterwards does
  // not make it unready, since it keeps serving: the body and the metrics say so.
  app.get(
    '/internal-backstage/ready',
    operationalRoute(PUBLIC, { response: { 200: ReadySchema, 503: ReadySchema } }),
    async (_request, reply) => {
      const { status } = services.flags;
      const ready = services.flags.ready();
      const body = {
        status: ready ? ('READY' as const) : ('NOTREADY' as const),
        ...(ready ? {} : { error: 'Edge is not ready to serve requests' }),
        upstream: {
          reachable: status.reachable,
          lastSuccessAt: status.lastSuccessAt?.toISOString() ?? null,
          lastError: status.lastError ?? null,
          changes: status.changes,
        },
      };
      return reply.status(ready ? 200 : 503).send(body);
    },
  );

  // Unleash Edge's views of what it holds, each switched off as there (DISABLE_TOKENS_ENDPOINT,
  // DISABLE_FEATURES_ENDPOINT). No secret is in either: tokens show their scope and `****`.
  if (!services.backstage.disableTokens) {
    app.get('/internal-backstage/tokens', { schema: { tags: ['Operational'] }, config: { access: PUBLIC } }, async () => {
      const { tokens, invalidCount } = services.tokens.listed();
      return { tokenRefreshes: services.flags.refreshes(), tokenValidationStatus: tokens, invalidTokenCount: invalidCount };
    });
  }
  if (!services.backstage.disableFeatures) {
    app.get('/internal-backstage/features', { schema: { tags: ['Operational'] }, config: { access: PUBLIC } }, async () =>
      Object.fromEntries(
        services.flags
          .held()
          .map(([environment, configuration]) => [
            environment,
            { version: 2, features: configuration.features, segments: [...configuration.segments.values()] },
          ]),
      ),
    );
  }

  // A chained edge asks this one, as this one asks its upstream; a token this edge cannot check now is not confirmed.
  app
    .withTypeProvider<TypeBoxTypeProvider>()
    .post('/edge/validate', edgeRoute(PUBLIC, { body: TokenStringListSchema, ok: ValidatedEdgeTokensSchema }), async (request) => {
      const checks = await Promise.all(request.body.tokens.map(async (token) => ({ token, check: await services.tokens.check(token) })));
      return {
        tokens: checks.flatMap(({ token, check }) => (check.kind === 'valid' ? [{ token, ...check.scope }] : [])),
      };
    });

  for (const path of services.backstage.disableMetrics ? [] : ['/internal-backstage/metrics', '/internal-backstage/prometheus']) {
    app.get(path, { schema: { tags: ['Operational'] }, config: { access: PUBLIC } }, async (_request, reply) => {
      const { contentType, body } = await services.metrics.exposition();
      return reply.type(contentType).send(body);
    });
  }
}

/** A metrics report of one SDK, server-side or frontend: checked, and added to what goes upstream. */
function reportHandler(services: EdgeServices) {
  return async (request: FastifyRequest<{ Body: Static<typeof ClientMetricsSchema> }>, reply: FastifyReply) => {
    assertReportBucket(request.body.bucket, services.now());
    services.usage.report(sdkTokenOf(request).environment, request.body);
    return reply.status(202).send();
  };
}

/** What frontend SDKs report, at the frontend API's and the Unleash Proxy's paths. */
function registerFrontendReportRoutes(app: FastifyInstance, services: EdgeServices): void {
  const typed = app.withTypeProvider<TypeBoxTypeProvider>();
  for (const base of ['/api/frontend', '/api/proxy']) {
    typed.post(`${base}/client/metrics`, frontendRoute(FRONTEND, { body: ClientMetricsSchema }), reportHandler(services));
    // Browser SDKs register too; there is nothing to keep from them beyond the metrics they send.
    typed.post(`${base}/client/register`, frontendRoute(FRONTEND, { body: ClientRegistrationSchema }), async (_request, reply) =>
      reply.status(202).send(),
    );
  }
}

/** What server-side SDKs (and edges chained behind this one) report: gathered, and sent upstream in bulk on the metrics interval. */
function registerClientReportRoutes(app: FastifyInstance, services: EdgeServices): void {
  const { usage } = services;
  const typed = app.withTypeProvider<TypeBoxTypeProvider>();

  typed.post('/api/client/register', clientRoute(CLIENT, { body: ClientRegistrationSchema }), async (request, reply) => {
    const token = sdkTokenOf(request);
    assertTokenEnvironment(token, request.body.environment, '/body/environment');
    usage.register({ ...request.body, environment: token.environment });
    return reply.status(202).send();
  });

  typed.post('/api/client/metrics', clientRoute(CLIENT, { body: ClientMetricsSchema }), reportHandler(services));

  typed.post('/api/client/metrics/bulk', clientRoute(CLIENT, { body: BulkMetricsSchema }), async (request, reply) => {
    const token = sdkTokenOf(request);
    assertBulkReport(token, request.body, services.now());
    for (const application of request.body.applications ?? []) usage.register({ ...application, environment: token.environment });
    usage.bulk(request.body.metrics.map((metric) => ({ ...metric, variants: metric.variants ?? {} })));
    return reply.status(202).send();
  });
}

/**
 * Vexil Edge's HTTP app: the server's own route modules for what SDKs read (client API with its delta and stream,
 * frontend API, OFREP), fed by the store the edge fills from upstream, and the edge's routes for what SDKs report
 * and for operations.
 */
export async function buildEdgeApp(services: EdgeServices, logger: Logger): Promise<FastifyInstance> {
  const shortcut = new NotModifiedShortcut(services, () => logger.isLevelEnabled('debug'));
  const app = Fastify({
    ...serverOptions(logger as FastifyBaseLogger),
    trustProxy: services.trustProxy,
    requestTimeout: services.timeouts.requestMs,
    keepAliveTimeout: services.timeouts.keepAliveMs,
    serverFactory: serverWithShortcut(shortcut),
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.addHook('preClose', async () => shortcut.close());
  registerJsonBodyParser(app);
  registerRequestLog(app, 'debug');
  registerRequestMetrics(app, services.metrics);
  registerRequestTracing(app);
  registerErrorHandler(app);
  registerAddressLists(app, services);
  for (const schema of [...commonSchemas, ...sdkSchemas, ...ofrepSchemas, ...edgeSchemas]) app.addSchema(schema);
  app.decorateRequest('sdkToken', null);
  const deps: SdkReadDeps = {
    clientFeatures: services.store,
    streams: services.streams,
    evaluationUsage: services.evaluationUsage,
    ...(services.assignments ? { assignments: services.assignments } : {}),
  };
  // Browsers call the frontend API and OFREP from their applications' pages, wherever those are: CORS is set up for
  // those routes alone, once, rather than decided for every request (the client API's 304s included).
  await app.register(async (browser) => {
    await browser.register(cors, browserCorsOptions('*'));
    registerEdgeAccess(browser, services);
    registerFrontendReportRoutes(browser, services);
    for (const routes of [frontendApiRoutes, ofrepRoutes]) await browser.register(routes, { deps });
  });
  await app.register(async (api) => {
    registerEdgeAccess(api, services);
    registerOperationalRoutes(api, services);
    registerClientReportRoutes(api, services);
    await api.register(clientApiRoutes, { deps });
  });
  return app;
}
