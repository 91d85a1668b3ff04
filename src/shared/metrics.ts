import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Connections of a PostgreSQL pool: its limit, those open, those idle, and callers waiting for one. */
export interface PoolUse {
  max: number;
  open: number;
  idle: number;
  waiting: number;
}

/** The database-wide figures of a scrape (domain/metrics/database-figures.ts reads them). */
export interface DatabaseFigures {
  eventsByType: Array<{ type: string; count: number }>;
  backlog: Array<{ integration: string; provider: string; pending: number; oldestSeconds: number }>;
  /** Every state, 0 included, so a query over a state works before its first change request. */
  changeRequests: Array<{ state: string; count: number }>;
}

/** Where the database gauges read from; pool use on PostgreSQL only, as the embedded engine has one in-process connection. */
export interface MetricsSources {
  readDatabaseFigures(): Promise<DatabaseFigures>;
  poolUse?(): PoolUse;
  databaseUp?(): boolean;
}

/** Database-wide figures are read at most this often, however often the endpoint is scraped. */
const DATABASE_READ_INTERVAL_MS = 5_000;

/**
 * The Prometheus metrics of one Vexil process (`GET /internal-backstage/prometheus`). Counters and histograms
 * count what this instance did; gauges named `vexil_db_*` read the shared database, so every instance
 * sharing it reports the same values (aggregate them with `max`, not `sum`).
 */
export class Metrics {
  readonly registry = new Registry();

  /** A counter of this process's registry, by the labels given. */
  private counter<Label extends string>(name: string, help: string, labelNames: readonly Label[]): Counter<Label> {
    return new Counter({ name, help, labelNames, registers: [this.registry] });
  }

  readonly httpRequestDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by route (its pattern, not the URL) and status',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  readonly clientApiRequests = this.counter(
    'vexil_client_api_requests_total',
    'Requests of SDKs to the client and frontend APIs, by endpoint and status',
    ['endpoint', 'status_code'],
  );

  readonly streamingConnections = new Gauge({
    name: 'vexil_client_streaming_connections',
    help: 'SDKs connected to this instance by server-sent events (GET /api/client/streaming)',
    registers: [this.registry],
  });

  readonly integrationDeliveries = this.counter(
    'vexil_integration_deliveries_total',
    'Delivery attempts to integrations by this instance, by outcome: success, successWithErrors, retrying (failed, to be tried again) or failed (given up)',
    ['integration', 'provider', 'outcome'],
  );

  readonly integrationDeliveryLag = new Histogram({
    name: 'vexil_integration_delivery_lag_seconds',
    help: 'Time from an event being recorded to the end of a delivery attempt of it',
    labelNames: ['integration', 'provider'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600],
    registers: [this.registry],
  });

  readonly heldSdkReports = this.counter(
    'vexil_sdk_reports_held_total',
    'SDK reports (registrations, metrics) this instance could not write when they came, the database being away: held in memory, written_late when it answered again, or dropped (past the bound, or no longer writable)',
    ['kind', 'outcome'],
  );

  readonly backgroundFailures = this.counter(
    'vexil_background_failures_total',
    'Work no request waited for that failed and will be tried again: the SDK store rebuilding an environment for streaming SDKs, or a subscriber of the change feed',
    ['work'],
  );

  private figures: Promise<DatabaseFigures> | undefined;
  private figuresReadAt = 0;

  /** Without `sources` (Vexil Edge, which has no database) there are no `vexil_db_*` gauges. */
  constructor(private readonly sources?: MetricsSources) {
    collectDefaultMetrics({ register: this.registry });
    if (!sources) return;
    const figures = () => this.databaseFigures();

    this.databaseGauge('vexil_db_events', 'Events in the audit log, by type (database-wide)', ['type'], (read) =>
      read.eventsByType.map((row) => [{ type: row.type }, row.count]),
    );
    this.databaseGauge(
      'vexil_db_integration_backlog',
      'Deliveries owed to an integration and not yet made (database-wide outbox)',
      ['integration', 'provider'],
      (read) => read.backlog.map((row) => [{ integration: row.integration, provider: row.provider }, row.pending]),
    );
    this.databaseGauge(
      'vexil_db_integration_backlog_oldest_seconds',
      'Age of the oldest delivery an integration is still owed (0 when none)',
      ['integration', 'provider'],
      (read) => read.backlog.map((row) => [{ integration: row.integration, provider: row.provider }, row.oldestSeconds]),
    );
    this.databaseGauge('vexil_db_change_requests', 'Change requests by state (database-wide)', ['state'], (read) =>
      read.changeRequests.map((row) => [{ state: row.state }, row.count]),
    );
    const { poolUse, databaseUp } = sources;
    if (databaseUp) {
      new Gauge({
        name: 'vexil_database_up',
        help: 'Whether PostgreSQL answers this instance (1) or not (0: a connection was lost and it has not answered since)',
        registers: [this.registry],
        collect() {
          this.set(databaseUp() ? 1 : 0);
        },
      });
    }
    if (poolUse) {
      new Gauge({
        name: 'vexil_db_pool_connections',
        help: 'PostgreSQL connections of this instance: max (the pool size), open, idle, and waiting (callers queued for one)',
        labelNames: ['state'] as const,
        registers: [this.registry],
        // After the database figures of the same scrape, so their own queries are not counted as waiting.
        async collect() {
          await figures().catch(() => undefined);
          const use = poolUse();
          this.set({ state: 'max' }, use.max);
          this.set({ state: 'open' }, use.open);
          this.set({ state: 'idle' }, use.idle);
          this.set({ state: 'waiting' }, use.waiting);
        },
      });
    }
  }

  /** Counts, at each scrape, the answers of `/api/client/features` the SDK store holds per scope. */
  countCachedClientAnswers(count: () => number): void {
    new Gauge({
      name: 'vexil_client_cached_answers',
      help: 'Answers of the client API kept in memory, one per scope SDKs asked for (environment, projects, query filters); bounded per environment',
      registers: [this.registry],
      collect() {
        this.set(count());
      },
    });
  }

  /** A gauge whose samples are taken, at each scrape, from the database figures shared by the scrape's gauges. */
  private databaseGauge<Label extends string>(
    name: string,
    help: string,
    labelNames: readonly Label[],
    samples: (read: DatabaseFigures) => Array<[Record<Label, string>, number]>,
  ): void {
    const figures = () => this.databaseFigures();
    new Gauge({
      name,
      help,
      labelNames,
      registers: [this.registry],
      async collect() {
        // While the database does not answer, the gauge keeps its last values (vexil_database_up says so) and the
        // scrape still answers: an outage is when the other metrics matter most.
        const read = await figures().catch(() => undefined);
        if (!read) return;
        this.reset();
        for (const [labels, value] of samples(read)) this.set(labels, value);
      },
    });
  }

  /** The text a Prometheus scrape reads. */
  async exposition(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  /** Read once for all database gauges of a scrape, and reused for a few seconds, so scrapes cost the database little. */
  private databaseFigures(): Promise<DatabaseFigures> {
    const now = Date.now();
    if (!this.figures || now - this.figuresReadAt >= DATABASE_READ_INTERVAL_MS) {
      this.figuresReadAt = now;
      // Only the database gauges call this, and they exist only with sources.
      this.figures = this.sources!.readDatabaseFigures();
      // A failed read is not kept: the next scrape tries again.
      this.figures.catch(() => (this.figuresReadAt = 0));
    }
    return this.figures;
  }
}
