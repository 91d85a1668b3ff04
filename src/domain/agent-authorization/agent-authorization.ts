import { createHash, timingSafeEqual } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { iso } from '../../shared/dates.js';
import { BadDataError, NotFoundError, PermissionError } from '../../shared/errors.js';
import { hashToken, randomSecret } from '../../shared/secrets.js';
import { MCP_TOKEN_PREFIX } from '../access/authenticate.js';
import { recordEvent } from '../events/record-event.js';

// MCP's authorization (OAuth 2.1 with PKCE and dynamic client registration) for agents that run in a person's
// editor: the agent's client registers itself, the person signs in to Vexil and grants it access, and the client gets a
// token that works on the MCP endpoint alone, as that person, for a day. Codes and tokens are stored as hashes.

/** Registrations are open to anyone (as MCP asks), so they are bounded: past this, unused ones give way. */
export const MAX_OAUTH_CLIENTS = 1000;
/** Registrations one client address may make per hour: an editor registers once, a flood is refused at its door. */
export const REGISTRATIONS_PER_ADDRESS_HOUR = 20;
/** A client never granted a token this long after registering may be dropped to make room. */
const UNUSED_CLIENT_GRACE_MS = 3_600_000;
const CODE_LIFETIME_MS = 10 * 60_000;
/** Tokens one person may hold for agents at once; granting one more ends their oldest. */
export const MAX_TOKENS_PER_PERSON = 20;

/** The one scope: acting as the person through MCP's tools. */
export const MCP_SCOPE = 'mcp';

/** An OAuth protocol error (RFC 6749 §5.2, RFC 7591 §3.2.2): its code and a sentence, as the token endpoint answers. */
export class OAuthError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

const FORBIDDEN_SCHEMES = new Set(['javascript:', 'data:', 'file:', 'vbscript:', 'blob:', 'about:', 'ftp:', 'ws:', 'wss:']);

/**
 * The editors whose own schemes predate RFC 8252's reverse-domain rule and are what they register; any other app's
 * scheme must be a reverse domain name (`com.example.app:`), which no operating system's own handlers use.
 */
const EDITOR_SCHEMES = new Set(['cursor:', 'vscode:', 'vscode-insiders:', 'windsurf:', 'zed:']);

/** Schemes that open an operating system's own handlers (diagnostics, search, shells): never an app's callback. */
const OS_HANDLER_SCHEME = /^(ms-[a-z0-9-]*|search-ms|search|view-source|shell|jar|intent|chrome|edge|firefox|res|mk|its|hcp):$/i;

/**
 * Where a client may be sent back with a code (RFC 8252): an https address, an http one on this machine's loopback
 * (a command-line client's own listener), or a private-use scheme an editor registered (`cursor://…`).
 */
export function redirectUriProblem(uri: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(uri);
  } catch {
    return 'is not an absolute URI';
  }
  if (parsed.hash) return 'must not carry a fragment';
  if (parsed.username || parsed.password) return 'must not carry credentials';
  if (FORBIDDEN_SCHEMES.has(parsed.protocol) || OS_HANDLER_SCHEME.test(parsed.protocol)) {
    return `must not use the ${parsed.protocol} scheme`;
  }
  if (parsed.protocol === 'http:' && !['localhost', '127.0.0.1', '[::1]'].includes(parsed.hostname)) {
    return 'must be https, or http on localhost';
  }
  const privateUse = parsed.protocol !== 'http:' && parsed.protocol !== 'https:';
  if (privateUse && !EDITOR_SCHEMES.has(parsed.protocol) && !parsed.protocol.includes('.')) {
    return `uses the scheme ${parsed.protocol}, which is neither https nor an app's own reverse-domain scheme (such as com.example.app:)`;
  }
  return undefined;
}

export interface ClientRegistration {
  clientId: string;
  clientName: string;
  redirectUris: string[];
  issuedAt: Date;
}

/**
 * A client's name as the consent page and the event log show it: control characters and the bidirectional overrides
 * that make a name read otherwise than it is written are taken out.
 */
export function displayableClientName(name: string): string {
  return name.replace(/[\p{Cc}\p{Cf}\u2028\u2029]/gu, '').trim();
}

