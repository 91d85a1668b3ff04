import { randomUUID } from 'node:crypto';
import type { ErrorObject } from 'ajv';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { translateDatabaseError } from '../../db/pg-errors.js';
import type { WebUiFallback } from './web-ui.js';
import {
  ApiError,
  BadDataError,
  ContentTypeError,
  NotFoundError,
  PayloadTooLargeError,
  ServiceUnavailableError,
  UnknownError,
  type ErrorDetail,
} from '../../shared/errors.js';

const HTTP_PARTS: Record<string, string> = { body: 'body', querystring: 'query', params: 'params', headers: 'headers' };

const PREVIEW_LENGTH = 80;
const PREVIEW_DEPTH = 3;
const PREVIEW_ITEMS = 10;

/** JSON of the first levels and items only: a rejected value may be huge or nested thousands deep. */
function preview(value: unknown, depth: number): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? String(value);
  const entries = Array.isArray(value) ? value.map((item) => [undefined, item] as const) : Object.entries(value);
  if (entries.length === 0) return Array.isArray(value) ? '[]' : '{}';
  if (depth >= PREVIEW_DEPTH) return Array.isArray(value) ? '[...]' : '{...}';
  const shown = entries
    .slice(0, PREVIEW_ITEMS)
    .map(([key, item]) => `${key === undefined ? '' : `${JSON.stringify(key)}:`}${preview(item, depth + 1)}`);
  if (entries.length > PREVIEW_ITEMS) shown.push('...');
  return Array.isArray(value) ? `[${shown.join(',')}]` : `{${shown.join(',')}}`;
}

function describeValue(value: unknown): string {
  const text = preview(value, 0);
  return text.length > PREVIEW_LENGTH ? `${text.slice(0, PREVIEW_LENGTH - 3)}...` : text;
}

/** One detail per Ajv problem, with a path such as `/query/limit` and what was sent. */
function validationDetail(part: string, error: ErrorObject): ErrorDetail {
  const base = `/${part}${error.instancePath}`;
  const custom = (error.parentSchema as { errorMessage?: string } | undefined)?.errorMessage;
  switch (error.keyword) {
    case 'required': {
      const property = (error.params as { missingProperty: string }).missingProperty;
      return { path: `${base}/${property}`, message: `"${property}" is required` };
    }
    case 'additionalProperties': {
      const property = (error.params as { additionalProperty: string }).additionalProperty;
      return { path: `${base}/${property}`, message: `"${property}" is not an allowed property here` };
    }
    default: {
      const field = error.instancePath ? `"${error.instancePath.slice(1)}"` : `The ${part}`;
      const message = custom ?? `${field} ${error.message ?? 'is invalid'}`;
      return { path: base, message: `${message} (got ${describeValue(error.data)})` };
    }
  }
}

function fromValidation(error: FastifyError): BadDataError {
  return validationError(HTTP_PARTS[error.validationContext ?? 'body'] ?? 'body', error.validation as ErrorObject[]);
}

/** The most problems one answer lists: enough to mend a form or a script, small even for a body of bad items. */
export const MAX_LISTED_PROBLEMS = 100;

/** A 400 listing Ajv's problems with paths under `/<part>` (`/body/...`, `/query/...`). */
export function validationError(part: string, problems: ErrorObject[]): BadDataError {
  // An `if` failure only says that its `then`/`else` failed, whose own problems are listed already.
  const relevant = problems.filter((problem) => problem.keyword !== 'if');
  const details = relevant.slice(0, MAX_LISTED_PROBLEMS).map((problem) => validationDetail(part, problem));
  const summary =
    relevant.length === 1
      ? details[0]!.message
      : relevant.length > MAX_LISTED_PROBLEMS
        ? `The request has ${relevant.length} problems; the first ${MAX_LISTED_PROBLEMS} are in details`
        : `The request has ${relevant.length} problems; see details`;
  return new BadDataError(`Request validation failed: ${summary}`, details);
}

/** Fastify's own client errors (parsing, content type, size) in Unleash's vocabulary. */
function fromFastifyClientError(error: FastifyError): ApiError {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ContentTypeError('Unsupported content type: send the request body as application/json');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new PayloadTooLargeError('The request body is too large');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new BadDataError('The request body is not valid JSON', [{ path: '/body', message: error.message }]);
    default:
      if (error instanceof SyntaxError) {
        return new BadDataError('The request body is not valid JSON', [{ path: '/body', message: error.message }]);
      }
      return new BadDataError(error.message);
  }
}

/** An error in Unleash's vocabulary, or undefined when it is unexpected (a 500). */
export function toApiError(error: FastifyError): ApiError | undefined {
  if (error instanceof ApiError) return error;
  if (error.validation) return fromValidation(error);
  const fromDatabase = translateDatabaseError(error);
  if (fromDatabase) return fromDatabase;
  if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return fromFastifyClientError(error);
  if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
    return fromFastifyClientError(error);
  }
  if (error.statusCode === 503) return new ServiceUnavailableError('The server is shutting down; try again');
  return undefined;
}

/**
 * How an error body is written: Unleash's `{id, name, message, details}`, to which a protocol may add its own
 * fields (SCIM's `schemas`, `status`, `detail`) under its own content type.
 */
export interface ErrorFormat {
  contentType: string;
  extraFields(error: ApiError): Record<string, unknown>;
}

const UNLEASH_ERRORS: ErrorFormat = { contentType: 'application/json; charset=utf-8', extraFields: () => ({}) };

export function sendError(reply: FastifyReply, error: ApiError, id: string = randomUUID(), format: ErrorFormat = UNLEASH_ERRORS) {
  return reply
    .status(error.statusCode)
    .headers(error.headers())
    .type(format.contentType)
    .send({ id, name: error.name, message: error.message, details: error.details, ...error.extraBody(), ...format.extraFields(error) });
}

/**
 * The error handler: every 4xx/5xx leaves as `{id, name, message, details}` (with the format's fields). Anything
 * unexpected becomes a 500 UnknownError that leaks nothing; the full error is logged under the same id.
 */
export function errorHandler(format: ErrorFormat = UNLEASH_ERRORS) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const id = randomUUID();
    const apiError = toApiError(error);
    if (apiError) {
      // A read cancelled because its client disconnected is no failure of the server: nobody waits for the answer.
      const clientGone = request.raw.destroyed || reply.raw.destroyed;
      if (apiError.statusCode >= 500 && clientGone)
        request.log.info({ errorId: id, code: (error as { code?: string }).code }, 'The client went away; its request was stopped');
      else if (apiError.statusCode >= 500) request.log.error({ err: error, errorId: id }, apiError.message);
      return sendError(reply, apiError, id, format);
    }
    request.log.error({ err: error, errorId: id }, 'Unexpected error');
    return sendError(reply, new UnknownError(`Unexpected error; it was logged with id ${id}`), id, format);
  };
}

/** The app's error handler, and its answer to paths no route has (a page of the web UI, or a 404). */
export function registerErrorHandler(app: FastifyInstance, pageFallback: WebUiFallback = () => false): void {
  app.setErrorHandler(errorHandler());

  app.setNotFoundHandler((request, reply) => {
    if (pageFallback(request, reply)) return reply;
    return sendError(reply, new NotFoundError(`Could not find ${request.method} ${request.url.split('?')[0]}`));
  });
}
