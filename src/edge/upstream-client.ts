import { randomUUID } from 'node:crypto';
import type { RunningExperimentView } from '../domain/experiments/ingest.js';
import type { ClientFeature, ClientSegment } from '../domain/client-features/environment-configuration.js';
import { createParser } from 'eventsource-parser';
import type { DeltaEvent } from '../domain/client-features/client-feature-store.js';
import { VERSION } from '../shared/version.js';

/** A token as the upstream's `/edge/validate` describes it. */
export interface UpstreamToken {
  token: string;
  type: 'client' | 'frontend';
  environment: string;
  /** `['*']` for every project. */
  projects: string[];
}

/** What `/api/client/features` answered for one token. */
export type FeaturesAnswer =
  | { kind: 'not-modified' }
  | { kind: 'features'; features: ClientFeature[]; segments: ClientSegment[]; etag: string | undefined; revision: number | undefined };

/** Usage and registrations of many SDKs, in the shape of the upstream's `/api/client/metrics/bulk`. */
export interface BulkMetrics {
  applications: Array<Record<string, unknown>>;
  metrics: Array<{
    featureName: string;
    appName: string;
    environment: string;
    timestamp: string;
    yes: number;
    no: number;
    variants: Record<string, number>;
  }>;
}

/** A live stream sends a keep-alive comment every 30 s: a minute and a half of silence is a dead one. */
const STREAM_SILENCE_MS = 90_000;

/** An event longer than this is no configuration of flags a client token sees: the stream is dropped as broken. */
const MAX_STREAMED_EVENT_CHARACTERS = 256 * 1024 * 1024;

/**
 * What one event of the upstream's change stream says: `unleash-connected` holds a hydration (every flag of the
 * token's scope), `unleash-updated` the flags and segments a change touched. `revision` is the upstream's, as its
 * `id` or the events' `eventId` give it.
 */
export interface StreamedChange {
  revision: number | undefined;
  events: DeltaEvent[];
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Whether an event has the fields its type needs; the flags and segments inside are taken as the upstream sends them. */
function readableEvent(event: unknown): event is DeltaEvent {
  if (!isRecord(event)) return false;
  switch (event.type) {
    case 'hydration':
      return Array.isArray(event.features) && Array.isArray(event.segments);
    case 'feature-updated':
      return isRecord(event.feature) && typeof event.feature.name === 'string';
    case 'feature-removed':
      return typeof event.featureName === 'string';
    case 'segment-updated':
      return isRecord(event.segment) && typeof event.segment.id === 'number';
    case 'segment-removed':
      return typeof event.segmentId === 'number';
    default:
      return false;
  }
}

/** The upstream's revision as an event's id gives it (Vexil's and Vexil Edge's streams number their events so). */
export function revisionOfId(id: string | undefined): number | undefined {
  return id !== undefined && /^\d{1,15}$/.test(id) ? Number(id) : undefined;
}

/** A change as the upstream sends it (`{events: [...]}`), or undefined when it is not one the edge can apply. */
function changeOf(body: unknown, revision: number | undefined): StreamedChange | undefined {
  if (!isRecord(body) || !Array.isArray(body.events) || !body.events.every(readableEvent)) return undefined;
  const events = body.events as DeltaEvent[];
  const eventIds = events.map((event) => event.eventId).filter((eventId) => Number.isSafeInteger(eventId));
  return { revision: revision ?? (eventIds.length > 0 ? Math.max(...eventIds) : undefined), events };
}

/** A stream event's data as a change, or undefined when it is not one the edge can apply (it fetches the flags then). */
export function readStreamedChange(data: string, id: string | undefined): StreamedChange | undefined {
  try {
    return changeOf(JSON.parse(data), revisionOfId(id));
  } catch {
    return undefined;
  }
}

/** The upstream did not answer, or answered with a server error: the edge keeps what it has and tries again. */
export class UpstreamUnavailable extends Error {
  override readonly name = 'UpstreamUnavailable';
}

/** The upstream refused the request (a token it does not know, a report it will never take): trying again will not help. */
export class UpstreamRefused extends Error {
  override readonly name = 'UpstreamRefused';
  constructor(
    readonly statusCode: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The edge's HTTP client of its upstream (a Vexil server, an Unleash server, or another edge: they speak one
 * dialect), on Node's own fetch (which keeps connections alive; it loads faster than the undici package, which counts
 * in an edge's start-up). It identifies itself as an SDK would, so the upstream serves segments apart from
 * strategies.
 */
export class UpstreamClient {
  private readonly connectionId = randomUUID();

