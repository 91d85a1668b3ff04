import { Type } from '@sinclair/typebox';
import { ROOT_ROLE_VIEWS, rootRoleById } from '../domain/access/permissions.js';
import { createGroup, deleteGroup, getGroup, listGroups, updateGroup, type GroupInput } from '../domain/groups/groups.js';
import {
  addProjectAccess,
  getProjectAccess,
  removeProjectAccess,
  resolveProjectRoles,
  setProjectRoles,
} from '../domain/projects/project-access.js';
import {
  createServiceAccount,
  createServiceAccountToken,
  deleteServiceAccount,
  deleteServiceAccountToken,
  getServiceAccount,
  listServiceAccounts,
  updateServiceAccount,
} from '../domain/users/service-accounts.js';
import {
  AddProjectAccessSchema,
  CreateGroupSchema,
  CreateServiceAccountSchema,
  CreateServiceAccountTokenSchema,
  GroupSchema,
  GroupsSchema,
  ProjectAccessSchema,
  ProjectRolesSchema,
  ServiceAccountSchema,
  ServiceAccountsSchema,
  ServiceAccountTokenSchema,
  UpdateServiceAccountSchema,
} from './access.schemas.js';
import { NumericId, UrlFriendlyName, IdParams, ProjectParams } from './common.schemas.js';
import type { RouteModule } from './deps.js';
import { can, PROJECT_PARAM } from './plugins/access.js';

const GroupParams = Type.Object({ groupId: NumericId });
const ProjectUserParams = Type.Object({ projectId: UrlFriendlyName, userId: NumericId });
const ProjectGroupParams = Type.Object({ projectId: UrlFriendlyName, groupId: NumericId });
const ServiceAccountTokenParams = Type.Object({ id: NumericId, tokenId: NumericId });

const SERVICE_ACCOUNTS = '/api/admin/service-account';

function groupInput(body: typeof CreateGroupSchema.static): GroupInput {
  return {
    name: body.name,
    description: body.description,
    mappingsSSO: body.mappingsSSO,
    rootRole: body.rootRole == null ? null : rootRoleById(body.rootRole),
    userIds: (body.users ?? []).map((member) => member.user.id),
  };
}

