import type { ServerResponse } from 'node:http';
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { inUnitOfWork } from '../db/unit-of-work.js';
import { SYSTEM_ACTOR } from '../domain/access/actor.js';
import type { SdkToken } from '../domain/access/authenticate.js';
import { matchesEtag, type ClientScope, type DeltaEvent, type ScopedFeatures } from '../domain/client-features/client-feature-store.js';
import { registerClient, type ClientRegistration } from '../domain/client-features/client-registration.js';
import { BadDataError, NotFoundError } from '../shared/errors.js';
import type { RouteModule } from './deps.js';
import { ClientFeatureSchema, ClientFeaturesDeltaSchema, ClientFeaturesSchema, ClientStreamingResponse } from './sdk.schemas.js';
import { NotModified } from './common.schemas.js';
import { CLIENT, sdkTokenOf } from './plugins/access.js';

const tags = ['Client'];

type Registration = Static<typeof ClientRegistrationSchema>;

/** A client token reports for its own environment only (`default` is what SDKs send when not told). */
export function assertTokenEnvironment(token: SdkToken, environment: string | undefined, path: string): void {
  if (environment === undefined || environment === 'default' || environment === token.environment) return;
  throw new BadDataError(`This token is for the environment "${token.environment}"`, [
    { path, message: `must be the token's environment "${token.environment}" (got ${JSON.stringify(environment)})` },
  ]);
}

export function registrationOf(body: Registration, token: SdkToken, clientIp: string): ClientRegistration {
  return {
    appName: body.appName,
    instanceId: body.instanceId ?? 'default',
    environment: token.environment,
    ...(body.sdkVersion ? { sdkVersion: body.sdkVersion } : {}),
    strategies: body.strategies ?? [],
    ...(body.started !== undefined ? { started: new Date(body.started) } : {}),
    ...(body.interval !== undefined ? { intervalMs: body.interval } : {}),
    clientIp,
  };
}

/** The query filters server-side SDKs send; `project` and `tag` may repeat. */
const ClientFeaturesQuerySchema = Type.Object({
  project: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 100 })),
  namePrefix: Type.Optional(Type.String({ maxLength: 100 })),
  tag: Type.Optional(Type.Array(Type.String({ pattern: '^[^:]+:.+$', maxLength: 200 }), { maxItems: 100 })),
  inlineSegmentConstraints: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')])),
});

/**
 * SDKs send more than Vexil reads (platform names, versions, yggdrasil versions), so unknown properties are
 * accepted and ignored here, unlike on the admin API: rejecting them would break every Unleash SDK.
 */
export const ClientRegistrationSchema = Type.Object(
  {
    appName: Type.String({ minLength: 1, maxLength: 255 }),
    instanceId: Type.Optional(Type.String({ maxLength: 255 })),
    sdkVersion: Type.Optional(Type.String({ maxLength: 255 })),
    environment: Type.Optional(Type.String({ maxLength: 100 })),
    strategies: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 100 })),
    started: Type.Optional(Type.Union([Type.String({ format: 'date-time' }), Type.Integer({ minimum: 0 })])),
    interval: Type.Optional(Type.Integer({ minimum: 0, maximum: 86_400_000 })),
  },
  { $id: 'clientApplicationSchema' },
);

export const clientApiSchemas = [ClientRegistrationSchema];

type ClientFeaturesQuery = { project?: string[]; namePrefix?: string; tag?: string[]; inlineSegmentConstraints?: 'true' | 'false' };

function scopeOf(token: SdkToken, query: ClientFeaturesQuery): ClientScope {
  return {
    environment: token.environment,
    projects: token.projects,
    ...(query.project ? { project: query.project } : {}),
    ...(query.namePrefix ? { namePrefix: query.namePrefix } : {}),
    ...(query.tag ? { tag: query.tag } : {}),
  };
}

/** Old SDKs read segment constraints inside each strategy (`inlineSegmentConstraints=true`). */
function withInlinedSegments(answer: ScopedFeatures): string {
  const segments = new Map(answer.segments.map((segment) => [segment.id, segment]));
  const features = answer.features.map((feature) => ({
    ...feature,
    strategies: feature.strategies.map(({ segments: ids, ...strategy }) => ({
      ...strategy,
      constraints: [...strategy.constraints, ...(ids ?? []).flatMap((id) => segments.get(id)?.constraints ?? [])],
    })),
  }));
  const body = JSON.parse(answer.body) as Record<string, unknown>;
  return JSON.stringify({ ...body, features, segments: [] });
}

/** `If-None-Match` as Unleash's delta API reads it: the revision the SDK holds, in quotes. */
function revisionOf(ifNoneMatch: string | undefined): number | undefined {
  const match = ifNoneMatch ? /^(?:W\/)?"?(?:[0-9a-f]+:)?(\d{1,15})"?$/.exec(ifNoneMatch.trim()) : null;
  return match ? Number(match[1]) : undefined;
}

