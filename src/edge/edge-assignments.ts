import type { EvaluationContext } from '../domain/evaluation/context.js';
import { contextValue } from '../domain/evaluation/context.js';
import { engineFor, type FlagConfiguration } from '../domain/evaluation/engine.js';
import type { AssignmentRecorder, IngestScope, RunningExperimentView } from '../domain/experiments/ingest.js';
import { UpstreamRefused, type UpstreamClient } from './upstream-client.js';

/** Units remembered as forwarded, per edge; past this the memory starts anew (a unit is then sent once more). */
const REMEMBERED = 100_000;
/** Exposures held for the next send at most; past it new ones wait for a request after the send. */
const HELD = 20_000;
const BATCH = 1000;
/** While SDKs ask, which flags are in an experiment is asked of the upstream again when the answer is this old. */
const STALE_AFTER_MS = 5000;

/** Sent without a time: the upstream's clock is the one its phases started by, and two seconds are nothing to it. */
interface Held {
  featureName: string;
  context: Record<string, unknown>;
}

/**
 * Vexil Edge's part in experiments: the frontend API and OFREP evaluate at the edge, so the edge forwards the
 * assignments of the flags in a running experiment to the upstream, which evaluates them again and keeps them, once per
 * unit. Only the fields the experiment's strategy reads (its stickiness, its constraints' and segments' fields) leave
 * the edge: the rest of the context a browser sent stays here. Which flags are in an experiment is asked of the upstream
 * after each change it streams, on the refresh interval, and every 5 s while SDKs ask; an upstream that does not know
 * (Unleash) is not asked again.
 */
export class EdgeAssignments implements AssignmentRecorder {
  private readonly running = new Map<string, RunningExperimentView[]>();
  private readonly forwarded = new Set<string>();
  private readonly held = new Map<string, Held[]>();
  private upstreamKnows = true;
  private askedAt = 0;
  private asking: Promise<void> | undefined;

  constructor(
    private readonly upstream: UpstreamClient,
    /** A client token of the environment that the edge follows, to send with. */
    private readonly secretFor: (environment: string) => string | undefined,
    private readonly environments: () => string[],
  ) {}

  /** Asks the upstream which flags are in a running experiment, in each environment the edge follows. */
  refresh(): Promise<void> {
    this.asking ??= this.ask().finally(() => {
      this.asking = undefined;
    });
    return this.asking;
  }

  private async ask(): Promise<void> {
    if (!this.upstreamKnows) return;
    this.askedAt = Date.now();
    for (const environment of this.environments()) {
      const secret = this.secretFor(environment);
      if (!secret) continue;
      try {
        this.running.set(environment, await this.upstream.runningExperiments(secret));
      } catch (error) {
        // An Unleash upstream has no experiments to forward to (it does not know the path); a token refused here is
        // that environment's problem, asked again next time.
        if (error instanceof UpstreamRefused && error.statusCode === 404) {
          this.upstreamKnows = false;
          return;
        }
        if (error instanceof UpstreamRefused) continue;
        throw error;
      }
    }
  }

  assigned(scope: Omit<IngestScope, 'tokenKey'>, configuration: FlagConfiguration, context: EvaluationContext, onlyFlag?: string): void {
    // An experiment starting changes no flag, so no change tells the edge of it: while SDKs ask, it asks every 5 s.
    if (this.upstreamKnows && Date.now() - this.askedAt > STALE_AFTER_MS) void this.refresh().catch(() => undefined);
    const experiments = this.running.get(scope.environment);
    if (!experiments || experiments.length === 0) return;
    const engine = engineFor(configuration);
    for (const experiment of experiments) {
      if (onlyFlag !== undefined && experiment.featureName !== onlyFlag) continue;
      if (scope.projects !== '*' && !scope.projects.includes(experiment.project)) continue;
      const unit = contextValue(context, experiment.stickiness);
      const flag = engine.flag(experiment.featureName);
      if (unit === undefined || unit === '' || !flag) continue;
      const key = `${scope.environment}:${experiment.featureName}:${unit}`;
      if (this.forwarded.has(key)) continue;
      const strategy = flag.strategies.find((candidate) => candidate.source.id === experiment.strategyId);
      if (!strategy?.isOn(context)) continue;
      const list = this.held.get(scope.environment) ?? [];
      if (list.length >= HELD) continue;
      if (this.forwarded.size >= REMEMBERED) this.forwarded.clear();
      this.forwarded.add(key);
      // What the strategy reads, and nothing else: its variants' stickiness, its constraints' and its segments' fields.
      const fields = new Set([experiment.stickiness, ...(strategy.source.constraints ?? []).map((constraint) => constraint.contextName)]);
      for (const segment of strategy.segments)
        for (const constraint of segment.segment?.constraints ?? []) fields.add(constraint.contextName);
      const forwarded: Record<string, unknown> = {};
      const properties: Record<string, unknown> = {};
      for (const field of fields) {
        const value = contextValue(context, field);
        if (value === undefined) continue;
        if (field in context) forwarded[field] = value;
        else properties[field] = value;
      }
      if (Object.keys(properties).length > 0) forwarded.properties = properties;
      list.push({ featureName: experiment.featureName, context: forwarded });
      this.held.set(scope.environment, list);
    }
  }

  /** Sends what is held, each environment with its own token; what the upstream cannot take now is tried again. */
  async send(): Promise<void> {
    for (const [environment, list] of this.held) {
      const secret = this.secretFor(environment);
      if (!secret || list.length === 0) continue;
      const batch = list.splice(0, BATCH);
      try {
        await this.upstream.sendExposures(secret, batch);
      } catch (error) {
        if (error instanceof UpstreamRefused) continue;
        list.unshift(...batch);
        throw error;
      }
    }
  }
}
