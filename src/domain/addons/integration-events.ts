import { sql } from 'kysely';
import type { IntegrationEventState } from '../../db/schema.js';
import { ConflictError, NotFoundError } from '../../shared/errors.js';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { enqueueRedelivery } from '../events/delivery-outbox.js';
import { toEventView, type EventView } from '../events/event-log.js';
import { parseWholeNumber } from '../../shared/filters.js';
import { findAddonRow } from './addons.js';
import type { Db } from '../../db/database.js';

/** An integration event (spec 2.3): one delivery attempt. `id` is a digit string since it is a bigint. */
export interface IntegrationEventView {
  id: string;
  integrationId: number;
  createdAt: string;
  state: IntegrationEventState;
  stateDetails: string;
  event: EventView;
  details: Record<string, unknown>;
}

function selectIntegrationEvents(db: Db) {
  return db
    .selectFrom('integration_events as ie')
    .innerJoin('events as e', 'e.id', 'ie.event_id')
    .selectAll('e')
    .select([
      sql<string>`ie.id::text`.as('integration_event_id'),
      'ie.integration_id',
      'ie.created_at as handled_at',
      'ie.state',
      'ie.state_details',
      'ie.details',
    ]);
}

type IntegrationEventRow = Awaited<ReturnType<ReturnType<typeof selectIntegrationEvents>['executeTakeFirstOrThrow']>>;

function toIntegrationEventView(row: IntegrationEventRow): IntegrationEventView {
  const { integration_event_id, integration_id, handled_at, state, state_details, details, ...event } = row;
  return {
    id: integration_event_id,
    integrationId: integration_id,
    createdAt: handled_at.toISOString(),
    state,
    stateDetails: state_details,
    event: toEventView(event),
    details: details as Record<string, unknown>,
  };
}

/** A configuration's integration events, newest first (spec 4.1); an unknown configuration is a 404. */
export async function listIntegrationEvents(
  db: Db,
  addonId: number,
  paging: { limit?: string; offset?: string },
): Promise<IntegrationEventView[]> {
  const limit = parseWholeNumber('limit', paging.limit, 50, 1, 1000);
  const offset = parseWholeNumber('offset', paging.offset, 0, 0, Number.MAX_SAFE_INTEGER);
  await findAddonRow(db, addonId);
  const rows = await selectIntegrationEvents(db)
    .where('ie.integration_id', '=', addonId)
    .orderBy('ie.id', 'desc')
    .limit(limit)
    .offset(offset)
    .execute();
  return rows.map(toIntegrationEventView);
}

/** One integration event of a configuration; 404 when the configuration does not have it. */
export async function findIntegrationEvent(db: Db, addonId: number, integrationEventId: string): Promise<IntegrationEventView> {
  const row = await selectIntegrationEvents(db)
    .where('ie.integration_id', '=', addonId)
    .where('ie.id', '=', sql<number>`${integrationEventId}::int8`)
    .executeTakeFirst();
  if (!row) throw new NotFoundError(`Could not find integration event ${integrationEventId} of integration configuration ${addonId}`);
  return toIntegrationEventView(row);
}

/**
 * Sends the event of an integration event to its configuration again, through the outbox like any delivery:
 * a new delivery id and a new set of attempts, each recorded as a new integration event.
 */
export async function redeliverIntegrationEvent(
  uow: UnitOfWork,
  addonId: number,
  integrationEventId: string,
): Promise<{ deliveryId: string; eventId: number }> {
  const addon = await findAddonRow(uow.tx, addonId);
  const handled = await findIntegrationEvent(uow.tx, addonId, integrationEventId);
  if (!addon.enabled) {
    throw new ConflictError(`Integration configuration ${addonId} is disabled; enable it to redeliver its events`);
  }
  const deliveryId = await enqueueRedelivery(uow, addonId, handled.event.id);
  return { deliveryId, eventId: handled.event.id };
}
