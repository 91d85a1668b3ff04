import { createHash, randomUUID } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { matchesEtag, type ClientScope } from '../../domain/client-features/client-feature-store.js';
import { evaluateForOpenFeature, evaluateOneForOpenFeature, InvalidContextError, sdkContextOf } from '../../domain/evaluation/ofrep.js';
import { BadDataError, NotFoundError, UnknownError } from '../../shared/errors.js';
import { hashToken } from '../../shared/secrets.js';
import { NotModified } from '../common.schemas.js';
import { sendJson, type SdkReadRoutes } from '../deps.js';
import {
  OfrepBulkEvaluationSchema,
  OfrepErrorSchema,
  OfrepEvaluationRequestSchema,
  OfrepEvaluationSuccessSchema,
} from './ofrep.schemas.js';
import { toApiError } from '../plugins/error-handler.js';
import { compressedOnce, encodingFor, storedAsIs, zlibStreamOf } from './compressed-answers.js';
import { ANY_SDK, bearerToken, SDK_CHANNEL, SDK_CHANNEL_PATTERN, sdkTokenOf } from '../plugins/route-access.js';

const tags = ['OpenFeature (OFREP)'];
const FLAGS = '/ofrep/v1/evaluate/flags';
const FLAGS_START = Buffer.from('{"flags":[');
/** A context is a handful of attributes: far less than this. */
const BODY_LIMIT = 64 * 1024;
const EVENTS = '/ofrep/v1/events';
/** How long a hidden page keeps its stream, as OFREP's default. */
const INACTIVITY_DELAY_SEC = 120;

type OfrepErrorCode = 'PARSE_ERROR' | 'INVALID_CONTEXT' | 'FLAG_NOT_FOUND' | 'GENERAL';

/** What the OFREP routes answer when they fail, all in OFREP's shape (a body too large is an invalid context). */
const ofrepErrors = (...statuses: number[]) => ({ schema: Type.Ref(OfrepErrorSchema), statuses: [...statuses, 429, 500] });

/**
 * OpenFeature's Remote Evaluation Protocol, so any OpenFeature SDK with an OFREP provider evaluates Vexil's flags:
 * server providers with a client token, web providers with a frontend token (in `Authorization` or `X-API-Key`),
 * each seeing exactly its token's scope. Errors leave in OFREP's shape, `{key, errorCode, errorDetails}`.
 */
