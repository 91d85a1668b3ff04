import { Type } from '@sinclair/typebox';
import { logIn, logOut } from '../domain/users/sessions.commands.js';
import type { RouteModule } from './deps.js';
import { PUBLIC, SESSION_COOKIE } from './plugins/access.js';
import { LoginSchema, UserSchema } from './users.schemas.js';

const tags = ['Auth'];

export const authRoutes: RouteModule = async (app, { deps }) => {
  const secureCookie = deps.config.baseUrl.startsWith('https:');

  app.post(
    '/auth/simple/login',
    { schema: { tags, body: Type.Ref(LoginSchema), response: { 200: Type.Ref(UserSchema) } }, config: { access: PUBLIC } },
    async (request, reply) => {
      const { user, sessionId } = await logIn(deps, {
        ...request.body,
        sessionTtlHours: deps.config.sessionTtlHours,
      });
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
