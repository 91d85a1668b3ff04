import { EDGE_SCOPES_PER_REQUEST } from '../../domain/api-tokens/edge-clients.js';
import { Type } from '@sinclair/typebox';

/** What edges (Vexil Edge, Unleash Edge) ask a server or another edge about tokens, in Unleash's shapes. */

export const EdgeTokenSchema = Type.Object(
  {
    token: Type.String(),
    type: Type.Union([Type.Literal('client'), Type.Literal('frontend')]),
    environment: Type.String(),
    projects: Type.Array(Type.String()),
  },
  { $id: 'edgeTokenSchema' },
);

export const ValidatedEdgeTokensSchema = Type.Object(
  { tokens: Type.Array(Type.Ref(EdgeTokenSchema)) },
  { $id: 'validatedEdgeTokensSchema', description: 'The valid client and frontend tokens among those asked about.' },
);

/** At most this many tokens per question: an edge asks about the tokens of the requests it has just seen. */
const MAX_TOKENS = 100;

export const TokenStringListSchema = Type.Object(
  { tokens: Type.Array(Type.String({ minLength: 1, maxLength: 500 }), { maxItems: MAX_TOKENS }) },
  { $id: 'tokenStringListSchema', additionalProperties: false },
);

export const EdgeTokenRequestsSchema = Type.Object(
  {
    tokens: Type.Array(
      Type.Object(
        {
          environment: Type.String({ minLength: 1, maxLength: 100 }),
          projects: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
            minItems: 1,
            maxItems: 100,
            description: 'Project ids, or "*"',
          }),
        },
        { additionalProperties: false },
      ),
      { maxItems: EDGE_SCOPES_PER_REQUEST },
    ),
  },
  { $id: 'edgeEnvironmentProjectsListSchema', additionalProperties: false },
);

export const EdgeClientSchema = Type.Object(
  { clientId: Type.String(), name: Type.String(), createdAt: Type.String({ format: 'date-time' }), createdBy: Type.String() },
  { $id: 'edgeClientSchema' },
);

export const CreatedEdgeClientSchema = Type.Object(
  {
    clientId: Type.String(),
    name: Type.String(),
    createdAt: Type.String({ format: 'date-time' }),
    createdBy: Type.String(),
    clientSecret: Type.String({ description: 'Shown this once; the Edge signs its requests with it' }),
  },
  { $id: 'createdEdgeClientSchema' },
);

export const edgeSchemas = [
  EdgeTokenSchema,
  ValidatedEdgeTokensSchema,
  TokenStringListSchema,
  EdgeTokenRequestsSchema,
  EdgeClientSchema,
  CreatedEdgeClientSchema,
];
