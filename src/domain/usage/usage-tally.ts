import type { SdkToken } from '../access/authenticate.js';
import type { ClientMetrics } from './sdk-report-checks.js';

/**
 * Evaluations Vexil made itself (OpenFeature's OFREP), counted in memory and written by a worker every few seconds
 * as the usage report an SDK would have sent, under one application name: a write per request would put the
 * database on the evaluation path. Memory is bounded by the tokens in use and the flags they see.
 */
interface TokenCounts {
  token: SdkToken;
  toggles: Map<string, { yes: number; no: number }>;
  /** Lists of flags evaluated off together (those off in the environment), and how many times: added up when reported. */
  offLists: Map<readonly string[], number>;
}

/** Counts the evaluations of one request. */
export interface EvaluationCounter {
  evaluated(flag: string, enabled: boolean): void;
  /** Every flag of the list evaluated off once; the list is kept as it is until the next report. */
  allOff(flags: readonly string[]): void;
}

export class UsageTally {
  private readonly counts = new Map<string, TokenCounts>();
  private started: Date;

  constructor(
    private readonly appName: string,
    now: Date,
  ) {
    this.started = now;
  }

  /** Counts the evaluations one request makes for a token. */
  counter(token: SdkToken): EvaluationCounter {
    const key = String(token.id);
    let entry = this.counts.get(key);
    if (!entry) {
      entry = { token, toggles: new Map(), offLists: new Map() };
      this.counts.set(key, entry);
    }
    const { toggles, offLists } = entry;
    return {
      evaluated: (flag, enabled) => {
        const toggle = counted(toggles, flag);
        if (enabled) toggle.yes += 1;
        else toggle.no += 1;
      },
      allOff: (flags) => {
        offLists.set(flags, (offLists.get(flags) ?? 0) + 1);
      },
    };
  }

  /** What was counted since the last call, as one usage report per token, and starts counting anew. */
  takeReports(now: Date): Array<{ token: SdkToken; report: ClientMetrics }> {
    const start = this.started;
    const entries = [...this.counts.values()];
    this.counts.clear();
    this.started = now;
    return entries.map(({ token, toggles, offLists }) => {
      for (const [flags, times] of offLists) for (const flag of flags) counted(toggles, flag).no += times;
      return {
        token,
        report: {
          appName: this.appName,
          bucket: { start: start.toISOString(), stop: now.toISOString(), toggles: Object.fromEntries(toggles) },
        },
      };
    });
  }
}

function counted(toggles: Map<string, { yes: number; no: number }>, flag: string): { yes: number; no: number } {
  let toggle = toggles.get(flag);
  if (!toggle) {
    toggle = { yes: 0, no: 0 };
    toggles.set(flag, toggle);
  }
  return toggle;
}
