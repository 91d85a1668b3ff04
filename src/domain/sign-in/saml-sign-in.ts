import { inflateRawSync } from 'node:zlib';
import { type CacheProvider, type Profile, SAML, ValidateInResponseTo } from '@node-saml/node-saml';
import { type Document, DOMParser, type Element } from '@xmldom/xmldom';
import type { SamlConfig } from '../../config.js';
import type { Db } from '../../db/database.js';
import type { Actor, UnitOfWork } from '../../db/unit-of-work.js';
import type { Clock } from '../../shared/clock.js';
import { seal, unseal } from '../../shared/secrets.js';
import { serverKey } from '../settings/server-keys.js';
import { readSignInPolicy, type SignInPolicy, startingSignInPolicy } from '../settings/sign-in-policy.js';
import type { SessionOrigin } from '../users/sessions.js';
import { claimedGroups, type ProviderIdentity, SignInRefused, signInThroughProvider } from './provider-sign-in.js';

/** How long a started sign-in may take to come back from the identity provider. */
const REQUEST_TTL_MS = 10 * 60_000;
/** Clocks of Vexil and the identity provider may differ by this much. */
const CLOCK_SKEW_MS = 60_000;
const METADATA_TIMEOUT_MS = 10_000;
/** A metadata document is a few kilobytes; this bounds what a misbehaving server can make Vexil read. */
const MAX_METADATA_BYTES = 1_000_000;
const SEALING_KEY_NAME = 'saml-sign-in';

/** What Vexil reads of the identity provider's metadata. */
interface IdentityProviderMetadata {
  entityId: string;
  /** Where the browser is sent with the request (HTTP-Redirect binding). */
  signInUrl: string;
  /** The certificates assertions must be signed with (base64 DER, as the metadata writes them). */
  certificates: string[];
}

const text = (value: unknown) => (typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined);

const METADATA_NS = 'urn:oasis:names:tc:SAML:2.0:metadata';
const SIGNATURE_NS = 'http://www.w3.org/2000/09/xmldsig#';
const ASSERTION_NS = 'urn:oasis:names:tc:SAML:2.0:assertion';
const REDIRECT_BINDING = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect';

const elements = (parent: Document | Element, namespace: string, name: string) => [...parent.getElementsByTagNameNS(namespace, name)];

/** Reads entity id, sign-in URL and signing certificates from an IdP's metadata document. */
export function readIdentityProviderMetadata(xml: string): IdentityProviderMetadata {
  const document = new DOMParser().parseFromString(xml, 'text/xml');
  const [descriptor] = elements(document, METADATA_NS, 'IDPSSODescriptor');
  const entityId = text(elements(document, METADATA_NS, 'EntityDescriptor')[0]?.getAttribute('entityID'));
  const signInUrl = text(
    descriptor &&
      elements(descriptor, METADATA_NS, 'SingleSignOnService')
        .find((service) => service.getAttribute('Binding') === REDIRECT_BINDING)
        ?.getAttribute('Location'),
  );
  const certificates = (descriptor ? elements(descriptor, METADATA_NS, 'KeyDescriptor') : [])
    .filter((key) => !key.getAttribute('use') || key.getAttribute('use') === 'signing')
    .flatMap((key) => elements(key, SIGNATURE_NS, 'X509Certificate'))
    .map((certificate) => (certificate.textContent ?? '').replace(/\s+/g, ''))
    .filter(Boolean);
  if (!entityId || !signInUrl || certificates.length === 0) {
    throw new Error('it names no entity id, no HTTP-Redirect sign-in service, or no signing certificate');
  }
  return { entityId, signInUrl, certificates };
}

