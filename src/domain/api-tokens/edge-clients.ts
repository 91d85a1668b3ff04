import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { BadDataError, ConflictError, NotFoundError, UnauthorizedError } from '../../shared/errors.js';
import { randomSecret } from '../../shared/secrets.js';
import { actorIdentity } from '../access/actor.js';
import { recordEvent } from '../events/record-event.js';
import { ALL, createDerivedClientToken, deleteApiToken, secretProjectPart, tokenExists } from './api-tokens.js';

// Edge clients: an Edge (Unleash Enterprise Edge's protocol) signs `POST /edge/issue-token` with HMAC-SHA256 and is
// issued client tokens for the environments and projects it asks for. Its secret, and each token's, are derived from
// EDGE_MASTER_SECRET, so the database holds neither: a copy of it alone lets no one sign as an Edge or use a token.

/** How far a signed request's timestamp may be from the server's clock. */
export const EDGE_REQUEST_LIFETIME_MS = 5 * 60_000;
/** The most environment/project scopes one request may ask tokens for. */
export const EDGE_SCOPES_PER_REQUEST = 50;

const derive = (master: string, purpose: string) => createHmac('sha256', master).update(purpose).digest('base64url');

function clientSecret(master: string, client: { client_id: string; salt: string }): string {
  return derive(master, `vexil-edge-client\n${client.client_id}\n${client.salt}`);
}

export interface EdgeClientView {
  clientId: string;
  name: string;
  createdAt: string;
  createdBy: string;
}

const toView = (row: { client_id: string; name: string; created_at: Date; created_by: string }): EdgeClientView => ({
  clientId: row.client_id,
  name: row.name,
  createdAt: row.created_at.toISOString(),
  createdBy: row.created_by,
});

export async function listEdgeClients(db: Db): Promise<EdgeClientView[]> {
  const rows = await db.selectFrom('edge_clients').selectAll().orderBy('created_at').orderBy('client_id').execute();
  return rows.map(toView);
}

/** Edge clients there may be: each can be issued tokens, so their number is bounded. */
export const MAX_EDGE_CLIENTS = 100;

/** Makes an edge client; answers it with its secret, the only time the secret is shown. */
export async function createEdgeClient(uow: UnitOfWork, name: string, master: string): Promise<EdgeClientView & { clientSecret: string }> {
  await sql`LOCK TABLE edge_clients IN SHARE ROW EXCLUSIVE MODE`.execute(uow.tx);
  const { clients } = await uow.tx
    .selectFrom('edge_clients')
    .select((eb) => eb.fn.countAll<string>().as('clients'))
    .executeTakeFirstOrThrow();
  if (Number(clients) >= MAX_EDGE_CLIENTS) {
    throw new ConflictError(`There are already ${MAX_EDGE_CLIENTS} edge clients, the most there may be; delete one first`);
  }
  const row = await uow.tx
    .insertInto('edge_clients')
    .values({
      client_id: `edge-${randomSecret(8)}`,
      name,
      salt: randomSecret(16),
      created_at: uow.now,
      created_by: actorIdentity(uow.actor).createdBy,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  const view = toView(row);
  await recordEvent(uow, { type: 'edge-client-created', data: view });
  return { ...view, clientSecret: clientSecret(master, row) };
}

/**
 * Deletes an edge client and every token it was issued, in one unit of work: an incident responder deleting a leaked
 * client ends what it holds, not only what it may ask for next. Answers how many tokens went.
 */
export async function deleteEdgeClient(uow: UnitOfWork, master: string | undefined, clientId: string): Promise<number> {
  // Read before the client goes, which takes its rows of issued scopes with it.
  const issued = await uow.tx.selectFrom('edge_client_tokens').selectAll().where('client_id', '=', clientId).execute();
  const row = await uow.tx.deleteFrom('edge_clients').where('client_id', '=', clientId).returningAll().executeTakeFirst();
  if (!row) throw new NotFoundError(`Could not find the edge client "${clientId}"`);
  await uow.tx.deleteFrom('edge_client_tokens').where('client_id', '=', clientId).execute();
  let deleted = 0;
  // Without the master secret no token could have been issued, and none can be derived again.
  for (const { scope, generation } of master ? issued : []) {
    const secret = edgeTokenSecret(master!, row, scope, generation);
    if (await tokenExists(uow.tx, secret)) {
      await deleteApiToken(uow, secret);
      deleted++;
    }
  }
  await recordEvent(uow, { type: 'edge-client-deleted', preData: { ...toView(row), tokensDeleted: deleted } });
  return deleted;
}

/** The secret of the token a client holds for a scope (`environment\nprojects`): derived, never stored. */
function edgeTokenSecret(master: string, client: { client_id: string; salt: string }, scope: string, generation: number): string {
  const [environment, projects = ''] = scope.split('\n');
  return `${secretProjectPart(projects === '' ? [] : projects.split(','))}:${environment}.${createHash('sha256')
    .update(derive(master, `vexil-edge-token\n${client.client_id}\n${client.salt}\n${scope}\n${generation}`))
    .digest('hex')}`;
}

export interface SignedEdgeRequest {
  method: string;
  authorization: string | undefined;
  timestamp: string | undefined;
  nonce: string | undefined;
  bodyHash: string | undefined;
  body: unknown;
}

/**
 * Checks a signed request as Unleash's Edge protocol defines it (`Authorization: HMAC <clientId>:<signature>`, with
 * `x-timestamp`, `x-nonce` and `content-sha256`) and answers the client. Each nonce is accepted once.
 */
export async function verifyEdgeRequest(uow: UnitOfWork, master: string, request: SignedEdgeRequest) {
  const refuse = (why: string): never => {
    throw new UnauthorizedError(`The edge request is refused: ${why}`);
  };
  const match = request.authorization?.match(/^HMAC ([^:\s]{1,100}):(\S{1,200})$/);
  if (!match) return refuse('it has no HMAC Authorization header');
  const [, clientId, signature] = match as unknown as [string, string, string];
  const { timestamp, nonce, bodyHash } = request;
  if (!timestamp || !nonce || !bodyHash || nonce.length > 200) return refuse('x-timestamp, x-nonce and content-sha256 are required');
  const sentAt = Date.parse(timestamp);
  if (Number.isNaN(sentAt) || Math.abs(uow.now.getTime() - sentAt) > EDGE_REQUEST_LIFETIME_MS) return refuse('its timestamp is stale');
  if (
    createHash('sha256')
      .update(JSON.stringify(request.body ?? ''))
      .digest('hex') !== bodyHash
  )
    return refuse('content-sha256 does not match the body');
  const client = await uow.tx.selectFrom('edge_clients').selectAll().where('client_id', '=', clientId).executeTakeFirst();
  if (!client) return refuse('the client is unknown');
  const canonical = `${request.method.toUpperCase()}\n/edge/issue-token\n${timestamp}\n${nonce}\n${bodyHash}`;
  const expected = createHmac('sha256', Buffer.from(clientSecret(master, client), 'base64url'))
    .update(canonical)
    .digest('base64url');
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, Buffer.from(expected))) return refuse('the signature does not match');
  await uow.tx.deleteFrom('edge_request_nonces').where('expires_at', '<', uow.now).execute();
  const fresh = await uow.tx
    .insertInto('edge_request_nonces')
    .values({ client_id: clientId, nonce, expires_at: new Date(uow.now.getTime() + 2 * EDGE_REQUEST_LIFETIME_MS) })
    .onConflict((oc) => oc.columns(['client_id', 'nonce']).doNothing())
    .returning('nonce')
    .executeTakeFirst();
  if (!fresh) return refuse('it was seen before (replayed)');
  return client;
}

