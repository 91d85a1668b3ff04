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

  /** Counts the evaluations one request makes for a token, one call per flag evaluated. */
  counter(token: SdkToken): (flag: string, enabled: boolean) => void {
    const key = String(token.id);
    let entry = this.counts.get(key);
    if (!entry) {
      entry = { token, toggles: new Map() };
      this.counts.set(key, entry);
    }
    const { toggles } = entry;
    return (flag, enabled) => {
      let toggle = toggles.get(flag);
      if (!toggle) {
        toggle = { yes: 0, no: 0 };
        toggles.set(flag, toggle);
      }
      if (enabled) toggle.yes += 1;
      else toggle.no += 1;
    };
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
