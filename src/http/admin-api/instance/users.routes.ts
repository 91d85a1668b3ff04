import { Type } from '@sinclair/typebox';
import { inUnitOfWork } from '../../../db/unit-of-work.js';
import { permissionsOfActor } from '../../../domain/access/permissions.js';
import { resolveRootRoleRef, rootRoleChoices } from '../../../domain/roles/roles.js';
import { createPat, deletePat, listPats } from '../../../domain/personal-access-tokens/personal-access-tokens.js';
import {
  changeUserPassword,
  countAdmins,
  createUser,
  deleteInactiveUsers,
  deleteScimUsers,
  listInactiveUsers,
  deleteUser,
  assertCurrentPassword,
  hashNewPassword,
  updateUser,
  getActingUser,
  getUser,
  listUsers,
  searchUsers,
} from '../../../domain/users/users.js';
import type { FastifyRequest } from 'fastify';
import { endSessions, listSessions } from '../../../domain/users/sessions.js';
import { listSignIns } from '../../../domain/users/sign-in-audit.js';
import { createScimToken, deleteScimToken, scimTokenStatus } from '../../../domain/scim/scim-token.js';
import { OPEN_SIGN_IN_POLICY, readSignInPolicy, setSignInPolicy, type SignInPolicy } from '../../../domain/settings/sign-in-policy.js';
import { boundedRead } from '../../../db/bounded-read.js';
import { readBoundsOf } from '../../read-bounds.js';
import { IdParams, NumericId, UrlFriendlyName } from '../../common.schemas.js';
import { routesTagged, type RouteModule } from '../../deps.js';
import { can, SESSION_COOKIE } from '../../plugins/access.js';
import { actorOf } from '../../plugins/route-access.js';
import { BadDataError, PermissionError } from '../../../shared/errors.js';
import { assertStrongPassword } from '../../../domain/users/password-policy.js';
import { getHeldRoles, getProfile } from '../../../domain/users/profile.js';
import { createResetLinkFor } from '../../../domain/users/password-reset.js';
import { RolesSchema } from './roles.schemas.js';
import { giveFeedback, markSplashSeen, uiMemoryOf } from '../../../domain/users/ui-memory.js';
import {
  AdminCountSchema,
  IdsSchema,
  InactiveUsersSchema,
  ResetLinkRequestSchema,
  ResetLinkSchema,
  ChangeOwnPasswordSchema,
  CreateFeedbackSchema,
  FeedbackSchema,
  ProfileSchema,
  SplashSchema,
  UiItemParams,
  UpdateFeedbackSchema,
  CreatePatSchema,
  CreateUserResponseSchema,
  CreateUserSchema,
  MeSchema,
  OidcSettingsSchema,
  UpdateOidcSettingsSchema,
  PasswordSchema,
  PatSchema,
  PatsSchema,
  SessionsEndedSchema,
  SessionsSchema,
  SignOnsQuerySchema,
  SignOnsSchema,
  UpdateUserSchema,
  UserSchema,
  UsersSchema,
  UsersSearchQuery,
  UsersSearchSchema,
  ScimTokenSchema,
  ScimTokenStatusSchema,
} from '../../users.schemas.js';

const route = routesTagged(['Users']);

