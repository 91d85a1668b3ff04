import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LOGIN_TTL_MS } from '../../domain/sign-in/oidc-sign-in.js';
import { SignInRefused } from '../../domain/sign-in/provider-sign-in.js';
import { logOut, type SessionOrigin, startSession, verifyPasswordLogin } from '../../domain/users/sessions.js';
import { inUnitOfWork } from '../../db/unit-of-work.js';
import { SYSTEM_ACTOR } from '../../domain/access/actor.js';
import {
  ApiError,
  NotFoundError,
  PasswordMismatch,
  PermissionError,
  TooManyRequestsError,
  UnauthorizedError,
} from '../../shared/errors.js';
import { recordRefusedSignIn, recordSignIn, type SignInAttempt } from '../../domain/users/sign-in-audit.js';
import { routesTagged, type RouteModule } from '../deps.js';
import { SESSION_COOKIE } from '../plugins/access.js';
import { PUBLIC } from '../plugins/route-access.js';
import {
  LoginSchema,
  PasswordSchema,
  ResetEmailRequestSchema,
  ResetPasswordSchema,
  ResetTokenUserSchema,
  SignInOptionsSchema,
  UserSchema,
} from '../users.schemas.js';
import { assertStrongPassword } from '../../domain/users/password-policy.js';
import { createResetLinkByEmail, resetEmail, resetPassword, resetTokenUser } from '../../domain/users/password-reset.js';

const route = routesTagged(['Auth']);
const OIDC_STATE_COOKIE = 'vexil-oidc-state';
/**
 * Why a sign-in through an identity provider was refused, for the sign-in page to show once. A cookie, not the URL:
 * anyone can write a link to `/login?error=…` with words of their own, nobody else can set this cookie.
 */
const REFUSAL_COOKIE = 'vexil-sign-in-refused';
/** The id of the SAML request this browser started: only an answer to it signs this browser in. */
const SAML_REQUEST_COOKIE = 'vexil-saml-request';
const OIDC_PATHS = '/auth/oidc';
const SAML_PATHS = '/auth/saml';

/** The address (behind TRUST_PROXY, the client's) and browser a sign-in came from, kept with its session. */
function sessionOrigin(request: FastifyRequest): SessionOrigin {
  const agent = request.headers['user-agent'];
  return { address: request.ip, userAgent: typeof agent === 'string' ? agent : undefined };
}

/**
 * Only a path of this app: where to go after signing in comes from a URL, which anyone can write. It is resolved
 * as a browser would (which drops tabs and newlines, reads `\` as `/` and removes `.` and `..` segments) and kept
 * only when it stays on this origin. The resolved path must not start with `//` or `/\` either: `/.//evil.example`
 * resolves on this origin to `//evil.example`, which a browser given it as a Location reads as another host.
 */
function safeReturnPath(next: string | undefined): string {
  const origin = 'http://vexil.invalid';
  try {
    const resolved = new URL(next ?? '/', origin);
    const path = `${resolved.pathname}${resolved.search}${resolved.hash}`;
    const onThisOrigin = next?.startsWith('/') && resolved.origin === origin;
    return onThisOrigin && !path.startsWith('//') && !path.startsWith('/\\') ? path : '/';
  } catch {
    return '/';
  }
}

