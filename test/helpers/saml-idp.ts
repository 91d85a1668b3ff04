import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { generate } from 'selfsigned';

/**
 * What the test IdP uses of samlify. It is loaded with `require` and described here: samlify's own type
 * declarations reach xpath's, which add the DOM library to the whole program and change Node's stream types.
 */
interface Samlify {
  setSchemaValidator(validator: { validate: (xml: string) => Promise<string> }): void;
  Constants: { namespace: { binding: { redirect: string; post: string } } };
  SamlLib: {
    replaceTagsByValue(template: string, values: Record<string, string>): string;
    defaultLoginResponseTemplate: { context: string };
  };
  IdentityProvider(settings: Record<string, unknown>): {
    getMetadata(): string;
    parseLoginRequest(
      sp: unknown,
      binding: 'redirect',
      request: { query: Record<string, string> },
    ): Promise<{ extract: { request: { id: string } } }>;
    createLoginResponse(
      sp: unknown,
      requestInfo: unknown,
      binding: 'post',
      user: { email: string },
      replace: (template: string) => { id: string; context: string },
    ): Promise<{ context: string }>;
  };
  ServiceProvider(settings: Record<string, unknown>): unknown;
}

const samlify = createRequire(import.meta.url)('samlify') as Samlify;
// The test IdP reads requests Vexil made itself; it does not check them against the SAML schema.
samlify.setSchemaValidator({ validate: async () => 'skipped' });

const { binding } = samlify.Constants.namespace;
const EMAIL_FORMAT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';

export interface SamlAccount {
  email: string;
  name: string;
  groups: string[];
}

/** How to bend an answer, for the refusals a test checks. */
export interface AnswerOptions {
  /** Leave the assertion unsigned. */
  unsigned?: boolean;
  /** The audience the assertion names (Vexil's entity id unless given). */
  audience?: string;
  /** The recipient the subject confirmation names (Vexil's callback unless given). */
  recipient?: string;
  /** Moves every instant of the assertion by this much (negative: an assertion from the past). */
  shiftMs?: number;
  /**
   * The signed assertion answers no request (as an IdP-initiated one), while the unsigned Response around it still
   * names the request: what an attacker holding an IdP-initiated assertion would wrap it in.
   */
  assertionAnswersNoRequest?: boolean;
}

/** A SAML identity provider made with samlify, serving its metadata and its sign-in page on a port of its own. */
export interface SamlIdp {
  metadataUrl: string;
  entityId: string;
  accounts: Map<string, SamlAccount>;
  /** Who the IdP's sign-in page signs in (it asks no password). */
  signedIn: string;
  /** The form post answering the request in `redirectUrl` (Vexil's redirect to the IdP) for `login`. */
  answer(redirectUrl: string, login: string, options?: AnswerOptions): Promise<{ SAMLResponse: string; RelayState: string }>;
  close(): Promise<void>;
}

