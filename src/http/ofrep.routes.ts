import { createHash, randomUUID } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { ClientScope } from '../domain/client-features/client-feature-store.js';
import { evaluateForOpenFeature, InvalidContextError, type OfrepEvaluation, sdkContextOf } from '../domain/evaluation/ofrep.js';
import { UsageTally } from '../domain/usage/usage-tally.js';
import { BadDataError, NotFoundError, UnknownError } from '../shared/errors.js';
import { NotModified } from './common.schemas.js';
import type { RouteModule } from './deps.js';
import { OfrepBulkEvaluationSchema, OfrepEvaluationRequestSchema, OfrepEvaluationSuccessSchema } from './ofrep.schemas.js';
import { toApiError } from './plugins/error-handler.js';
import { ANY_SDK, sdkTokenOf } from './plugins/access.js';

const tags = ['OpenFeature (OFREP)'];
const FLAGS = '/ofrep/v1/evaluate/flags';
/** A context is a handful of attributes: far less than this. */
const BODY_LIMIT = 64 * 1024;
/** OFREP evaluations count in a flag's usage under this application, written this often. */
const USAGE_APPLICATION = 'openfeature';
const USAGE_WRITE_MS = 5_000;

type OfrepErrorCode = 'PARSE_ERROR' | 'INVALID_CONTEXT' | 'FLAG_NOT_FOUND' | 'GENERAL';

/**
 * OpenFeature's Remote Evaluation Protocol, so any OpenFeature SDK with an OFREP provider evaluates Vexil's flags:
 * server providers with a client token, web providers with a frontend token (in `Authorization` or `X-API-Key`),
 * each seeing exactly its token's scope. Errors leave in OFREP's shape, `{key, errorCode, errorDetails}`.
 */
export const ofrepRoutes: RouteModule = async (app, { deps }) => {
  const store = deps.clientFeatures;
  const usage = new UsageTally(deps, USAGE_APPLICATION, USAGE_WRITE_MS, (error) =>
    app.log.error({ err: error }, 'Recording the usage of OpenFeature evaluations failed'),
  );
  app.addHook('onClose', () => usage.stop());
  const counted = (evaluations: OfrepEvaluation[]) =>
    evaluations.map((evaluation) => ({
      key: evaluation.key,
      enabled: evaluation.reason !== 'DISABLED' && evaluation.reason !== 'DEFAULT',
    }));

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
    const [answer, configuration] = await Promise.all([store.features(scope), store.configuration(token.environment)]);
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
      config: { access: ANY_SDK },
    },
    async (request) => {
      const { key } = request.params as { key: string };
      const { token, answer, configuration, context } = await prepare(request);
      const feature = answer.features.find((candidate) => candidate.name === key);
      if (!feature) throw new NotFoundError(`Flag "${key}" was not found`);
      const evaluations = await evaluateForOpenFeature([feature], configuration.features, configuration.segments, context);
      usage.count(token, counted(evaluations));
      return evaluations[0];
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
      config: { access: ANY_SDK },
    },
    async (request, reply) => {
      const { token, answer, configuration, given, context } = await prepare(request);
      // The same flags and the same context give the same answer: a provider polling with it costs no evaluation.
      const etag = `"${createHash('sha256').update(answer.etag).update(JSON.stringify(given)).digest('hex').slice(0, 24)}"`;
      reply.header('etag', etag).header('cache-control', 'no-cache');
      const held = request.headers['if-none-match'];
      if (held?.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag)) return reply.status(304).send();
      const flags = await evaluateForOpenFeature(answer.features, configuration.features, configuration.segments, context);
      usage.count(token, counted(flags));
      return { flags, metadata: { revision: answer.revision } };
    },
  );
};