/**
 * Registers a public client (no secret; PKCE guards its codes). No event: anyone may register, and what an unknown
 * party does before a person grants it anything is not the log's; the grant is recorded. When the table is full, the
 * clients that hold no live token make room, the least recently granted first (never granted, oldest first), so
 * neither a flood of registrations nor approvals of one's own can close registration for good.
 */
export async function registerClient(uow: UnitOfWork, input: { clientName: string; redirectUris: string[] }): Promise<ClientRegistration> {
  for (const [index, uri] of input.redirectUris.entries()) {
    const problem = redirectUriProblem(uri);
    if (problem) throw new OAuthError('invalid_redirect_uri', `redirect_uris[${index}] ${problem}`);
  }
  const clientName = displayableClientName(input.clientName);
  if (clientName === '') throw new OAuthError('invalid_client_metadata', 'client_name must hold printable characters');
  const { count } = await uow.tx.selectFrom('oauth_clients').select(sql<number>`count(*)::int`.as('count')).executeTakeFirstOrThrow();
  if (count >= MAX_OAUTH_CLIENTS) {
    const dropped = await uow.tx
      .deleteFrom('oauth_clients')
      .where(
        'id',
        'in',
        uow.tx
          .selectFrom('oauth_clients as c')
          .select('c.id')
          .where('c.created_at', '<', new Date(uow.now.getTime() - UNUSED_CLIENT_GRACE_MS))
          .where(({ not, exists, selectFrom }) =>
            not(
              exists(
                selectFrom('oauth_access_tokens as t')
                  .select('t.id')
                  .whereRef('t.client_id', '=', 'c.id')
                  .where('t.expires_at', '>', uow.now),
              ),
            ),
          )
          .orderBy(sql`c.authorized_at IS NOT NULL`)
          .orderBy('c.authorized_at')
          .orderBy('c.created_at')
          .limit(count - MAX_OAUTH_CLIENTS + 1),
      )
      .executeTakeFirst();
    if (Number(dropped.numDeletedRows) === 0) {
      throw new OAuthError('temporarily_unavailable', 'Too many clients are registered right now; try again in an hour', 503);
    }
  }
  const clientId = `vexil-mcp-${randomSecret(16)}`;
  await uow.tx
    .insertInto('oauth_clients')
    .values({
      client_id: clientId,
      name: clientName,
      redirect_uris: JSON.stringify(input.redirectUris),
      created_at: uow.now,
      authorized_at: null,
    })
    .execute();
  return { clientId, clientName, redirectUris: input.redirectUris, issuedAt: uow.now };
}

export interface AuthorizationRequest {
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
  codeChallengeMethod: string;
  responseType: string;
  state?: string | undefined;
  scope?: string | undefined;
  resource?: string | undefined;
}

/**
 * The client and the address an authorization request names, checked before anything is shown: an unknown client or
 * an address it did not register is refused without sending the browser anywhere (RFC 6749 §4.1.2.1).
 */
export async function checkAuthorizationRequest(db: Db, request: AuthorizationRequest, mcpResource: string) {
  const client = await db.selectFrom('oauth_clients').selectAll().where('client_id', '=', request.clientId).executeTakeFirst();
  if (!client)
    throw new BadDataError('This client is not registered with Vexil; it must register first', [
      { path: '/query/client_id', message: 'unknown client_id' },
    ]);
  const redirectUris = client.redirect_uris as string[];
  if (!redirectUris.includes(request.redirectUri)) {
    throw new BadDataError('The redirect address is not one this client registered', [
      { path: '/query/redirect_uri', message: 'not a registered redirect_uri' },
    ]);
  }
  if (request.responseType !== 'code') throw new BadDataError('Only the authorization code flow is offered: response_type=code');
  if (request.codeChallengeMethod !== 'S256') throw new BadDataError('PKCE with S256 is required: code_challenge_method=S256');
  if (!/^[A-Za-z0-9_-]{43}$/.test(request.codeChallenge))
    throw new BadDataError('code_challenge must be a base64url SHA-256 digest (43 characters)');
  if (request.scope?.split(' ').some((scope) => scope !== '' && scope !== MCP_SCOPE)) {
    throw new BadDataError(`The only scope is "${MCP_SCOPE}"`);
  }
  if (request.resource !== undefined && request.resource.replace(/\/$/, '') !== mcpResource) {
    throw new BadDataError(`Tokens are issued for ${mcpResource} only`, [
      { path: '/query/resource', message: 'not this server’s MCP endpoint' },
    ]);
  }
  return { id: client.id, name: client.name };
}