export const authRoutes: RouteModule = async (app, { deps }) => {
  const secureCookie = deps.config.baseUrl.startsWith('https:');
  const { loginThrottle: throttle, oidc, saml } = deps;

  const setSessionCookie = (reply: FastifyReply, sessionId: string) =>
    reply.setCookie(SESSION_COOKIE, sessionId, {
      httpOnly: true,
      sameSite: 'lax',
      secure: secureCookie,
      path: '/',
      maxAge: deps.config.sessionTtlHours * 3600,
    });

  /** Records a refused sign-in in the audit (within the address's budget), in a unit of work of its own. */
  const recordRefusal = async (attempt: SignInAttempt, reason: string) => {
    if (!throttle.mayRecordRefusal(attempt.origin.address, deps.clock.now())) return;
    await inUnitOfWork(deps, SYSTEM_ACTOR, (uow) => recordRefusedSignIn(uow, attempt, reason), { inMaintenance: 'sign-in' });
  };

  /**
   * A sign-in through an identity provider that cannot go on returns to the sign-in page with one line saying why;
   * the log and the audit get it too.
   */
  const backToSignIn = async (request: FastifyRequest, reply: FastifyReply, error: unknown, authType: 'oidc' | 'saml' = 'oidc') => {
    const message =
      error instanceof SignInRefused || error instanceof ApiError ? error.message : 'Sign-in failed on the server; the log says why';
    if (error instanceof SignInRefused || error instanceof ApiError) reply.log.warn({ reason: message, authType }, 'Sign-in refused');
    else reply.log.error({ err: error, authType }, 'Sign-in failed');
    await recordRefusal({ authType, username: undefined, origin: sessionOrigin(request) }, message);
    if (authType === 'oidc') reply.clearCookie(OIDC_STATE_COOKIE, { path: OIDC_PATHS });
    // A client that asks for JSON (a script, not a browser) gets the refusal as a 401 in Unleash's error shape.
    const accept = request.headers.accept ?? '';
    if (accept.includes('application/json') && !accept.includes('text/html')) throw new UnauthorizedError(message);
    return reply
      .setCookie(REFUSAL_COOKIE, message, { sameSite: 'lax', secure: secureCookie, path: '/login', maxAge: 120 })
      .redirect('/login?refused', 302);
  };

  app.get('/auth/options', route(PUBLIC, { ok: SignInOptionsSchema }), async () => ({
    password: deps.config.passwordSignIn,
    oidc: oidc ? { name: oidc.config.name, path: `${OIDC_PATHS}/login` } : null,
    saml: saml ? { name: saml.config.name, path: `${SAML_PATHS}/login` } : null,
  }));

  const samlOrNotFound = () => {
    if (!saml) throw new NotFoundError('SAML sign-in is not configured on this server (SAML_METADATA_URL)');
    return saml;
  };

  app.get(
    `${SAML_PATHS}/login`,
    route(PUBLIC, { querystring: Type.Object({ next: Type.Optional(Type.String({ maxLength: 2000 })) }) }),
    async (request, reply) => {
      const provider = samlOrNotFound();
      try {
        const { url, requestId } = await provider.start(safeReturnPath(request.query.next));
        // The identity provider posts the answer from its own site: a Lax cookie would not come with that POST, so
        // over HTTPS the cookie is SameSite=None (and Secure); a server on plain HTTP can only offer Lax.
        return reply
          .setCookie(SAML_REQUEST_COOKIE, requestId, {
            httpOnly: true,
            sameSite: secureCookie ? 'none' : 'lax',
            secure: secureCookie,
            path: SAML_PATHS,
            maxAge: LOGIN_TTL_MS / 1000,
          })
          .redirect(url, 302);
      } catch (error) {
        return backToSignIn(request, reply, error, 'saml');
      }
    },
  );

  // SAML 2.0: the identity provider posts its answer as a form. Only this route reads form bodies (a scope of its
  // own): the password sign-in takes JSON alone, so no page of another site can post one to it.
  await app.register(async (scope) => {
    const samlCallback = scope.withTypeProvider<TypeBoxTypeProvider>();
    samlCallback.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) =>
      done(null, Object.fromEntries(new URLSearchParams(body.toString()))),
    );
    samlCallback.post(
      `${SAML_PATHS}/callback`,
      route(PUBLIC, {
        body: Type.Object(
          {
            SAMLResponse: Type.String({ minLength: 1, maxLength: 262_144 }),
            RelayState: Type.Optional(Type.String({ maxLength: 2000 })),
          },
          { additionalProperties: true },
        ),
      }),
      async (request, reply) => {
        const provider = samlOrNotFound();
        reply.clearCookie(SAML_REQUEST_COOKIE, { path: SAML_PATHS });
        try {
          const answer = await provider.finish(request.body.SAMLResponse, request.cookies[SAML_REQUEST_COOKIE]);
          const sessionId = await inUnitOfWork(
            deps,
            provider.actor,
            (uow) => provider.signIn(uow, answer, deps.config.sessionTtlHours, sessionOrigin(request)),
            { inMaintenance: 'sign-in' },
          );
          return setSessionCookie(reply, sessionId).redirect(safeReturnPath(request.body.RelayState), 302);
        } catch (error) {
          return backToSignIn(request, reply, error, 'saml');
        }
      },
    );
  });

  app.get(`${SAML_PATHS}/metadata`, route(PUBLIC), async (_request, reply) =>
    reply.type('application/samlmetadata+xml; charset=utf-8').send(await samlOrNotFound().serviceProviderMetadata()),
  );

  app.get(
    `${OIDC_PATHS}/login`,
    route(PUBLIC, { querystring: Type.Object({ next: Type.Optional(Type.String({ maxLength: 2000 })) }) }),
    async (request, reply) => {
      if (!oidc) throw new NotFoundError('OpenID Connect sign-in is not configured on this server (OIDC_ISSUER)');
      try {
        const { url, cookie } = await oidc.start(safeReturnPath(request.query.next));
        return reply
          .setCookie(OIDC_STATE_COOKIE, cookie, {
            httpOnly: true,
            sameSite: 'lax',
            secure: secureCookie,
            path: OIDC_PATHS,
            maxAge: LOGIN_TTL_MS / 1000,
          })
          .redirect(url, 302);
      } catch (error) {
        return backToSignIn(request, reply, error);
      }
    },
  );

  app.get(
    `${OIDC_PATHS}/callback`,
    route(PUBLIC, {
      querystring: Type.Object(
        {
          code: Type.Optional(Type.String({ maxLength: 4096 })),
          state: Type.Optional(Type.String({ maxLength: 1024 })),
          error: Type.Optional(Type.String({ maxLength: 256 })),
          error_description: Type.Optional(Type.String({ maxLength: 1024 })),
        },
        { additionalProperties: true },
      ),
    }),
    async (request, reply) => {
      if (!oidc) throw new NotFoundError('OpenID Connect sign-in is not configured on this server (OIDC_ISSUER)');
      try {
        // The provider redirected to the configured redirect URI; its query is what the token request must echo.
        const callbackUrl = new URL(deps.config.oidc!.redirectUri);
        callbackUrl.search = new URL(request.url, 'http://callback').search;
        const { identity, returnTo } = await oidc.finish(callbackUrl, request.cookies[OIDC_STATE_COOKIE]);
        const sessionId = await inUnitOfWork(
          deps,
          oidc.actor,
          (uow) => oidc.signIn(uow, identity, deps.config.sessionTtlHours, sessionOrigin(request)),
          { inMaintenance: 'sign-in' },
        );
        setSessionCookie(reply, sessionId);
        return reply.clearCookie(OIDC_STATE_COOKIE, { path: OIDC_PATHS }).redirect(returnTo, 302);
      } catch (error) {
        return backToSignIn(request, reply, error);
      }
    },
  );

  // A reset link: whom it is for while it works (the page shows it), then the new password through it.
  app.get(
    '/auth/reset/validate',
    route(PUBLIC, { querystring: Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }) }), ok: ResetTokenUserSchema }),
    async (request) => resetTokenUser(deps.db, request.query.token, deps.clock.now()),
  );

  app.post('/auth/reset/password', route(PUBLIC, { body: ResetPasswordSchema }), async (request, reply) => {
    await inUnitOfWork(deps, SYSTEM_ACTOR, (uow) => resetPassword(uow, request.body.token, request.body.password));
    return reply.status(200).send();
  });

  // Anyone may ask; the answer is the same whether or not the address is someone's, so it tells nobody who has an account.
  app.post('/auth/reset/password-email', route(PUBLIC, { body: ResetEmailRequestSchema }), async (request, reply) => {
    const { email } = request.body;
    if (!deps.mailer) {
      request.log.warn('A password reset email was asked for, but no SMTP server is configured (EMAIL_HOST): an Admin makes reset links');
      return reply.status(200).send();
    }
    if (!deps.resetEmailLimit.allow(email, request.ip, deps.clock.now().getTime())) return reply.status(200).send();
    // Answered before the address is looked up and the email sent: how long the answer takes says nothing about
    // whether the address is someone's.
    const mailer = deps.mailer;
    void inUnitOfWork(deps, SYSTEM_ACTOR, (uow) => createResetLinkByEmail(uow, email, deps.config.baseUrl))
      .then((reset) => (reset ? mailer.send(resetEmail(reset, reset.link)) : undefined))
      .catch((error: unknown) => request.log.error({ err: error }, 'The password reset email could not be made or sent'));
    return reply.status(200).send();
  });

  // The rules a new password must meet, asked before one is chosen (Unleash's reset and invite pages).
  app.post('/auth/reset/validate-password', route(PUBLIC, { body: PasswordSchema }), async (request, reply) => {
    assertStrongPassword(request.body.password, '/body/password');
    return reply.status(200).send();
  });

  app.post('/auth/simple/login', route(PUBLIC, { body: LoginSchema, ok: UserSchema }), async (request, reply) => {
    if (!deps.config.passwordSignIn) {
      throw new PermissionError(
        `Password sign-in is turned off on this server; sign in with ${deps.config.oidc?.name ?? deps.config.saml?.name ?? 'your identity provider'}`,
      );
    }
    const { username } = request.body;
    const attempt: SignInAttempt = { authType: 'password', username, origin: sessionOrigin(request) };
    try {
      throttle.assertAllowed(username, request.ip, deps.clock.now());
    } catch (error) {
      if (error instanceof TooManyRequestsError) await recordRefusal(attempt, 'Too many failed sign-ins from this address');
      throw error;
    }
    const userId = await verifyPasswordLogin(deps.db, request.body).catch(async (error: unknown) => {
      if (error instanceof PasswordMismatch) {
        throttle.recordFailure(username, request.ip, deps.clock.now());
        await recordRefusal(attempt, 'Wrong username or password');
      } else if (error instanceof UnauthorizedError) await recordRefusal(attempt, error.message);
      throw error;
    });
    const { user, sessionId } = await inUnitOfWork(
      deps,
      SYSTEM_ACTOR,
      async (uow) => {
        const opened = await startSession(uow, userId, deps.config.sessionTtlHours, attempt.origin);
        await recordSignIn(uow, attempt, userId);
        return opened;
      },
      { inMaintenance: 'sign-in' },
    );
    throttle.recordSuccess(username, request.ip);
    return setSessionCookie(reply, sessionId).send(user);
  });

  app.post('/logout', route(PUBLIC), async (request, reply) => {
    const sessionId = request.cookies[SESSION_COOKIE];
    if (sessionId) await logOut(deps.db, sessionId);
    return reply.clearCookie(SESSION_COOKIE, { path: '/' }).status(204).send();
  });
};
