import { decodeJwt, exportJWK, generateKeyPair, SignJWT, type JWTPayload } from 'jose';
import Provider from 'oidc-provider';
import { freePort } from './free-port.js';

/** What the test's identity provider says about a person who signs in with `login`. */
export interface TestAccount {
  email: string;
  email_verified?: boolean;
  name: string;
  groups: string[];
}

/**
 * A real OpenID Connect provider (`oidc-provider`) in this process, with its development sign-in pages (any
 * password is accepted) and consent granted, so a browser goes straight back to Vexil. Accounts can be changed
 * between sign-ins; `tamperIdToken` rewrites the ID token of the next token responses, to prove Vexil refuses
 * a forged or expired one.
 */
export interface TestOidcProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  accounts: Map<string, TestAccount>;
  /** Signs `claims` with the provider's own key, as it would sign a token. */
  signWithProviderKey(claims: JWTPayload): Promise<string>;
  /** Signs `claims` with a key the provider never published, under the provider's key id. */
  signWithForeignKey(claims: JWTPayload): Promise<string>;
  tamperIdToken: ((idToken: string, claims: JWTPayload) => Promise<string>) | undefined;
  /** Changes the parameters of the next redirect back to Vexil, as a link an attacker crafted would (once). */
  rewriteNextCallback: ((params: URLSearchParams) => void) | undefined;
  close(): Promise<void>;
}

export async function startOidcProvider(redirectUri: string): Promise<TestOidcProvider> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const kid = 'test-signing-key';
  const own = await generateKeyPair('RS256', { extractable: true });
  const foreign = await generateKeyPair('RS256', { extractable: true });
  const accounts = new Map<string, TestAccount>();
  const clientId = 'vexil';
  const clientSecret = 'a-client-secret-for-tests-only-0123456789';

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [redirectUri],
        token_endpoint_auth_method: 'client_secret_post',
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
    jwks: { keys: [{ ...(await exportJWK(own.privateKey)), kid, alg: 'RS256', use: 'sig' }] },
    scopes: ['openid', 'email', 'profile', 'groups'],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'], groups: ['groups'] },
    // The claims of the granted scopes go into the ID token, where Vexil reads them.
    conformIdTokenClaims: false,
    pkce: { required: () => true, methods: ['S256'] },
    cookies: { keys: ['a-cookie-signing-key-for-tests-only'] },
    ttl: { AccessToken: 600, AuthorizationCode: 60, IdToken: 600, Grant: 600, Interaction: 600, Session: 600 },
    features: { devInteractions: { enabled: true } },
    async findAccount(_ctx, id) {
      return {
        accountId: id,
        async claims() {
          const account = accounts.get(id);
          return { sub: id, ...(account ? { email_verified: true, ...account } : {}) };
        },
      };
    },
    // Vexil is a first-party client here: consent is granted without a prompt.
    async loadExistingGrant(ctx) {
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client!.clientId, accountId: ctx.oidc.session!.accountId! });
      grant.addOIDCScope('openid email profile groups');
      await grant.save();
      return grant;
    },
  });
  const state: TestOidcProvider = {
    issuer,
    clientId,
    clientSecret,
    accounts,
    tamperIdToken: undefined,
    rewriteNextCallback: undefined,
    signWithProviderKey: (claims) => new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid }).sign(own.privateKey),
    signWithForeignKey: (claims) => new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid }).sign(foreign.privateKey),
    close: async () => {
      await new Promise((resolve) => server.close(resolve));
    },
  };
  provider.use(async (ctx, next) => {
    await next();
    const body = ctx.body as { id_token?: string } | undefined;
    if (ctx.path === '/token' && state.tamperIdToken && body?.id_token) {
      ctx.body = { ...body, id_token: await state.tamperIdToken(body.id_token, decodeJwt(body.id_token)) };
    }
    const location = ctx.response.get('location');
    if (state.rewriteNextCallback && location.startsWith(redirectUri)) {
      const url = new URL(location);
      state.rewriteNextCallback(url.searchParams);
      state.rewriteNextCallback = undefined;
      ctx.redirect(url.href);
    }
  });
  const server = provider.listen(port, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return state;
}