/** Groups, project access and service accounts, on Unleash's paths. */
export const accessRoutes: RouteModule = async (app, { deps, act }) => {
  const groupTags = ['Groups'];
  app.get(
    '/api/admin/groups',
    { schema: { tags: groupTags, response: { 200: Type.Ref(GroupsSchema) } }, config: { access: can('ADMIN') } },
    async () => ({ groups: await listGroups(deps.db) }),
  );
  app.post(
    '/api/admin/groups',
    {
      schema: { tags: groupTags, body: Type.Ref(CreateGroupSchema), response: { 201: Type.Ref(GroupSchema) } },
      config: { access: can('ADMIN') },
    },
    async (request, reply) => {
      const group = await act(request, (uow) => createGroup(uow, groupInput(request.body)));
      return reply.status(201).send(group);
    },
  );
  app.get(
    '/api/admin/groups/:groupId',
    { schema: { tags: groupTags, params: GroupParams, response: { 200: Type.Ref(GroupSchema) } }, config: { access: can('ADMIN') } },
    async (request) => getGroup(deps.db, Number(request.params.groupId)),
  );
  app.put(
    '/api/admin/groups/:groupId',
    {
      schema: { tags: groupTags, params: GroupParams, body: Type.Ref(CreateGroupSchema), response: { 200: Type.Ref(GroupSchema) } },
      config: { access: can('ADMIN') },
    },
    async (request) => act(request, (uow) => updateGroup(uow, Number(request.params.groupId), groupInput(request.body))),
  );
  app.delete(
    '/api/admin/groups/:groupId',
    { schema: { tags: groupTags, params: GroupParams }, config: { access: can('ADMIN') } },
    async (request, reply) => {
      await act(request, (uow) => deleteGroup(uow, Number(request.params.groupId)));
      return reply.status(200).send();
    },
  );

  const accessTags = ['Projects'];
  app.get(
    '/api/admin/projects/:projectId/access',
    {
      schema: { tags: accessTags, params: ProjectParams, response: { 200: Type.Ref(ProjectAccessSchema) } },
      config: { access: can('READ') },
    },
    async (request) => getProjectAccess(deps.db, request.params.projectId),
  );
  app.post(
    '/api/admin/projects/:projectId/access',
    {
      schema: { tags: accessTags, params: ProjectParams, body: Type.Ref(AddProjectAccessSchema) },
      config: { access: can('PROJECT_USER_ACCESS_WRITE', PROJECT_PARAM) },
    },
    async (request, reply) => {
      const roles = resolveProjectRoles(request.body.roles, '/body/roles');
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
    app.put(
      path,
      { schema: { tags: accessTags, params, body: Type.Ref(ProjectRolesSchema) }, config: { access } },
      async (request, reply) => {
        const roles = resolveProjectRoles(request.body.roles, '/body/roles');
        const values = request.params as Record<string, string>;
        await act(request, (uow) => setProjectRoles(uow, values.projectId!, holderOf(values), roles));
        return reply.status(200).send();
      },
    );
    app.delete(path, { schema: { tags: accessTags, params }, config: { access } }, async (request, reply) => {
      const values = request.params as Record<string, string>;
      await act(request, (uow) => removeProjectAccess(uow, values.projectId!, holderOf(values)));
      return reply.status(200).send();
    });
  }

  const serviceTags = ['Service accounts'];
  app.get(
    SERVICE_ACCOUNTS,
    { schema: { tags: serviceTags, response: { 200: Type.Ref(ServiceAccountsSchema) } }, config: { access: can('ADMIN') } },
    async () => ({ serviceAccounts: await listServiceAccounts(deps.db), rootRoles: ROOT_ROLE_VIEWS }),
  );
  app.post(
    SERVICE_ACCOUNTS,
    {
      schema: { tags: serviceTags, body: Type.Ref(CreateServiceAccountSchema), response: { 201: Type.Ref(ServiceAccountSchema) } },
      config: { access: can('ADMIN') },
    },
    async (request, reply) => {
      const { username, name, rootRole } = request.body;
      const account = await act(request, (uow) => createServiceAccount(uow, { username, name, rootRole: rootRoleById(rootRole) }));
      return reply.status(201).send(account);
    },
  );
  app.get(
    `${SERVICE_ACCOUNTS}/:id`,
    {
      schema: { tags: serviceTags, params: IdParams, response: { 200: Type.Ref(ServiceAccountSchema) } },
      config: { access: can('ADMIN') },
    },
    async (request) => getServiceAccount(deps.db, Number(request.params.id)),
  );
  app.put(
    `${SERVICE_ACCOUNTS}/:id`,
    {
      schema: {
        tags: serviceTags,
        params: IdParams,
        body: Type.Ref(UpdateServiceAccountSchema),
        response: { 200: Type.Ref(ServiceAccountSchema) },
      },
      config: { access: can('ADMIN') },
    },
    async (request) => {
      const { name, rootRole } = request.body;
      return act(request, (uow) =>
        updateServiceAccount(uow, Number(request.params.id), {
          name,
          rootRole: rootRole === undefined ? undefined : rootRoleById(rootRole),
        }),
      );
    },
  );
  app.delete(
    `${SERVICE_ACCOUNTS}/:id`,
    { schema: { tags: serviceTags, params: IdParams }, config: { access: can('ADMIN') } },
    async (request, reply) => {
      await act(request, (uow) => deleteServiceAccount(uow, Number(request.params.id)));
      return reply.status(200).send();
    },
  );
  app.get(
    `${SERVICE_ACCOUNTS}/:id/token`,
    {
      schema: {
        tags: serviceTags,
        params: IdParams,
        response: { 200: Type.Object({ pats: Type.Array(Type.Ref(ServiceAccountTokenSchema)) }) },
      },
      config: { access: can('ADMIN') },
    },
    async (request) => ({ pats: (await getServiceAccount(deps.db, Number(request.params.id))).tokens }),
  );
  app.post(
    `${SERVICE_ACCOUNTS}/:id/token`,
    {
      schema: {
        tags: serviceTags,
        params: IdParams,
        body: Type.Ref(CreateServiceAccountTokenSchema),
        response: { 201: Type.Ref(ServiceAccountTokenSchema) },
      },
      config: { access: can('ADMIN') },
    },
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
    { schema: { tags: serviceTags, params: ServiceAccountTokenParams }, config: { access: can('ADMIN') } },
    async (request, reply) => {
      await act(request, (uow) => deleteServiceAccountToken(uow, Number(request.params.id), Number(request.params.tokenId)));
      return reply.status(200).send();
    },
  );
};