export interface EdgeTokenRequest {
  environment: string;
  projects: string[];
}

/**
 * The client tokens an edge client asks for, one per environment and projects: the one it was issued before, or a
 * new one (also when an Admin deleted the last; its secret then differs).
 */
export async function issueEdgeTokens(
  uow: UnitOfWork,
  master: string,
  client: { client_id: string; salt: string },
  requests: EdgeTokenRequest[],
) {
  const tokens = [];
  for (const [index, request] of requests.entries()) {
    const projects = [...new Set(request.projects)].sort();
    const environment = await uow.tx.selectFrom('environments').select('name').where('name', '=', request.environment).executeTakeFirst();
    if (!environment)
      throw new BadDataError(`No environment "${request.environment}"`, [
        { path: `/body/tokens/${index}/environment`, message: 'Name an existing environment' },
      ]);
    const named = projects.filter((project) => project !== ALL);
    if (named.length > 0) {
      const found = await uow.tx.selectFrom('projects').select('id').where('id', 'in', named).execute();
      const missing = named.filter((project) => !found.some((row) => row.id === project));
      if (missing.length > 0)
        throw new BadDataError(`No project ${missing.map((m) => `"${m}"`).join(', ')}`, [
          { path: `/body/tokens/${index}/projects`, message: 'Name existing projects, or "*"' },
        ]);
    }
    const scope = `${request.environment}\n${projects.join(',')}`;
    const held = await uow.tx
      .selectFrom('edge_client_tokens')
      .select('generation')
      .where('client_id', '=', client.client_id)
      .where('scope', '=', scope)
      .forUpdate()
      .executeTakeFirst();
    const secretOf = (generation: number) => edgeTokenSecret(master, client, scope, generation);
    let generation = held?.generation ?? 0;
    const exists = await tokenExists(uow.tx, secretOf(generation));
    // A token an Admin deleted is never made again: the client is issued the next generation, with another secret.
    if (held && !exists) generation += 1;
    const secret = secretOf(generation);
    if (!exists) {
      await createDerivedClientToken(
        uow,
        { tokenName: `edge_${client.client_id}_${request.environment}`, environment: request.environment, projects },
        secret,
      );
    }
    if (held?.generation !== generation) {
      await uow.tx
        .insertInto('edge_client_tokens')
        .values({ client_id: client.client_id, scope, generation })
        .onConflict((oc) => oc.columns(['client_id', 'scope']).doUpdateSet({ generation }))
        .execute();
    }
    tokens.push({ token: secret, type: 'client' as const, environment: request.environment, projects: named.length > 0 ? named : [ALL] });
  }
  return { tokens };
}
