/**
 * Named errors with one plain sentence each. The error handler turns them into Unleash's error body
 * `{id, name, message, details}`; the name and status pairs follow Unleash so its clients recognise them.
 */
export interface ErrorDetail {
  message: string;
  path?: string;
}

export abstract class ApiError extends Error {
  abstract readonly statusCode: number;
  readonly details: ErrorDetail[];

  constructor(message: string, details?: ErrorDetail[]) {
    super(message);
    this.details = details ?? [{ message }];
  }

  /** Extra top-level fields of the error body (e.g. `permissions`). */
  extraBody(): Record<string, unknown> {
    return {};
  }

  /** Extra response headers (e.g. `Retry-After`). */
  headers(): Record<string, string> {
    return {};
  }
}

export class BadDataError extends ApiError {
  override readonly name = 'BadDataError';
  readonly statusCode = 400;
}

export class AuthenticationRequired extends ApiError {
  override readonly name = 'AuthenticationRequired';
  readonly statusCode = 401;
}

export class UnauthorizedError extends ApiError {
  override readonly name = 'UnauthorizedError';
  readonly statusCode = 401;
}

export class PasswordMismatch extends ApiError {
  override readonly name = 'PasswordMismatch';
  readonly statusCode = 401;
}

export class PermissionError extends ApiError {
  override readonly name = 'PermissionError';
  readonly statusCode = 403;

  constructor(
    message: string,
    readonly permissions: string[] = [],
  ) {
    super(message);
  }

  override extraBody(): Record<string, unknown> {
    return { permissions: this.permissions };
  }
}

export class NotFoundError extends ApiError {
  override readonly name = 'NotFoundError';
  readonly statusCode = 404;
}

export class NameExistsError extends ApiError {
  override readonly name = 'NameExistsError';
  readonly statusCode = 409;
}

/** The request is well-formed but conflicts with the stored state (e.g. deleting a project still in use). */
export class ConflictError extends ApiError {
  override readonly name = 'ConflictError';
  readonly statusCode = 409;
}

export class ContentTypeError extends ApiError {
  override readonly name = 'ContentTypeError';
  readonly statusCode = 415;
}

export class PayloadTooLargeError extends ApiError {
  override readonly name = 'PayloadTooLargeError';
  readonly statusCode = 413;
}

/** Too many attempts; `Retry-After` says in how many seconds the next one is accepted. */
export class TooManyRequestsError extends ApiError {
  override readonly name = 'TooManyRequestsError';
  readonly statusCode = 429;

  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message);
  }

  override headers(): Record<string, string> {
    return { 'retry-after': String(this.retryAfterSeconds) };
  }
}

export class UnknownError extends ApiError {
  override readonly name = 'UnknownError';
  readonly statusCode = 500;
}

export class ServiceUnavailableError extends ApiError {
  override readonly name = 'ServiceUnavailableError';
  readonly statusCode = 503;
}
