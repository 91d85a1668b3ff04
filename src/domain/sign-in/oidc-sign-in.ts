import * as oidc from 'openid-client';
import type { OidcConfig } from '../../config.js';
import type { Db } from '../../db/database.js';
import type { Actor, UnitOfWork } from '../../db/unit-of-work.js';
import type { Clock } from '../../shared/clock.js';
import { seal, unseal } from '../../shared/secrets.js';
import { serverKey } from '../settings/server-keys.js';
import type { SessionOrigin } from '../users/sessions.js';
import { readSignInPolicy, type SignInPolicy, startingSignInPolicy } from '../settings/sign-in-policy.js';
import { claimedGroups, type ProviderIdentity, SignInRefused, signInThroughProvider } from './provider-sign-in.js';

/** How long a started sign-in may take to come back; the browser's cookie lives as long. */
export const LOGIN_TTL_MS = 10 * 60_000;
const SEALING_KEY_NAME = 'oidc-sign-in';

/** What a started sign-in must remember until its callback, sealed in the browser's cookie. */
interface PendingSignIn {
  state: string;
  nonce: string;
  codeVerifier: string;
  returnTo: string;
  /** Milliseconds since the epoch. */
  expiresAt: number;
}

function pendingSignInOf(value: unknown): PendingSignIn | undefined {
  const candidate = value as Partial<PendingSignIn> | undefined;
  const texts = [candidate?.state, candidate?.nonce, candidate?.codeVerifier, candidate?.returnTo];
  return texts.every((text) => typeof text === 'string') && typeof candidate?.expiresAt === 'number'
    ? (candidate as PendingSignIn)
    : undefined;
}
const PROVIDER_TIMEOUT_S = 10;

interface Deps {
  db: Db;
  clock: Clock;
}

/**
 * Sign-in through an OpenID Connect provider: authorization code with PKCE, `state` and `nonce`. A started
 * sign-in (state, verifier, nonce, where to return) is sealed into the browser's cookie under a key the instances
 * share, so any instance finishes it, only in the browser that started it, and nothing is kept meanwhile. The
 * provider's metadata is fetched on first use and kept; a failed fetch is tried again at the next sign-in.
 */
export class OidcSignIn {
  private configuration: Promise<oidc.Configuration> | undefined;
  private key: Promise<Buffer> | undefined;

  constructor(
    readonly config: OidcConfig,
    private readonly deps: Deps,
  ) {}

  private discover(): Promise<oidc.Configuration> {
    this.configuration ??= oidc
      .discovery(
        this.config.issuer,
        this.config.clientId,
        undefined,
        this.config.clientSecret === undefined ? oidc.None() : oidc.ClientSecretPost(this.config.clientSecret),
        {
          timeout: PROVIDER_TIMEOUT_S,
          // The ID token's signature is checked against the provider's published keys even though it came straight
          // from the token endpoint, where OpenID Connect would let TLS alone vouch for it.
          execute: [oidc.enableNonRepudiationChecks, ...(this.config.allowHttp ? [oidc.allowInsecureRequests] : [])],
        },
      )
      .catch((error: unknown) => {
        this.configuration = undefined;
        throw new SignInRefused(`The sign-in provider at ${this.config.issuer.href} could not be reached or read: ${messageOf(error)}`);
      });
    return this.configuration;
  }

  /** Reads the provider's metadata ahead of the first sign-in; returns why it could not, if it could not. */
  check(): Promise<string | undefined> {
    return this.discover().then(
      () => undefined,
      (error: unknown) => (error instanceof Error ? error.message : String(error)),
    );
  }

  private sealingKey(): Promise<Buffer> {
    this.key ??= serverKey(this.deps.db, SEALING_KEY_NAME, this.deps.clock.now()).catch((error: unknown) => {
      this.key = undefined;
      throw error;
    });
    return this.key;
  }

