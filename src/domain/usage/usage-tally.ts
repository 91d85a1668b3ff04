import type { SdkToken } from '../access/authenticate.js';
import type { ClientMetrics } from './client-metrics.js';

/**
 * Evaluations Vexil made itself (OpenFeature's OFREP), counted in memory and written by a worker every few seconds
 * as the usage report an SDK would have sent, under one application name: a write per request would put the
 * database on the evaluation path. Memory is bounded by the tokens in use and the flags they see.
 */
export class UsageTally {
  private readonly counts = new Map<string, { token: SdkToken; toggles: Map<string, { yes: number; no: number }> }>();
  private started: Date;

  constructor(
    private readonly appName: string,
    now: Date,
  ) {
    this.started = now;
  }

  count(token: SdkToken, evaluations: Array<{ key: string; enabled: boolean }>): void {
    const key = String(token.id);
    let entry = this.counts.get(key);
    if (!entry) {
      entry = { token, toggles: new Map() };
      this.counts.set(key, entry);
    }
    for (const { key: flag, enabled } of evaluations) {
      const toggle = entry.toggles.get(flag) ?? { yes: 0, no: 0 };
      if (enabled) toggle.yes += 1;
      else toggle.no += 1;
      entry.toggles.set(flag, toggle);
    }
  }

  /** What was counted since the last call, as one usage report per token, and starts counting anew. */
  takeReports(now: Date): Array<{ token: SdkToken; report: ClientMetrics }> {
    const start = this.started;
    const entries = [...this.counts.values()];
    this.counts.clear();
    this.started = now;
    return entries.map(({ token, toggles }) => ({
      token,
      report: {
        appName: this.appName,
        bucket: { start: start.toISOString(), stop: now.toISOString(), toggles: Object.fromEntries(toggles) },
      },
    }));
  }
}
