import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { DELIVERY_CHANNEL } from '../../db/notification-channels.js';
import type { UnitOfWork } from '../../db/unit-of-work.js';

/**
 * The transactional outbox of integrations: the deliveries an event owes are rows written in the transaction
 * that writes the event, so they commit or roll back with it; none can be lost or made for an event that did
 * not happen. A NOTIFY in the same transaction wakes the workers of every instance when it commits.
 */

interface PendingEvents {
  eventIds: number[];
  /** Whether a task that will write these events' deliveries is registered and has not run yet. */
  scheduled: boolean;
}

const pendingEvents = new WeakMap<UnitOfWork, PendingEvents>();
let batchSerial = 0;

/**
 * Owes `eventId`'s deliveries to every enabled configuration whose filters match it. They are written just
 * before the commit, for all the unit of work's events in one statement. An event recorded by another
 * before-commit task after that statement ran gets a task of its own, so none is ever left out.
 */
export function enqueueIntegrationDeliveries(uow: UnitOfWork, eventId: number): void {
  let pending = pendingEvents.get(uow);
  if (!pending) {
    pending = { eventIds: [], scheduled: false };
    pendingEvents.set(uow, pending);
  }
  pending.eventIds.push(eventId);
  if (pending.scheduled) return;
  pending.scheduled = true;
  const batch = pending;
  uow.beforeCommit(`integration-deliveries:${++batchSerial}`, async () => {
    batch.scheduled = false;
    await insertDeliveries(uow, batch.eventIds.splice(0));
  });
}

/**
 * One INSERT … SELECT over the events and the enabled configurations. Filters: an empty list matches all, as
 * does `*`; a non-empty project or environment filter never matches an event without one (as in Unleash).
 */
async function insertDeliveries(uow: UnitOfWork, eventIds: number[]): Promise<void> {
  await sql`
    WITH inserted AS (
      INSERT INTO addon_deliveries (delivery_id, addon_id, event_id, next_attempt_at, created_at)
      SELECT gen_random_uuid(), a.id, e.id, ${uow.now}, ${uow.now}
      FROM events e
      JOIN addons a ON a.enabled
        AND (cardinality(a.events) = 0 OR e.type = ANY (a.events))
        AND (cardinality(a.projects) = 0 OR '*' = ANY (a.projects) OR e.project = ANY (a.projects))
        AND (cardinality(a.environments) = 0 OR '*' = ANY (a.environments) OR e.environment = ANY (a.environments))
      WHERE e.id = ANY (${eventIds})
      ORDER BY e.id, a.id
      RETURNING 1
    )
    SELECT pg_notify(${DELIVERY_CHANNEL}, '') FROM (SELECT 1 FROM inserted LIMIT 1) AS any_inserted`.execute(uow.tx);
}

/**
 * Owes one more delivery of an event to a configuration, as a manual redelivery: a new delivery id (the
 * receiver must not discard it as a duplicate) and a fresh set of attempts. Returns the delivery id.
 */
export async function enqueueRedelivery(uow: UnitOfWork, addonId: number, eventId: number): Promise<string> {
  const deliveryId = randomUUID();
  await uow.tx
    .insertInto('addon_deliveries')
    .values({
      delivery_id: deliveryId,
      addon_id: addonId,
      event_id: eventId,
      next_attempt_at: uow.now,
      created_at: uow.now,
      redelivery: true,
    })
    .execute();
  await sql`SELECT pg_notify(${DELIVERY_CHANNEL}, '')`.execute(uow.tx);
  return deliveryId;
}
