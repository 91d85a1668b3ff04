import { Type } from '@sinclair/typebox';
import { inUnitOfWork } from '../../db/unit-of-work.js';
import { SYSTEM_ACTOR } from '../../domain/access/actor.js';
import {
  createInviteLink,
  getInviteLink,
  listInviteLinks,
  signUpWithInvite,
  updateInviteLink,
  validInviteLink,
} from '../../domain/users/invite-links.js';
import { hashNewPassword } from '../../domain/users/users.js';
import { routesTagged, type RouteModule } from '../deps.js';
import { can } from '../plugins/access.js';
import { PUBLIC } from '../plugins/route-access.js';
import {
  CreatedInviteLinkSchema,
  CreateInviteLinkSchema,
  CreateInvitedUserSchema,
  InviteLinkSchema,
  InviteLinksSchema,
  UpdateInviteLinkSchema,
  UserSchema,
} from '../users.schemas.js';

const route = routesTagged(['Public signup tokens']);
/** A link's secret, or its id. */
const LinkParams = Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }) });

/** Invite links: Admins make and manage them; whoever holds one makes an account with it. */
export const inviteLinkRoutes: RouteModule = async (app, { deps, act }) => {
  app.get('/api/admin/invite-link/tokens', route(can('ADMIN'), { ok: InviteLinksSchema }), async () => ({
    tokens: await listInviteLinks(deps.db, deps.clock.now()),
  }));

  app.post(
    '/api/admin/invite-link/tokens',
    route(can('ADMIN'), { body: CreateInviteLinkSchema, created: CreatedInviteLinkSchema }),
    async (request, reply) => {
      const input = { name: request.body.name, expiresAt: new Date(request.body.expiresAt) };
      const link = await act(request, (uow) => createInviteLink(uow, input, deps.config.baseUrl));
      return reply.status(201).send(link);
    },
  );

  app.get('/api/admin/invite-link/tokens/:token', route(can('ADMIN'), { params: LinkParams, ok: InviteLinkSchema }), async (request) =>
    getInviteLink(deps.db, request.params.token, deps.clock.now()),
  );

  app.put(
    '/api/admin/invite-link/tokens/:token',
    route(can('ADMIN'), { params: LinkParams, body: UpdateInviteLinkSchema, ok: InviteLinkSchema }),
    async (request) => {
      const { expiresAt, enabled } = request.body;
      const input = { ...(expiresAt ? { expiresAt: new Date(expiresAt) } : {}), ...(enabled !== undefined ? { enabled } : {}) };
      return act(request, (uow) => updateInviteLink(uow, request.params.token, input));
    },
  );

  app.get('/invite/:token/validate', route(PUBLIC, { params: LinkParams }), async (request, reply) => {
    await validInviteLink(deps.db, request.params.token, deps.clock.now());
    return reply.status(200).send();
  });

  app.post(
    '/invite/:token/signup',
    route(PUBLIC, { params: LinkParams, body: CreateInvitedUserSchema, ok: UserSchema }),
    async (request) => {
      await validInviteLink(deps.db, request.params.token, deps.clock.now());
      // Hashed before the transaction, which should not wait for the key derivation.
      const passwordHash = await hashNewPassword(request.body.password, '/body/password');
      const { email, name, username } = request.body;
      return inUnitOfWork(deps, SYSTEM_ACTOR, (uow) =>
        signUpWithInvite(uow, request.params.token, { email, name, passwordHash, ...(username ? { username } : {}) }),
      );
    },
  );
};
