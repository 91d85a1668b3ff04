import type { FastifyCorsOptions } from '@fastify/cors';

/** What browsers call: the frontend API (and the Unleash Proxy's paths) and OFREP, with frontend tokens. */
const BROWSER_API_PREFIXES = ['/api/frontend', '/api/proxy', '/ofrep/'];

export const isBrowserApi = (url: string | undefined): boolean => BROWSER_API_PREFIXES.some((prefix) => url?.startsWith(prefix));

/** CORS for the browser APIs, from the allowed origins: what frontend SDKs and OpenFeature web providers send and read. */
export function browserCorsOptions(origin: '*' | string[]): FastifyCorsOptions {
  return {
    origin,
    methods: ['GET', 'POST'],
    allowedHeaders: [
      'Authorization',
      'Content-Type',
      'If-None-Match',
      'X-API-Key',
      'unleash-appname',
      'unleash-connection-id',
      'unleash-sdk',
      'x-unleash-sdk',
    ],
    exposedHeaders: ['ETag'],
    maxAge: 86_400,
  };
}