  constructor(
    readonly baseUrl: string,
    private readonly timeoutMs: number,
    /** How the edge names itself upstream (Unleash Edge's APP_NAME and INSTANCE_ID). */
    private readonly identity: { appName: string; instanceId: string } = { appName: 'vexil-edge', instanceId: 'vexil-edge' },
  ) {}

  private headers(token: string | undefined): Record<string, string> {
    return {
      'unleash-appname': this.identity.appName,
      'unleash-instanceid': this.identity.instanceId,
      'unleash-sdk': `vexil-edge:${VERSION}`,
      'unleash-connection-id': this.connectionId,
      'unleash-client-spec': '5.2.0',
      ...(token ? { authorization: token } : {}),
    };
  }

  /**
   * Follows the upstream's change stream for a client token (`/api/client/streaming`, which Vexil and Vexil Edge
   * serve), calling `onEvent` for each event it sends (the first on connecting, a hydration; then one per change)
   * with the revision its id names and a way to read what it says: a hydration of thousands of flags is parsed only
   * when the edge does not hold that revision already. Resolves `unsupported` when the upstream has no such stream
   * (Unleash without streaming), `ended` when it ends or `signal` aborts it; rejects with UpstreamUnavailable when it
   * cannot be reached, breaks off, sends an event beyond all measure, or falls silent (a live stream sends a
   * keep-alive every 30 s).
   */
  async followChanges(
    token: string,
    onEvent: (revision: number | undefined, read: () => StreamedChange | undefined) => void,
    signal: AbortSignal,
  ): Promise<'unsupported' | 'ended'> {
    const silence = new AbortController();
    let timer = setTimeout(() => silence.abort(), this.timeoutMs);
    const heard = (waitMs: number) => {
      clearTimeout(timer);
      timer = setTimeout(() => silence.abort(), waitMs);
    };
    try {
      let response: Response;
      try {
        response = await fetch(`${this.baseUrl}/api/client/streaming`, {
          headers: { ...this.headers(token), accept: 'text/event-stream' },
          signal: AbortSignal.any([signal, silence.signal]),
        });
      } catch (error) {
        if (signal.aborted) return 'ended';
        throw new UpstreamUnavailable(`GET /api/client/streaming: ${(error as Error).message}`);
      }
      const type = response.headers.get('content-type') ?? '';
      if (response.status !== 200 || !type.startsWith('text/event-stream') || !response.body) {
        await response.body?.cancel().catch(() => undefined);
        if (response.status >= 500 || response.status === 429) {
          throw new UpstreamUnavailable(`GET /api/client/streaming answered ${response.status}`);
        }
        return 'unsupported';
      }
      const decoder = new TextDecoder();
      const parser = createParser({
        maxBufferSize: MAX_STREAMED_EVENT_CHARACTERS,
        onEvent: (event) => onEvent(revisionOfId(event.id), () => readStreamedChange(event.data, event.id)),
      });
      try {
        heard(STREAM_SILENCE_MS);
        for await (const chunk of response.body) {
          heard(STREAM_SILENCE_MS);
          parser.feed(decoder.decode(chunk, { stream: true }));
        }
      } catch (error) {
        if (signal.aborted) return 'ended';
        throw new UpstreamUnavailable(`GET /api/client/streaming broke off: ${(error as Error).message}`);
      }
      return 'ended';
    } finally {
      clearTimeout(timer);
    }
  }

