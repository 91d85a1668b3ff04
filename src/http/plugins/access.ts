import { CHANGED_ACCESS } from '../../db/notification-channels.js';
import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import type { Actor } from '../../db/unit-of-work.js';
import { assertProjectVisible, isRestricted } from '../../domain/access/project-visibility.js';
import {
  authenticateApiToken,
  authenticateScimToken,
  authenticateSession,
  authenticateSignalToken,
  authenticateToken,
  type Credential,
  type SdkToken,
  type TokenUse,
} from '../../domain/access/authenticate.js';
import { stampApiTokenUse } from '../../domain/api-tokens/api-tokens.js';
import { stampPatUse } from '../../domain/personal-access-tokens/personal-access-tokens.js';
import { stampSessionUse } from '../../domain/users/sessions.js';
import { stampScimTokenUse } from '../../domain/scim/scim-token.js';
import { stampMcpTokenUse } from '../../domain/agent-authorization/agent-authorization.js';
import type { ChangeFeed } from '../../domain/events/change-feed.js';
import type { Permission } from '../../domain/access/permissions.js';
import { authorize, needsProject } from '../../domain/access/authorize.js';
import { projectOfFlag } from '../../domain/features/feature-lookup.js';
import type { Db } from '../../db/database.js';
import type { Clock } from '../../shared/clock.js';
import { AuthenticationRequired, PermissionError, type SignInDescription, UnauthorizedError } from '../../shared/errors.js';
import type { Config } from '../../config.js';
import {
  actorOf,
  bearerToken,
  type AlsoProjectsOf,
  type EnvironmentOf,
  type ProjectOf,
  type RouteAccess,
  SDK_CHANNEL_PATTERN,
  wrongTokenKind,
} from './route-access.js';
import { isDatabaseUnavailable } from '../../db/pg-errors.js';

const CHANNEL = new RegExp(SDK_CHANNEL_PATTERN);

/** The ways to sign in this server offers, in the shape Unleash's 401 gives them. */
function signInDescription(config: Config): SignInDescription {
  const options = [
    ...(config.oidc ? [{ type: 'oidc', message: `Sign in with ${config.oidc.name}`, path: '/auth/oidc/login' }] : []),
    ...(config.saml ? [{ type: 'saml', message: `Sign in with ${config.saml.name}`, path: '/auth/saml/login' }] : []),
  ];
  return { type: 'password', path: '/auth/simple/login', defaultHidden: !config.passwordSignIn, options };
}

/** How long an SDK token is trusted without asking the database; any committed change (a deleted token) clears it. */
const SDK_TOKEN_CACHE_MS = 10_000;
const SDK_TOKEN_CACHE_SIZE = 10_000;

/** The project named by the path's `:projectId`. */
export const PROJECT_PARAM: ProjectOf = (request) => (request.params as { projectId?: string }).projectId;

/** The project of the flag named by the path's `:name` (the usage routes name flags so). */
export const FLAG_NAME_PARAM: ProjectOf = (request, db) => projectOfFlag(db, (request.params as { name: string }).name);

/** The project of the flag named by the path's `:featureName` (archived flags included). */
export const FLAG_PARAM: ProjectOf = (request, db) => projectOfFlag(db, (request.params as { featureName: string }).featureName);

/**
 * A permission of the caller's root role, or, with `projectOf`, of its role in the project the request acts in (in the
 * environment `environmentOf` names, where the path has none).
 */
export function can(permission: Permission, projectOf?: ProjectOf, environmentOf?: EnvironmentOf): RouteAccess {
  if (!projectOf) return { kind: 'permission', permission };
  return environmentOf ? { kind: 'permission', permission, projectOf, environmentOf } : { kind: 'permission', permission, projectOf };
}

/**
 * `access` that also acts in every project `projectsOf` reads from the request (the project a flag moves to): each
 * must be visible to the caller and grant `permission` there.
 */
export function alsoIn(access: RouteAccess, permission: Permission, projectsOf: AlsoProjectsOf['projectsOf']): RouteAccess {
  if (access.kind !== 'permission') throw new Error('Only a permission can be asked in further projects');
  return { ...access, alsoProjectsOf: { permission, projectsOf } };
}

