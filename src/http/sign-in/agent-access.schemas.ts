import { Type } from '@sinclair/typebox';
import { StrictObject } from '../common.schemas.js';

export const OAuthErrorSchema = Type.Object(
  { error: Type.String(), error_description: Type.Optional(Type.String()) },
  { $id: 'oauthErrorSchema', description: 'An OAuth 2.0 error (RFC 6749 §5.2)' },
);

export const ProtectedResourceSchema = Type.Object(
  {
    resource: Type.String(),
    authorization_servers: Type.Array(Type.String()),
    bearer_methods_supported: Type.Array(Type.String()),
    scopes_supported: Type.Array(Type.String()),
    resource_name: Type.String(),
  },
  { $id: 'oauthProtectedResourceSchema' },
);

export const AuthorizationServerSchema = Type.Object(
  {
    issuer: Type.String(),
    authorization_endpoint: Type.String(),
    token_endpoint: Type.String(),
    registration_endpoint: Type.String(),
    response_types_supported: Type.Array(Type.String()),
    grant_types_supported: Type.Array(Type.String()),
    code_challenge_methods_supported: Type.Array(Type.String()),
    token_endpoint_auth_methods_supported: Type.Array(Type.String()),
    scopes_supported: Type.Array(Type.String()),
  },
  { $id: 'oauthAuthorizationServerSchema' },
);

export const RegistrationSchema = Type.Object(
  {
    redirect_uris: Type.Array(Type.String({ minLength: 1, maxLength: 2000 }), { minItems: 1, maxItems: 10 }),
    client_name: Type.Optional(Type.String({ maxLength: 200 })),
    token_endpoint_auth_method: Type.Optional(Type.Literal('none', { description: 'Public clients only: PKCE guards the codes' })),
    grant_types: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 10 })),
    response_types: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 10 })),
    scope: Type.Optional(Type.String({ maxLength: 1000 })),
  },
  // RFC 7591 lets a client send metadata a server does not use (logo_uri, client_uri, …): kept out, not refused.
  { $id: 'oauthClientRegistrationSchema', additionalProperties: true, maxProperties: 40 },
);

export const RegisteredClientSchema = Type.Object(
  {
    client_id: Type.String(),
    client_id_issued_at: Type.Integer(),
    client_name: Type.String(),
    redirect_uris: Type.Array(Type.String()),
    token_endpoint_auth_method: Type.Literal('none'),
    grant_types: Type.Array(Type.String()),
    response_types: Type.Array(Type.String()),
    scope: Type.String(),
  },
  { $id: 'oauthClientInformationSchema' },
);

export const TokenRequestSchema = Type.Object(
  {
    grant_type: Type.String({ maxLength: 100 }),
    code: Type.String({ minLength: 1, maxLength: 200 }),
    redirect_uri: Type.String({ minLength: 1, maxLength: 2000 }),
    client_id: Type.String({ minLength: 1, maxLength: 200 }),
    code_verifier: Type.String({ minLength: 43, maxLength: 128, pattern: '^[A-Za-z0-9._~-]+$' }),
    resource: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  { $id: 'oauthTokenRequestSchema', additionalProperties: true, maxProperties: 20 },
);

export const TokenSchema = Type.Object(
  { access_token: Type.String(), token_type: Type.Literal('Bearer'), expires_in: Type.Integer(), scope: Type.String() },
  { $id: 'oauthTokenSchema' },
);

/** An authorization request's parameters, as the client put them in the address it opened (RFC 6749 §4.1.1, PKCE). */
const AuthorizationParameters = {
  client_id: Type.String({ minLength: 1, maxLength: 200 }),
  redirect_uri: Type.String({ minLength: 1, maxLength: 2000 }),
  response_type: Type.String({ maxLength: 50 }),
  code_challenge: Type.String({ maxLength: 200 }),
  code_challenge_method: Type.String({ maxLength: 20 }),
  state: Type.Optional(Type.String({ maxLength: 2000 })),
  scope: Type.Optional(Type.String({ maxLength: 1000 })),
  resource: Type.Optional(Type.String({ maxLength: 2000 })),
};
export const AuthorizationQuery = Type.Object(AuthorizationParameters, { additionalProperties: true });
export const AuthorizationAnswerSchema = StrictObject(
  { ...AuthorizationParameters, approve: Type.Boolean({ description: 'true to grant the agent access, false to decline' }) },
  { $id: 'mcpAuthorizationAnswerSchema' },
);

export const AuthorizationRequestViewSchema = Type.Object(
  { clientName: Type.String(), redirectUri: Type.String(), resource: Type.String(), expiresInHours: Type.Integer() },
  { $id: 'mcpAuthorizationRequestSchema' },
);
export const AuthorizationRedirectSchema = Type.Object({ redirectTo: Type.String() }, { $id: 'mcpAuthorizationRedirectSchema' });

export const McpTokensSchema = Type.Object(
  {
    tokens: Type.Array(
      Type.Object({
        id: Type.Integer(),
        clientName: Type.String(),
        createdAt: Type.String({ format: 'date-time' }),
        expiresAt: Type.String({ format: 'date-time' }),
        seenAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
      }),
    ),
  },
  { $id: 'mcpTokensSchema' },
);

export const agentAccessSchemas = [
  OAuthErrorSchema,
  ProtectedResourceSchema,
  AuthorizationServerSchema,
  RegistrationSchema,
  RegisteredClientSchema,
  TokenRequestSchema,
  TokenSchema,
  AuthorizationAnswerSchema,
  AuthorizationRequestViewSchema,
  AuthorizationRedirectSchema,
  McpTokensSchema,
];
