import { randomUUID } from 'node:crypto';
import { sql, type Selectable } from 'kysely';
import type { Db } from '../../db/database.js';
import type { AddonsTable, EventsTable, IntegrationEventState } from '../../db/schema.js';
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

/** One delivery as a worker claimed it. */
export interface ClaimedDelivery {
  id: number;
  delivery_id: string;
  addon_id: number;
  event_id: number;
  /** This attempt's number, the first being 1. */
  attempts: number;
  /** Proves the claim is still this worker's when the attempt is recorded. */
  lease_token: string;
  /** An Admin asked for it again; its integration events say so. */
  redelivery: boolean;
}

/** What an attempt records: its integration event, and whether the delivery is tried again. */
export interface AttemptResult {
  state: IntegrationEventState;
  stateDetails: string;
  details: Record<string, unknown>;
  /** When to try again; undefined when the delivery is finished, delivered or given up. */
  retryAt?: Date;
}

/**
 * Claims up to `limit` due deliveries of enabled integrations in one short statement: `FOR UPDATE SKIP LOCKED`,
 * and `next_attempt_at` moved `leaseMs` ahead (the lease), so instances sharing a database never claim the same
 * delivery at once, and a delivery whose worker died is claimed again when its lease ends.
 */
export async function claimDueDeliveries(db: Db, now: Date, leaseMs: number, limit: number): Promise<ClaimedDelivery[]> {
  if (limit <= 0) return [];
  const leaseEnd = new Date(now.getTime() + leaseMs);
  const { rows } = await sql<ClaimedDelivery>`
    WITH due AS (
      SELECT d.id FROM addon_deliveries d
      JOIN addons a ON a.id = d.addon_id
      WHERE d.next_attempt_at <= ${now} AND a.enabled
      ORDER BY d.next_attempt_at, d.id
      LIMIT ${limit}
      FOR UPDATE OF d SKIP LOCKED
    )
    UPDATE addon_deliveries d
    SET next_attempt_at = ${leaseEnd}, attempts = d.attempts + 1, lease_token = ${randomUUID()}
    FROM due WHERE d.id = due.id
    RETURNING d.id, d.delivery_id, d.addon_id, d.event_id, d.attempts, d.lease_token, d.redelivery`.execute(db);
  return rows;
}

/** The integration and event of each claimed delivery; one whose integration was deleted since is left out. */
export async function loadDeliveryWork(
  db: Db,
  claimed: ClaimedDelivery[],
): Promise<Array<{ delivery: ClaimedDelivery; addon: Selectable<AddonsTable>; event: Selectable<EventsTable> }>> {
  if (claimed.length === 0) return [];
  const [addons, events] = await Promise.all([
    db
      .selectFrom('addons')
      .selectAll()
      .where('id', 'in', [...new Set(claimed.map((d) => d.addon_id))])
      .execute(),
    db
      .selectFrom('events')
      .selectAll()
      .where('id', 'in', [...new Set(claimed.map((d) => d.event_id))])
      .execute(),
  ]);
  const addonById = new Map(addons.map((addon) => [addon.id, addon]));
  const eventById = new Map(events.map((event) => [event.id, event]));
  // A configuration deleted since the claim took its deliveries with it.
  return claimed.flatMap((delivery) => {
    const addon = addonById.get(delivery.addon_id);
    const event = eventById.get(delivery.event_id);
    return addon && event ? [{ delivery, addon, event }] : [];
  });
}

/**
 * The attempt's integration event, and the delivery rescheduled or finished, in the caller's unit of work. The delivery
 * changes only while this worker's lease holds: one that outlived its lease was claimed by another worker.
 */
export async function recordDeliveryAttempt(uow: UnitOfWork, delivery: ClaimedDelivery, attempt: AttemptResult): Promise<void> {
  const { tx } = uow;
  await tx
    .insertInto('integration_events')
    .values({
      integration_id: delivery.addon_id,
      event_id: delivery.event_id,
      created_at: uow.now,
      state: attempt.state,
      state_details: attempt.stateDetails,
      details: JSON.stringify(attempt.details),
    })
    .execute();
  if (attempt.retryAt) {
    await tx
      .updateTable('addon_deliveries')
      .set({ next_attempt_at: attempt.retryAt, lease_token: null })
      .where('id', '=', delivery.id)
      .where('lease_token', '=', delivery.lease_token)
      .execute();
  } else {
    await tx.deleteFrom('addon_deliveries').where('id', '=', delivery.id).where('lease_token', '=', delivery.lease_token).execute();
  }
}

/** Deletes at most `limit` integration events older than `cutoff`; answers how many it deleted. */
export async function deleteIntegrationEventsBefore(db: Db, cutoff: Date, limit: number): Promise<number> {
  const result = await db
    .deleteFrom('integration_events')
    .where('id', 'in', (eb) => eb.selectFrom('integration_events').select('id').where('created_at', '<', cutoff).limit(limit))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
