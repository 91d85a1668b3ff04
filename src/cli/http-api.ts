/** A small client for the admin APIs of Vexil and Unleash (they speak the same dialect), for the CLI. */

/** A failure the operator can act on: printed as one line, exit status 1. */
export class CommandError extends Error {}

export interface ApiErrorDetail {
  message: string;
  path?: string;
}

/** A 4xx/5xx answer in Unleash's error format, kept whole so callers can locate its details. */
export class ApiAnswerError extends CommandError {
  constructor(
    message: string,
    readonly status: number,
    readonly details: ApiErrorDetail[],
  ) {
    super(message);
  }
}

export interface AdminApi {
  readonly baseUrl: string;
  get<T>(path: string): Promise<T>;
  post<T>(path: string, body: unknown): Promise<T>;
  delete(path: string): Promise<void>;
}

const REQUEST_TIMEOUT_MS = 60_000;
/** A server that rate-limits (Unleash 8 allows 15 searches a minute) is waited for this many times per request. */
const RATE_LIMITED_TRIES = 8;
const MAX_WAIT_S = 90;

/** How long a 429 asks to wait: Retry-After or RateLimit-Reset in seconds, else a doubling backoff. */
function waitSeconds(response: Response, attempt: number): number {
  for (const header of ['retry-after', 'ratelimit-reset']) {
    const seconds = Number(response.headers.get(header));
    if (Number.isFinite(seconds) && seconds > 0) return Math.min(seconds, MAX_WAIT_S);
  }
  return Math.min(2 ** attempt, MAX_WAIT_S);
}

export interface AdminApiOptions {
  /** Told, in a line, when the server rate-limits and the request waits. */
  notice?: (line: string) => void;
  /** Sent with every request besides the token's. */
  headers?: Record<string, string>;
}

/** `what` names the server in messages ("Unleash", "Vexil"); the token is sent, never printed. */
export function adminApi(what: string, baseUrl: string, token: string, options: AdminApiOptions = {}): AdminApi {
  let root: URL;
  try {
    root = new URL(baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
  } catch {
    throw new CommandError(`${what} URL "${baseUrl}" is not a URL (expected e.g. https://flags.example.com)`);
  }
  if (root.protocol !== 'http:' && root.protocol !== 'https:')
    throw new CommandError(`${what} URL must be http or https (got ${root.protocol})`);

  async function call<T>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown, attempt = 1): Promise<T> {
    const url = new URL(path.replace(/^\//, ''), root);
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers: {
          ...options.headers,
          authorization: token,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (error) {
      const cause = error instanceof Error ? ((error.cause as Error | undefined)?.message ?? error.message) : String(error);
      throw new CommandError(`Could not reach ${what} at ${root.origin}: ${cause}`);
    }
    const text = await response.text();
    if (response.status === 429 && attempt < RATE_LIMITED_TRIES) {
      const seconds = waitSeconds(response, attempt);
      options.notice?.(
        `${what} is rate-limiting ${method} ${url.pathname} (429); waiting ${seconds} s (try ${attempt} of ${RATE_LIMITED_TRIES})`,
      );
      await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
      return call<T>(method, path, body, attempt + 1);
    }
    if (!response.ok) {
      let parsed: { message?: string; details?: ApiErrorDetail[] } = {};
      try {
        parsed = JSON.parse(text) as typeof parsed;
      } catch {
        // Not Unleash's error format (a proxy's page, say): the status says enough.
      }
      const reason =
        response.status === 401 || response.status === 403
          ? `${what} refused the token (${response.status}${parsed.message ? `: ${parsed.message}` : ''})`
          : `${what} answered ${response.status} to ${method} ${url.pathname}${parsed.message ? `: ${parsed.message}` : ''}`;
      throw new ApiAnswerError(reason, response.status, parsed.details ?? []);
    }
    try {
      return (text === '' ? undefined : JSON.parse(text)) as T;
    } catch {
      throw new CommandError(`${what} answered ${method} ${url.pathname} with something other than JSON; is ${root.origin} ${what}?`);
    }
  }

  return {
    baseUrl: root.href,
    get: (path) => call('GET', path),
    post: (path, body) => call('POST', path, body),
    delete: (path) => call('DELETE', path),
  };
}

/** Runs `work` over `items`, at most `limit` at a time, keeping their order. */
export async function mapLimited<T, R>(items: T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
