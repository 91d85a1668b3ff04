import * as oidc from 'openid-client';
import type { OidcConfig } from '../../config.js';
import type { Db } from '../../db/database.js';
import { inUnitOfWork } from '../../db/unit-of-work.js';
import type { Clock } from '../../shared/clock.js';
import { TooManyRequestsError } from '../../shared/errors.js';
import { hashToken } from '../../shared/secrets.js';
import { syncSsoGroups } from '../groups/groups.js';
import { createUser } from './users.commands.js';
import { markSignedIn, openSession } from './sessions.commands.js';
import { recordEvent } from '../events/record-event.js';
import { toUserView } from './user-view.js';

/** A sign-in that could not finish, with the line the person and the log are shown. */
export class SignInRefused extends Error {
  override readonly name = 'SignInRefused';
}

/** Who the provider says signed in, from a verified ID token. */
export interface OidcIdentity {
  subject: string;
  email: string | undefined;
  emailVerified: boolean;
  name: string | undefined;
  groups: string[];
}

/** How long a started sign-in may take to come back. */
const LOGIN_TTL_MS = 10 * 60_000;
/** Sign-ins started and not yet back that Vexil keeps at once. */
const MAX_PENDING_LOGINS = 10_000;
/** The most group names a claim may bring; more are ignored (providers cap theirs similarly). */
const MAX_CLAIMED_GROUPS = 500;
const MAX_GROUP_NAME = 255;
const PROVIDER_TIMEOUT_S = 10;

interface Deps {
  db: Db;
  clock: Clock;
}

/**
 * Sign-in through an OpenID Connect provider: authorization code with PKCE, `state` and `nonce`. A started
 * sign-in is stored (hashed state, verifier, nonce) so that any instance can finish it and only once; the state
 * is also kept in the browser's cookie, so a callback finishes only in the browser that started it. The
 * provider's metadata is fetched on first use and kept; a failed fetch is tried again at the next sign-in.
 */
export class OidcSignIn {
  private configuration: Promise<oidc.Configuration> | undefined;

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

