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

export const edgeSchemas = [EdgeTokenSchema, ValidatedEdgeTokensSchema, TokenStringListSchema];