function withParameters(uri: string, parameters: Record<string, string | undefined>): string {
  const url = new URL(uri);
  for (const [name, value] of Object.entries(parameters)) if (value !== undefined) url.searchParams.set(name, value);
  return url.toString();
}

/**
 * The signed-in person's answer to an authorization request: approved, a single-use code bound to the client, the
 * address and the PKCE challenge, valid ten minutes; denied, `access_denied`. Answers where to send the browser.
 */
export async function answerAuthorizationRequest(
  uow: UnitOfWork,
  request: AuthorizationRequest,
  approve: boolean,
  mcpResource: string,
): Promise<string> {
  if (uow.actor.kind !== 'user') throw new PermissionError('Only a person signed in to Vexil can grant an agent access');
  const client = await checkAuthorizationRequest(uow.tx, request, mcpResource);
  if (!approve)
    return withParameters(request.redirectUri, { error: 'access_denied', error_description: 'The person declined', state: request.state });
  const code = randomSecret(32);
  // Codes nobody redeemed go as new ones are made, so the table holds only the last ten minutes' worth.
  await uow.tx.deleteFrom('oauth_authorization_codes').where('expires_at', '<=', uow.now).execute();
  await uow.tx
    .insertInto('oauth_authorization_codes')
    .values({
      code_hash: hashToken(code),
      client_id: client.id,
      user_id: uow.actor.userId,
      redirect_uri: request.redirectUri,
      code_challenge: request.codeChallenge,
      expires_at: new Date(uow.now.getTime() + CODE_LIFETIME_MS),
    })
    .execute();
  await uow.tx.updateTable('oauth_clients').set({ authorized_at: uow.now }).where('id', '=', client.id).execute();
  return withParameters(request.redirectUri, { code, state: request.state });
}

const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

/** The person who granted a code (still able to sign in), to issue its token as them. */
export async function codeOwner(db: Db, code: string) {
  const person = await db
    .selectFrom('oauth_authorization_codes as c')
    .innerJoin('users as u', 'u.id', 'c.user_id')
    .select(['u.id', 'u.username', 'u.email', 'u.root_role', 'u.custom_root_role_id'])
    .where('c.code_hash', '=', hashToken(code))
    .where('u.deactivated_at', 'is', null)
    .executeTakeFirst();
  if (!person) throw new OAuthError('invalid_grant', 'The code is unknown, used or expired');
  return person;
}

/**
 * A code's client, once: the code is deleted by reading it, so a replayed code finds nothing, and a wrong attempt
 * (another client, address or verifier) spends it too. A refusal is answered, not thrown, so that the deletion
 * commits; the caller refuses after the commit.
 */
export async function redeemCode(
  uow: UnitOfWork,
  input: { code: string; clientId: string; redirectUri: string; codeVerifier: string },
): Promise<{ client: { id: number; name: string } } | { refused: OAuthError }> {
  const row = await uow.tx
    .deleteFrom('oauth_authorization_codes')
    .where('code_hash', '=', hashToken(input.code))
    .returningAll()
    .executeTakeFirst();
  const refused = (message: string) => ({ refused: new OAuthError('invalid_grant', message) });
  if (!row || row.expires_at.getTime() <= uow.now.getTime()) return refused('The code is unknown, used or expired');
  const client = await uow.tx
    .selectFrom('oauth_clients')
    .select(['id', 'name', 'client_id'])
    .where('id', '=', row.client_id)
    .executeTakeFirstOrThrow();
  if (client.client_id !== input.clientId) return refused('The code was issued to another client');
  if (row.redirect_uri !== input.redirectUri) return refused('redirect_uri differs from the authorization request');
  const expected = Buffer.from(row.code_challenge);
  const given = Buffer.from(s256(input.codeVerifier));
  if (expected.length !== given.length || !timingSafeEqual(expected, given))
    return refused('The code_verifier does not match the challenge');
  return { client };
}

