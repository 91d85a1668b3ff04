import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { shows, textOf, waitForTexts, watchForProblems } from '../helpers/browser.js';
import { freePort } from '../helpers/free-port.js';
import { STRONG_PASSWORD } from '../helpers/test-app.js';
import { useUiServer } from '../helpers/ui-server.js';

// MCP's OAuth flow as an editor runs it, driven by the official MCP SDK's own client (its discovery, dynamic
// registration and PKCE) and a person in Chromium: not signed in, sent to sign in, shown who asks, allows; the token
// works, is listed on the profile, and stops the moment the person revokes it there.

const REDIRECT = 'http://127.0.0.1:9/oauth/callback';
const ui = useUiServer('mcp-authorization', {
  env: async () => {
    const port = await freePort();
    return { PORT: String(port), BASE_URL: `http://127.0.0.1:${port}` };
  },
});

/** What an MCP client keeps between runs (Claude Code keeps it in its keychain): here, in memory. */
class RememberingProvider {
  information: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | undefined;
  readonly redirectUrl = REDIRECT;
  readonly clientMetadata: OAuthClientMetadata = {
    client_name: 'Claude Code',
    redirect_uris: [REDIRECT],
    grant_types: ['authorization_code'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
  clientInformation = () => this.information;
  saveClientInformation = (information: OAuthClientInformationMixed) => {
    this.information = information;
  };
  tokens = () => this.saved;
  saveTokens = (tokens: OAuthTokens) => {
    this.saved = tokens;
  };
  redirectToAuthorization = (url: URL) => {
    this.authorizationUrl = url;
  };
  saveCodeVerifier = (verifier: string) => {
    this.verifier = verifier;
  };
  codeVerifier = () => this.verifier;
}

const endpoint = () => new URL(`${ui.server.baseUrl}/api/admin/mcp`);

describe('MCP authorization in the browser', () => {
  test('sign in, consent, token issued and used, listed on the profile, revoked there', async () => {
    const provider = new RememberingProvider();
    const first = new StreamableHTTPClientTransport(endpoint(), { authProvider: provider });
    await assert.rejects(new Client({ name: 'Claude Code', version: '2.1.0' }).connect(first), UnauthorizedError);
    const authorizationUrl = provider.authorizationUrl!;
    assert.equal(`${authorizationUrl.origin}${authorizationUrl.pathname}`, `${ui.server.baseUrl}/oauth/authorize`);
    assert.ok(provider.information?.client_id, 'the client registered itself');

    // A browser of its own, not signed in: the person signs in first, and comes back to the request.
    const page = await ui.browser.newPage({ viewport: { width: 1100, height: 800 } });
    watchForProblems(page, ui.problems);
    page.on('dialog', (dialog) => void dialog.accept());
    await page.goto(authorizationUrl.toString());
    await page.waitForURL(/\/login\?next=/);
    await page.getByLabel('Username or email').fill('ops');
    await page.getByLabel('Password').fill(STRONG_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/oauth\/authorize\?/);
    assert.match(await textOf(page.getByTestId('oauth-client')), /^Claude Code asks to manage feature flags in Vexil as you, ops\.$/);
    await shows(page, 'Access ends after 24 hours; revoke it sooner on your profile.');

    // Allow: the browser goes back to the client's address with the code. The page answers there as a client's listener
    // would, so the navigation ends on it rather than on an error page that would cut the next one short.
    await page.route(`${REDIRECT}**`, (route) => route.fulfill({ status: 200, contentType: 'text/plain', body: 'Signed in' }));
    const [callback] = await Promise.all([
      page.waitForRequest((request) => request.url().startsWith(REDIRECT)),
      page.getByRole('button', { name: 'Allow' }).click(),
    ]);
    await page.waitForURL((url) => url.href.startsWith(REDIRECT));
    const returned = new URL(callback.url());
    assert.equal(returned.searchParams.get('state'), authorizationUrl.searchParams.get('state'));
    await first.finishAuth(returned.searchParams.get('code')!);
    assert.match(provider.saved!.access_token, /^mcp:/);
    assert.equal(provider.saved!.expires_in, 24 * 3600);

    const client = new Client({ name: 'Claude Code', version: '2.1.0' });
    await client.connect(new StreamableHTTPClientTransport(endpoint(), { authProvider: provider }));
    const { tools } = await client.listTools();
    assert.ok(tools.some((tool) => tool.name === 'create_flag'));
    const projects = await client.callTool({ name: 'list_projects', arguments: {} });
    assert.equal(projects.isError, undefined);

    await page.goto(`${ui.server.baseUrl}/profile`);
    const agents = page.getByRole('table', { name: 'Agents with access' });
    await waitForTexts(agents.locator('tbody td:first-child'), (names) => names.join() === 'Claude Code');
    await agents.getByRole('button', { name: 'Revoke' }).click();
    await shows(page, 'No agent holds access.');

    const refused = await fetch(endpoint(), {
      method: 'POST',
      headers: {
        authorization: `Bearer ${provider.saved!.access_token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    assert.equal(refused.status, 401);
    await client.close().catch(() => undefined);
    await page.close();
    assert.deepEqual(ui.problems, []);
  });
});
