import { Type } from '@sinclair/typebox';
import { MAX_GROUP_MEMBERS } from '../../domain/scim/scim-groups.js';
import { DateTime, StrictObject } from '../common.schemas.js';

/**
 * SCIM 2.0 resources (RFC 7643) as `/scim/v2` takes and answers them. Bodies are open objects, as the RFC's
 * resources are (providers add extension schemas); the domain checks the attributes Vexil keeps and refuses what is
 * wrong with SCIM's `scimType`. Lists are bounded here.
 */

const Meta = Type.Object({
  resourceType: Type.String(),
  created: Type.Optional(DateTime),
  lastModified: Type.Optional(DateTime),
  location: Type.String(),
});

// Each also carries `$ref`, its URL: left undeclared (additional), since OpenAPI tooling reads a property named
// `$ref` as a reference.
const Reference = Type.Object(
  { value: Type.String(), display: Type.String(), type: Type.Optional(Type.String()) },
  { additionalProperties: true, description: 'A member or group, with its URL in `$ref`' },
);

export const ScimUserSchema = Type.Object(
  {
    schemas: Type.Array(Type.String()),
    id: Type.String(),
    externalId: Type.Optional(Type.String()),
    userName: Type.Optional(Type.String()),
    active: Type.Optional(Type.Boolean()),
    groups: Type.Optional(Type.Array(Reference)),
    meta: Meta,
  },
  { $id: 'scimUserSchema', additionalProperties: true, description: 'A SCIM User (RFC 7643 §4.1), with what the provider sent' },
);

export const ScimGroupSchema = Type.Object(
  {
    schemas: Type.Array(Type.String()),
    id: Type.String(),
    externalId: Type.Optional(Type.String()),
    displayName: Type.Optional(Type.String()),
    members: Type.Optional(Type.Array(Reference)),
    meta: Meta,
  },
  { $id: 'scimGroupSchema', description: 'A SCIM Group (RFC 7643 §4.2)' },
);

const listOf = (resource: typeof ScimUserSchema | typeof ScimGroupSchema, $id: string) =>
  Type.Object(
    {
      schemas: Type.Array(Type.String()),
      totalResults: Type.Integer(),
      startIndex: Type.Integer(),
      itemsPerPage: Type.Integer(),
      Resources: Type.Array(Type.Ref(resource)),
    },
    { $id, description: 'A page of resources (RFC 7644 §3.4.2)' },
  );

export const ScimUserListSchema = listOf(ScimUserSchema, 'scimUserListSchema');
export const ScimGroupListSchema = listOf(ScimGroupSchema, 'scimGroupListSchema');

/** What the service says about itself (RFC 7644 §4): documents of the RFC's own shapes. */
export const ScimDiscoverySchema = Type.Object(
  { schemas: Type.Array(Type.String()) },
  { $id: 'scimDiscoverySchema', additionalProperties: true, description: 'ServiceProviderConfig, a ResourceType or a Schema' },
);

export const ScimDiscoveryListSchema = Type.Object(
  {
    schemas: Type.Array(Type.String()),
    totalResults: Type.Integer(),
    startIndex: Type.Integer(),
    itemsPerPage: Type.Integer(),
    Resources: Type.Array(Type.Ref(ScimDiscoverySchema)),
  },
  { $id: 'scimDiscoveryListSchema' },
);

const Count = Type.String({ pattern: '^-?[0-9]{1,9}$', errorMessage: 'a whole number' });
const AttributeList = Type.String({ maxLength: 1000 });

export const ScimListQuery = StrictObject({
  filter: Type.Optional(Type.String({ maxLength: 1000 })),
  startIndex: Type.Optional(Count),
  count: Type.Optional(Count),
  attributes: Type.Optional(AttributeList),
  excludedAttributes: Type.Optional(AttributeList),
});

export const ScimReadQuery = StrictObject({ attributes: Type.Optional(AttributeList), excludedAttributes: Type.Optional(AttributeList) });

/** A resource id in a path: any text (SCIM ids are opaque); one that is no id of Vexil's names nothing (404). */
export const ScimIdParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

export const ScimUserInputSchema = Type.Object(
  {
    schemas: Type.Optional(Type.Array(Type.String({ maxLength: 200 }), { maxItems: 10 })),
    userName: Type.Optional(Type.String({ maxLength: 255 })),
    emails: Type.Optional(Type.Array(Type.Object({}, { additionalProperties: true }), { maxItems: 20 })),
  },
  { $id: 'scimUserInputSchema', additionalProperties: true, description: 'A SCIM User to create or replace' },
);

export const ScimGroupInputSchema = Type.Object(
  {
    schemas: Type.Optional(Type.Array(Type.String({ maxLength: 200 }), { maxItems: 10 })),
    displayName: Type.Optional(Type.String({ maxLength: 255 })),
    members: Type.Optional(
      Type.Array(Type.Object({ value: Type.String({ maxLength: 64 }) }, { additionalProperties: true }), { maxItems: MAX_GROUP_MEMBERS }),
    ),
  },
  { $id: 'scimGroupInputSchema', additionalProperties: true, description: 'A SCIM Group to create or replace' },
);

export const ScimPatchSchema = Type.Object(
  {
    schemas: Type.Optional(Type.Array(Type.String({ maxLength: 200 }), { maxItems: 10 })),
    Operations: Type.Array(
      Type.Object(
        {
          // add, remove or replace in any case (Entra ID writes "Add"); scim-patch refuses any other.
          op: Type.String({ minLength: 1, maxLength: 10 }),
          path: Type.Optional(Type.String({ maxLength: 1000 })),
          value: Type.Optional(Type.Unknown()),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 100 },
    ),
  },
  { $id: 'scimPatchSchema', description: 'A SCIM PatchOp (RFC 7644 §3.5.2)' },
);

export const scimSchemas = [
  ScimUserSchema,
  ScimGroupSchema,
  ScimUserListSchema,
  ScimGroupListSchema,
  ScimDiscoverySchema,
  ScimDiscoveryListSchema,
  ScimUserInputSchema,
  ScimGroupInputSchema,
  ScimPatchSchema,
];