const escapeXml = (text: string) => text.replace(/[<>&"']/g, (char) => `&#${char.charCodeAt(0)};`);

function attributeStatement(account: SamlAccount): string {
  const attribute = (name: string, values: string[]) =>
    `<saml:Attribute Name="${name}" NameFormat="urn:oasis:names:tc:SAML:2.0:attrname-format:basic">${values
      .map((value) => `<saml:AttributeValue xsi:type="xs:string">${escapeXml(value)}</saml:AttributeValue>`)
      .join('')}</saml:Attribute>`;
  return `<saml:AttributeStatement>${attribute('email', [account.email])}${attribute('name', [account.name])}${
    account.groups.length > 0 ? attribute('groups', account.groups) : ''
  }</saml:AttributeStatement>`;
}

export async function startSamlIdp(serviceProvider: { entityId: string; callbackUrl: string }): Promise<SamlIdp> {
  const { private: privateKey, cert } = await generate([{ name: 'commonName', value: 'vexil-test-idp' }], {
    notAfterDate: new Date(Date.now() + 2 * 86_400_000),
    keySize: 2048,
  });
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const idp = samlify.IdentityProvider({
    entityID: `${base}/metadata`,
    privateKey,
    signingCert: cert,
    nameIDFormat: [EMAIL_FORMAT],
    singleSignOnService: [{ Binding: binding.redirect, Location: `${base}/sso` }],
    wantAuthnRequestsSigned: false,
  });
  const sp = samlify.ServiceProvider({
    entityID: serviceProvider.entityId,
    assertionConsumerService: [{ Binding: binding.post, Location: serviceProvider.callbackUrl }],
    wantAssertionsSigned: true,
    authnRequestsSigned: false,
  });

  const accounts = new Map<string, SamlAccount>();
  const state = { signedIn: '' };

  const answer: SamlIdp['answer'] = async (redirectUrl, login, options = {}) => {
    const url = new URL(redirectUrl);
    const account = accounts.get(login);
    if (!account) throw new Error(`The test IdP has no account ${login}`);
    const { extract } = await idp.parseLoginRequest(sp, 'redirect', { query: Object.fromEntries(url.searchParams) });
    const at = (offsetMs: number) => new Date(Date.now() + (options.shiftMs ?? 0) + offsetMs).toISOString();
    const values = {
      ID: `_${crypto.randomUUID()}`,
      AssertionID: `_${crypto.randomUUID()}`,
      Destination: serviceProvider.callbackUrl,
      Audience: options.audience ?? serviceProvider.entityId,
      SubjectRecipient: options.recipient ?? serviceProvider.callbackUrl,
      Issuer: `${base}/metadata`,
      IssueInstant: at(0),
      StatusCode: 'urn:oasis:names:tc:SAML:2.0:status:Success',
      ConditionsNotBefore: at(-60_000),
      ConditionsNotOnOrAfter: at(5 * 60_000),
      SubjectConfirmationDataNotOnOrAfter: at(5 * 60_000),
      NameIDFormat: EMAIL_FORMAT,
      NameID: account.email,
      InResponseTo: extract.request.id,
    };
    const authn = `<saml:AuthnStatement AuthnInstant="${values.IssueInstant}" SessionIndex="${values.AssertionID}"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>`;
    const render = (template: string) =>
      samlify.SamlLib.replaceTagsByValue(
        template
          .replace('{AuthnStatement}', authn)
          .replace('{AttributeStatement}', attributeStatement(account))
          // The subject confirmation's InResponseTo is the one that closes the element; the Response's opens its own.
          .replace(options.assertionAnswersNoRequest ? ' InResponseTo="{InResponseTo}"/>' : '\u0000', '/>'),
        values,
      );
    const RelayState = url.searchParams.get('RelayState') ?? '';
    if (options.unsigned) {
      return { SAMLResponse: Buffer.from(render(samlify.SamlLib.defaultLoginResponseTemplate.context)).toString('base64'), RelayState };
    }
    const { context } = await idp.createLoginResponse(sp, { extract }, 'post', { email: account.email }, (template: string) => ({
      id: values.ID,
      context: render(template),
    }));
    return { SAMLResponse: context, RelayState };
  };

  server.on('request', (request, response) => {
    const url = new URL(request.url ?? '/', base);
    if (url.pathname === '/metadata') {
      response.writeHead(200, { 'content-type': 'application/samlmetadata+xml' }).end(idp.getMetadata());
      return;
    }
    if (url.pathname === '/sso') {
      answer(url.href, state.signedIn).then(
        ({ SAMLResponse, RelayState }) => {
          // The browser posts the answer to Vexil, as an IdP's page does.
          response
            .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
            .end(
              `<!doctype html><html><body onload="document.forms[0].submit()"><form method="post" action="${escapeXml(serviceProvider.callbackUrl)}">` +
                `<input type="hidden" name="SAMLResponse" value="${escapeXml(SAMLResponse)}"><input type="hidden" name="RelayState" value="${escapeXml(RelayState)}">` +
                '<noscript><button type="submit">Continue</button></noscript></form></body></html>',
            );
        },
        (error: unknown) => response.writeHead(500).end(String(error)),
      );
      return;
    }
    response.writeHead(404).end();
  });

  return {
    metadataUrl: `${base}/metadata`,
    entityId: `${base}/metadata`,
    accounts,
    get signedIn() {
      return state.signedIn;
    },
    set signedIn(login: string) {
      state.signedIn = login;
    },
    answer,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
