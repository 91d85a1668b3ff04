import { MAX_PAGE_SIZE, SCIM } from './scim-protocol.js';

/**
 * What the service says about itself (RFC 7644 §4): what it supports, its resource types, and the schemas of their
 * attributes, which name exactly what Vexil keeps and how it compares it.
 */

interface AttributeOptions {
  multiValued?: boolean;
  required?: boolean;
  caseExact?: boolean;
  mutability?: 'readOnly' | 'readWrite' | 'immutable' | 'writeOnly';
  uniqueness?: 'none' | 'server' | 'global';
  subAttributes?: object[];
  description: string;
}

function attribute(name: string, type: 'string' | 'boolean' | 'complex' | 'reference', options: AttributeOptions): object {
  const { subAttributes, ...rest } = options;
  return {
    name,
    type,
    multiValued: rest.multiValued ?? false,
    description: rest.description,
    required: rest.required ?? false,
    caseExact: rest.caseExact ?? false,
    mutability: rest.mutability ?? 'readWrite',
    returned: 'default',
    uniqueness: rest.uniqueness ?? 'none',
    ...(type === 'reference' ? { referenceTypes: ['User', 'Group'] } : {}),
    ...(subAttributes ? { subAttributes } : {}),
  };
}

const text = (name: string, description: string, options: Omit<AttributeOptions, 'description'> = {}) =>
  attribute(name, 'string', { ...options, description });

const USER_ATTRIBUTES = [
  text('userName', 'How the person signs in; unique in any case', { required: true, uniqueness: 'server' }),
  attribute('name', 'complex', {
    description: "The person's name; Vexil shows `formatted`, or the given and family names joined",
    subAttributes: [text('formatted', 'The full name'), text('givenName', 'The given name'), text('familyName', 'The family name')],
  }),
  text('displayName', 'The name to show, when no name is given'),
  attribute('emails', 'complex', {
    multiValued: true,
    description: 'Email addresses; the primary one (or else the first) is the one Vexil knows the person by',
    subAttributes: [
      text('value', 'The address'),
      text('type', 'work, home or other'),
      attribute('primary', 'boolean', { description: 'Whether this is the address to use' }),
    ],
  }),
  attribute('active', 'boolean', { description: 'false deactivates the person: their sessions and tokens end at once' }),
  attribute('groups', 'complex', {
    multiValued: true,
    mutability: 'readOnly',
    description: 'The groups the person is in; changed through the Groups resource',
    subAttributes: [
      text('value', 'The group id', { mutability: 'readOnly' }),
      attribute('$ref', 'reference', { mutability: 'readOnly', description: 'The group' }),
      text('display', 'The group name', { mutability: 'readOnly' }),
    ],
  }),
];

const GROUP_ATTRIBUTES = [
  text('displayName', 'The group name; unique in any case', { required: true, uniqueness: 'server' }),
  attribute('members', 'complex', {
    multiValued: true,
    description: 'The people in the group; their access follows it at their next request',
    subAttributes: [
      text('value', 'The user id', { mutability: 'immutable' }),
      attribute('$ref', 'reference', { mutability: 'immutable', description: 'The user' }),
      text('display', 'The username or email', { mutability: 'readOnly' }),
      text('type', 'User', { mutability: 'immutable' }),
    ],
  }),
];

function schemaResource(id: string, name: string, description: string, attributes: object[], baseUrl: string) {
  return {
    schemas: [SCIM.schema],
    id,
    name,
    description,
    attributes,
    meta: { resourceType: 'Schema', location: `${baseUrl}/scim/v2/Schemas/${id}` },
  };
}

export function scimSchemas(baseUrl: string) {
  return [
    schemaResource(SCIM.user, 'User', 'A person who signs in to Vexil', USER_ATTRIBUTES, baseUrl),
    schemaResource(SCIM.group, 'Group', 'A group whose root role and project access its members hold', GROUP_ATTRIBUTES, baseUrl),
  ];
}

export function scimResourceTypes(baseUrl: string) {
  return [
    { id: 'User', name: 'User', endpoint: '/Users', description: 'People', schema: SCIM.user },
    { id: 'Group', name: 'Group', endpoint: '/Groups', description: 'Groups of people', schema: SCIM.group },
  ].map((type) => ({
    schemas: [SCIM.resourceType],
    ...type,
    meta: { resourceType: 'ResourceType', location: `${baseUrl}/scim/v2/ResourceTypes/${type.id}` },
  }));
}

export function scimServiceProviderConfig(baseUrl: string) {
  return {
    schemas: [SCIM.serviceProviderConfig],
    documentationUri: `${baseUrl}/docs`,
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: MAX_PAGE_SIZE },
    changePassword: { supported: false },
    sort: { supported: false },
    etag: { supported: false },
    authenticationSchemes: [
      {
        type: 'oauthbearertoken',
        name: 'Bearer token',
        description: 'The SCIM token an Admin makes in Vexil (Admin → Sign-in), sent as Authorization: Bearer <token>',
        primary: true,
      },
    ],
    meta: { resourceType: 'ServiceProviderConfig', location: `${baseUrl}/scim/v2/ServiceProviderConfig` },
  };
}
