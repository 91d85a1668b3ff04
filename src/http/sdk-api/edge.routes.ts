import { Type } from '@sinclair/typebox';
import { inUnitOfWork } from '../../db/unit-of-work.js';
import { validSdkTokens } from '../../domain/access/authenticate.js';
import { SYSTEM_ACTOR } from '../../domain/access/actor.js';
import {
  createEdgeClient,
  deleteEdgeClient,
  issueEdgeTokens,
  listEdgeClients,
  verifyEdgeRequest,
} from '../../domain/api-tokens/edge-clients.js';
import { BadDataError, UnauthorizedError } from '../../shared/errors.js';
import { routesTagged, type RouteModule } from '../deps.js';
import { can } from '../plugins/access.js';
import { PUBLIC } from '../plugins/route-access.js';
import {
  CreatedEdgeClientSchema,
  EdgeClientSchema,
  EdgeTokenRequestsSchema,
  TokenStringListSchema,
  ValidatedEdgeTokensSchema,
} from './edge.schemas.js';
import { StrictObject } from '../common.schemas.js';

const route = routesTagged(['Unleash Edge']);

/**
 * What an edge (Vexil Edge, or Unleash Edge in front of Vexil) asks before serving a token it has not seen: which
 * tokens are valid SDK tokens, and what each may see. Open, as in Unleash: it tells nothing about a token the caller
 * does not hold, and never confirms an admin token.
 */
export const edgeRoutes: RouteModule = async (app, { deps, act }) => {
  const master = deps.config.edgeMasterSecret;
  const header = (value: string | string[] | undefined) => (typeof value === 'string' ? value : undefined);

  // Unleash Enterprise Edge's token issuing: the Edge signs the request with its client secret (HMAC), and is
  // answered a client token per environment and projects, the same one each time until an Admin deletes it.
  app.post('/edge/issue-token', route(PUBLIC, { body: EdgeTokenRequestsSchema, ok: ValidatedEdgeTokensSchema }), async (request) => {
    if (!master) throw new UnauthorizedError('This server issues no edge tokens: EDGE_MASTER_SECRET is not set');
    return inUnitOfWork(deps, SYSTEM_ACTOR, async (uow) => {
      const client = await verifyEdgeRequest(uow, master, {
        method: request.method,
        authorization: request.headers.authorization,
        timestamp: header(request.headers['x-timestamp']),
        nonce: header(request.headers['x-nonce']),
        bodyHash: header(request.headers['content-sha256']),
        body: request.body,
      });
      return issueEdgeTokens(uow, master, client, request.body.tokens);
    });
  });

  const admin = routesTagged(['Edge clients']);
  const needsMaster = () => {
    if (!master) throw new BadDataError('Edge clients need EDGE_MASTER_SECRET: set it (32 characters or more) and restart');
    return master;
  };
  app.get('/api/admin/edge-clients', admin(can('ADMIN'), { ok: Type.Array(Type.Ref(EdgeClientSchema)) }), async () =>
    listEdgeClients(deps.db),
  );

  app.post(
    '/api/admin/edge-clients',
    admin(can('ADMIN'), { body: StrictObject({ name: Type.String({ minLength: 1, maxLength: 100 }) }), created: CreatedEdgeClientSchema }),
    async (request, reply) => {
      const secret = needsMaster();
      return reply.status(201).send(await act(request, (uow) => createEdgeClient(uow, request.body.name, secret)));
    },
  );

  app.delete(
    '/api/admin/edge-clients/:clientId',
    admin(can('ADMIN'), { params: Type.Object({ clientId: Type.String({ minLength: 1, maxLength: 100 }) }) }),
    async (request, reply) => {
      await act(request, (uow) => deleteEdgeClient(uow, master, request.params.clientId));
      return reply.status(200).send();
    },
  );

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