  private async send(
    method: 'GET' | 'POST',
    path: string,
    token: string | undefined,
    options: { body?: unknown; etag?: string } = {},
  ): Promise<{ statusCode: number; etag: string | undefined; body: unknown }> {
    const headers: Record<string, string> = { ...this.headers(token), accept: 'application/json' };
    if (options.etag) headers['if-none-match'] = options.etag;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const signal = AbortSignal.timeout(this.timeoutMs);
    let response: Response;
    let text: string;
    try {
      response = await fetch(`${this.baseUrl}${path}`, {
        method,
        headers,
        signal,
        ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
      });
      text = await response.text();
    } catch (error) {
      throw new UpstreamUnavailable(`${method} ${path}: ${(error as Error).message}`);
    }
    const statusCode = response.status;
    if (statusCode >= 500 || statusCode === 429 || statusCode === 408) {
      throw new UpstreamUnavailable(`${method} ${path} answered ${statusCode}`);
    }
    if (statusCode >= 400) throw new UpstreamRefused(statusCode, `${method} ${path} answered ${statusCode}`);
    let body: unknown;
    if (text) {
      try {
        body = JSON.parse(text);
      } catch {
        throw new UpstreamUnavailable(`${method} ${path} answered something that is not JSON`);
      }
    }
    return { statusCode, etag: response.headers.get('etag') ?? undefined, body };
  }

  /** The flags a client token sees, unless its ETag still holds. */
  async features(token: string, etag: string | undefined): Promise<FeaturesAnswer> {
    const answer = await this.send('GET', '/api/client/features', token, etag ? { etag } : {});
    if (answer.statusCode === 304) return { kind: 'not-modified' };
    const body = answer.body as { features?: unknown; segments?: unknown; meta?: { revisionId?: unknown } } | undefined;
    if (!body || !Array.isArray(body.features)) throw new UpstreamUnavailable('GET /api/client/features answered no list of flags');
    const revision = body.meta?.revisionId;
    return {
      kind: 'features',
      features: body.features as ClientFeature[],
      segments: Array.isArray(body.segments) ? (body.segments as ClientSegment[]) : [],
      etag: answer.etag,
      revision: typeof revision === 'number' && Number.isSafeInteger(revision) ? revision : undefined,
    };
  }

  /**
   * What changed for a client token since the revision it holds (`/api/client/delta`, which Vexil and Vexil Edge
   * serve): undefined when nothing did, else the events (a hydration when the upstream no longer knows the revision).
   */
  async delta(token: string, revision: number): Promise<StreamedChange | undefined> {
    const answer = await this.send('GET', '/api/client/delta', token, { etag: `"${revision}"` });
    if (answer.statusCode === 304) return undefined;
    const change = changeOf(answer.body, revisionOfId(answer.etag?.replace(/^(W\/)?"(.*)"$/, '$2')));
    if (!change) throw new UpstreamUnavailable('GET /api/client/delta answered no list of changes');
    return change;
  }

  /** Which of `tokens` are valid SDK tokens, and what each may see. */
  async validate(tokens: string[]): Promise<UpstreamToken[]> {
    const answer = await this.send('POST', '/edge/validate', undefined, { body: { tokens } });
    const valid = (answer.body as { tokens?: unknown } | undefined)?.tokens;
    if (!Array.isArray(valid)) throw new UpstreamUnavailable('POST /edge/validate answered no list of tokens');
    // Unleash calls client tokens `backend` since 7.x; admin tokens are never served by an edge.
    return (valid as Array<Omit<UpstreamToken, 'type'> & { type: string }>).flatMap((token) => {
      const type = token.type === 'backend' ? 'client' : token.type;
      if ((type !== 'client' && type !== 'frontend') || typeof token.environment !== 'string' || !Array.isArray(token.projects)) return [];
      return [{ ...token, type }];
    });
  }

  /** The flags in a running experiment (a Vexil upstream's `/api/client/experiments`; an Unleash one answers 404). */
  async runningExperiments(token: string): Promise<RunningExperimentView[]> {
    const answer = await this.send('GET', '/api/client/experiments', token);
    const experiments = (answer.body as { experiments?: unknown } | undefined)?.experiments;
    if (!Array.isArray(experiments)) throw new UpstreamUnavailable('GET /api/client/experiments answered no list');
    return experiments as RunningExperimentView[];
  }

  /** Forwards the assignments of the edge's own evaluations, to be evaluated again and kept upstream. */
  async sendExposures(token: string, exposures: Array<{ featureName: string; context: Record<string, unknown> }>): Promise<void> {
    await this.send('POST', '/api/client/exposures', token, { body: { exposures } });
  }

  /** Sends usage gathered at the edge, with a client token of the environment it was counted in. */
  async sendBulkMetrics(token: string, metrics: BulkMetrics): Promise<void> {
    await this.send('POST', '/api/client/metrics/bulk', token, { body: metrics });
  }
}
