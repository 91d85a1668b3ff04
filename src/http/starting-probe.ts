import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DATABASE_RETRY_AFTER_SECONDS } from '../db/pg-errors.js';
import { LIVENESS_PATH } from './health.routes.js';

/** What the port answers while the server waits for its database: alive, not ready. */
export interface StartingProbe {
  /** Where it answers (the configured port, or the one given for port 0). */
  url: string;
  /** Frees the port for the server proper. */
  close(): Promise<void>;
}

/**
 * Answers on the server's port while it waits for PostgreSQL (and migrates), before the app can be built: the
 * liveness path `/health/live` is 200 `{"health":"STARTING"}`, so an orchestrator does not kill a server that is only
 * waiting, and everything else is a 503 in Unleash's error format with `Retry-After` — `/health` included, as
 * Unleash has it, so a script that waits for `/health` before its first call does not race the start.
 */
export async function listenWhileStarting(port: number, host: string): Promise<StartingProbe> {
  const server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://starting').pathname;
    if (request.method === 'GET' && path === LIVENESS_PATH) {
      response.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end('{"health":"STARTING"}');
      return;
    }
    const message = 'Vexil is starting: it waits for its database; try again shortly';
    response
      .writeHead(503, { 'content-type': 'application/json; charset=utf-8', 'retry-after': String(DATABASE_RETRY_AFTER_SECONDS) })
      .end(JSON.stringify({ id: randomUUID(), name: 'ServiceUnavailableError', message, details: [{ message }] }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${bound}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
