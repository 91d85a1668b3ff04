import { Type } from '@sinclair/typebox';
import { MAX_CUSTOM_ROLES } from '../../../domain/roles/roles.js';
import { Nullable, StrictObject } from '../../common.schemas.js';
import { RoleSchema } from '../../users.schemas.js';

/** Roles and the permissions they are made of, in Unleash's shapes (`/api/admin/roles`, `/api/admin/permissions`). */

const RolePermissionSchema = Type.Object({
  name: Type.String(),
  environment: Type.Optional(Type.String({ description: 'Set when the permission holds in this environment only' })),
});

export const RoleWithPermissionsSchema = Type.Composite([RoleSchema, Type.Object({ permissions: Type.Array(RolePermissionSchema) })], {
  $id: 'roleWithPermissionsSchema',
});

export const RolesSchema = Type.Object(
  { version: Type.Literal(1), roles: Type.Array(Type.Ref(RoleSchema), { maxItems: MAX_CUSTOM_ROLES + 6 }) },
  { $id: 'rolesSchema' },
);

const RoleName = Type.String({
  minLength: 1,
  maxLength: 100,
  pattern: '\\S',
  errorMessage: 'A role name is 1 to 100 characters, not only spaces',
});

export const CreateRoleSchema = StrictObject(
  {
    name: RoleName,
    description: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
    type: Type.Union([Type.Literal('root-custom'), Type.Literal('custom')], {
      errorMessage: 'type is root-custom (a root role) or custom (a project role)',
    }),
    permissions: Type.Array(
      StrictObject({
        id: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
        name: Type.Optional(Type.String({ maxLength: 100 })),
        environment: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
        // Unleash's clients send these beside the id; they are read from the catalogue, not from the request.
        displayName: Type.Optional(Type.String({ maxLength: 200 })),
        type: Type.Optional(Type.String({ maxLength: 20 })),
      }),
      { maxItems: 1000, errorMessage: 'At most 1000 permissions' },
    ),
  },
  { $id: 'createRoleSchema' },
);

export const ValidateRoleSchema = StrictObject({ name: RoleName }, { $id: 'validateRoleSchema' });

const CataloguePermission = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  displayName: Type.String(),
  type: Type.String(),
  environment: Type.Optional(Type.String()),
});

export const PermissionsSchema = Type.Object(
  {
    version: Type.Literal(1),
    permissions: Type.Object({
      root: Type.Array(CataloguePermission),
      project: Type.Array(CataloguePermission),
      environments: Type.Array(Type.Object({ name: Type.String(), permissions: Type.Array(CataloguePermission) })),
    }),
  },
  { $id: 'permissionsSchema' },
);

export const roleSchemas = [RoleWithPermissionsSchema, RolesSchema, CreateRoleSchema, ValidateRoleSchema, PermissionsSchema];
