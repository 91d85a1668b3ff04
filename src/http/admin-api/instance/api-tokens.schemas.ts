import { Type } from '@sinclair/typebox';
import { DateTime, Nullable, StrictObject, UrlFriendlyName } from '../../common.schemas.js';

export const ApiTokenSchema = Type.Object(
  {
    id: Type.Integer(),
    tokenName: Type.String(),
    type: Type.String(),
    environment: Type.String(),
    project: Type.String(),
    projects: Type.Array(Type.String()),
    expiresAt: Nullable(DateTime),
    createdAt: DateTime,
    seenAt: Nullable(DateTime),
    secret: Type.Optional(Type.String({ description: 'Shown once, in the creation response' })),
  },
  { $id: 'apiTokenSchema' },
);

export const ApiTokensSchema = Type.Object({ tokens: Type.Array(Type.Ref(ApiTokenSchema)) }, { $id: 'apiTokensSchema' });

const TokenName = Type.String({
  minLength: 1,
  maxLength: 255,
  pattern: '\\S',
  errorMessage: 'A token name is 1 to 255 characters and not only spaces',
});

const ProjectOrAll = Type.Union([Type.Literal('*'), UrlFriendlyName], {
  errorMessage: 'A project is "*" (all projects) or a project id',
});

export const CreateApiTokenSchema = StrictObject(
  {
    tokenName: Type.Optional(TokenName),
    username: Type.Optional({ ...TokenName, description: 'Deprecated name of tokenName' }),
    type: Type.String({
      pattern: '^(?:[Aa][Dd][Mm][Ii][Nn]|[Cc][Ll][Ii][Ee][Nn][Tt]|[Bb][Aa][Cc][Kk][Ee][Nn][Dd]|[Ff][Rr][Oo][Nn][Tt][Ee][Nn][Dd])$',
      errorMessage: 'type must be one of admin, client (or backend), frontend',
    }),
    environment: Type.Optional(Type.Union([Type.Literal('*'), UrlFriendlyName])),
    project: Type.Optional(ProjectOrAll),
    projects: Type.Optional(Type.Array(ProjectOrAll, { minItems: 1 })),
    expiresAt: Type.Optional(DateTime),
  },
  { $id: 'createApiTokenSchema' },
);

/** A token of one project (Unleash's `createProjectApiTokenSchema`): the project comes from the path. */
export const CreateProjectApiTokenSchema = StrictObject(
  {
    tokenName: TokenName,
    type: Type.String({
      pattern: '^(?:[Cc][Ll][Ii][Ee][Nn][Tt]|[Bb][Aa][Cc][Kk][Ee][Nn][Dd]|[Ff][Rr][Oo][Nn][Tt][Ee][Nn][Dd])$',
      errorMessage: 'type must be one of client (or backend), frontend: a project has no admin tokens',
    }),
    environment: Type.Optional(UrlFriendlyName),
    expiresAt: Type.Optional(DateTime),
  },
  { $id: 'createProjectApiTokenSchema' },
);

export const UpdateApiTokenSchema = StrictObject({ expiresAt: DateTime }, { $id: 'updateApiTokenSchema' });

export const apiTokenSchemas = [ApiTokenSchema, ApiTokensSchema, CreateApiTokenSchema, CreateProjectApiTokenSchema, UpdateApiTokenSchema];
