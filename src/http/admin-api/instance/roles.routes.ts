import {
  createRole,
  deleteRole,
  getRole,
  listRoles,
  permissionCatalogue,
  updateRole,
  validateRoleName,
} from '../../../domain/roles/roles.js';
import { BadDataError } from '../../../shared/errors.js';
import { IdParams } from '../../common.schemas.js';
import { routesTagged, type RouteModule } from '../../deps.js';
import { can } from '../../plugins/access.js';
import { CreateRoleSchema, PermissionsSchema, RolesSchema, RoleWithPermissionsSchema, ValidateRoleSchema } from './roles.schemas.js';

/**
 * Roles on Unleash's paths: every caller may read them (the UI lists them where roles are given); Admins make,
 * change and delete custom ones.
 */
export const roleRoutes: RouteModule = async (app, { deps, act }) => {
  const route = routesTagged(['Roles']);
  const permissionsOf = (body: typeof CreateRoleSchema.static) => {
    body.permissions.forEach((permission, index) => {
      if (permission.id === undefined && permission.name === undefined) {
        throw new BadDataError('Name each permission by its id or its name', [
          { path: `/body/permissions/${index}`, message: 'give id or name' },
        ]);
      }
    });
    return { ...body, permissions: body.permissions.map(({ id, name, environment }) => ({ id, name, environment })) };
  };

  app.get('/api/admin/roles', route(can('READ'), { ok: RolesSchema }), async () => ({
    version: 1 as const,
    roles: await listRoles(deps.db),
  }));
  app.get('/api/admin/roles/:id', route(can('READ'), { params: IdParams, ok: RoleWithPermissionsSchema }), async (request) =>
    getRole(deps.db, Number(request.params.id)),
  );
  app.post(
    '/api/admin/roles',
    route(can('ADMIN'), { body: CreateRoleSchema, created: RoleWithPermissionsSchema }),
    async (request, reply) => {
      const input = permissionsOf(request.body);
      return reply.status(201).send(await act(request, (uow) => createRole(uow, input)));
    },
  );
  app.put(
    '/api/admin/roles/:id',
    route(can('ADMIN'), { params: IdParams, body: CreateRoleSchema, ok: RoleWithPermissionsSchema }),
    async (request) => {
      const input = permissionsOf(request.body);
      return act(request, (uow) => updateRole(uow, Number(request.params.id), input));
    },
  );
  app.delete('/api/admin/roles/:id', route(can('ADMIN'), { params: IdParams }), async (request, reply) => {
    await act(request, (uow) => deleteRole(uow, Number(request.params.id)));
    return reply.status(200).send();
  });
  app.post('/api/admin/roles/validate', route(can('ADMIN'), { body: ValidateRoleSchema }), async (request, reply) => {
    await validateRoleName(deps.db, request.body.name);
    return reply.status(200).send();
  });
  app.get('/api/admin/permissions', route(can('READ'), { ok: PermissionsSchema }), async () => ({
    version: 1 as const,
    permissions: await permissionCatalogue(deps.db),
  }));
};
