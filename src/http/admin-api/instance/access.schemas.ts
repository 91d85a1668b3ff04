import { Type } from '@sinclair/typebox';
import { DateTime, Nullable, StrictObject } from '../../common.schemas.js';
import { RoleSchema, UserSchema } from '../../users.schemas.js';

/** Groups, project access and service accounts, in Unleash's shapes. */

/** A root role of a group or a service account: a built-in one (1–3) or a custom root role, checked by the route. */
const RootRoleId = Type.Integer({ minimum: 1, maximum: 2_147_483_647, errorMessage: 'rootRole must be a root role id' });
const SsoGroupName = Type.String({ minLength: 1, maxLength: 255 });
const Id = Type.Integer({ minimum: 1, maximum: 2_147_483_647 });

export const GroupSchema = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    description: Nullable(Type.String()),
    mappingsSSO: Type.Array(Type.String()),
    rootRole: Nullable(Type.Integer()),
    createdBy: Nullable(Type.String()),
    createdAt: Nullable(DateTime),
    users: Type.Array(
      Type.Object(
        {
          joinedAt: DateTime,
          createdBy: Nullable(Type.String()),
          fromSso: Type.Boolean({ description: "Added by a sign-in from the provider's groups claim" }),
          user: Type.Ref(UserSchema),
        },
        { additionalProperties: false },
      ),
    ),
    projects: Type.Array(Type.String()),
    userCount: Type.Integer(),
  },
  { $id: 'groupSchema' },
);

export const AccessCandidatesSchema = Type.Object(
  {
    users: Type.Array(
      Type.Object({
        id: Type.Integer(),
        name: Nullable(Type.String()),
        username: Nullable(Type.String()),
        email: Nullable(Type.String({ description: 'Shown to Admins only' })),
        imageUrl: Nullable(Type.String()),
      }),
    ),
    groups: Type.Array(
      Type.Object({ id: Type.Integer(), name: Type.String(), description: Nullable(Type.String()), userCount: Type.Integer() }),
    ),
  },
  { $id: 'usersGroupsBaseSchema' },
);

export const GroupsSchema = Type.Object({ groups: Type.Array(Type.Ref(GroupSchema)) }, { $id: 'groupsSchema' });

export const CreateGroupSchema = StrictObject(
  {
    name: Type.String({
      minLength: 1,
      maxLength: 100,
      pattern: '\\S',
      errorMessage: 'A group name is 1 to 100 characters, not only spaces',
    }),
    description: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
    mappingsSSO: Type.Optional(Type.Array(SsoGroupName, { maxItems: 100 })),
    rootRole: Type.Optional(Nullable(RootRoleId)),
    users: Type.Optional(
      Type.Array(StrictObject({ user: Type.Object({ id: Id }) }), { maxItems: 1000, errorMessage: 'A group lists at most 1000 users' }),
    ),
  },
  { $id: 'createGroupSchema' },
);

export const ProjectAccessSchema = Type.Object(
  {
    users: Type.Array(Type.Composite([UserSchema, Type.Object({ roles: Type.Array(Type.Integer()), roleId: Type.Integer() })])),
    groups: Type.Array(
      Type.Object({
        id: Type.Integer(),
        name: Type.String(),
        description: Nullable(Type.String()),
        userCount: Type.Integer(),
        roles: Type.Array(Type.Integer()),
        roleId: Type.Integer(),
      }),
    ),
    roles: Type.Array(Type.Ref(RoleSchema)),
  },
  { $id: 'projectAccessSchema' },
);

const RoleIds = Type.Array(Type.Integer(), { maxItems: 10 });

export const AddProjectAccessSchema = StrictObject(
  {
    roles: Type.Array(Type.Integer(), { minItems: 1, maxItems: 10, errorMessage: 'Give 1 to 10 project role ids' }),
    users: Type.Optional(Type.Array(Id, { maxItems: 1000 })),
    groups: Type.Optional(Type.Array(Id, { maxItems: 1000 })),
  },
  { $id: 'projectAccessConfigurationSchema' },
);

export const ProjectRolesSchema = StrictObject({ roles: RoleIds }, { $id: 'projectRolesSchema' });

export const ServiceAccountTokenSchema = Type.Object(
  {
    id: Type.Integer(),
    description: Type.String(),
    expiresAt: DateTime,
    createdAt: DateTime,
    seenAt: Nullable(DateTime),
    secret: Type.Optional(Type.String({ description: 'Shown once, in the creation response' })),
  },
  { $id: 'serviceAccountTokenSchema' },
);

export const ServiceAccountSchema = Type.Composite(
  [UserSchema, Type.Object({ tokens: Type.Array(Type.Omit(ServiceAccountTokenSchema, ['secret'])) })],
  { $id: 'serviceAccountSchema' },
);

export const ServiceAccountsSchema = Type.Object(
  { serviceAccounts: Type.Array(Type.Ref(ServiceAccountSchema)), rootRoles: Type.Array(Type.Ref(RoleSchema)) },
  { $id: 'serviceAccountsSchema' },
);

export const CreateServiceAccountSchema = StrictObject(
  {
    username: Type.String({
      minLength: 1,
      maxLength: 100,
      pattern: '^\\S+$',
      errorMessage: 'A username is 1 to 100 characters without spaces',
    }),
    name: Type.Optional(Type.String({ maxLength: 255 })),
    rootRole: RootRoleId,
  },
  { $id: 'createServiceAccountSchema' },
);

export const UpdateServiceAccountSchema = StrictObject(
  { name: Type.Optional(Type.String({ maxLength: 255 })), rootRole: Type.Optional(RootRoleId) },
  { $id: 'updateServiceAccountSchema' },
);

export const CreateServiceAccountTokenSchema = StrictObject(
  { description: Type.String({ minLength: 1, maxLength: 255 }), expiresAt: DateTime },
  { $id: 'createServiceAccountTokenSchema' },
);

export const accessSchemas = [
  GroupSchema,
  GroupsSchema,
  AccessCandidatesSchema,
  CreateGroupSchema,
  ProjectAccessSchema,
  AddProjectAccessSchema,
  ProjectRolesSchema,
  ServiceAccountTokenSchema,
  ServiceAccountSchema,
  ServiceAccountsSchema,
  CreateServiceAccountSchema,
  UpdateServiceAccountSchema,
  CreateServiceAccountTokenSchema,
];
