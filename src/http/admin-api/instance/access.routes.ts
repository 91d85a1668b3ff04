import { Type } from '@sinclair/typebox';
import {
  createGroup,
  deleteGroup,
  getGroup,
  listAccessCandidates,
  listGroups,
  updateGroup,
  type GroupInput,
} from '../../../domain/groups/groups.js';
import { resolveProjectRoles, resolveRootRoleRef, rootRoleChoices } from '../../../domain/roles/roles.js';
import type { Db } from '../../../db/database.js';
import { addProjectAccess, getProjectAccess, removeProjectAccess, setProjectRoles } from '../../../domain/projects/project-access.js';
import {
  createServiceAccount,
  createServiceAccountToken,
  deleteServiceAccount,
  deleteServiceAccountToken,
  getServiceAccount,
  listServiceAccounts,
  updateServiceAccount,
} from '../../../domain/users/service-accounts.js';
import {
  AddProjectAccessSchema,
  CreateGroupSchema,
  CreateServiceAccountSchema,
  CreateServiceAccountTokenSchema,
  GroupSchema,
  GroupsSchema,
  AccessCandidatesSchema,
  ProjectAccessSchema,
  ProjectRolesSchema,
  ServiceAccountSchema,
  ServiceAccountsSchema,
  ServiceAccountTokenSchema,
  UpdateServiceAccountSchema,
} from './access.schemas.js';
import { NumericId, UrlFriendlyName, IdParams, ProjectParams } from '../../common.schemas.js';
import { routesTagged, type RouteModule } from '../../deps.js';
import { can, PROJECT_PARAM } from '../../plugins/access.js';
import { actorOf } from '../../plugins/route-access.js';
import { actorMay } from '../../../domain/access/permissions.js';

const GroupParams = Type.Object({ groupId: NumericId });
const ProjectUserParams = Type.Object({ projectId: UrlFriendlyName, userId: NumericId });
const ProjectGroupParams = Type.Object({ projectId: UrlFriendlyName, groupId: NumericId });
const ServiceAccountTokenParams = Type.Object({ id: NumericId, tokenId: NumericId });

const SERVICE_ACCOUNTS = '/api/admin/service-account';

async function groupInput(db: Db, body: typeof CreateGroupSchema.static): Promise<GroupInput> {
  return {
    name: body.name,
    description: body.description,
    mappingsSSO: body.mappingsSSO,
    rootRole: body.rootRole == null ? null : await resolveRootRoleRef(db, body.rootRole, '/body/rootRole'),
    userIds: (body.users ?? []).map((member) => member.user.id),
  };
}