// A comment line every 30 s keeps proxies from closing an idle stream; the SDK drops a stream silent for 60 s.
const KEEP_ALIVE_MS = 30_000;

function writeEvent(response: ServerResponse, event: string, revision: number, events: DeltaEvent[]): void {
  response.write(`event: ${event}\nid: ${revision}\ndata: ${JSON.stringify({ events })}\n\n`);
}

export const clientApiRoutes: RouteModule = async (app, { deps }) => {
  const store = deps.clientFeatures;
  const streams = new Set<ServerResponse>();
  // Streams never end by themselves: shutting down ends them, so SDKs reconnect (to another instance).
  app.addHook('preClose', async () => {
    for (const stream of streams) stream.end();
  });

  const sendFeatures = async (request: FastifyRequest<{ Querystring: ClientFeaturesQuery }>, reply: FastifyReply) => {
    const scope = scopeOf(sdkTokenOf(request), request.query);
    const answer = await store.features(scope);
    reply.header('etag', answer.etag).header('cache-control', 'no-cache');
    if (matchesEtag(answer, request.headers['if-none-match'])) return reply.status(304).send();
    const body = request.query.inlineSegmentConstraints === 'true' ? withInlinedSegments(answer) : answer.body;
    return reply.type('application/json; charset=utf-8').send(body);
  };

  app.get(
    '/api/client/features',
    {
      schema: { tags, querystring: ClientFeaturesQuerySchema, response: { 200: Type.Ref(ClientFeaturesSchema), 304: NotModified } },
      config: { access: CLIENT },
    },
    sendFeatures,
  );

  app.get(
    '/api/client/features/:featureName',
    {
      schema: {
        tags,
        params: Type.Object({ featureName: Type.String({ minLength: 1, maxLength: 100 }) }),
        response: { 200: Type.Ref(ClientFeatureSchema) },
      },
      config: { access: CLIENT },
    },
    async (request) => {
      const answer = await store.features(scopeOf(sdkTokenOf(request), {}));
      const feature = answer.features.find((candidate) => candidate.name === request.params.featureName);
      if (!feature) throw new NotFoundError(`Could not find flag "${request.params.featureName}" for this token`);
      return feature;
    },
  );

  app.get(
    '/api/client/delta',
    {
      schema: { tags, querystring: ClientFeaturesQuerySchema, response: { 200: Type.Ref(ClientFeaturesDeltaSchema), 304: NotModified } },
      config: { access: CLIENT },
    },
    async (request, reply) => {
      const scope = scopeOf(sdkTokenOf(request), request.query);
      const delta = await store.delta(scope, revisionOf(request.headers['if-none-match']));
      reply.header('etag', `"${delta.revision}"`).header('cache-control', 'no-cache');
      if (delta.events.length === 0) return reply.status(304).send();
      return reply.type('application/json; charset=utf-8').send(JSON.stringify({ events: delta.events }));
    },
  );

  app.get(
    '/api/client/streaming',
    { schema: { tags, querystring: ClientFeaturesQuerySchema, response: { 200: ClientStreamingResponse } }, config: { access: CLIENT } },
    async (request, reply) => {
      const scope = scopeOf(sdkTokenOf(request), request.query);
      // Loaded before the stream opens, so a failure is still an ordinary error answer.
      const hydration = await store.delta(scope, undefined);
      reply.hijack();
      const response = reply.raw;
      response.writeHead(200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      writeEvent(response, 'unleash-connected', hydration.revision, hydration.events);
      let sentRevision = hydration.revision;
      const unsubscribe = store.subscribe((environment, change, configuration) => {
        if (environment !== scope.environment || configuration.revision <= sentRevision) return;
        const events = store.scopedChange(scope, change, configuration);
        // A change outside the scope is not announced at all: even its revision would say that something moved.
        if (events.length === 0) return;
        sentRevision = configuration.revision;
        writeEvent(response, 'unleash-updated', configuration.revision, events);
      });
      const keepAlive = setInterval(() => response.write(': keep-alive\n\n'), KEEP_ALIVE_MS);
      streams.add(response);
      deps.metrics.streamingConnections.inc();
      response.on('close', () => {
        unsubscribe();
        clearInterval(keepAlive);
        streams.delete(response);
        deps.metrics.streamingConnections.dec();
      });
    },
  );

  app.post(
    '/api/client/register',
    { schema: { tags, body: Type.Ref(ClientRegistrationSchema) }, config: { access: CLIENT } },
    async (request, reply) => {
      const token = sdkTokenOf(request);
      assertTokenEnvironment(token, request.body.environment, '/body/environment');
      await inUnitOfWork(deps, SYSTEM_ACTOR, (uow) => registerClient(uow, registrationOf(request.body, token, request.ip)));
      return reply.status(202).send();
    },
  );
};
