import semver from 'semver';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SdkToken } from '../../domain/access/authenticate.js';
import { matchesEtag, type ClientScope, type ScopedFeatures } from '../../domain/client-features/client-feature-store.js';
import { NotFoundError } from '../../shared/errors.js';
import { encodingFor, gzippedOnce } from './compressed-answers.js';
import { routesTagged, sendJson, type SdkReadRoutes } from '../deps.js';
import {
  ClientFeatureSchema,
  ClientFeaturesDeltaSchema,
  ClientFeaturesQuerySchema,
  ClientFeaturesSchema,
  ClientStreamingResponse,
} from '../sdk.schemas.js';
import { NotModified } from '../common.schemas.js';
import { CLIENT, sdkTokenOf } from '../plugins/route-access.js';

const route = routesTagged(['Client']);

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

/** The client specification that brought segments: SDKs announcing an older one (or none) ignore them. */
const SEGMENTS_SPEC = '4.2.0';

/**
 * Whether the client reads segments itself. As Unleash decides: only a client announcing the segments
 * specification (`Unleash-Client-Spec` ≥ 4.2.0) does; SDKs from before, scripts and old proxies send none and would
 * ignore a strategy's `segments`, serving a flag limited to a segment to everyone in its rollout. An explicit
 * `inlineSegmentConstraints` query wins.
 */
function readsSegments(request: FastifyRequest<{ Querystring: ClientFeaturesQuery }>): boolean {
  const asked = request.query.inlineSegmentConstraints;
  if (asked !== undefined) return asked === 'false';
  const spec = semver.coerce(String(request.headers['unleash-client-spec'] ?? ''));
  return spec !== null && semver.gte(spec, SEGMENTS_SPEC);
}

/** Each segment's constraints inside the strategies that name it, for clients that do not read segments. */
function inlineSegments<F extends ScopedFeatures['features'][number]>(features: F[], answer: ScopedFeatures): F[] {
  const segments = new Map(answer.segments.map((segment) => [segment.id, segment]));
  return features.map((feature) => ({
    ...feature,
    strategies: feature.strategies.map(({ segments: ids, ...strategy }) => ({
      ...strategy,
      constraints: [...strategy.constraints, ...(ids ?? []).flatMap((id) => segments.get(id)?.constraints ?? [])],
    })),
  }));
}

/** The answer with segments inlined, made once per answer: a scope's answer is kept until its flags change. */
const inlinedAnswers = new WeakMap<ScopedFeatures, string>();
function withInlinedSegments(answer: ScopedFeatures): string {
  let inlined = inlinedAnswers.get(answer);
  if (inlined === undefined) {
    const body = JSON.parse(answer.body.toString()) as Record<string, unknown>;
    inlined = JSON.stringify({ ...body, features: inlineSegments(answer.features, answer), segments: [] });
    inlinedAnswers.set(answer, inlined);
  }
  return inlined;
}

/** `If-None-Match` as Unleash's delta API reads it: the revision the SDK holds, in quotes. */
function revisionOf(ifNoneMatch: string | undefined): number | undefined {
  const match = ifNoneMatch ? /^(?:W\/)?"?(?:[0-9a-f]+:)?(\d{1,15})"?$/.exec(ifNoneMatch.trim()) : null;
  return match ? Number(match[1]) : undefined;
}

/** What server-side SDKs read; served alike by the server and by Vexil Edge, each from its own store. */
export const clientApiRoutes: SdkReadRoutes = async (app, { deps }) => {
  const store = deps.clientFeatures;
  const { streams } = deps;

  const sendFeatures = async (request: FastifyRequest<{ Querystring: ClientFeaturesQuery }>, reply: FastifyReply) => {
    const scope = scopeOf(sdkTokenOf(request), request.query);
    const answer = await store.features(scope);
    // The body depends on the client's specification (segments inlined or not) and its encoding.
    reply.header('etag', answer.etag).header('cache-control', 'no-cache').header('vary', 'accept-encoding, unleash-client-spec');
    if (matchesEtag(answer.etag, request.headers['if-none-match'])) return reply.status(304).send();
    if (!readsSegments(request)) return sendJson(reply, withInlinedSegments(answer));
    // The whole configuration is megabytes for thousands of flags; the SDKs' HTTP clients take gzip.
    if (!encodingFor(request.headers['accept-encoding'], ['gzip'])) return sendJson(reply, answer.body);
    return sendJson(reply.header('content-encoding', 'gzip'), await gzippedOnce(answer.body));
  };

  app.get(
    '/api/client/features',
    route(CLIENT, { querystring: ClientFeaturesQuerySchema, response: { 200: Type.Ref(ClientFeaturesSchema), 304: NotModified } }),
    sendFeatures,
  );

  app.get(
    '/api/client/features/:featureName',
    route(CLIENT, {
      params: Type.Object({ featureName: Type.String({ minLength: 1, maxLength: 100 }) }),
      ok: ClientFeatureSchema,
    }),
    async (request) => {
      const answer = await store.features(scopeOf(sdkTokenOf(request), {}));
      const feature = answer.features.find((candidate) => candidate.name === request.params.featureName);
      if (!feature) throw new NotFoundError(`Could not find flag "${request.params.featureName}" for this token`);
      // One flag comes without the segments list: its segments' constraints always come inside its strategies.
      return inlineSegments([feature], answer)[0]!;
    },
  );

  app.get(
    '/api/client/delta',
    route(CLIENT, { querystring: ClientFeaturesQuerySchema, response: { 200: Type.Ref(ClientFeaturesDeltaSchema), 304: NotModified } }),
    async (request, reply) => {
      const scope = scopeOf(sdkTokenOf(request), request.query);
      const delta = await store.delta(scope, revisionOf(request.headers['if-none-match']));
      reply.header('etag', `"${delta.revision}"`).header('cache-control', 'no-cache');
      if (delta.update.events.length === 0) return reply.status(304).send();
      return sendJson(reply, JSON.stringify(delta.update));
    },
  );

  app.get(
    '/api/client/streaming',
    route(CLIENT, { querystring: ClientFeaturesQuerySchema, response: { 200: ClientStreamingResponse } }),
    async (request, reply) => {
      const scope = scopeOf(sdkTokenOf(request), request.query);
      // Loaded before the stream opens, so a failure is still an ordinary error answer.
      const hydration = await store.delta(scope, undefined);
      const stream = streams.start(reply);
      // The store hands every stream of a scope the same hydration object: serialised once for all of them.
      stream.send('unleash-connected', hydration.revision, hydration.update);
      const unsubscribe = store.watch(scope, hydration.revision, (revision, update) => stream.send('unleash-updated', revision, update));
      stream.onClose(unsubscribe);
    },
  );
};
