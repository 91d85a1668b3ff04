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

/** The base of one kind of error: Unleash's name for it and its HTTP status. */
function errorOf(name: string, statusCode: number) {
  return class extends ApiError {
    override readonly name = name;
    readonly statusCode = statusCode;
  };
}

/** The base of an error a client may try again after: `Retry-After` says in how many seconds, when it can be told. */
function retryableErrorOf(name: string, statusCode: number) {
  return class extends errorOf(name, statusCode) {
    constructor(
      message: string,
      readonly retryAfterSeconds?: number,
    ) {
      super(message);
    }

    override headers(): Record<string, string> {
      return this.retryAfterSeconds === undefined ? {} : { 'retry-after': String(this.retryAfterSeconds) };
    }
  };
}

export class BadDataError extends errorOf('BadDataError', 400) {}

/**
 * How a person signs in, as Unleash describes it in the 401 of an admin path asked without a session: its admin UI
 * draws the sign-in page from it (a password form unless `defaultHidden`, a button per option).
 */
export interface SignInDescription {
  /** `password`: the password form, and the options beside it. */
  type: 'password';
  /** Where the password form posts. */
  path: string;
  defaultHidden: boolean;
  options: Array<{ type: string; message: string; path: string }>;
}

export class AuthenticationRequired extends errorOf('AuthenticationRequired', 401) {
  constructor(
    message: string,
    readonly signIn?: SignInDescription,
  ) {
    super(message);
  }

  override extraBody(): Record<string, unknown> {
    return this.signIn ? { ...this.signIn } : {};
  }
}

export class UnauthorizedError extends errorOf('UnauthorizedError', 401) {}

/** A reset or invite link that is unknown, used or expired (Unleash's name). */
export class InvalidTokenError extends errorOf('InvalidTokenError', 401) {}

export class PasswordMismatch extends errorOf('PasswordMismatch', 401) {}

export class PermissionError extends errorOf('PermissionError', 403) {
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

export class NotFoundError extends errorOf('NotFoundError', 404) {}

export class NameExistsError extends errorOf('NameExistsError', 409) {}

/** The request is well-formed but conflicts with the stored state (e.g. deleting a project still in use). */
export class ConflictError extends errorOf('ConflictError', 409) {}

export class ContentTypeError extends errorOf('ContentTypeError', 415) {}

export class PayloadTooLargeError extends errorOf('PayloadTooLargeError', 413) {}

/** Too many attempts; `Retry-After` says in how many seconds the next one is accepted. */
export class TooManyRequestsError extends retryableErrorOf('TooManyRequestsError', 429) {}

export class UnknownError extends errorOf('UnknownError', 500) {}

/** The server cannot answer for now (maintenance, shutdown, its database away); `Retry-After` when it can be told. */
export class ServiceUnavailableError extends retryableErrorOf('ServiceUnavailableError', 503) {}

/**
 * The details of a list whose entries must differ in a key: one per entry repeating an earlier one's, at `path`
 * of that entry, saying `<what> must be unique (<key> repeats)`.
 */
export function repeatedKeys<T>(items: T[], keyOf: (item: T) => string, pathOf: (index: number) => string, what: string): ErrorDetail[] {
  const seen = new Set<string>();
  return items.flatMap((item, index) => {
    const key = keyOf(item);
    const repeated = seen.has(key);
    seen.add(key);
    return repeated ? [{ path: pathOf(index), message: `${what} must be unique (${JSON.stringify(key)} repeats)` }] : [];
  });
}