  /**
   * Starts a sign-in; returns where to send the browser and the sealed state for its cookie. Nothing is stored:
   * anyone may start a sign-in, as often as they like, and it costs the server no room.
   */
  async start(returnTo: string): Promise<{ url: string; cookie: string }> {
    const configuration = await this.discover();
    const pending: PendingSignIn = {
      state: oidc.randomState(),
      nonce: oidc.randomNonce(),
      codeVerifier: oidc.randomPKCECodeVerifier(),
      returnTo,
      expiresAt: this.deps.clock.now().getTime() + LOGIN_TTL_MS,
    };
    const url = oidc.buildAuthorizationUrl(configuration, {
      redirect_uri: this.config.redirectUri,
      scope: this.config.scopes,
      code_challenge: await oidc.calculatePKCECodeChallenge(pending.codeVerifier),
      code_challenge_method: 'S256',
      state: pending.state,
      nonce: pending.nonce,
    });
    return { url: url.href, cookie: seal(await this.sealingKey(), pending) };
  }

  /**
   * Finishes a sign-in from the provider's redirect: the state must be the one sealed in this browser's cookie,
   * the code is redeemed with the verifier (the provider redeems a code once), and the ID token's issuer,
   * audience, expiry, nonce and signature are checked.
   */
  async finish(callbackUrl: URL, cookie: string | undefined): Promise<{ identity: ProviderIdentity; returnTo: string }> {
    // The state is checked first: until then anyone could have written this URL, and what it says is not shown.
    const state = callbackUrl.searchParams.get('state');
    const login = cookie ? pendingSignInOf(unseal(await this.sealingKey(), cookie)) : undefined;
    if (!state || !login || login.state !== state) {
      throw new SignInRefused('This sign-in was not started in this browser, or has already been used; start again');
    }
    const providerError = callbackUrl.searchParams.get('error');
    if (providerError) {
      // OAuth error codes are a handful of words (RFC 6749 §4.1.2.1); anything else is not repeated.
      const code = /^[a-z_]{1,64}$/.test(providerError) ? providerError : 'an error';
      const description = callbackUrl.searchParams.get('error_description')?.slice(0, 200);
      throw new SignInRefused(`The sign-in provider refused: ${code}${description ? ` (${description})` : ''}`);
    }
    if (login.expiresAt <= this.deps.clock.now().getTime()) {
      throw new SignInRefused('This sign-in has expired; start again');
    }
    const configuration = await this.discover();
    let claims: oidc.IDToken;
    try {
      const tokens = await oidc.authorizationCodeGrant(configuration, callbackUrl, {
        pkceCodeVerifier: login.codeVerifier,
        expectedState: state,
        expectedNonce: login.nonce,
        idTokenExpected: true,
      });
      claims = tokens.claims()!;
    } catch (error) {
      throw new SignInRefused(`The sign-in provider's answer was refused: ${messageOf(error)}`);
    }
    return { identity: this.identityOf(claims), returnTo: login.returnTo };
  }

  private identityOf(claims: oidc.IDToken): ProviderIdentity {
    const text = (value: unknown) => (typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined);
    return {
      subject: claims.sub,
      email: text(claims.email)?.toLowerCase(),
      emailVerified: claims.email_verified === true,
      name: text(claims.name) ?? text(claims.preferred_username),
      groups: claimedGroups(claims[this.config.groupsClaim]),
    };
  }

  /** Signs the person in under the sign-in policy (see `signInThroughProvider`); returns the new session's id. */
  async signIn(uow: UnitOfWork, identity: ProviderIdentity, sessionTtlHours: number, origin: SessionOrigin): Promise<string> {
    const policy = await readSignInPolicy(uow.tx, 'oidc', this.startingPolicy);
    return signInThroughProvider(uow, { issuer: this.config.issuer.href, authType: 'oidc' }, identity, policy, { sessionTtlHours, origin });
  }

  /** The policy until an Admin sets one: what the server was started with. */
  get startingPolicy(): SignInPolicy {
    return startingSignInPolicy(this.config);
  }

  /** Who a sign-in's changes (a new user, a changed name or email, group memberships) are recorded as. */
  get actor(): Actor {
    return { kind: 'identity-provider', name: this.config.name };
  }
}

/** The reason in words: the provider's OAuth error and description when it gave one, else the library's message. */
function messageOf(error: unknown): string {
  const oauth = error as { error?: unknown; error_description?: unknown };
  if (typeof oauth?.error === 'string') {
    return typeof oauth.error_description === 'string' ? `${oauth.error} (${oauth.error_description})` : oauth.error;
  }
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
    return `${error.message}${cause}`;
  }
  return String(error);
}
