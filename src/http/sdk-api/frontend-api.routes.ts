import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ClientScope } from '../../domain/client-features/client-feature-store.js';
import type { EvaluationContext } from '../../domain/evaluation/context.js';
import { frontendAnswer } from '../../domain/evaluation/frontend-answer.js';
import { BadDataError } from '../../shared/errors.js';
import { routesTagged, sendJson, type SdkReadRoutes } from '../deps.js';
import { FrontendApiBodySchema, FrontendApiFeaturesSchema } from '../sdk.schemas.js';
import { FRONTEND, sdkTokenOf } from '../plugins/route-access.js';

const route = routesTagged(['Frontend API']);

/** Query parameters (GET) in the SDK's spelling: `userId=…&properties[plan]=pro`. */
function contextFromQuery(query: Record<string, unknown>): Record<string, unknown> {
  const context: Record<string, unknown> = {};
  const properties: Record<string, string> = {};
  for (const [key, value] of Object.entries(query)) {
    if (typeof value !== 'string') {
      throw new BadDataError(`The context field "${key}" is given more than once`, [
        { path: `/query/${key}`, message: 'give each context field once' },
      ]);
    }
    const property = /^properties\[(.+)\]$/.exec(key);
    if (property) properties[property[1]!] = value;
    else context[key] = value;
  }
  if (Object.keys(properties).length > 0) context.properties = properties;
  return context;
}

const MAX_QUERY_FIELDS = 120;

/**
 * The context as query parameters: the standard fields are documented, any other name is a custom field and
 * `properties[name]` a property. Each is given once (checked in `contextFromQuery`, with the field's name).
 */
const FrontendQuerySchema = Type.Object(
  Object.fromEntries(
    ['userId', 'sessionId', 'remoteAddress', 'appName', 'environment', 'currentTime'].map((field) => [
      field,
      Type.Optional(Type.Unknown()),
    ]),
  ),
  { additionalProperties: true, maxProperties: MAX_QUERY_FIELDS },
);

/** The frontend API's evaluations; served alike by the server and by Vexil Edge, each from its own store. */
export const frontendApiRoutes: SdkReadRoutes = async (app, { deps }) => {
  const store = deps.clientFeatures;

  const evaluate = async (request: FastifyRequest, reply: FastifyReply, given: Record<string, unknown>, all: boolean) => {
    const token = sdkTokenOf(request);
    const scope: ClientScope = { environment: token.environment, projects: token.projects };
    const { answer, configuration } = await store.snapshot(scope);
    const context: EvaluationContext = {
      ...(given as EvaluationContext),
      // The token decides the environment, and the caller's address is the one that connected.
      environment: token.environment,
      remoteAddress: typeof given.remoteAddress === 'string' ? given.remoteAddress : request.ip,
      ...(typeof given.currentTime === 'string' ? { currentTime: new Date(given.currentTime) } : {}),
    };
    // A flag off in the environment always evaluates to off, so only those on are evaluated (their parents come
    // from the whole configuration), unless every flag is asked for. The answer is serialised by the engine's
    // answers, not by the schema.
    const body = frontendAnswer(all ? answer.features : answer.enabledFeatures, configuration, context, { all });
    deps.assignments?.assigned(scope, configuration, context);
    return sendJson(reply, body);
  };

  // `/api/proxy` is the path of the Unleash Proxy, which frontend SDKs set up before Unleash had a frontend API
  // still use; `/all` answers every flag of the token's scope, off ones as off, as Unleash Edge does.
  for (const base of ['/api/frontend', '/api/proxy']) {
    for (const path of [base, `${base}/all`]) {
      const all = path.endsWith('/all');
      app.get(path, route(FRONTEND, { querystring: FrontendQuerySchema, ok: FrontendApiFeaturesSchema }), async (request, reply) => {
        const context = contextFromQuery(request.query as Record<string, unknown>);
        if (typeof context.currentTime === 'string' && Number.isNaN(Date.parse(context.currentTime))) {
          throw new BadDataError('currentTime must be a date-time', [
            { path: '/query/currentTime', message: `must be a date-time (got ${JSON.stringify(context.currentTime)})` },
          ]);
        }
        return evaluate(request, reply, context, all);
      });
      app.post(path, route(FRONTEND, { body: FrontendApiBodySchema, ok: FrontendApiFeaturesSchema }), async (request, reply) =>
        evaluate(request, reply, (request.body?.context ?? {}) as Record<string, unknown>, all),
      );
    }
  }
};