export const ofrepRoutes: SdkReadRoutes = async (app, { deps }) => {
  const store = deps.clientFeatures;
  const { evaluationUsage: usage, streams } = deps;

  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const key = (request.params as { key?: string } | undefined)?.key;
    const parseError =
      error instanceof SyntaxError || error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY';
    // OFREP knows no 413: a context too large to read is an invalid one.
    const apiError =
      error instanceof InvalidContextError
        ? new BadDataError(error.message)
        : error.code === 'FST_ERR_CTP_BODY_TOO_LARGE'
          ? new BadDataError(`The request body is larger than ${BODY_LIMIT / 1024} KiB`)
          : toApiError(error);
    const id = randomUUID();
    if (!apiError) request.log.error({ err: error, errorId: id }, 'Unexpected error');
    const known = apiError ?? new UnknownError(`Unexpected error; it was logged with id ${id}`);
    const errorCode: OfrepErrorCode =
      known.statusCode === 400
        ? parseError
          ? 'PARSE_ERROR'
          : 'INVALID_CONTEXT'
        : known instanceof NotFoundError && key
          ? 'FLAG_NOT_FOUND'
          : 'GENERAL';
    const details = known.details.filter((detail) => detail.message !== known.message).map((detail) => detail.message);
    return reply
      .status(known.statusCode)
      .headers(known.headers())
      .type('application/json; charset=utf-8')
      .send({ ...(key ? { key } : {}), errorCode, errorDetails: [known.message, ...details].join('; ') });
  });

  /** The token's scope, its configuration, and the request's context as the SDK engine takes it. */
  const prepare = async (request: FastifyRequest) => {
    const token = sdkTokenOf(request);
    const scope: ClientScope = { environment: token.environment, projects: token.projects };
    const { answer, configuration } = await store.snapshot(scope);
    const given = (request.body as { context?: Record<string, unknown> } | undefined)?.context ?? {};
    return { token, answer, configuration, given, context: sdkContextOf(given, token.environment, request.ip) };
  };

  app.post(
    `${FLAGS}/:key`,
    {
      bodyLimit: BODY_LIMIT,
      schema: {
        tags,
        params: Type.Object({ key: Type.String({ minLength: 1, maxLength: 100 }) }),
        body: Type.Ref(OfrepEvaluationRequestSchema),
        response: { 200: Type.Ref(OfrepEvaluationSuccessSchema) },
      },
      config: { access: ANY_SDK, errors: ofrepErrors(400, 401, 403, 404, 415) },
    },
    async (request, reply) => {
      const { key } = request.params as { key: string };
      const { token, answer, configuration, context } = await prepare(request);
      const feature = answer.features.find((candidate) => candidate.name === key);
      if (!feature) throw new NotFoundError(`Flag "${key}" was not found`);
      const body = evaluateOneForOpenFeature(feature, configuration, context, usage.counter(token));
      deps.assignments?.assigned(token, configuration, context, key);
      return sendJson(reply, body);
    },
  );

  app.post(
    FLAGS,
    {
      bodyLimit: BODY_LIMIT,
      schema: {
        tags,
        body: Type.Ref(OfrepEvaluationRequestSchema),
        response: { 200: Type.Ref(OfrepBulkEvaluationSchema), 304: NotModified },
      },
      config: { access: ANY_SDK, errors: ofrepErrors(400, 401, 403, 415) },
    },
    async (request, reply) => {
      const { token, answer, configuration, given, context } = await prepare(request);
      // The same flags and the same context give the same answer: a provider polling with it costs no evaluation.
      const etag = `"${createHash('sha256').update(answer.etag).update(JSON.stringify(given)).digest('hex').slice(0, 24)}"`;
      reply.header('etag', etag).header('cache-control', 'no-cache');
      if (matchesEtag(etag, request.headers['if-none-match'])) return reply.status(304).send();
      const { off, on } = evaluateForOpenFeature(answer.features, configuration, context, usage.counter(token));
      deps.assignments?.assigned(token, configuration, context);
      // Browsers cannot send headers on an event stream: its channel is the token's stored hash, which every
      // instance can look up and which is not the secret. It carries change notices only, never flags.
      const channel = hashToken(bearerToken(request)!);
      const rest = {
        metadata: { revision: answer.revision },
        eventStreams: [
          {
            type: 'sse',
            // `since`: the stream tells at once of a change made before it opened.
            endpoint: { requestUri: `${EVENTS}?channel=${channel}&since=${answer.revision}` },
            inactivityDelaySec: INACTIVITY_DELAY_SEC,
          },
        ],
      };
      // The evaluations come serialised from the engine's answers; the rest is small.
      const fresh = Buffer.from(`${off.length > 0 && on.length > 0 ? ',' : ''}${on}],${JSON.stringify(rest).slice(1)}`);
      reply.header('vary', 'accept-encoding');
      if (!encodingFor(request.headers['accept-encoding'], ['deflate'])) return sendJson(reply, Buffer.concat([FLAGS_START, off, fresh]));
      // Most of a bulk answer is the flags that are off: compressed once per configuration, to a tenth of their size.
      reply.header('content-encoding', 'deflate');
      return sendJson(reply, zlibStreamOf([compressedOnce(FLAGS_START), compressedOnce(off), storedAsIs(fresh)]));
    },
  );

  app.get(
    EVENTS,
    {
      schema: {
        tags,
        querystring: Type.Object({
          channel: Type.String({ pattern: SDK_CHANNEL_PATTERN, errorMessage: 'channel is the one a bulk evaluation named' }),
          since: Type.Optional(Type.Integer({ minimum: 0, description: 'The revision the provider holds' })),
        }),
        response: { 200: { type: 'string', description: 'Server-sent events: `refetchEvaluation` when the flags of the scope change' } },
      },
      config: { access: SDK_CHANNEL, errors: ofrepErrors(400, 401) },
    },
    async (request, reply) => {
      const { since } = request.query as { since?: number };
      const token = sdkTokenOf(request);
      const scope: ClientScope = { environment: token.environment, projects: token.projects };
      const current = await store.features(scope);
      const stream = streams.start(reply);
      const notify = (revision: number) => stream.send('message', revision, { type: 'refetchEvaluation', etag: String(revision) });
      // Only what the token sees: a change elsewhere is not announced, not even as a notice.
      const unsubscribe = store.watch(scope, current.revision, notify);
      stream.onClose(unsubscribe);
      // The scope's answer keeps its revision until something it sees changes: newer means the provider is behind.
      if (since !== undefined && current.revision > since) notify(current.revision);
    },
  );
};
