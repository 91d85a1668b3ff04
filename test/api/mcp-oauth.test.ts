import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { MAX_OAUTH_CLIENTS, REGISTRATIONS_PER_ADDRESS_HOUR } from '../../src/domain/agent-authorization/agent-authorization.js';
import { expectStatus } from '../helpers/assertions.js';
import { eventsSince, lastEventId } from '../helpers/events.js';
import { createUserSession, uniqueName } from '../helpers/fixtures.js';
import { createProject } from '../helpers/projects.js';
import { useMcpTestApp } from '../helpers/mcp-client.js';
import type { Client as HttpClient } from '../helpers/test-app.js';

// MCP's authorization (OAuth 2.1): an agent's client registers itself, a person signed in grants it access, and the
// token it gets works on the MCP endpoint alone, as that person, until it expires or the person revokes it.

const { ctx, clients, baseUrl: listeningAt } = useMcpTestApp();

const REDIRECT = 'http://127.0.0.1:33418/callback';
const form = (fields: Record<string, string>) => ({
  method: 'POST' as const,
  url: '/oauth/token',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  payload: new URLSearchParams(fields).toString(),
});

async function register(redirectUris = [REDIRECT], clientName = 'Claude Code') {
  const response = await ctx
    .as()
    .post('/oauth/register', { redirect_uris: redirectUris, client_name: clientName, token_endpoint_auth_method: 'none' });
  expectStatus(response, 201);
  return (response.json() as { client_id: string }).client_id;
}

function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

function authorizationQuery(clientId: string, challenge: string, extra: Record<string, string> = {}) {
  return {
    client_id: clientId,
    redirect_uri: REDIRECT,
    response_type: 'code',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 'xyz',
    scope: 'mcp',
    ...extra,
  };
}

/** A person's grant through the consent page's API: the address the browser is sent to. */
async function grant(person: HttpClient, query: Record<string, string>, approve = true): Promise<URL> {
  const described = await person.get(`/api/admin/oauth/authorization?${new URLSearchParams(query)}`);
  expectStatus(described, 200);
  const answered = await person.post('/api/admin/oauth/authorization', { ...query, approve });
  expectStatus(answered, 200);
  return new URL((answered.json() as { redirectTo: string }).redirectTo);
}

async function personWithToken(rootRole: 'Editor' | 'Viewer' = 'Editor') {
  const person = await createUserSession(ctx, rootRole);
  const browser = ctx.withCookie(person.cookie);
  const clientId = await register();
  const { verifier, challenge } = pkce();
  const code = (await grant(browser, authorizationQuery(clientId, challenge))).searchParams.get('code')!;
  const exchanged = await ctx.app.inject(
    form({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: clientId, code_verifier: verifier }),
  );
  expectStatus(exchanged, 200);
  return {
    person,
    browser,
    clientId,
    code,
    verifier,
    token: exchanged.json() as { access_token: string; expires_in: number; token_type: string; scope: string },
  };
}