/** A response's body as text, read only up to `limit` bytes: a larger one is refused before it is held whole. */
async function boundedText(response: Response, limit: number): Promise<string> {
  const tooLarge = () => new Error(`its metadata is larger than ${limit} bytes`);
  if (Number(response.headers.get('content-length') ?? 0) > limit) {
    await response.body?.cancel();
    throw tooLarge();
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body ?? []) {
    size += chunk.byteLength;
    // Leaving the loop cancels the stream: nothing more is read.
    if (size > limit) throw tooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

interface Deps {
  db: Db;
  clock: Clock;
}

/** A checked answer: who signed in, the request it answered and the assertion's own id. */
export interface SamlAnswer {
  identity: ProviderIdentity;
  requestId: string;
  assertionId: string;
}

/** What a started sign-in's request id carries, sealed: when it was made. */
interface SealedRequest {
  issuedAt: number;
}

/**
 * SAML 2.0 sign-in, SP-initiated, with @node-saml/node-saml: the browser is sent to the identity provider with a
 * request and comes back with a POSTed answer whose assertion must be signed with a certificate from the
 * provider's metadata, name Vexil as its audience and its callback as recipient, be within its time window and
 * answer a request Vexil made, once. A request's id is sealed (not stored), so anyone may start sign-ins without
 * end; an accepted answer's request is remembered until it would have expired, so no answer is used twice.
 */
export class SamlSignIn {
  private client: Promise<{ saml: SAML; idp: IdentityProviderMetadata }> | undefined;

  constructor(
    readonly config: SamlConfig,
    private readonly deps: Deps,
  ) {}

  /** The policy until an Admin sets one: what the server was started with. */
  get startingPolicy(): SignInPolicy {
    return startingSignInPolicy(this.config);
  }

  private async metadata(): Promise<IdentityProviderMetadata> {
    const response = await fetch(this.config.metadataUrl, { signal: AbortSignal.timeout(METADATA_TIMEOUT_MS), redirect: 'error' });
    if (!response.ok) throw new Error(`it answered ${response.status}`);
    return readIdentityProviderMetadata(await boundedText(response, MAX_METADATA_BYTES));
  }

  /** The node-saml client for the provider's metadata, made on first use and kept; a failure is tried again next time. */
  private setUp(): Promise<{ saml: SAML; idp: IdentityProviderMetadata }> {
    this.client ??= Promise.all([this.metadata(), serverKey(this.deps.db, SEALING_KEY_NAME, this.deps.clock.now())])
      .then(([idp, key]) => {
        const saml = new SAML({
          callbackUrl: this.config.callbackUrl,
          entryPoint: idp.signInUrl,
          issuer: this.config.entityId,
          audience: this.config.entityId,
          idpIssuer: idp.entityId,
          idpCert: idp.certificates,
          wantAssertionsSigned: true,
          wantAuthnResponseSigned: false,
          acceptedClockSkewMs: CLOCK_SKEW_MS,
          validateInResponseTo: ValidateInResponseTo.always,
          requestIdExpirationPeriodMs: REQUEST_TTL_MS,
          // node-saml compares a request's time with the wall clock, so the wall clock is what is sealed.
          generateUniqueId: () => `_${seal(key, { issuedAt: Date.now() } satisfies SealedRequest)}`,
          cacheProvider: this.requestIds(key),
          identifierFormat: null,
          disableRequestedAuthnContext: true,
        });
        return { saml, idp };
      })
      .catch((error: unknown) => {
        this.client = undefined;
        throw new SignInRefused(
          `The SAML identity provider's metadata at ${this.config.metadataUrl.href} could not be read: ${error instanceof Error ? error.message : String(error)}`,
        );
      });
    return this.client;
  }

  /**
   * node-saml asks its cache whether a response answers a request it made. Nothing is saved when a request is
   * made: the id itself says, sealed, when it was made; a request already answered is refused.
   */
  private requestIds(key: Buffer): CacheProvider {
    return {
      saveAsync: async (_id, value) => ({ value, createdAt: Date.now() }),
      getAsync: async (id) => {
        const sealed = unseal(key, id.slice(1)) as Partial<SealedRequest> | undefined;
        if (typeof sealed?.issuedAt !== 'number') return null;
        const answered = await this.deps.db
          .selectFrom('saml_answered_requests')
          .select('request_id')
          .where('request_id', '=', id)
          .executeTakeFirst();
        return answered ? null : new Date(sealed.issuedAt).toISOString();
      },
      // An accepted answer's request is marked answered in the sign-in's own unit of work (see `signIn`).
      removeAsync: async () => null,
    };
  }

  /** Reads the provider's metadata ahead of the first sign-in; returns why it could not, if it could not. */
  check(): Promise<string | undefined> {
    return this.setUp().then(
      () => undefined,
      (error: unknown) => (error instanceof Error ? error.message : String(error)),
    );
  }

  /**
   * Where to send the browser to sign in, with `returnTo` as the RelayState the provider sends back, and the
   * request's id, which the browser keeps (a cookie) to show that the answer it brings back is to its own request.
   */
  async start(returnTo: string): Promise<{ url: string; requestId: string }> {
    const { saml } = await this.setUp();
    const url = await saml.getAuthorizeUrlAsync(returnTo, undefined, {});
    // The id is inside the request the URL carries (HTTP-Redirect binding: deflated, then base64).
    const request = inflateRawSync(Buffer.from(new URL(url).searchParams.get('SAMLRequest') ?? '', 'base64')).toString('utf8');
    const requestId = /\sID="([^"]+)"/.exec(request)?.[1];
    if (!requestId) throw new SignInRefused('The SAML request made for the identity provider carries no id');
    return { url, requestId };
  }

  /** Vexil's service provider metadata, for the identity provider's administrator. */
  async serviceProviderMetadata(): Promise<string> {
    const { saml } = await this.setUp();
    return saml.generateServiceProviderMetadata(null, null);
  }

  /**
   * Checks a POSTed answer and reads who signed in; the request it answers and the assertion's id are returned, to be
   * marked used. The answer must answer the request this browser started (`startedRequestId`, from its cookie), in
   * the signed assertion itself: the Response's `InResponseTo` is not signed, so an assertion made for no request
   * (IdP-initiated) or for another browser's request cannot be wrapped in a Response naming this one.
   */
  async finish(samlResponse: string, startedRequestId: string | undefined): Promise<SamlAnswer> {
    if (!startedRequestId) {
      throw new SignInRefused('This SAML answer was not started in this browser (no sign-in cookie); start again from the sign-in page');
    }
    const { saml, idp } = await this.setUp();
    let profile: Profile | null;
    try {
      ({ profile } = await saml.validatePostResponseAsync({ SAMLResponse: samlResponse }));
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      if (/InResponseTo/.test(reason))
        throw new SignInRefused('This SAML answer was already used, or answers no sign-in started here; start again');
      throw new SignInRefused(`The SAML answer was refused: ${reason}`);
    }
    if (!profile || typeof profile.inResponseTo !== 'string') throw new SignInRefused('The SAML answer answers no sign-in Vexil started');
    if (profile.issuer !== idp.entityId) throw new SignInRefused(`The SAML answer comes from ${profile.issuer}, not ${idp.entityId}`);
    const assertion = this.signedAssertionOf(profile);
    if (assertion.recipient !== this.config.callbackUrl) {
      throw new SignInRefused(`The SAML assertion is meant for ${assertion.recipient ?? 'no recipient'}, not ${this.config.callbackUrl}`);
    }
    if (profile.inResponseTo !== startedRequestId || assertion.inResponseTo !== startedRequestId) {
      throw new SignInRefused('This SAML answer does not answer the sign-in this browser started; start again from the sign-in page');
    }
    if (!assertion.id) throw new SignInRefused('The SAML assertion has no ID');
    return { identity: this.identityOf(profile), requestId: startedRequestId, assertionId: assertion.id };
  }

  /** What the signed assertion (node-saml hands over only the part whose signature it checked) says of itself. */
  private signedAssertionOf(profile: Profile): { id?: string; recipient?: string; inResponseTo?: string } {
    const xml = profile.getAssertionXml?.();
    if (!xml) return {};
    const document = new DOMParser().parseFromString(xml, 'text/xml');
    const confirmation = elements(document, ASSERTION_NS, 'SubjectConfirmationData')[0];
    return {
      id: text(elements(document, ASSERTION_NS, 'Assertion')[0]?.getAttribute('ID')),
      recipient: text(confirmation?.getAttribute('Recipient')),
      inResponseTo: text(confirmation?.getAttribute('InResponseTo')),
    };
  }

  private identityOf(profile: Profile): ProviderIdentity {
    const attribute = (name: string) => {
      const value = profile[name] ?? (profile.attributes as Record<string, unknown> | undefined)?.[name];
      return Array.isArray(value) ? text(value[0]) : text(value);
    };
    const nameId = text(profile.nameID);
    if (!nameId) throw new SignInRefused('The SAML assertion names no subject (NameID)');
    const email = attribute(this.config.emailAttribute) ?? text(profile.email) ?? (nameId.includes('@') ? nameId : undefined);
    const groups =
      profile[this.config.groupsAttribute] ?? (profile.attributes as Record<string, unknown> | undefined)?.[this.config.groupsAttribute];
    return {
      subject: nameId,
      email: email?.toLowerCase(),
      // The provider signs the assertion, and Vexil trusts it with sign-in: the email it asserts is its to vouch for.
      emailVerified: true,
      name: attribute(this.config.nameAttribute),
      groups: claimedGroups(groups),
    };
  }

  /**
   * Signs the person in under the sign-in policy (see `signInThroughProvider`), marking the request answered and the
   * assertion used in the same unit of work: a second use of either, on any instance, is refused. Returns the new
   * session's id.
   */
  async signIn(uow: UnitOfWork, answer: SamlAnswer, sessionTtlHours: number, origin: SessionOrigin) {
    await uow.tx.deleteFrom('saml_answered_requests').where('expires_at', '<', uow.now).execute();
    const expiresAt = new Date(uow.now.getTime() + REQUEST_TTL_MS + CLOCK_SKEW_MS);
    // Assertion ids share the table with request ids, told apart by a prefix no request id has (they start with `_`).
    const marked = await uow.tx
      .insertInto('saml_answered_requests')
      .values([
        { request_id: answer.requestId, expires_at: expiresAt },
        { request_id: `assertion:${answer.assertionId}`, expires_at: expiresAt },
      ])
      .onConflict((conflict) => conflict.doNothing())
      .returning('request_id')
      .execute();
    if (marked.length < 2) throw new SignInRefused('This SAML answer was already used; start again');
    const { idp } = await this.setUp();
    const policy = await readSignInPolicy(uow.tx, 'saml', this.startingPolicy);
    return signInThroughProvider(uow, { issuer: idp.entityId, authType: 'saml' }, answer.identity, policy, { sessionTtlHours, origin });
  }

  /** Who a sign-in's changes are recorded as. */
  get actor(): Actor {
    return { kind: 'identity-provider', name: this.config.name };
  }
}