export const SESSION_COOKIE = 'vexil-session';

/** Where MCP clients talk to Vexil, and the only place their OAuth tokens work. */
export const MCP_ENDPOINT = '/api/admin/mcp';

/** The last-seen stamp of a token or session, written by the area that owns its table. */
function stampTokenUse(db: Db, use: TokenUse, now: Date): Promise<void> {
  switch (use.kind) {
    case 'api-token':
      return stampApiTokenUse(db, use.id, now);
    case 'personal-access-token':
      return stampPatUse(db, use.id, now);
    case 'session':
      return stampSessionUse(db, use.id, now);
    case 'scim-token':
      return stampScimTokenUse(db, use.id, now);
    case 'mcp-token':
      return stampMcpTokenUse(db, use.id, now);
  }
}

/**
 * A path naming a project (`:projectId`) or a flag (`:featureName`) of a private project the caller is no member of
 * answers as if the project did not exist, whatever the route: one check for every read and write under it.
 */
async function assertPathProjectVisible(request: FastifyRequest, actor: Actor, db: Db): Promise<void> {
  if (!isRestricted(actor)) return;
  const { projectId, featureName } = request.params as { projectId?: unknown; featureName?: unknown };
  if (typeof projectId === 'string') await assertProjectVisible(db, actor, projectId);
  else if (typeof featureName === 'string') {
    const project = await projectOfFlag(db, featureName);
    if (project !== undefined) await assertProjectVisible(db, actor, project);
  }
}

function alsoProjectsOf(access: { alsoProjectsOf?: AlsoProjectsOf }, request: FastifyRequest) {
  return access.alsoProjectsOf && { permission: access.alsoProjectsOf.permission, projects: access.alsoProjectsOf.projectsOf(request) };
}

/**
 * Authentication (401) runs on request, before the body is validated; the permission check (403) runs after
 * validation (400), as Unleash orders them. A route that declares no access stops start-up, so no route can be
 * exposed by forgetting.
 */
