import type { Db } from '../../db/database.js';
import type { Clock } from '../../shared/clock.js';
import type { SdkToken } from '../access/authenticate.js';
import { recordClientMetrics } from './client-metrics.js';

/**
 * Evaluations Vexil made itself (OpenFeature's OFREP), counted in memory and written by a worker every few seconds
 * as the usage report an SDK would have sent, under one application name: a write per request would put the
 * database on the evaluation path. Memory is bounded by the tokens in use and the flags they see.
 */
export class UsageTally {
  private readonly counts = new Map<string, { token: SdkToken; toggles: Map<string, { yes: number; no: number }> }>();
  private started: Date;

  constructor(
    private readonly deps: { db: Db; clock: Clock },
    private readonly appName: string,
  ) {
    this.started = deps.clock.now();
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

  /** Writes what was counted since the last write. */
  async flush(): Promise<void> {
    if (this.counts.size === 0) return;
    const now = this.deps.clock.now();
    const batches = [...this.counts.values()];
    const start = this.started;
    this.counts.clear();
    this.started = now;
    for (const { token, toggles } of batches) {
      const bucket = { start: start.toISOString(), stop: now.toISOString(), toggles: Object.fromEntries(toggles) };
      await this.deps.db.transaction().execute((tx) => recordClientMetrics(tx, token, { appName: this.appName, bucket }, now));
    }
  }
}