export interface McpTokenView {
  id: number;
  clientName: string;
  createdAt: string;
  expiresAt: string;
  seenAt: string | null;
}

/**
 * Issues the token for a redeemed code, as the person who granted it (the unit of work's actor), recording
 * `mcp-token-created`. A person holds at most MAX_TOKENS_PER_PERSON: the oldest ends first.
 */
export async function issueMcpToken(uow: UnitOfWork, client: { id: number; name: string }, lifetimeHours: number) {
  if (uow.actor.kind !== 'user') throw new PermissionError('Agent tokens are issued to people');
  const userId = uow.actor.userId;
  const held = await uow.tx.selectFrom('oauth_access_tokens').select('id').where('user_id', '=', userId).orderBy('id', 'desc').execute();
  const surplus = held.slice(MAX_TOKENS_PER_PERSON - 1).map((row) => row.id);
  if (surplus.length > 0) await uow.tx.deleteFrom('oauth_access_tokens').where('id', 'in', surplus).execute();
  const secret = `${MCP_TOKEN_PREFIX}${randomSecret()}`;
  const expiresAt = new Date(uow.now.getTime() + lifetimeHours * 3_600_000);
  const row = await uow.tx
    .insertInto('oauth_access_tokens')
    .values({
      secret_hash: hashToken(secret),
      client_id: client.id,
      user_id: userId,
      created_at: uow.now,
      expires_at: expiresAt,
      seen_at: null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const view: McpTokenView = {
    id: row.id,
    clientName: client.name,
    createdAt: uow.now.toISOString(),
    expiresAt: expiresAt.toISOString(),
    seenAt: null,
  };
  await recordEvent(uow, { type: 'mcp-token-created', data: view });
  return { secret, expiresInSeconds: lifetimeHours * 3600 };
}

/** The person's agent tokens still working, newest first. */
export async function listMcpTokens(db: Db, userId: number, now: Date): Promise<McpTokenView[]> {
  const rows = await db
    .selectFrom('oauth_access_tokens as t')
    .innerJoin('oauth_clients as c', 'c.id', 't.client_id')
    .select(['t.id', 'c.name', 't.created_at', 't.expires_at', 't.seen_at'])
    .where('t.user_id', '=', userId)
    .where('t.expires_at', '>', now)
    .orderBy('t.id', 'desc')
    .execute();
  return rows.map((row) => ({
    id: row.id,
    clientName: row.name,
    createdAt: row.created_at.toISOString(),
    expiresAt: row.expires_at.toISOString(),
    seenAt: iso(row.seen_at),
  }));
}

/** Ends one of the person's agent tokens at once. */
export async function revokeMcpToken(uow: UnitOfWork, id: number): Promise<void> {
  if (uow.actor.kind !== 'user') throw new PermissionError('Agent tokens belong to people: sign in');
  const row = await uow.tx
    .deleteFrom('oauth_access_tokens')
    .where('id', '=', id)
    .where('user_id', '=', uow.actor.userId)
    .returningAll()
    .executeTakeFirst();
  if (!row) throw new NotFoundError(`Could not find agent token ${id}`);
  await recordEvent(uow, {
    type: 'mcp-token-revoked',
    preData: { id: row.id, createdAt: row.created_at.toISOString(), expiresAt: row.expires_at.toISOString() },
  });
}

/** Ends every agent token of a person (a password reset, a deactivation, a new sign-in link); answers how many. */
export async function revokeAllMcpTokensOf(uow: UnitOfWork, userId: number): Promise<number> {
  const removed = await uow.tx.deleteFrom('oauth_access_tokens').where('user_id', '=', userId).returning('id').execute();
  return removed.length;
}

/** Stamps when an agent token was last used (authentication says when one is due). */
export async function stampMcpTokenUse(db: Db, id: number, now: Date): Promise<void> {
  await db.updateTable('oauth_access_tokens').set({ seen_at: now }).where('id', '=', id).execute();
}