export function registerAccessControl(
  scope: FastifyInstance,
  deps: { db: Db; clock: Clock; config: Config; changeFeed: ChangeFeed },
): void {
  const signIn = signInDescription(deps.config);
  scope.decorateRequest('actor', null);
  scope.decorateRequest('sdkToken', null);
  scope.decorateRequest('signalSource', null);
  // SDKs poll every few seconds; their tokens are cached so that a poll answered 304 touches no database.
  const sdkTokens = new Map<string, { token: SdkToken; until: number }>();
  deps.changeFeed.onChangeOf(CHANGED_ACCESS, () => sdkTokens.clear());

  scope.addHook('onRoute', (route: RouteOptions) => {
    if (!route.config?.access) {
      throw new Error(`Route ${route.method} ${route.url} must declare config.access`);
    }
  });

  scope.addHook('onRequest', async (request) => {
    const access = request.routeOptions.config.access;
    if (!access || access.kind === 'public') return;
    const now = deps.clock.now();
    const token = bearerToken(request);
    if (access.kind === 'sdk-channel') {
      const { channel } = request.query as { channel?: unknown };
      // A missing or malformed channel is bad input: the route's validation answers it with a 400.
      if (typeof channel !== 'string' || !CHANNEL.test(channel)) return;
      const credential = await authenticateApiToken(deps.db, channel, now);
      if (credential.kind !== 'apiToken') throw new UnauthorizedError('The event stream channel is unknown or its token has expired');
      if (credential.lastUse) await stampTokenUse(deps.db, credential.lastUse, now);
      request.sdkToken = credential.token;
      return;
    }
    if (access.kind === 'signal-endpoint') {
      if (!token) throw new AuthenticationRequired("Send one of the signal endpoint's tokens in the Authorization header");
      const { name } = request.params as { name: string };
      request.signalSource = (await authenticateSignalToken(deps.db, name, token)) ?? null;
      if (!request.signalSource) throw new UnauthorizedError('No enabled signal endpoint of this name takes this token');
      return;
    }
    if (access.kind === 'scim') {
      if (!token) throw new AuthenticationRequired('Send the SCIM token in the Authorization header, as "Bearer <token>"');
      const credential = await authenticateScimToken(deps.db, token, now);
      if (credential.kind !== 'actor')
        throw new UnauthorizedError('The SCIM token is unknown or was replaced; an Admin makes one in Vexil');
      if (credential.lastUse) await stampTokenUse(deps.db, credential.lastUse, now);
      request.actor = credential.actor;
      return;
    }
    // SDKs authenticate with tokens only; session cookies are for people on the admin API.
    const sdkAccess = access.kind === 'client' || access.kind === 'frontend' || access.kind === 'sdk';
    const sessionId = token || sdkAccess ? undefined : request.cookies[SESSION_COOKIE];
    if (!token && !sessionId) {
      throw new AuthenticationRequired('You must log in or send an API token in the Authorization header', sdkAccess ? undefined : signIn);
    }
    const cached = token && sdkAccess ? sdkTokens.get(token) : undefined;
    // An entry past its time is checked against the database again, and trusted anew if still valid.
    const trusted = cached && cached.until > now.getTime() ? cached : undefined;
    const credential: Credential = trusted
      ? { kind: 'apiToken', token: trusted.token }
      : token
        ? await authenticateToken(deps.db, token, now).catch((error: unknown) => {
            // A token known before the database went away stays known until the database says otherwise (deleted,
            // expired): SDKs keep being served what they had.
            if (cached && isDatabaseUnavailable(error) && (cached.token.expiresAt?.getTime() ?? Infinity) > now.getTime()) {
              return { kind: 'apiToken' as const, token: cached.token };
            }
            throw error;
          })
        : await authenticateSession(deps.db, sessionId!, now);
    if (credential.kind !== 'invalid' && credential.lastUse) await stampTokenUse(deps.db, credential.lastUse, now);
    switch (credential.kind) {
      case 'invalid':
        if (token) throw new UnauthorizedError('The API token is unknown or has expired');
        throw new AuthenticationRequired('Your session has expired; log in again', signIn);
      case 'apiToken':
        if (access.kind === credential.token.type || access.kind === 'sdk') {
          if (!trusted && token) {
            if (sdkTokens.size >= SDK_TOKEN_CACHE_SIZE) sdkTokens.clear();
            const expiresAt = credential.token.expiresAt?.getTime() ?? Number.POSITIVE_INFINITY;
            sdkTokens.set(token, { token: credential.token, until: Math.min(now.getTime() + SDK_TOKEN_CACHE_MS, expiresAt) });
          }
          request.sdkToken = credential.token;
          return;
        }
        throw new PermissionError(wrongTokenKind(access, credential.token.type));
      case 'actor':
        if (access.kind === 'client') {
          throw new PermissionError('The client API takes a client (backend) token, as SDKs use');
        }
        if (access.kind === 'frontend') {
          throw new PermissionError('The frontend API takes a frontend token, as browser and mobile SDKs use');
        }
        if (access.kind === 'sdk') {
          throw new PermissionError('This API takes an SDK token: a client token for servers, a frontend token for browsers');
        }
        // A token granted to an agent is for the MCP endpoint (its audience), not the whole admin API.
        if (credential.audience === 'mcp' && request.routeOptions.url !== MCP_ENDPOINT) {
          throw new UnauthorizedError("This token was granted to an agent for Vexil's MCP endpoint only");
        }
        request.actor = credential.actor;
    }
  });

  scope.addHook('preHandler', async (request) => {
    const access = request.routeOptions.config.access;
    if (access?.kind !== 'permission') return;
    const actor = actorOf(request);
    await assertPathProjectVisible(request, actor, deps.db);
    if (!access.projectOf || !needsProject(actor, access.permission)) {
      await authorize(deps.db, actor, { permission: access.permission, alsoIn: alsoProjectsOf(access, request) });
      return;
    }
    // A role may hold a flag permission in some environments only: the path's `:environment` (or what the route
    // reads from its body) is where it acts.
    const environment = access.environmentOf ? access.environmentOf(request) : (request.params as { environment?: string }).environment;
    await authorize(deps.db, actor, {
      permission: access.permission,
      project: await access.projectOf(request, deps.db),
      environment,
      alsoIn: alsoProjectsOf(access, request),
    });
  });
}
