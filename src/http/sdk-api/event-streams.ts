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
  /**
   * Data sent to many streams (one change to every SDK of a scope, a scope's hydration) is serialised once, into
   * one Buffer that each socket writes from without a copy of its own: a thousand streams opening on a 2 MB
   * configuration hold 2 MB, not 2 GB in passing.
   */
  private readonly serialised = new WeakMap<object, { event: string; id: number; message: Buffer }>();

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
      send: (event, id, data) => this.write(response, this.message(event, id, data)),
      onClose: (handler) => response.on('close', handler),
    };
  }

  private message(event: string, id: number, data: object): Buffer {
    const held = this.serialised.get(data);
    if (held && held.event === event && held.id === id) return held.message;
    const message = Buffer.from(`event: ${event}\nid: ${id}\ndata: ${JSON.stringify(data)}\n\n`);
    this.serialised.set(data, { event, id, message });
    return message;
  }

  /** Writes to a stream, or ends it when its client has left more than the bound unread. */
  private write(response: ServerResponse, chunk: string | Buffer): void {
    if (response.destroyed) return;
    if (response.writableLength > this.maxUnsentBytes) {
      response.destroy();
      return;
    }
    response.write(chunk);
  }

  endAll(): void {
    for (const response of this.open) response.end();
  }
}
