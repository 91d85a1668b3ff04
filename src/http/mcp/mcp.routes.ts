import { randomUUID } from 'node:crypto';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Actor } from '../../db/unit-of-work.js';
import { AuthenticationRequired } from '../../shared/errors.js';
import { routesTagged, type RouteModule } from '../deps.js';
import { createMcpServer, type McpCaller } from './mcp-server.js';
import { oauthAddresses } from '../oauth-addresses.js';
import { can, MCP_ENDPOINT } from '../plugins/access.js';
import { actorOf, bearerToken } from '../plugins/route-access.js';

const route = routesTagged(['MCP']);

const MCP_PATH = MCP_ENDPOINT;
/** One JSON-RPC message or a small batch: tool arguments are bounded by their schemas well below this. */
const MCP_BODY_LIMIT = 256 * 1024;

/** Who a session belongs to: the person (any of their tokens) or the admin token. */
function ownerOf(actor: Actor): string {
  return actor.kind === 'user' ? `user:${actor.userId}` : actor.kind === 'admin-token' ? `token:${actor.tokenId}` : actor.kind;
}

/** A JSON-RPC error outside any session, as MCP's transport answers them. */
function rpcError(reply: FastifyReply, status: number, code: number, message: string) {
  return reply.status(status).type('application/json').send({ jsonrpc: '2.0', error: { code, message }, id: null });
}

const McpMessage = Type.Unknown({ description: 'A JSON-RPC message of the Model Context Protocol (Streamable HTTP transport)' });
const McpAnswer = Type.Unknown({ description: 'The JSON-RPC answer, as JSON or a server-sent event stream' });

/**
 * Vexil's MCP server over Streamable HTTP, for coding agents. A bearer token (personal access token, service account
 * or admin token) is required: a browser's session cookie is not a way in, so no page can drive an agent's session.
 * Each message runs as the token's identity as it stands at that request.
 */
export const mcpRoutes: RouteModule = async (app, { deps }) => {
  const sessions = deps.mcpSessions;
  const { resourceMetadata } = oauthAddresses(deps.config.baseUrl);
  // A client without a token learns where to get one (MCP's authorization: RFC 9728's WWW-Authenticate parameter).
  app.addHook('onSend', async (_request, reply, payload) => {
    if (reply.statusCode === 401) reply.header('www-authenticate', `Bearer resource_metadata="${resourceMetadata}"`);
    return payload;
  });

  function callerFor(request: FastifyRequest): McpCaller {
    if (!bearerToken(request)) {
      throw new AuthenticationRequired('MCP takes a personal access token or a service account token in the Authorization header');
    }
    const actor = actorOf(request);
    return { token: 'bearer', clientId: ownerOf(actor), scopes: [], extra: { actor, owner: ownerOf(actor) } };
  }

  async function handOver(request: FastifyRequest, reply: FastifyReply, transport: StreamableHTTPServerTransport, caller: McpCaller) {
    reply.hijack();
    await transport.handleRequest(Object.assign(request.raw, { auth: caller }), reply.raw, request.body);
  }

  app.post(MCP_PATH, { ...route(can('READ'), { body: McpMessage, ok: McpAnswer }), bodyLimit: MCP_BODY_LIMIT }, async (request, reply) => {
    const caller = callerFor(request);
    const sessionId = request.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const session = sessions.use(sessionId, caller.extra.owner);
      if (!session) return rpcError(reply, 404, -32001, 'Session not found: it ended or belongs to another instance; initialize a new one');
      return handOver(request, reply, session.transport, caller);
    }
    if (!isInitializeRequest(request.body)) {
      return rpcError(reply, 400, -32000, 'Send initialize first: this request has no Mcp-Session-Id');
    }
    if (!sessions.makeRoom(caller.extra.owner)) {
      return rpcError(reply.header('retry-after', '60'), 503, -32000, 'Too many MCP sessions are open on this instance; try again later');
    }
    const server = createMcpServer(deps, sessions, request.log);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      onsessioninitialized: (id) => sessions.add({ id, owner: caller.extra.owner, server, transport }),
      onsessionclosed: (id) => sessions.forget(id),
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.forget(transport.sessionId);
    };
    await server.connect(transport);
    return handOver(request, reply, transport, caller);
  });

  // Server-initiated messages are not used: no stream is held open for them (MCP allows a 405 here). Not an
  // operation of the API, so the OpenAPI document leaves it out.
  app.get(MCP_PATH, { schema: { hide: true }, config: { access: can('READ') } }, async (request, reply) => {
    callerFor(request);
    return rpcError(reply.header('allow', 'POST, DELETE'), 405, -32000, 'Vexil sends no server-initiated messages; POST requests instead');
  });

  app.delete(MCP_PATH, route(can('READ')), async (request, reply) => {
    const caller = callerFor(request);
    const sessionId = request.headers['mcp-session-id'];
    const session = typeof sessionId === 'string' ? sessions.use(sessionId, caller.extra.owner) : undefined;
    if (!session) return rpcError(reply, 404, -32001, 'Session not found');
    return handOver(request, reply, session.transport, caller);
  });
};
