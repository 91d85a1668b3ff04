import type { FastifyBaseLogger } from 'fastify';
import type { Selectable } from 'kysely';
import type { Config } from '../config.js';
import type { Db, DatabaseHandle } from '../db/database.js';
import type { AddonsTable, EventsTable, IntegrationEventState } from '../db/schema.js';
import type { Clock } from '../shared/clock.js';
import type { Metrics } from '../shared/metrics.js';
import { attemptDelivery } from './delivery-attempt.js';
import { inUnitOfWork } from '../db/unit-of-work.js';
import { SYSTEM_ACTOR } from '../domain/access/actor.js';
import { claimDueDeliveries, loadDeliveryWork, recordDeliveryAttempt, type ClaimedDelivery } from '../domain/events/delivery-outbox.js';
import { DELIVERY_CHANNEL } from '../db/notification-channels.js';
import { createOutboundHttp, type OutboundHttp } from './outbound-http.js';

/**
 * The outbox worker: claims due deliveries, sends them outside any transaction, and records one integration
 * event per attempt. Claims take `FOR UPDATE SKIP LOCKED` in one short statement and move the row's
 * `next_attempt_at` past the attempt's deadline (the lease), so instances sharing a database never claim the
 * same delivery at once, and a delivery whose worker died is claimed again when its lease ends.
 */
export interface DeliveryDeps {
  db: Db;
  clock: Clock;
  config: Pick<Config, 'baseUrl' | 'integrations'>;
  log: Pick<FastifyBaseLogger, 'debug' | 'info' | 'warn' | 'error'>;
  metrics?: Metrics;
}

export interface DeliveryPassResult {
  attempted: number;
  delivered: number;
  failed: number;
}

/** Deliveries one worker sends at once. */
const CONCURRENCY = 16;
/** How long past the attempt's deadline a claim holds, for the result to be recorded. */
const LEASE_GRACE_MS = 10_000;
const DEFAULT_POLL_INTERVAL_MS = 5_000;

class DeliveryRunner {
  /** How long a claim holds: the attempt's deadline and time to record its result. */
  private readonly leaseMs: number;

  constructor(
    private readonly deps: DeliveryDeps,
    private readonly http: OutboundHttp,
  ) {
    this.leaseMs = deps.config.integrations.deliveryTimeoutMs + LEASE_GRACE_MS;
  }

  /** Delivers every due delivery, up to CONCURRENCY at once, until none is due or `keepGoing` says stop. */
  async runPass(keepGoing: () => boolean = () => true): Promise<DeliveryPassResult> {
    const result: DeliveryPassResult = { attempted: 0, delivered: 0, failed: 0 };
    const inFlight = new Set<Promise<void>>();
    while (keepGoing()) {
      const claimed = await claimDueDeliveries(this.deps.db, this.deps.clock.now(), this.leaseMs, CONCURRENCY - inFlight.size);
      for (const work of await loadDeliveryWork(this.deps.db, claimed)) {
        const attempt: Promise<void> = this.deliver(work.delivery, work.addon, work.event).then((state) => {
          inFlight.delete(attempt);
          result.attempted += 1;
          if (state === 'failed') result.failed += 1;
          else result.delivered += 1;
        });
        inFlight.add(attempt);
      }
      if (inFlight.size === 0) {
        // Nothing in flight: done when nothing was due; deliveries whose configuration was just deleted are skipped.
        if (claimed.length === 0) break;
        continue;
      }
      // Claim again as soon as a slot frees up, so one slow receiver does not hold up the others.
      if (claimed.length === 0 || inFlight.size >= CONCURRENCY) await Promise.race(inFlight);
    }
    await Promise.all(inFlight);
    return result;
  }

  private async deliver(
    delivery: ClaimedDelivery,
    addon: Selectable<AddonsTable>,
    eventRow: Selectable<EventsTable>,
  ): Promise<IntegrationEventState> {
    const attempt = await attemptDelivery({ http: this.http, clock: this.deps.clock, config: this.deps.config }, delivery, addon, eventRow);
    const logged = {
      addonId: addon.id,
      provider: addon.provider,
      deliveryId: delivery.delivery_id,
      eventId: eventRow.id,
      state: attempt.state,
    };
    if (attempt.state === 'failed')
      this.deps.log.warn({ ...logged, stateDetails: attempt.stateDetails }, 'Integration delivery attempt failed');
    else this.deps.log.debug(logged, 'Integration delivery attempt succeeded');
    const labels = { integration: String(addon.id), provider: addon.provider };
    const outcome = attempt.state !== 'failed' ? attempt.state : attempt.retryAt ? 'retrying' : 'failed';
    this.deps.metrics?.integrationDeliveries.inc({ ...labels, outcome });
    this.deps.metrics?.integrationDeliveryLag.observe(labels, (this.deps.clock.now().getTime() - eventRow.created_at.getTime()) / 1000);
    try {
      await inUnitOfWork(this.deps, SYSTEM_ACTOR, (uow) => recordDeliveryAttempt(uow, delivery, attempt), {
        inMaintenance: 'integration deliveries',
      });
    } catch (error) {
      // The lease runs out and the delivery is attempted again: at least once, never lost.
      this.deps.log.error({ err: error, ...logged }, 'Could not record an integration delivery attempt');
    }
    return attempt.state;
  }
}

/** One pass over the due deliveries, for tests and tools that drive delivery themselves (with a fixed clock). */
export async function runDeliveryPass(deps: DeliveryDeps): Promise<DeliveryPassResult> {
  const http = createOutboundHttp(deps.config.integrations);
  try {
    return await new DeliveryRunner(deps, http).runPass();
  } finally {
    await http.close();
  }
}

export interface DeliveryWorker {
  /** Stops claiming, lets attempts in flight finish (each is bounded by the delivery timeout), then returns. */
  stop(): Promise<void>;
}

/**
 * Runs passes when a commit owes deliveries (NOTIFY, from any instance), and every poll interval for retries
 * that come due and for notifications missed while disconnected.
 */
export async function startDeliveryWorker(
  deps: DeliveryDeps & { listen: DatabaseHandle['listen'] },
  options: { pollIntervalMs?: number } = {},
): Promise<DeliveryWorker> {
  const http = createOutboundHttp(deps.config.integrations);
  const runner = new DeliveryRunner(deps, http);
  let stopping = false;
  let running: Promise<void> | undefined;
  let wakeAgain = false;

  const wake = () => {
    if (stopping) return;
    if (running) {
      wakeAgain = true;
      return;
    }
    running = runner
      .runPass(() => !stopping)
      .then(
        (result) => {
          if (result.attempted > 0) deps.log.info(result, 'Integration deliveries attempted');
        },
        (error: unknown) => deps.log.error({ err: error }, 'Integration delivery pass failed; the next poll retries'),
      )
      .finally(() => {
        running = undefined;
        if (wakeAgain) {
          wakeAgain = false;
          wake();
        }
      });
  };

  const listening = await deps.listen(DELIVERY_CHANNEL, wake);
  const poll = setInterval(wake, options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS);
  return {
    async stop() {
      stopping = true;
      clearInterval(poll);
      await listening.stop().catch((error: unknown) => deps.log.warn({ err: error }, 'Could not stop listening for deliveries'));
      await running;
      await http.close();
    },
  };
}