/** Groups, project access and service accounts, on Unleash's paths. */
export const accessRoutes: RouteModule = async (app, { deps, act }) => {
  const groupRoute = routesTagged(['Groups']);
  app.get('/api/admin/user-admin/access', groupRoute(can('READ'), { ok: AccessCandidatesSchema }), async (request) =>
    listAccessCandidates(deps.db, actorMay(actorOf(request), 'ADMIN')),
  );

  app.get('/api/admin/groups', groupRoute(can('ADMIN'), { ok: GroupsSchema }), async () => ({ groups: await listGroups(deps.db) }));
  app.post('/api/admin/groups', groupRoute(can('ADMIN'), { body: CreateGroupSchema, created: GroupSchema }), async (request, reply) => {
    const input = await groupInput(deps.db, request.body);
    const group = await act(request, (uow) => createGroup(uow, input));
    return reply.status(201).send(group);
  });
  app.get('/api/admin/groups/:groupId', groupRoute(can('ADMIN'), { params: GroupParams, ok: GroupSchema }), async (request) =>
    getGroup(deps.db, Number(request.params.groupId)),
  );
  app.put(
    '/api/admin/groups/:groupId',
    groupRoute(can('ADMIN'), { params: GroupParams, body: CreateGroupSchema, ok: GroupSchema }),
    async (request) => {
      const input = await groupInput(deps.db, request.body);
      return act(request, (uow) => updateGroup(uow, Number(request.params.groupId), input));
    },
  );
  app.delete('/api/admin/groups/:groupId', groupRoute(can('ADMIN'), { params: GroupParams }), async (request, reply) => {
    await act(request, (uow) => deleteGroup(uow, Number(request.params.groupId)));
    return reply.status(200).send();
  });

  const accessRoute = routesTagged(['Projects']);
  app.get(
    '/api/admin/projects/:projectId/access',
    accessRoute(can('READ'), { params: ProjectParams, ok: ProjectAccessSchema }),
    async (request) => getProjectAccess(deps.db, request.params.projectId),
  );
  app.post(
    '/api/admin/projects/:projectId/access',
    accessRoute(can('PROJECT_USER_ACCESS_WRITE', PROJECT_PARAM), { params: ProjectParams, body: AddProjectAccessSchema }),
    async (request, reply) => {
      const roles = await resolveProjectRoles(deps.db, request.body.roles, '/body/roles');
      const input = { roles, users: [...new Set(request.body.users ?? [])], groups: [...new Set(request.body.groups ?? [])] };
      await act(request, (uow) => addProjectAccess(uow, request.params.projectId, input));
      return reply.status(200).send();
    },
  );
  for (const holder of ['user', 'group'] as const) {
    const path = `/api/admin/projects/:projectId/${holder}s/:${holder}Id/roles`;
    const params = holder === 'user' ? ProjectUserParams : ProjectGroupParams;
    const access = can(holder === 'user' ? 'PROJECT_USER_ACCESS_WRITE' : 'PROJECT_GROUP_ACCESS_WRITE', PROJECT_PARAM);
    const holderOf = (values: Record<string, string>) => ({ kind: holder, id: Number(values[`${holder}Id`]) });
    app.put(path, accessRoute(access, { params, body: ProjectRolesSchema }), async (request, reply) => {
      const roles = await resolveProjectRoles(deps.db, request.body.roles, '/body/roles');
      const values = request.params as Record<string, string>;
      await act(request, (uow) => setProjectRoles(uow, values.projectId!, holderOf(values), roles));
      return reply.status(200).send();
    });
    app.delete(path, accessRoute(access, { params }), async (request, reply) => {
      const values = request.params as Record<string, string>;
      await act(request, (uow) => removeProjectAccess(uow, values.projectId!, holderOf(values)));
      return reply.status(200).send();
    });
  }

  const serviceRoute = routesTagged(['Service accounts']);
  app.get(SERVICE_ACCOUNTS, serviceRoute(can('ADMIN'), { ok: ServiceAccountsSchema }), async () => ({
    serviceAccounts: await listServiceAccounts(deps.db),
    rootRoles: await rootRoleChoices(deps.db),
  }));
  app.post(
    SERVICE_ACCOUNTS,
    serviceRoute(can('ADMIN'), { body: CreateServiceAccountSchema, created: ServiceAccountSchema }),
    async (request, reply) => {
      const { username, name, rootRole } = request.body;
      const role = await resolveRootRoleRef(deps.db, rootRole, '/body/rootRole');
      const account = await act(request, (uow) => createServiceAccount(uow, { username, name, rootRole: role }));
      return reply.status(201).send(account);
    },
  );
  app.get(`${SERVICE_ACCOUNTS}/:id`, serviceRoute(can('ADMIN'), { params: IdParams, ok: ServiceAccountSchema }), async (request) =>
    getServiceAccount(deps.db, Number(request.params.id)),
  );
  app.put(
    `${SERVICE_ACCOUNTS}/:id`,
    serviceRoute(can('ADMIN'), { params: IdParams, body: UpdateServiceAccountSchema, ok: ServiceAccountSchema }),
    async (request) => {
      const { name, rootRole } = request.body;
      const role = rootRole === undefined ? undefined : await resolveRootRoleRef(deps.db, rootRole, '/body/rootRole');
      return act(request, (uow) => updateServiceAccount(uow, Number(request.params.id), { name, rootRole: role }));
    },
  );
  app.delete(`${SERVICE_ACCOUNTS}/:id`, serviceRoute(can('ADMIN'), { params: IdParams }), async (request, reply) => {
    await act(request, (uow) => deleteServiceAccount(uow, Number(request.params.id)));
    return reply.status(200).send();
  });
  app.get(
    `${SERVICE_ACCOUNTS}/:id/token`,
    serviceRoute(can('ADMIN'), {
      params: IdParams,
      response: { 200: Type.Object({ pats: Type.Array(Type.Ref(ServiceAccountTokenSchema)) }) },
    }),
    async (request) => ({ pats: (await getServiceAccount(deps.db, Number(request.params.id))).tokens }),
  );
  app.post(
    `${SERVICE_ACCOUNTS}/:id/token`,
    serviceRoute(can('ADMIN'), { params: IdParams, body: CreateServiceAccountTokenSchema, created: ServiceAccountTokenSchema }),
    async (request, reply) => {
      const { description, expiresAt } = request.body;
      const token = await act(request, (uow) =>
        createServiceAccountToken(uow, Number(request.params.id), { description, expiresAt: new Date(expiresAt) }),
      );
      return reply.status(201).send(token);
    },
  );
  app.delete(
    `${SERVICE_ACCOUNTS}/:id/token/:tokenId`,
    serviceRoute(can('ADMIN'), { params: ServiceAccountTokenParams }),
    async (request, reply) => {
      await act(request, (uow) => deleteServiceAccountToken(uow, Number(request.params.id), Number(request.params.tokenId)));
      return reply.status(200).send();
    },
  );
};
