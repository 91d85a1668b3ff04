import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** Where `npm run build` puts the web UI (web/ built by Vite); the same place from src/ and from dist/. */
export const WEB_UI_DIR = fileURLToPath(new URL('../../../dist/web/', import.meta.url));

// Paths the UI never owns: an unknown one there is an API 404 in Unleash's error format, not the app.
const SERVER_PATHS = /^\/(api|auth|logout|health|internal-backstage|docs|assets|ofrep)(\/|$|\?)/;

// The built app has no inline script; styles set from script are CSSOM, which `style-src 'self'` allows.
const CONTENT_SECURITY_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "frame-ancestors 'none'; base-uri 'self'; form-action 'self'";

/** Answers a request no route matched with the app's page when it is a page of the app; false otherwise. */
export type WebUiFallback = (request: FastifyRequest, reply: FastifyReply) => boolean;

/**
 * Serves the single-page app: its hashed assets with a year's cache, `index.html` at `/` and at every path of
 * the app (its router reads the URL), never cached so a new version shows on the next load. Without a build the
 * server runs as an API only and `/` says how to build the UI.
 */
export async function registerWebUi(app: FastifyInstance, dir: string = WEB_UI_DIR): Promise<WebUiFallback> {
  if (!existsSync(join(dir, 'index.html'))) {
    app.get('/', { schema: { hide: true } }, (_request, reply) =>
      reply.status(503).type('text/plain; charset=utf-8').send('The web UI is not built: run `npm run build` (npm start builds it).\n'),
    );
    return () => false;
  }
  await app.register(fastifyStatic, {
    root: dir,
    wildcard: false,
    index: false,
    // The build writes .br and .gz beside each asset (scripts/build.mjs).
    preCompressed: true,
    schemaHide: true,
    setHeaders: (reply, path) => {
      const hashed = path.startsWith(join(dir, 'assets'));
      reply.header('cache-control', hashed ? 'public, max-age=31536000, immutable' : 'no-cache');
      // Every HTML answer carries the page's policy, `/index.html` served as a file included: no page is framed.
      if (path.endsWith('.html')) reply.header('content-security-policy', CONTENT_SECURITY_POLICY);
    },
  });
  const sendApp = (reply: FastifyReply) =>
    reply.header('content-security-policy', CONTENT_SECURITY_POLICY).header('cache-control', 'no-cache').sendFile('index.html');
  app.get('/', { schema: { hide: true } }, (_request, reply) => sendApp(reply));
  return (request, reply) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') return false;
    if (SERVER_PATHS.test(request.url) || !request.headers.accept?.includes('text/html')) return false;
    void sendApp(reply);
    return true;
  };
}
