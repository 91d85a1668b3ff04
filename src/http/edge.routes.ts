import { validSdkTokens } from '../domain/access/authenticate.js';
import { routesTagged, type RouteModule } from './deps.js';
import { PUBLIC } from './plugins/route-access.js';
import { TokenStringListSchema, ValidatedEdgeTokensSchema } from './edge.schemas.js';

const route = routesTagged(['Unleash Edge']);

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
