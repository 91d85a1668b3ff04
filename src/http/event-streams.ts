import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';

// A comment line every 30 s keeps proxies from closing an idle stream; the SDK drops a stream silent for 60 s.
const KEEP_ALIVE_MS = 30_000;

/** One open server-sent events stream. */
export interface EventStream {
  send(event: string, id: number, data: unknown): void;
  /** Called once when the client goes away or the server ends the stream. */
  onClose(handler: () => void): void;
}

/**
 * The server-sent events streams of one route module: each opened on a hijacked reply, kept alive, counted,
 * and ended when the server shuts down (SDKs then reconnect, to another instance).
 */
export class EventStreams {
  private readonly open = new Set<ServerResponse>();

  constructor(private readonly connections: { inc(): void; dec(): void }) {}

  start(reply: FastifyReply): EventStream {
    reply.hijack();
    const response = reply.raw;
    response.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    const keepAlive = setInterval(() => response.write(': keep-alive\n\n'), KEEP_ALIVE_MS);
    this.open.add(response);
    this.connections.inc();
    response.on('close', () => {
      clearInterval(keepAlive);
      this.open.delete(response);
      this.connections.dec();
    });
    return {
      send: (event, id, data) => response.write(`event: ${event}\nid: ${id}\ndata: ${JSON.stringify(data)}\n\n`),
      onClose: (handler) => response.on('close', handler),
    };
  }

  endAll(): void {
    for (const response of this.open) response.end();
  }
}