export const userRoutes: RouteModule = async (app, { deps, act }) => {
  app.get('/api/admin/user-admin/admin-count', route(can('ADMIN'), { ok: AdminCountSchema }), async () => countAdmins(deps.db));

  app.get('/api/admin/user-admin', route(can('ADMIN'), { ok: UsersSchema }), async () => ({
    users: await listUsers(deps.db),
    rootRoles: await rootRoleChoices(deps.db),
  }));

  // Checks a password against the rules before a user is made with it: 200 when it passes, a 400 naming what fails.
  app.post('/api/admin/user-admin/validate-password', route(can('ADMIN'), { body: PasswordSchema }), async (request, reply) => {
    assertStrongPassword(request.body.password, '/body/password');
    return reply.status(200).send();
  });

  // A link the Admin hands to the person themselves; by email, the person asks on the sign-in page.
  app.post(
    '/api/admin/user-admin/reset-password',
    route(can('ADMIN'), { body: ResetLinkRequestSchema, ok: ResetLinkSchema }),
    async (request) => ({
      resetPasswordUrl: await act(request, (uow) => createResetLinkFor(uow, request.body.id, deps.config.baseUrl)),
    }),
  );

  app.get('/api/admin/user-admin/inactive', route(can('ADMIN'), { ok: InactiveUsersSchema }), async () => ({
    version: 1 as const,
    inactiveUsers: await listInactiveUsers(deps.db, deps.clock.now()),
  }));

  app.post('/api/admin/user-admin/inactive/delete', route(can('ADMIN'), { body: IdsSchema }), async (request, reply) => {
    await act(request, (uow) => deleteInactiveUsers(uow, request.body.ids));
    return reply.status(200).send();
  });

  app.delete('/api/admin/user-admin/scim-users', route(can('ADMIN')), async (request, reply) => {
    await act(request, (uow) => deleteScimUsers(uow));
    return reply.status(200).send();
  });

  app.get('/api/admin/user-admin/search', route(can('ADMIN'), { querystring: UsersSearchQuery, ok: UsersSearchSchema }), async (request) =>
    searchUsers(deps.db, request.query.q ?? ''),
  );

  app.post(
    '/api/admin/user-admin',
    route(can('ADMIN'), { body: CreateUserSchema, created: CreateUserResponseSchema }),
    async (request, reply) => {
      const { password, rootRole, sendEmail: _sendEmail, ...fields } = request.body;
      const role = await resolveRootRoleRef(deps.db, rootRole, '/body/rootRole');
      const passwordHash = password === undefined ? undefined : await hashNewPassword(password, '/body/password');
      const user = await act(request, (uow) =>
        createUser(uow, { ...fields, rootRole: role.role, customRootRoleId: role.customRoleId, passwordHash }),
      );
      return reply.status(201).send({ ...user, emailSent: false });
    },
  );

  app.get('/api/admin/user-admin/:id', route(can('ADMIN'), { params: IdParams, ok: UserSchema }), async (request) =>
    getUser(deps.db, Number(request.params.id)),
  );

  app.put(
    '/api/admin/user-admin/:id',
    route(can('ADMIN'), { params: IdParams, body: UpdateUserSchema, ok: UserSchema }),
    async (request) => {
      const { rootRole, ...fields } = request.body;
      const role = rootRole === undefined ? undefined : await resolveRootRoleRef(deps.db, rootRole, '/body/rootRole');
      return act(request, (uow) => updateUser(uow, Number(request.params.id), { ...fields, rootRole: role }));
    },
  );

  app.delete('/api/admin/user-admin/:id', route(can('ADMIN'), { params: IdParams }), async (request, reply) => {
    await act(request, (uow) => deleteUser(uow, Number(request.params.id)));
    return reply.status(200).send();
  });

  app.post(
    '/api/admin/user-admin/:id/change-password',
    route(can('ADMIN'), { params: IdParams, body: PasswordSchema }),
    async (request, reply) => {
      const passwordHash = await hashNewPassword(request.body.password, '/body/password');
      await act(request, (uow) => changeUserPassword(uow, Number(request.params.id), passwordHash));
      return reply.status(200).send();
    },
  );

  // Sessions: a person's own (their profile), and any user's for Admins. Ending all of one's own keeps the session
  // the request came with; an Admin's "end all" ends every one.
  const sessionRoute = routesTagged(['Sessions']);
  const SessionParams = Type.Object({ sessionId: NumericId });
  const UserSessionParams = Type.Object({ id: NumericId, sessionId: NumericId });
  const signedInUser = (request: FastifyRequest): number => {
    const actor = actorOf(request);
    if (actor.kind !== 'user') throw new BadDataError('Only a signed-in user has sessions of their own');
    return actor.userId;
  };

  app.get('/api/admin/user/sessions', sessionRoute(can('READ'), { ok: SessionsSchema }), async (request) => ({
    sessions: await listSessions(deps.db, signedInUser(request), deps.clock.now(), request.cookies[SESSION_COOKIE]),
  }));

  app.delete('/api/admin/user/sessions/:sessionId', sessionRoute(can('READ'), { params: SessionParams }), async (request, reply) => {
    const userId = signedInUser(request);
    await act(request, (uow) => endSessions(uow, userId, { sessionId: Number(request.params.sessionId) }));
    return reply.status(204).send();
  });

  app.delete('/api/admin/user/sessions', sessionRoute(can('READ'), { ok: SessionsEndedSchema }), async (request) => {
    const userId = signedInUser(request);
    return { ended: await act(request, (uow) => endSessions(uow, userId, { allBut: request.cookies[SESSION_COOKIE] })) };
  });

  app.get('/api/admin/user-admin/:id/sessions', sessionRoute(can('ADMIN'), { params: IdParams, ok: SessionsSchema }), async (request) => {
    const user = await getUser(deps.db, Number(request.params.id));
    return { sessions: await listSessions(deps.db, user.id, deps.clock.now(), request.cookies[SESSION_COOKIE]) };
  });

  app.delete(
    '/api/admin/user-admin/:id/sessions/:sessionId',
    sessionRoute(can('ADMIN'), { params: UserSessionParams }),
    async (request, reply) => {
      await act(request, (uow) => endSessions(uow, Number(request.params.id), { sessionId: Number(request.params.sessionId) }));
      return reply.status(204).send();
    },
  );

  app.delete(
    '/api/admin/user-admin/:id/sessions',
    sessionRoute(can('ADMIN'), { params: IdParams, ok: SessionsEndedSchema }),
    async (request) => ({
      ended: await act(request, (uow) => endSessions(uow, Number(request.params.id), { allBut: undefined })),
    }),
  );

  app.get(
    '/api/admin/signons',
    sessionRoute(can('ADMIN'), { querystring: SignOnsQuerySchema, ok: SignOnsSchema }),
    async (request, reply) =>
      boundedRead(deps.db, readBoundsOf(deps, reply), (db) =>
        listSignIns(db, { offset: request.query.offset ?? 0, limit: request.query.limit ?? 50, userId: request.query.userId }),
      ),
  );

  // Who each identity provider may bring in; before an Admin sets it, what the server was started with.
  for (const provider of ['oidc', 'saml'] as const) {
    const configured = deps[provider];
    const startingPolicy: SignInPolicy = configured?.startingPolicy ?? OPEN_SIGN_IN_POLICY;
    const settingsOf = (policy: SignInPolicy) => ({
      enabled: configured !== undefined,
      autoCreate: policy.autoCreate,
      defaultRootRole: policy.defaultRootRole,
      emailDomains: policy.emailDomains.join(','),
    });
    const path = `/api/admin/auth/${provider}/settings`;
    app.get(path, route(can('ADMIN'), { ok: OidcSettingsSchema }), async () =>
      settingsOf(await readSignInPolicy(deps.db, provider, startingPolicy)),
    );
    app.post(path, route(can('ADMIN'), { body: UpdateOidcSettingsSchema, ok: OidcSettingsSchema }), async (request) =>
      settingsOf(await act(request, (uow) => setSignInPolicy(uow, provider, request.body, startingPolicy))),
    );
  }

  // The token an identity provider provisions with over SCIM: made (or replaced) and deleted by an Admin, its secret
  // shown only in the answer that makes it.
  const scimRoute = routesTagged(['SCIM']);
  app.get('/api/admin/scim/token', scimRoute(can('ADMIN'), { ok: ScimTokenStatusSchema }), async () => scimTokenStatus(deps.db));
  app.post('/api/admin/scim/token', scimRoute(can('ADMIN'), { created: ScimTokenSchema }), async (request, reply) =>
    reply.status(201).send(await act(request, (uow) => createScimToken(uow))),
  );
  app.delete('/api/admin/scim/token', scimRoute(can('ADMIN')), async (request, reply) => {
    await act(request, (uow) => deleteScimToken(uow));
    return reply.status(204).send();
  });

  app.get('/api/admin/user', route(can('READ'), { ok: MeSchema }), async (request) => {
    const actor = actorOf(request);
    return {
      user: await getActingUser(deps.db, actor),
      permissions: permissionsOfActor(actor),
      ...(actor.kind === 'user' ? await uiMemoryOf(deps.db, actor.userId) : { feedback: [], splash: {} }),
    };
  });

  app.get('/api/admin/user/profile', route(can('READ'), { ok: ProfileSchema }), async (request) =>
    getProfile(deps.db, actorOf(request), deps.config.passwordSignIn),
  );

  app.get(
    '/api/admin/user/roles',
    route(can('READ'), { querystring: Type.Object({ projectId: Type.Optional(UrlFriendlyName) }), ok: RolesSchema }),
    async (request) => ({ version: 1 as const, roles: await getHeldRoles(deps.db, actorOf(request), request.query.projectId) }),
  );

  /** The person signed in, for what the admin UI remembers of them; a token has nothing to remember. */
  const personOf = (request: FastifyRequest): number => {
    const actor = actorOf(request);
    if (actor.kind !== 'user') throw new BadDataError('Only a person signed in answers feedback or sees splash screens');
    return actor.userId;
  };

  app.post('/api/admin/feedback', route(can('READ'), { body: CreateFeedbackSchema, ok: FeedbackSchema }), async (request) => {
    const userId = personOf(request);
    return inUnitOfWork(deps, actorOf(request), (uow) =>
      giveFeedback(uow, userId, request.body.feedbackId, { neverShow: request.body.neverShow ?? false }),
    );
  });

  app.put(
    '/api/admin/feedback/:id',
    route(can('READ'), { params: UiItemParams, body: UpdateFeedbackSchema, ok: FeedbackSchema }),
    async (request) => {
      const userId = personOf(request);
      const { userId: named, neverShow, given } = request.body;
      if (named !== undefined && named !== userId) {
        throw new BadDataError('Feedback is your own to give', [
          { path: '/body/userId', message: `You are user ${userId} (got ${named})` },
        ]);
      }
      return inUnitOfWork(deps, actorOf(request), (uow) =>
        giveFeedback(uow, userId, request.params.id, {
          ...(neverShow !== undefined ? { neverShow } : {}),
          ...(given !== undefined ? { given: given === null ? null : new Date(given) } : {}),
        }),
      );
    },
  );

  app.post('/api/admin/splash/:id', route(can('READ'), { params: UiItemParams, ok: SplashSchema }), async (request) => {
    const userId = personOf(request);
    return inUnitOfWork(deps, actorOf(request), (uow) => markSplashSeen(uow, userId, request.params.id));
  });

  app.post('/api/admin/user/change-password', route(can('READ'), { body: ChangeOwnPasswordSchema }), async (request, reply) => {
    const actor = actorOf(request);
    if (actor.kind !== 'user') throw new BadDataError('Only a signed-in user has a password of their own to change');
    const { oldPassword, password, confirmPassword } = request.body;
    if (password !== confirmPassword) {
      const message = '"confirmPassword" must be the same as "password"';
      throw new BadDataError(message, [{ message, path: '/body/confirmPassword' }]);
    }
    const passwordHash = await hashNewPassword(password, '/body/password');
    await inUnitOfWork(deps, actor, async (uow) => {
      await assertCurrentPassword(uow, actor.userId, oldPassword);
      // The session in use stays open; every other session of the user ends.
      await changeUserPassword(uow, actor.userId, passwordHash, request.cookies[SESSION_COOKIE]);
    });
    return reply.status(200).send();
  });

  app.get(
    '/api/admin/user/tokens',
    { schema: { tags: ['Personal access tokens'], response: { 200: Type.Ref(PatsSchema) } }, config: { access: can('READ') } },
    async (request) => ({ pats: await listPats(deps.db, actorOf(request)) }),
  );

  app.post(
    '/api/admin/user/tokens',
    {
      schema: {
        tags: ['Personal access tokens'],
        body: Type.Ref(CreatePatSchema),
        response: { 201: Type.Ref(PatSchema) },
      },
      config: { access: can('READ') },
    },
    async (request, reply) => {
      // Only a person signed in makes tokens: a token that could make more would let a leaked one outlive its expiry,
      // and a service account's (which cannot sign in) would outlive an Admin deleting it.
      if (request.headers.authorization !== undefined) {
        throw new PermissionError(
          "A token cannot create personal access tokens: a person signs in to make one, and a service account's tokens are made by an Admin (POST /api/admin/service-account/:id/token)",
        );
      }
      const pat = await act(request, (uow) =>
        createPat(uow, { description: request.body.description, expiresAt: new Date(request.body.expiresAt) }),
      );
      return reply.status(201).send(pat);
    },
  );

  app.delete(
    '/api/admin/user/tokens/:id',
    { schema: { tags: ['Personal access tokens'], params: IdParams }, config: { access: can('READ') } },
    async (request, reply) => {
      await act(request, (uow) => deletePat(uow, Number(request.params.id)));
      return reply.status(200).send();
    },
  );
};
