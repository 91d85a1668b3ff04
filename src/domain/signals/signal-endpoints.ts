import type { Selectable } from 'kysely';
import type { Db } from '../../db/database.js';
import type { SignalEndpointsTable } from '../../db/schema.js';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { ConflictError, NotFoundError } from '../../shared/errors.js';
import { hashToken, randomSecret } from '../../shared/secrets.js';
import { actorIdentity } from '../access/actor.js';
import { recordEvent } from '../events/record-event.js';

/**
 * Signal endpoints: URLs monitoring tools call (`POST /api/signal-endpoint/:name`) with tokens of their own, so
 * an alert can turn a flag off. Their tokens are stored hashed and shown once.
 */

export interface SignalEndpointTokenView {
  id: number;
  name: string;
  signalEndpointId: number;
  createdAt: string;
  createdByUserId: number;
}

export interface SignalEndpointView {
  id: number;
  name: string;
  description: string | null;
  enabled: boolean;
  createdAt: string;
  createdByUserId: number;
  tokens: SignalEndpointTokenView[];
}

async function views(db: Db, rows: Selectable<SignalEndpointsTable>[]): Promise<SignalEndpointView[]> {
  if (rows.length === 0) return [];
  const tokens = await db
    .selectFrom('signal_endpoint_tokens')
    .select(['id', 'name', 'signal_endpoint_id', 'created_at', 'created_by_user_id'])
    .where(
      'signal_endpoint_id',
      'in',
      rows.map((row) => row.id),
    )
    .orderBy('id')
    .execute();
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    description: row.description,
    enabled: row.enabled,
    createdAt: row.created_at.toISOString(),
    createdByUserId: row.created_by_user_id,
    tokens: tokens
      .filter((token) => token.signal_endpoint_id === row.id)
      .map((token) => ({
        id: token.id,
        name: token.name,
        signalEndpointId: token.signal_endpoint_id,
        createdAt: token.created_at.toISOString(),
        createdByUserId: token.created_by_user_id,
      })),
  }));
}

export async function listSignalEndpoints(db: Db): Promise<SignalEndpointView[]> {
  return views(db, await db.selectFrom('signal_endpoints').selectAll().orderBy('name').limit(500).execute());
}

export async function getSignalEndpoint(db: Db, id: number): Promise<SignalEndpointView> {
  const row = await db.selectFrom('signal_endpoints').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw new NotFoundError(`Could not find signal endpoint ${id}`);
  return (await views(db, [row]))[0]!;
}

export interface SignalEndpointInput {
  name: string;
  description?: string | null;
  enabled?: boolean;
}

export async function createSignalEndpoint(uow: UnitOfWork, input: SignalEndpointInput): Promise<SignalEndpointView> {
  const row = await uow.tx
    .insertInto('signal_endpoints')
    .values({
      name: input.name,
      description: input.description ?? null,
      enabled: input.enabled ?? true,
      created_by_user_id: actorIdentity(uow.actor).createdByUserId,
      created_at: uow.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  const view = (await views(uow.tx, [row]))[0]!;
  await recordEvent(uow, { type: 'signal-endpoint-created', data: view });
  return view;
}

export async function updateSignalEndpoint(uow: UnitOfWork, id: number, input: SignalEndpointInput): Promise<SignalEndpointView> {
  const before = await getSignalEndpoint(uow.tx, id);
  const row = await uow.tx
    .updateTable('signal_endpoints')
    .set({ name: input.name, description: input.description ?? null, enabled: input.enabled ?? before.enabled })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
  const view = (await views(uow.tx, [row]))[0]!;
  await recordEvent(uow, { type: 'signal-endpoint-updated', data: view, preData: before });
  return view;
}

/** POST …/signal-endpoints/:id/on and /off: whether it takes signals; a change is recorded as `signal-endpoint-updated`. */
export async function setSignalEndpointEnabled(uow: UnitOfWork, id: number, enabled: boolean): Promise<SignalEndpointView> {
  const before = await getSignalEndpoint(uow.tx, id);
  if (before.enabled === enabled) return before;
  return updateSignalEndpoint(uow, id, { name: before.name, description: before.description, enabled });
}

export async function deleteSignalEndpoint(uow: UnitOfWork, id: number): Promise<void> {
  const before = await getSignalEndpoint(uow.tx, id);
  // Action sets listen to their endpoint; deleting it would take them away without a word.
  const listening = await uow.tx
    .selectFrom('action_sets')
    .select(['id', 'name', 'project'])
    .where('source_id', '=', id)
    .orderBy('id')
    .execute();
  if (listening.length > 0) {
    const names = listening.map((set) => `"${set.name}" (project "${set.project}", id ${set.id})`).join(', ');
    throw new ConflictError(
      `Signal endpoint "${before.name}" sets off the action sets ${names}; delete them or point them elsewhere first`,
    );
  }
  await uow.tx.deleteFrom('signal_endpoints').where('id', '=', id).execute();
  await recordEvent(uow, { type: 'signal-endpoint-deleted', preData: before });
}

/** A token for the endpoint; its secret is in this answer only. */
export async function createSignalEndpointToken(
  uow: UnitOfWork,
  id: number,
  name: string,
): Promise<SignalEndpointTokenView & { token: string }> {
  await getSignalEndpoint(uow.tx, id);
  const secret = randomSecret();
  const row = await uow.tx
    .insertInto('signal_endpoint_tokens')
    .values({
      signal_endpoint_id: id,
      name,
      secret_hash: hashToken(secret),
      created_by_user_id: actorIdentity(uow.actor).createdByUserId,
      created_at: uow.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  const view = {
    id: row.id,
    name: row.name,
    signalEndpointId: id,
    createdAt: row.created_at.toISOString(),
    createdByUserId: row.created_by_user_id,
  };
  await recordEvent(uow, { type: 'signal-endpoint-token-created', data: view });
  return { ...view, token: secret };
}

export async function deleteSignalEndpointToken(uow: UnitOfWork, id: number, tokenId: number): Promise<void> {
  const row = await uow.tx
    .deleteFrom('signal_endpoint_tokens')
    .where('id', '=', tokenId)
    .where('signal_endpoint_id', '=', id)
    .returningAll()
    .executeTakeFirst();
  if (!row) throw new NotFoundError(`Signal endpoint ${id} has no token ${tokenId}`);
  await recordEvent(uow, { type: 'signal-endpoint-token-deleted', preData: { id: row.id, name: row.name, signalEndpointId: id } });
}