async function mcpClient(token: string): Promise<Client> {
  const client = new Client({ name: 'Claude Code', version: '2.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${listeningAt()}/api/admin/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  clients.push(client);
  return client;
}

describe('MCP authorization (OAuth 2.1)', () => {
  test('publishes where to get a token: the 401, the protected resource and the authorization server', async () => {
    const refused = await ctx.as().post('/api/admin/mcp', { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} });
    expectStatus(refused, 401);
    const base = ctx.config.baseUrl.replace(/\/$/, '');
    assert.equal(
      refused.headers['www-authenticate'],
      `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/api/admin/mcp"`,
    );
    const resource = (await ctx.as().get('/.well-known/oauth-protected-resource/api/admin/mcp')).json();
    assert.deepEqual(resource, {
      resource: `${base}/api/admin/mcp`,
      authorization_servers: [base],
      bearer_methods_supported: ['header'],
      scopes_supported: ['mcp'],
      resource_name: 'Vexil MCP',
    });
    const server = (await ctx.as().get('/.well-known/oauth-authorization-server')).json() as Record<string, unknown>;
    assert.equal(server.issuer, base);
    assert.equal(server.authorization_endpoint, `${base}/oauth/authorize`);
    assert.equal(server.token_endpoint, `${base}/oauth/token`);
    assert.equal(server.registration_endpoint, `${base}/oauth/register`);
    assert.deepEqual(server.code_challenge_methods_supported, ['S256']);
    assert.deepEqual(server.token_endpoint_auth_methods_supported, ['none']);
  });

  test('registration refuses addresses a code must never be sent to, and more than it bounds, in OAuth’s error body', async () => {
    for (const [uri, problem] of [
      ['javascript:alert(1)', /javascript: scheme/],
      ['http://evil.example.com/cb', /https, or http on localhost/],
      ['https://app.example.com/cb#frag', /fragment/],
      ['not a uri', /absolute URI/],
    ] as const) {
      const response = await ctx.as().post('/oauth/register', { redirect_uris: [uri] });
      expectStatus(response, 400);
      const body = response.json() as { error: string; error_description: string };
      assert.equal(body.error, 'invalid_redirect_uri');
      assert.match(body.error_description, problem);
    }
    const tooMany = await ctx
      .as()
      .post('/oauth/register', { redirect_uris: Array.from({ length: 11 }, (_, i) => `https://a.example.com/${i}`) });
    expectStatus(tooMany, 400);
    assert.equal((tooMany.json() as { error: string }).error, 'invalid_client_metadata');
    const cursor = await ctx
      .as()
      .post('/oauth/register', { redirect_uris: ['cursor://anysphere.cursor-retrieval/oauth/callback'], client_name: 'Cursor' });
    expectStatus(cursor, 201);
  });

  test('a person grants access; the token acts as them on MCP only, its events say so, and a code works once', async () => {
    const project = await createProject(ctx);
    const since = await lastEventId(ctx);
    const { person, clientId, code, verifier, token } = await personWithToken();
    assert.match(token.access_token, /^mcp:[0-9a-f]{64}$/);
    assert.equal(token.expires_in, 24 * 3600);
    assert.equal(token.token_type, 'Bearer');

    const client = await mcpClient(token.access_token);
    const name = uniqueName('oauth-flag');
    const created = await client.callTool({
      name: 'create_flag',
      arguments: { projectId: project, name, type: 'release', description: 'x' },
    });
    assert.equal(created.isError, undefined);
    const events = await eventsSince(ctx, since);
    const granted = events.find((event) => event.type === 'mcp-token-created')!;
    assert.equal(granted.createdByUserId, person.id);
    assert.equal((granted.data as { clientName: string }).clientName, 'Claude Code');
    assert.doesNotMatch(JSON.stringify(granted), /mcp:[0-9a-f]{64}/);
    const flagCreated = events.find((event) => event.type === 'feature-created' && event.featureName === name)!;
    // What the client says it is, and the client the person granted the token to, which it cannot choose.
    assert.deepEqual(
      [flagCreated.createdByUserId, flagCreated.via],
      [person.id, `Claude Code 2.0.0, granted to "Claude Code" ${clientId}`],
    );

    const elsewhere = await ctx.as(`Bearer ${token.access_token}`).get('/api/admin/projects');
    expectStatus(elsewhere, 401);
    assert.match((elsewhere.json() as { message: string }).message, /MCP endpoint only/);

    const replay = await ctx.app.inject(
      form({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: clientId, code_verifier: verifier }),
    );
    expectStatus(replay, 400);
    assert.equal((replay.json() as { error: string }).error, 'invalid_grant');
  });

  test('a wrong verifier, another client or another address gets no token, and the code is spent', async () => {
    const person = ctx.withCookie((await createUserSession(ctx, 'Editor')).cookie);
    const [clientId, otherClient] = [await register(), await register()];
    for (const wrong of [{ code_verifier: pkce().verifier }, { client_id: otherClient }, { redirect_uri: 'http://127.0.0.1:1/other' }]) {
      const { verifier, challenge } = pkce();
      const code = (await grant(person, authorizationQuery(clientId, challenge))).searchParams.get('code')!;
      const refused = await ctx.app.inject(
        form({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: clientId, code_verifier: verifier, ...wrong }),
      );
      expectStatus(refused, 400);
      assert.equal((refused.json() as { error: string }).error, 'invalid_grant');
      const retried = await ctx.app.inject(
        form({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: clientId, code_verifier: verifier }),
      );
      assert.equal((retried.json() as { error: string }).error, 'invalid_grant');
    }
    const repeated = await ctx.app.inject({ ...form({}), payload: 'grant_type=authorization_code&grant_type=refresh_token' });
    expectStatus(repeated, 400);
    assert.equal((repeated.json() as { error: string }).error, 'invalid_request');
  });

  test('the consent API refuses bad requests without redirecting, a token cannot grant, and Deny sends access_denied', async () => {
    const person = await createUserSession(ctx, 'Editor');
    const browser = ctx.withCookie(person.cookie);
    const clientId = await register();
    const { challenge } = pkce();
    const asked = (extra: Record<string, string>) =>
      browser.get(`/api/admin/oauth/authorization?${new URLSearchParams(authorizationQuery(clientId, challenge, extra))}`);
    const badRequests: Array<Record<string, string>> = [
      { redirect_uri: 'http://127.0.0.1:33418/elsewhere' },
      { client_id: 'vexil-mcp-unknown' },
      { code_challenge_method: 'plain' },
      { code_challenge: 'short' },
      { response_type: 'token' },
      { scope: 'admin' },
      { resource: 'https://other.example.com/mcp' },
    ];
    for (const extra of badRequests) {
      const response = await asked(extra);
      expectStatus(response, 400);
      assert.equal((response.json() as { name: string }).name, 'BadDataError', JSON.stringify(extra));
    }
    const pat = await browser.post('/api/admin/user/tokens', {
      description: 'p',
      expiresAt: new Date(ctx.clock.now().getTime() + 86_400_000).toISOString(),
    });
    const byToken = await ctx
      .as(`Bearer ${(pat.json() as { secret: string }).secret}`)
      .post('/api/admin/oauth/authorization', { ...authorizationQuery(clientId, challenge), approve: true });
    expectStatus(byToken, 400);

    const denied = await grant(browser, authorizationQuery(clientId, challenge), false);
    assert.equal(`${denied.origin}${denied.pathname}`, REDIRECT);
    assert.equal(denied.searchParams.get('error'), 'access_denied');
    assert.equal(denied.searchParams.get('state'), 'xyz');
    assert.equal(denied.searchParams.get('code'), null);
  });

  test('the token expires after a day, and the person lists and revokes the agents holding one', async () => {
    const { browser, token } = await personWithToken();
    const listed = (await browser.get('/api/admin/user/mcp-tokens')).json() as { tokens: Array<{ id: number; clientName: string }> };
    assert.deepEqual(
      listed.tokens.map((t) => t.clientName),
      ['Claude Code'],
    );
    assert.doesNotMatch(JSON.stringify(listed), /mcp:/);
    await mcpClient(token.access_token);

    const since = await lastEventId(ctx);
    expectStatus(await browser.delete(`/api/admin/user/mcp-tokens/${listed.tokens[0]!.id}`), 204);
    const revoked = await ctx.as(`Bearer ${token.access_token}`).post('/api/admin/mcp', { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expectStatus(revoked, 401);
    assert.deepEqual(
      (await eventsSince(ctx, since)).map((event) => event.type),
      ['mcp-token-revoked'],
    );
    assert.deepEqual(((await browser.get('/api/admin/user/mcp-tokens')).json() as { tokens: unknown[] }).tokens, []);
    expectStatus(await browser.delete(`/api/admin/user/mcp-tokens/${listed.tokens[0]!.id}`), 404);

    const second = await personWithToken();
    const working = await ctx.as(`Bearer ${second.token.access_token}`).inject({
      method: 'POST',
      url: '/api/admin/mcp',
      headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
      payload: {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      },
    });
    expectStatus(working, 200);
    ctx.clock.advance(24 * 3_600_000 + 1000);
    const expired = await ctx
      .as(`Bearer ${second.token.access_token}`)
      .post('/api/admin/mcp', { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expectStatus(expired, 401);
  });

  test("an OS handler's scheme, or an app scheme that is no reverse domain, is refused; a name's hidden characters are dropped", async () => {
    for (const uri of ['ms-msdt:/id PCWDiagnostic', 'search-ms:query=x', 'view-source:https://evil.example', 'x-evil:/whatever']) {
      const response = await ctx.as().post('/oauth/register', { redirect_uris: [uri] });
      expectStatus(response, 400);
      assert.equal((response.json() as { error: string }).error, 'invalid_redirect_uri', uri);
    }
    const app = await ctx
      .as()
      .post('/oauth/register', { redirect_uris: ['com.example.agent:/callback'], client_name: 'Claude\u202E edoC\u202C Code\u0007' });
    expectStatus(app, 201);
    assert.equal((app.json() as { client_name: string }).client_name, 'Claude edoC Code');
    // A name of nothing but hidden characters names nothing: refused, and no client is registered.
    const before = await ctx.db
      .selectFrom('oauth_clients')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .executeTakeFirstOrThrow();
    const hidden = await ctx.as().post('/oauth/register', { redirect_uris: [REDIRECT], client_name: '\u202E\u0007\u200B' });
    expectStatus(hidden, 400);
    assert.equal((hidden.json() as { error: string }).error, 'invalid_client_metadata');
    const after = await ctx.db
      .selectFrom('oauth_clients')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .executeTakeFirstOrThrow();
    assert.equal(Number(after.count), Number(before.count));
  });

  test('a full table makes room by dropping clients that hold no live token, approved ones included, least recently granted first', async () => {
    const { count } = await ctx.db
      .selectFrom('oauth_clients')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .executeTakeFirstOrThrow();
    const long = new Date(ctx.clock.now().getTime() - 7 * 86_400_000);
    // Approved once, their tokens long gone: what an account holder approving registrations of their own leaves behind.
    await ctx.db
      .insertInto('oauth_clients')
      .values(
        Array.from({ length: MAX_OAUTH_CLIENTS - Number(count) }, (_, index) => ({
          client_id: `filler-${index}`,
          name: 'Filler',
          redirect_uris: JSON.stringify([REDIRECT]),
          created_at: long,
          authorized_at: long,
        })),
      )
      .execute();
    const registered = await ctx.as().post('/oauth/register', { redirect_uris: [REDIRECT], client_name: 'After the flood' });
    expectStatus(registered, 201);
    const after = await ctx.db
      .selectFrom('oauth_clients')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .executeTakeFirstOrThrow();
    assert.equal(Number(after.count), MAX_OAUTH_CLIENTS);
  });

  test('one address registers at most twenty clients an hour; the next is told to wait', async () => {
    ctx.clock.advance(2 * 3_600_000);
    const answers: number[] = [];
    for (let attempt = 0; attempt < REGISTRATIONS_PER_ADDRESS_HOUR + 1; attempt++) {
      answers.push((await ctx.as().post('/oauth/register', { redirect_uris: [REDIRECT], client_name: `flood ${attempt}` })).statusCode);
    }
    assert.deepEqual(answers, [...Array<number>(REGISTRATIONS_PER_ADDRESS_HOUR).fill(201), 429]);
  });
});
