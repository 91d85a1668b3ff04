import { Type } from '@sinclair/typebox';
import { validSdkTokens } from '../domain/access/authenticate.js';
import { routesTagged, type RouteModule } from './deps.js';
import { PUBLIC } from './plugins/access.js';

const route = routesTagged(['Unleash Edge']);

const EdgeTokenSchema = Type.Object(
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

const TokenStringListSchema = Type.Object(
  { tokens: Type.Array(Type.String({ minLength: 1, maxLength: 500 }), { maxItems: MAX_TOKENS }) },
  { $id: 'tokenStringListSchema', additionalProperties: false },
);

export const edgeSchemas = [EdgeTokenSchema, ValidatedEdgeTokensSchema, TokenStringListSchema];

/**
 * What an edge (Vexil Edge, or Unleash Edge in front of Vexil) asks before serving a token it has not seen: which
 * tokens are valid SDK tokens, and what each may see. Open, as in Unleash: it tells nothing about a token the caller
 * does not hold, and never confirms an admin token.
 */
export const edgeRoutes: RouteModule = async (app, { deps }) => {
  app.post('/edge/validate', route(PUBLIC, { body: TokenStringListSchema, ok: ValidatedEdgeTokensSchema }), async (request) => {
    const valid = await validSdkTokens(deps.db, request.body.tokens, deps.clock.now());
    return {
      tokens: valid.map(({ token, type, environment, projects }) => ({
        token,
        type,
        environment,
        projects: projects === '*' ? ['*'] : projects,
      })),
    };
  });
};
