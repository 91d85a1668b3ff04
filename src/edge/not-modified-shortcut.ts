import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { FastifyServerOptions } from 'fastify';
import { type ClientFeatureStore, matchesEtag } from '../domain/client-features/client-feature-store.js';
import { bearerToken } from '../http/plugins/route-access.js';
import type { AddressRanges } from '../shared/address-ranges.js';
import type { Metrics } from '../shared/metrics.js';
import type { ConfigurationFeed } from './configuration-feed.js';
import type { TokenChecker } from './edge-tokens.js';

const PATH = '/api/client/features';

/**
 * Most of an edge's traffic is server-side SDKs polling `/api/client/features` with the ETag they hold, and most
 * answers are 304s. Such a request needs nothing but a client token the edge already trusts and the ETag of an
 * answer it already holds, so it is answered here, before Fastify's routing, hooks and reply (a quarter of the CPU
 * time of such a 304 in the edge benchmark). Anything else goes the ordinary way, which gives the same answer: a
 * query string, a token not trusted yet or not covered, an answer not held or no longer current, an address list
 * to check, request logging at `debug`, and every request once the edge is closing.
 */
export class NotModifiedShortcut {
  private open = true;
  private readonly requests;
  private readonly duration;

  constructor(
    private readonly services: {
      tokens: TokenChecker;
      flags: Pick<ConfigurationFeed, 'covers'>;
      store: ClientFeatureStore;
      metrics: Metrics;
      allowList: AddressRanges | undefined;
      denyList: AddressRanges | undefined;
    },
    private readonly logsRequests: () => boolean,
  ) {
    // The series the request metrics hook writes for the same answer given the ordinary way.
    this.requests = services.metrics.clientApiRequests.labels({ endpoint: `GET ${PATH}`, status_code: '304' });
    this.duration = services.metrics.httpRequestDuration.labels({ method: 'GET', route: PATH, status_code: '304' });
  }

  /** From now on every request goes the ordinary way, which tells keep-alive clients the connection closes. */
  close(): void {
    this.open = false;
  }

  /** Answers the request if it is a 304 this shortcut can give; false leaves it untouched for Fastify. */
  answered(request: IncomingMessage, response: ServerResponse): boolean {
    if (!this.open || request.method !== 'GET' || request.url !== PATH) return false;
    const started = performance.now();
    const ifNoneMatch = request.headers['if-none-match'];
    if (!ifNoneMatch || this.services.allowList || this.services.denyList || this.logsRequests()) return false;
    const secret = bearerToken(request);
    const check = secret ? this.services.tokens.trusted(secret) : undefined;
    if (check?.token.type !== 'client' || !this.services.flags.covers(check.scope)) return false;
    const held = this.services.store.heldAnswer({ environment: check.token.environment, projects: check.token.projects });
    if (!held || !matchesEtag(held.etag, ifNoneMatch)) return false;
    response.writeHead(304, { etag: held.etag, 'cache-control': 'no-cache' }).end();
    this.requests.inc();
    this.duration.observe((performance.now() - started) / 1000);
    return true;
  }
}

/**
 * The HTTP server Fastify is given (its `serverFactory`): requests the shortcut answers never reach Fastify. It
 * keeps the timeouts Fastify would have set on a server of its own.
 */
export function serverWithShortcut(shortcut: NotModifiedShortcut) {
  return (fastifyHandler: RequestListener, options: FastifyServerOptions): Server => {
    const server = createServer((request, response) => {
      if (!shortcut.answered(request, response)) fastifyHandler(request, response);
    });
    server.keepAliveTimeout = options.keepAliveTimeout!;
    server.requestTimeout = options.requestTimeout!;
    server.setTimeout(options.connectionTimeout);
    return server;
  };
}
