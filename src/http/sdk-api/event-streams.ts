import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';

// A comment line every 30 s keeps proxies from closing an idle stream; the SDK drops a stream silent for 60 s.
const KEEP_ALIVE_MS = 30_000;

/**
 * What a stream may hold unsent beyond its opening hydration. A client that does not read (stalled, or hostile)
 * would otherwise make the server keep every change for it; past this its stream is ended, and an SDK that
 * reconnects gets a fresh hydration, as after any dropped connection.
 */
export const MAX_UNSENT_BYTES = 1024 * 1024;

/** One open server-sent events stream. */
export interface EventStream {
  send(event: string, id: number, data: object): void;
  /** Called once when the client goes away or the server ends the stream. */
  onClose(handler: () => void): void;
}

/**
 * The server-sent events streams the server holds open (streaming client API, OFREP): each opened on a hijacked reply, kept alive by one timer
 * for all of them, counted, cut off when its client stops reading, and ended when the server shuts down (SDKs
 * then reconnect, to another instance).
 */
export class EventStreams {
  private readonly open = new Set<ServerResponse>();
  private keepAlive: NodeJS.Timeout | undefined;
  /** Data sent to many streams (one change to every SDK of a scope) is serialised once. */
  private readonly serialised = new WeakMap<object, string>();

  constructor(
    private readonly connections: { inc(): void; dec(): void },
    private readonly maxUnsentBytes = MAX_UNSENT_BYTES,
  ) {}

  start(reply: FastifyReply): EventStream {
    reply.hijack();
    const response = reply.raw;
    // Headers set before the stream began (CORS for browsers on another origin) go with it.
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) response.setHeader(name, value);
    response.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    // Sent at once, not with the first event: a client waits for them to know the stream is open.
    response.flushHeaders();
    this.open.add(response);
    this.connections.inc();
    this.keepAlive ??= setInterval(() => {
      for (const stream of this.open) this.write(stream, ': keep-alive\n\n');
    }, KEEP_ALIVE_MS).unref();
    response.on('close', () => {
      this.open.delete(response);
      this.connections.dec();
      if (this.open.size === 0) {
        clearInterval(this.keepAlive);
        this.keepAlive = undefined;
      }
    });
    return {
      send: (event, id, data) => this.write(response, `event: ${event}\nid: ${id}\ndata: ${this.json(data)}\n\n`),
      onClose: (handler) => response.on('close', handler),
    };
  }

  private json(data: object): string {
    let json = this.serialised.get(data);
    if (json === undefined) {
      json = JSON.stringify(data);
      this.serialised.set(data, json);
    }
    return json;
  }

  /** Writes to a stream, or ends it when its client has left more than the bound unread. */
  private write(response: ServerResponse, text: string): void {
    if (response.destroyed) return;
    if (response.writableLength > this.maxUnsentBytes) {
      response.destroy();
      return;
    }
    response.write(text);
  }

  endAll(): void {
    for (const response of this.open) response.end();
  }
}
