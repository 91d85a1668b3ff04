import { Type } from '@sinclair/typebox';
import { LoginThrottle } from '../domain/users/login-throttle.js';
import { logIn, logOut } from '../domain/users/sessions.commands.js';
import { PasswordMismatch } from '../shared/errors.js';
import type { RouteModule } from './deps.js';
import { PUBLIC, SESSION_COOKIE } from './plugins/access.js';
import { LoginSchema, UserSchema } from './users.schemas.js';

const tags = ['Auth'];

export const authRoutes: RouteModule = async (app, { deps }) => {
  const secureCookie = deps.config.baseUrl.startsWith('https:');
  const throttle = new LoginThrottle();

  app.post(
    '/auth/simple/login',
    { schema: { tags, body: Type.Ref(LoginSchema), response: { 200: Type.Ref(UserSchema) } }, config: { access: PUBLIC } },
    async (request, reply) => {
      const { username } = request.body;
      throttle.assertAllowed(username, request.ip, deps.clock.now());
      const { user, sessionId } = await logIn(deps, {
        ...request.body,
        sessionTtlHours: deps.config.sessionTtlHours,
      }).catch((error: unknown) => {
        if (error instanceof PasswordMismatch) throttle.recordFailure(username, request.ip, deps.clock.now());
        throw error;
      });
      throttle.recordSuccess(username, request.ip);
      return reply
        .setCookie(SESSION_COOKIE, sessionId, {
          httpOnly: true,
          sameSite: 'lax',
          secure: secureCookie,
          path: '/',
          maxAge: deps.config.sessionTtlHours * 3600,
        })
        .send(user);
    },
  );

  app.post('/logout', { schema: { tags }, config: { access: PUBLIC } }, async (request, reply) => {
    const sessionId = request.cookies[SESSION_COOKIE];
    if (sessionId) await logOut(deps.db, sessionId);
    return reply.clearCookie(SESSION_COOKIE, { path: '/' }).status(204).send();
  });
};