  /** Starts a sign-in; returns where to send the browser and the state for its cookie. */
  async start(returnTo: string): Promise<{ url: string; state: string }> {
    const configuration = await this.discover();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const now = this.deps.clock.now();
    await this.deps.db.deleteFrom('oidc_logins').where('expires_at', '<=', now).execute();
    // Anyone may start a sign-in; what they can make Vexil hold meanwhile is bounded.
    const pending = await this.deps.db
      .selectFrom('oidc_logins')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    if (Number(pending.n) >= MAX_PENDING_LOGINS) {
      throw new TooManyRequestsError('Too many sign-ins are in progress; try again in a few minutes', LOGIN_TTL_MS / 1000);
    }
    await this.deps.db
      .insertInto('oidc_logins')
      .values({
        state_hash: hashToken(state),
        code_verifier: codeVerifier,
        nonce,
        return_to: returnTo,
        expires_at: new Date(now.getTime() + LOGIN_TTL_MS),
      })
      .execute();
    const url = oidc.buildAuthorizationUrl(configuration, {
      redirect_uri: this.config.redirectUri,
      scope: this.config.scopes,
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    return { url: url.href, state };
  }

  /**
   * Finishes a sign-in from the provider's redirect: the state must be the browser's and unused, the code is
   * redeemed with the verifier, and the ID token's issuer, audience, expiry, nonce and signature are checked.
   */
  async finish(callbackUrl: URL, browserState: string | undefined): Promise<{ identity: OidcIdentity; returnTo: string }> {
    const providerError = callbackUrl.searchParams.get('error');
    if (providerError) {
      const description = callbackUrl.searchParams.get('error_description');
      throw new SignInRefused(`The sign-in provider refused: ${providerError}${description ? ` (${description})` : ''}`);
    }
    const state = callbackUrl.searchParams.get('state');
    if (!state || !browserState || state !== browserState) {
      throw new SignInRefused('This sign-in was not started in this browser, or has already been used; start again');
    }
    // Taken once: a replayed callback finds nothing.
    const login = await this.deps.db.deleteFrom('oidc_logins').where('state_hash', '=', hashToken(state)).returningAll().executeTakeFirst();
    if (!login || login.expires_at <= this.deps.clock.now()) {
      throw new SignInRefused('This sign-in has expired or has already been used; start again');
    }
    const configuration = await this.discover();
    let claims: oidc.IDToken;
    try {
      const tokens = await oidc.authorizationCodeGrant(configuration, callbackUrl, {
        pkceCodeVerifier: login.code_verifier,
        expectedState: state,
        expectedNonce: login.nonce,
        idTokenExpected: true,
      });
      claims = tokens.claims()!;
    } catch (error) {
      throw new SignInRefused(`The sign-in provider's answer was refused: ${messageOf(error)}`);
    }
    return { identity: this.identityOf(claims), returnTo: login.return_to };
  }

  private identityOf(claims: oidc.IDToken): OidcIdentity {
    const text = (value: unknown) => (typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined);
    const claimed = claims[this.config.groupsClaim];
    const groups = (Array.isArray(claimed) ? claimed : typeof claimed === 'string' ? [claimed] : [])
      .filter((group): group is string => typeof group === 'string' && group.length > 0 && group.length <= MAX_GROUP_NAME)
      .slice(0, MAX_CLAIMED_GROUPS);
    return {
      subject: claims.sub,
      email: text(claims.email)?.toLowerCase(),
      emailVerified: claims.email_verified === true,
      name: text(claims.name) ?? text(claims.preferred_username),
      groups: [...new Set(groups)],
    };
  }

  /**
   * Signs the person in: the user known by this provider's subject, or else the one with the same confirmed
   * email, or a new user with the default root role. Name and email follow the provider; SSO-mapped group
   * memberships follow the groups claim. Returns the new session's id.
   */
  async signIn(identity: OidcIdentity, sessionTtlHours: number): Promise<string> {
    const issuer = this.config.issuer.href;
    const actor = { kind: 'identity-provider' as const, name: this.config.name };
    return inUnitOfWork(this.deps, actor, async (uow) => {
      let user = await uow.tx
        .selectFrom('users')
        .selectAll()
        .where('oidc_issuer', '=', issuer)
        .where('oidc_subject', '=', identity.subject)
        .forUpdate()
        .executeTakeFirst();
      if (!user) {
        if (!identity.email) {
          throw new SignInRefused('The sign-in provider sent no email for this person; Vexil needs the email scope and claim');
        }
        const sameEmail = await uow.tx
          .selectFrom('users')
          .selectAll()
          .where((eb) => eb(eb.fn('lower', ['email']), '=', identity.email!))
          .forUpdate()
          .executeTakeFirst();
        if (sameEmail && (sameEmail.oidc_subject !== null || sameEmail.is_service)) {
          throw new SignInRefused(`The email ${identity.email} belongs to another account; ask an administrator`);
        }
        if (sameEmail && !identity.emailVerified) {
          throw new SignInRefused(
            `An account with the email ${identity.email} exists, and the provider does not say it verified that email, so it is not linked`,
          );
        }
        const id =
          sameEmail?.id ?? (await createUser(uow, { email: identity.email, name: identity.name, rootRole: this.config.defaultRole })).id;
        user = await uow.tx
          .updateTable('users')
          .set({ oidc_issuer: issuer, oidc_subject: identity.subject })
          .where('id', '=', id)
          .returningAll()
          .executeTakeFirstOrThrow();
      } else {
        const changes = {
          name: identity.name ?? user.name,
          email: identity.email ?? user.email,
        };
        if (changes.name !== user.name || changes.email !== user.email) {
          const before = user;
          user = await uow.tx.updateTable('users').set(changes).where('id', '=', user.id).returningAll().executeTakeFirstOrThrow();
          await recordEvent(uow, { type: 'user-updated', data: toUserView(user), preData: toUserView(before) });
        }
      }
      await syncSsoGroups(uow, { id: user.id, username: (user.username ?? user.email)! }, identity.groups);
      const sessionId = await openSession(uow.tx, user.id, uow.now, sessionTtlHours);
      await markSignedIn(uow.tx, user.id, uow.now);
      return sessionId;
    });
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
