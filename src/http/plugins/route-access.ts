import type { FastifyRequest } from 'fastify';
import type { Db } from '../../db/database.js';
import type { Actor } from '../../db/unit-of-work.js';
import type { Permission } from '../../domain/access/permissions.js';
import type { SdkToken, SignalSource } from '../../domain/access/authenticate.js';

/**
 * What a route declares about who may call it, and what its handler reads of who did: the declarations every route
 * module (and Vexil Edge) uses, apart from the checking (access.ts), which needs the database.
 */

/**
 * Who may call a route: anyone, an authenticated caller holding a permission (admin API), or an SDK with a
 * client token (client API).
 */
export type RouteAccess =
  | { kind: 'public' }
  | { kind: 'permission'; permission: Permission; projectOf?: ProjectOf; environmentOf?: EnvironmentOf; alsoProjectsOf?: AlsoProjectsOf }
  | { kind: 'client' }
  | { kind: 'frontend' }
  | { kind: 'sdk' }
  | { kind: 'signal-endpoint' }
  | { kind: 'sdk-channel' }
  | { kind: 'scim' };

export const PUBLIC: RouteAccess = { kind: 'public' };
/** Server-side SDKs, with a client (backend) token. */
export const CLIENT: RouteAccess = { kind: 'client' };
/** Browser and mobile SDKs, with a frontend token. */
export const FRONTEND: RouteAccess = { kind: 'frontend' };
/** Either kind of SDK, with its own token (OpenFeature providers: server-side with client tokens, web with frontend ones). */
export const ANY_SDK: RouteAccess = { kind: 'sdk' };
/**
 * An SDK stream a browser opens without headers (`EventSource`): the SDK token's stored hash in `?channel=`, as a
 * bulk evaluation named it.
 */
export const SDK_CHANNEL: RouteAccess = { kind: 'sdk-channel' };
/** A signal endpoint's own tokens, for the endpoint named by the path's `:name`; an API token is no way in. */
export const SIGNAL_ENDPOINT: RouteAccess = { kind: 'signal-endpoint' };

/** The identity provider that provisions people and groups, with the SCIM token an Admin made; nothing else. */
export const SCIM_PROVIDER_TOKEN: RouteAccess = { kind: 'scim' };

/** What a stream channel looks like: the SHA-256 of an SDK token, in hex (also the route's schema pattern). */
export const SDK_CHANNEL_PATTERN = '^[0-9a-f]{64}$';

/**
 * The project a request acts in, for routes whose permission a project role can grant. Resolved after
 * validation, and only when the caller's root role lacks the permission.
 */
export type ProjectOf = (request: FastifyRequest, db: Db) => string | undefined | Promise<string | undefined>;

/** Further projects a request names (validated), each of which it must be able to see and hold `permission` in. */
export interface AlsoProjectsOf {
  permission: Permission;
  projectsOf: (request: FastifyRequest) => string[];
}

/** The environment a request acts in, where the path has no `:environment` (a body names it). */
export type EnvironmentOf = (request: FastifyRequest) => string | undefined;

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: RouteAccess;
  }
  interface FastifyRequest {
    /** Set for every admin API route before its handler runs. */
    actor: Actor | null;
    /** Set for every client API route before its handler runs. */
    sdkToken: SdkToken | null;
    /** Set for a signal endpoint's route before its handler runs. */
    signalSource: SignalSource | null;
  }
}

/** The client token of a client API route. */
export function sdkTokenOf(request: FastifyRequest): SdkToken {
  if (!request.sdkToken) throw new Error(`Route ${request.routeOptions.url} read the SDK token without authenticating`);
  return request.sdkToken;
}

/** The endpoint and token a signal came with. */
export function signalSourceOf(request: FastifyRequest): SignalSource {
  if (!request.signalSource) throw new Error(`Route ${request.routeOptions.url} read the signal source without authenticating`);
  return request.signalSource;
}

/** The authenticated actor of an admin API route. */
export function actorOf(request: FastifyRequest): Actor {
  if (!request.actor) throw new Error(`Route ${request.routeOptions.url} read the actor without authenticating`);
  return request.actor;
}

/** The token in `Authorization` (with or without `Bearer`), or in `X-API-Key` as OpenFeature providers may send it. */
export function bearerToken(request: Pick<FastifyRequest, 'headers'>): string | undefined {
  const apiKey = request.headers['x-api-key'];
  const header = request.headers.authorization?.trim() || (typeof apiKey === 'string' ? apiKey.trim() : undefined);
  if (!header) return undefined;
  return header.replace(/^Bearer\s+/i, '');
}

/** What a route that takes one kind of token says to a token of another kind (the server and Vexil Edge alike). */
export function wrongTokenKind(access: RouteAccess, tokenType: string): string {
  return access.kind === 'client'
    ? `A ${tokenType} token cannot be used on the client API; use a client (backend) token`
    : access.kind === 'frontend'
      ? `A ${tokenType} token cannot be used on the frontend API; use a frontend token`
      : `A ${tokenType} token cannot be used on the admin API; use an admin token or a personal access token`;
}
