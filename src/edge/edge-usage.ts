import type { ClientMetrics } from '../domain/usage/sdk-report-checks.js';
import type { BulkMetrics } from './upstream-client.js';

type MetricEntry = BulkMetrics['metrics'][number];
type Registration = BulkMetrics['applications'][number];

/** Counts held for the upstream at most (flag, application, environment and hour each): a bound on memory while it is away. */
export const MAX_HELD_METRICS = 50_000;
/** Registrations held at most (application, instance and environment each). */
const MAX_HELD_REGISTRATIONS = 10_000;
/** The upstream takes counts at most two days old; older ones are dropped rather than refused with the rest. */
const MAX_AGE_MS = 47 * 3_600_000;

const hourOf = (at: string) => `${new Date(at).toISOString().slice(0, 13)}:00:00.000Z`;

/**
 * What SDKs report to the edge (usage and registrations, from server-side and frontend SDKs, and what the edge
 * evaluated itself), added up per environment, flag, application and hour, and sent upstream in bulk on the
 * metrics interval. A part is forgotten only once the upstream took it, so counts are neither lost while it is
 * away (within the bound) nor sent twice.
 */
export class EdgeUsage {
  private readonly metrics = new Map<string, MetricEntry>();
  private readonly registrations = new Map<string, Registration>();
  /** Counts dropped because the bound was reached, for the metrics. */
  dropped = 0;

  get heldMetrics(): number {
    return this.metrics.size;
  }

  report(environment: string, report: Pick<ClientMetrics, 'appName' | 'bucket'>): void {
    const timestamp = hourOf(report.bucket.stop);
    for (const [featureName, counts] of Object.entries(report.bucket.toggles)) {
      this.add({
        featureName,
        appName: report.appName,
        environment,
        timestamp,
        yes: counts.yes,
        no: counts.no,
        variants: counts.variants ?? {},
      });
    }
  }

  /** Counts another edge sent in bulk (edges in a chain). */
  bulk(entries: MetricEntry[]): void {
    for (const entry of entries) this.add({ ...entry, timestamp: hourOf(entry.timestamp), variants: entry.variants ?? {} });
  }

  register(registration: Registration & { appName: string; environment: string }): void {
    const key = `${registration.environment}\u0000${registration.appName}\u0000${String(registration.instanceId ?? 'default')}`;
    if (!this.registrations.has(key) && this.registrations.size >= MAX_HELD_REGISTRATIONS) return;
    this.registrations.set(key, registration);
  }

  private add(entry: MetricEntry): void {
    const key = `${entry.environment}\u0000${entry.appName}\u0000${entry.featureName}\u0000${entry.timestamp}`;
    const held = this.metrics.get(key);
    if (!held) {
      if (this.metrics.size >= MAX_HELD_METRICS) {
        this.dropped += entry.yes + entry.no;
        return;
      }
      this.metrics.set(key, { ...entry, variants: { ...entry.variants } });
      return;
    }
    held.yes += entry.yes;
    held.no += entry.no;
    for (const [variant, count] of Object.entries(entry.variants)) held.variants[variant] = (held.variants[variant] ?? 0) + count;
  }

  /** The environments with something to send. */
  environments(): string[] {
    return [
      ...new Set(
        [...this.metrics.values()]
          .map((entry) => entry.environment)
          .concat([...this.registrations.values()].map((r) => String(r.environment))),
      ),
    ];
  }

  /**
   * Sends what is held for an environment through `send`; forgotten when it resolves, kept (and added to) when it
   * throws. Counts older than the upstream takes are dropped first.
   */
  async flush(environment: string, now: Date, send: (bulk: BulkMetrics) => Promise<void>): Promise<void> {
    const metricKeys = [...this.metrics].filter(([, entry]) => entry.environment === environment).map(([key]) => key);
    const tooOld = now.getTime() - MAX_AGE_MS;
    const sending: MetricEntry[] = [];
    for (const key of metricKeys) {
      const entry = this.metrics.get(key)!;
      if (Date.parse(entry.timestamp) < tooOld) this.metrics.delete(key);
      else sending.push({ ...entry, variants: { ...entry.variants } });
    }
    const registrationKeys = [...this.registrations]
      .filter(([, registration]) => registration.environment === environment)
      .map(([key]) => key);
    const applications = registrationKeys.map((key) => this.registrations.get(key)!);
    if (sending.length === 0 && applications.length === 0) return;
    await send({ applications, metrics: sending });
    // What arrived while sending was added to the entries sent: take away only what was sent.
    for (const sent of sending) {
      const key = `${sent.environment}\u0000${sent.appName}\u0000${sent.featureName}\u0000${sent.timestamp}`;
      const held = this.metrics.get(key);
      if (!held) continue;
      held.yes -= sent.yes;
      held.no -= sent.no;
      for (const [variant, count] of Object.entries(sent.variants)) held.variants[variant] = (held.variants[variant] ?? 0) - count;
      if (held.yes === 0 && held.no === 0) this.metrics.delete(key);
    }
    for (const key of registrationKeys) this.registrations.delete(key);
  }
}
