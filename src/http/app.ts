import cookie from '@fastify/cookie';
import cors from '@fastify/cors';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { DestinationStream, Logger } from 'pino';
import type { LogLevel } from '../config.js';
import { actingFor, type RouteDeps } from './deps.js';
import { registerAccessControl } from './plugins/access.js';
import { registerMaintenanceMode } from './plugins/maintenance.js';
import { browserCorsOptions, isBrowserApi } from './plugins/browser-cors.js';
import { registerErrorHandler } from './plugins/error-handler.js';
import { registerJsonBodyParser } from './plugins/json-body.js';
import { createLogger, registerRequestLog } from './plugins/logging.js';
import { serverOptions } from './plugins/server-options.js';
import { registerWebUi } from './plugins/web-ui.js';
import { registerRequestMetrics } from './plugins/request-metrics.js';
import { registerRequestTracing } from './plugins/request-tracing.js';
import { documentOperation, registerOpenApi } from './plugins/openapi.js';
import { useSharedSchemas } from './plugins/validation.js';
import { routeModules, sharedSchemas } from './routes.js';
import { VERSION } from '../shared/version.js';

/** How the HTTP application logs and where it finds the web UI. */
export interface BuildAppOptions {
  logLevel?: LogLevel;
  /** Where logs go (standard output by default); tests pass a stream to read what was logged. */
  logStream?: DestinationStream;
  /** The logger to use (the server's own, made before the app); `logLevel` and `logStream` are then ignored. */
  logger?: Logger;
  /** Where the built web UI is (tests point it at a directory of their own). */
  webUiDir?: string;
  /** Called before the app is sealed, e.g. for a test to add a route. */
  extend?: (app: FastifyInstance) => void;
}

/**
 * The HTTP application without `listen`, so tests drive it with `inject`, made from services built elsewhere
 * (src/server.ts, the composition root).
 */
export async function buildApp(deps: RouteDeps, options: BuildAppOptions = {}): Promise<FastifyInstance> {
  const app = Fastify(
    serverOptions((options.logger ?? createLogger(options.logLevel ?? deps.config.logLevel, options.logStream)) as FastifyBaseLogger),
  ).withTypeProvider<TypeBoxTypeProvider>();

  registerJsonBodyParser(app);
  registerRequestLog(app);
  registerRequestMetrics(app, deps.metrics);
  registerRequestTracing(app);

  await app.register(cookie);

  // Browsers call the frontend API and OFREP (web providers, with a frontend token) from the application's own
  // origin, when it is one of the allowed origins; nothing else is offered to them.
  await app.register(cors, {
    delegator: (request, callback) => {
      if (!isBrowserApi(request.url)) return callback(null, { origin: false });
      deps.frontendApiOrigins.allowed().then(
        (allowed) => callback(null, browserCorsOptions(allowed.includes('*') ? '*' : allowed)),
        (error: unknown) => callback(error as Error, { origin: false }),
      );
    },
  });
  registerErrorHandler(app, await registerWebUi(app, options.webUiDir));
  for (const schema of sharedSchemas) app.addSchema(schema);
  useSharedSchemas(sharedSchemas);
  await registerOpenApi(app, VERSION);

  await app.register(async (api) => {
    api.addHook('onRoute', documentOperation);
    registerAccessControl(api, deps);
    registerMaintenanceMode(api, deps);
    const act = actingFor(deps);
    for (const routes of routeModules) await api.register(routes, { deps, act });
  });
  options.extend?.(app);
  return app;
}
