import { createHmac } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import { inUnitOfWork } from '../../db/unit-of-work.js';
import type { Clock } from '../../shared/clock.js';
import { BadDataError, ServiceUnavailableError, TooManyRequestsError, type ErrorDetail } from '../../shared/errors.js';
import { SYSTEM_ACTOR } from '../access/actor.js';
import { contextValue, type EvaluationContext } from '../evaluation/context.js';
import { type Engine, engineFor, type FlagConfiguration } from '../evaluation/engine.js';
import { serverKey } from '../settings/server-keys.js';
import { followStrategyChanges, runningExperiments, type Experiment } from './experiments.js';
import { trackedEventNames } from './metrics.js';

/**
 * What SDKs send about experiments: exposures (a unit saw a variant) and tracked events (a unit did something).
 * A unit is the value of the experiment's stickiness field, kept only as a keyed hash (HMAC-SHA-256 with a key the
 * instances share, 16 bytes), so the tables hold no user ids. Exposures are re-evaluated with Vexil's own engine:
 * the variant recorded is the one the experiment's strategy gives the unit, and a reported variant that differs is
 * counted as a mismatch. A unit seen in two variants is marked -1 and left out of the analysis, and counted.
 */

export interface ExposureInput {
  featureName: string;
  variant?: string;
  context: Record<string, unknown>;
  timestamp?: string;
}

export interface TrackInput {
  event: string;
  context?: Record<string, unknown>;
  /** OpenFeature's targeting key: the user id, as OFREP reads it. */
  targetingKey?: string;
  value?: number;
  timestamp?: string;
}

/** Who sends: the SDK token's environment and projects, and the token for its rate. */
export interface IngestScope {
  environment: string;
  projects: readonly string[] | '*';
  tokenKey: string;
}

/** What became of a batch: how many were kept, and why the others were not. */
export interface IngestReport {
  accepted: number;
  dropped: Record<string, number>;
}

export const EXPOSURE_SOURCE = { sdk: 1, server: 2 } as const;

/** What records the assignments of evaluations answered in-process: the server's ingest, or an edge's forwarder. */
export interface AssignmentRecorder {
  assigned(scope: Omit<IngestScope, 'tokenKey'>, configuration: FlagConfiguration, context: EvaluationContext, onlyFlag?: string): void;
}

/** A running experiment as an edge needs it to forward assignments: the flag, its strategy and what units stick to. */
export interface RunningExperimentView {
  project: string;
  featureName: string;
  strategyId: string;
  stickiness: string;
}

/** How far ahead of this server's clock a timestamp may be (clocks drift); later is a 400. */
const CLOCK_SKEW_MS = 5 * 60_000;
/** Tracked events older than this are refused: the analysis reads at most a window and a CUPED lookback back. */
const OLDEST_EVENT_MS = 90 * 24 * 3_600_000;
const MINUTE_MS = 60_000;
/** The unit fields every tracked event is kept under, besides the experiments' own stickiness fields. */
const ALWAYS_KEPT_UNIT_FIELDS = ['userId'];

export interface IngestLimits {
  /** Exposures and tracked events one token may send per minute, together. */
  eventsPerMinutePerToken: number;
  /** On the embedded database, the tracked events kept at most (it carries small experiments only). */
  embeddedTrackedEventCap?: number;
}

const hashPrefix = (field: string) => `${field}\u0000`;

/** Units remembered as already assigned (Vexil's own evaluations), so repeats cost no hash; cleared past this. */
const ASSIGNED_REMEMBERED = 200_000;
/** Assignments held for the next write at most; past it new ones are dropped (they are seen again next request). */
const ASSIGNMENTS_HELD = 50_000;
const ASSIGNMENT_FLUSH_MS = 1000;

export class ExperimentIngest implements AssignmentRecorder {
  private key: Promise<Buffer> | undefined;
  private loadedKey: Buffer | undefined;
  private readonly windows = new Map<string, { startedAt: number; count: number }>();
  private trackedEventCount: Promise<number> | undefined;
  /** Running experiments by environment, for the assignments of Vexil's own evaluations; reloaded after a change. */
  private running: Map<string, Experiment[]> | undefined;
  private runningStale = true;
  private loadingRunning: Promise<void> | undefined;
  private readonly assignedUnits = new Set<string>();
  private pendingAssignments: ExposureRow[] = [];
  private flushing: Promise<void> | undefined;
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly limits: IngestLimits,
  ) {}

  /** The unit's keyed hash: the same for an exposure and a tracked event of the same field and value. */
  async unitHash(field: string, value: string): Promise<Buffer> {
    return this.hashWith(await this.loadKey(), field, value);
  }

  private loadKey(): Promise<Buffer> {
    this.key ??= serverKey(this.db, 'experiment-units', this.clock.now()).then(
      (key) => (this.loadedKey = key),
      (error: unknown) => {
        this.key = undefined;
        throw error;
      },
    );
    return this.key;
  }

  private hashWith(key: Buffer, field: string, value: string): Buffer {
    return createHmac('sha256', key)
      .update(hashPrefix(field) + value)
      .digest()
      .subarray(0, 16);
  }

  /**
   * Records the variant Vexil's own evaluation (frontend API, OFREP) gives the context for each running experiment
   * of the environment the caller may see (of `onlyFlag`, when one flag was evaluated): an assignment, counted once
   * per unit, with no code in the application. Never waits: what it needs and has not loaded yet is loaded for the
   * next request, and the writes happen every second.
   */
  assigned(scope: Omit<IngestScope, 'tokenKey'>, configuration: FlagConfiguration, context: EvaluationContext, onlyFlag?: string): void {
    if (this.runningStale) void this.loadRunning();
    const experiments = this.running?.get(scope.environment);
    if (!experiments || experiments.length === 0) return;
    const key = this.loadedKey;
    if (!key) {
      void this.loadKey().catch(() => undefined);
      return;
    }
    const engine = engineFor(configuration);
    const now = this.clock.now();
    for (const experiment of experiments) {
      if (onlyFlag !== undefined && experiment.featureName !== onlyFlag) continue;
      if (scope.projects !== '*' && !scope.projects.includes(experiment.project)) continue;
      const phase = experiment.phases.at(-1);
      const flag = engine.flag(experiment.featureName);
      if (!phase || !flag) continue;
      const unit = contextValue({ ...context, environment: scope.environment }, phase.stickiness);
      if (unit === undefined || unit === '') continue;
      const remembered = `${experiment.id}:${phase.phase}:${unit}`;
      if (this.assignedUnits.has(remembered)) continue;
      const outcome = engine.evaluate(flag, context);
      if (outcome.strategy < 0 || flag.strategies[outcome.strategy]?.source.id !== experiment.strategyId) continue;
      const variant = phase.variants.findIndex((candidate) => candidate.name === outcome.variant.name);
      if (variant < 0 || this.pendingAssignments.length >= ASSIGNMENTS_HELD) continue;
      if (this.assignedUnits.size >= ASSIGNED_REMEMBERED) this.assignedUnits.clear();
      this.assignedUnits.add(remembered);
      this.pendingAssignments.push({
        experimentId: experiment.id,
        phase: phase.phase,
        unitHash: this.hashWith(key, phase.stickiness, unit),
        variant,
        firstAt: now,
      });
    }
  }

  /** The running experiments of the environment a token may see, for an edge that forwards its assignments. */
  async runningIn(scope: Omit<IngestScope, 'tokenKey'>): Promise<RunningExperimentView[]> {
    return (await runningExperiments(this.db))
      .filter((experiment) => experiment.environment === scope.environment)
      .filter((experiment) => scope.projects === '*' || scope.projects.includes(experiment.project))
      .flatMap((experiment) => {
        const phase = experiment.phases.at(-1);
        return phase && experiment.strategyId
          ? [
              {
                project: experiment.project,
                featureName: experiment.featureName,
                strategyId: experiment.strategyId,
                stickiness: phase.stickiness,
              },
            ]
          : [];
      });
  }

  /** A change was committed somewhere: the running experiments are read again before the next assignment. */
  changed(): void {
    this.runningStale = true;
  }

  private loadRunning(): Promise<void> {
    this.loadingRunning ??= (async () => {
      this.runningStale = false;
      const byEnvironment = new Map<string, Experiment[]>();
      for (const experiment of await runningExperiments(this.db)) {
        byEnvironment.set(experiment.environment, [...(byEnvironment.get(experiment.environment) ?? []), experiment]);
      }
      this.running = byEnvironment;
    })()
      .catch(() => {
        this.runningStale = true;
      })
      .finally(() => {
        this.loadingRunning = undefined;
      });
    return this.loadingRunning;
  }

  /** Starts writing the assignments held, every second. */
  start(onFailure: (error: unknown) => void): void {
    this.timer ??= setInterval(() => {
      this.flushAssignments().catch(onFailure);
    }, ASSIGNMENT_FLUSH_MS);
  }

  /** Writes the assignments held (one statement); a failed write gives them back for the next try. */
  flushAssignments(): Promise<void> {
    this.flushing ??= (async () => {
      const rows = this.pendingAssignments;
      if (rows.length === 0) return;
      this.pendingAssignments = [];
      try {
        await inUnitOfWork(
          { db: this.db, clock: this.clock },
          SYSTEM_ACTOR,
          (uow) => writeExposures(uow.tx, rows, EXPOSURE_SOURCE.server),
          {
            inMaintenance: 'SDK reports',
          },
        );
      } catch (error) {
        this.pendingAssignments = [...rows, ...this.pendingAssignments].slice(0, ASSIGNMENTS_HELD);
        throw error;
      }
    })().finally(() => {
      this.flushing = undefined;
    });
    return this.flushing;
  }

  /** Stops the timer and writes what is held. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.flushAssignments().catch(() => undefined);
  }

  /** Counts `count` more of the token's sends this minute, or refuses them with a 429. */
  private admit(tokenKey: string, count: number): void {
    const now = this.clock.now().getTime();
    let window = this.windows.get(tokenKey);
    if (!window || now - window.startedAt >= MINUTE_MS || now < window.startedAt) {
      if (this.windows.size > 10_000) this.windows.clear();
      window = { startedAt: now, count: 0 };
      this.windows.set(tokenKey, window);
    }
    if (window.count + count > this.limits.eventsPerMinutePerToken) {
      throw new TooManyRequestsError(
        `This token sent ${window.count} exposures and tracked events in the last minute; at most ${this.limits.eventsPerMinutePerToken} are taken (EXPERIMENT_EVENTS_PER_MINUTE)`,
        Math.max(1, Math.ceil((window.startedAt + MINUTE_MS - now) / 1000)),
      );
    }
    window.count += count;
  }

  /** Every timestamp of a batch is checked before anything is kept: one wrong one refuses the batch. */
  private instants(items: Array<{ timestamp?: string }>, path: string, oldestMs: number): Date[] {
    const now = this.clock.now().getTime();
    const details: ErrorDetail[] = [];
    const instants = items.map((item, index) => {
      if (item.timestamp === undefined) return new Date(now);
      const at = Date.parse(item.timestamp);
      if (Number.isNaN(at))
        details.push({ path: `${path}/${index}/timestamp`, message: `must be a date-time (got ${JSON.stringify(item.timestamp)})` });
      else if (at > now + CLOCK_SKEW_MS)
        details.push({ path: `${path}/${index}/timestamp`, message: `${item.timestamp} is in the future` });
      else if (at < now - oldestMs)
        details.push({ path: `${path}/${index}/timestamp`, message: `${item.timestamp} is older than Vexil keeps` });
      return new Date(at);
    });
    if (details.length > 0) throw new BadDataError(`A timestamp is wrong: ${details[0]!.message}`, details);
    return instants;
  }

  /**
   * Exposures an SDK that evaluates locally reports. Each is re-evaluated in the token's environment: kept when the
   * experiment's strategy gave the variant (by its bucket), with the server's variant; dropped, and counted, when
   * the flag has no running experiment there, the context lacks the unit, or another strategy answered.
   */
  async recordExposures(scope: IngestScope, configuration: FlagConfiguration, inputs: ExposureInput[]): Promise<IngestReport> {
    const instants = this.instants(inputs, '/body/exposures', OLDEST_EVENT_MS);
    this.admit(scope.tokenKey, inputs.length);
    const engine = engineFor(configuration);
    const experiments = await this.experimentsIn(scope, engine);
    const dropped: Record<string, number> = {};
    const drop = (reason: string) => (dropped[reason] = (dropped[reason] ?? 0) + 1);
    const kept: ExposureRow[] = [];
    const mismatches = new Map<string, { experimentId: number; phase: number; count: number }>();
    for (const [index, input] of inputs.entries()) {
      const experiment = experiments.get(input.featureName);
      const flag = engine.flag(input.featureName);
      const phase = experiment?.phases.at(-1);
      if (!experiment || !flag || !phase) {
        drop('no running experiment');
        continue;
      }
      const at = instants[index]!;
      if (at < new Date(phase.startedAt)) {
        drop('before the phase');
        continue;
      }
      const context = { ...(input.context as EvaluationContext), environment: scope.environment };
      const unit = contextValue(context, phase.stickiness);
      if (unit === undefined || unit === '') {
        drop('no unit');
        continue;
      }
      const outcome = engine.evaluate(flag, context);
      const strategy = outcome.strategy >= 0 ? flag.strategies[outcome.strategy]?.source : undefined;
      const variant = phase.variants.findIndex((candidate) => candidate.name === outcome.variant.name);
      if (strategy?.id !== experiment.strategyId || variant < 0) {
        drop('not assigned by the experiment');
        continue;
      }
      if (input.variant !== undefined && input.variant !== outcome.variant.name) {
        const key = `${experiment.id}:${phase.phase}`;
        const counted = mismatches.get(key) ?? { experimentId: experiment.id, phase: phase.phase, count: 0 };
        counted.count++;
        mismatches.set(key, counted);
      }
      kept.push({
        experimentId: experiment.id,
        phase: phase.phase,
        unitHash: await this.unitHash(phase.stickiness, unit),
        variant,
        firstAt: at,
      });
    }
    await inUnitOfWork(
      { db: this.db, clock: this.clock },
      SYSTEM_ACTOR,
      async (uow) => {
        await writeExposures(uow.tx, kept, EXPOSURE_SOURCE.sdk);
        for (const { experimentId, phase, count } of mismatches.values()) {
          await uow.tx
            .updateTable('experiment_phases')
            .set({ variant_mismatches: sql`variant_mismatches + ${count}` })
            .where('experiment_id', '=', experimentId)
            .where('phase', '=', phase)
            .execute();
        }
      },
      { inMaintenance: 'SDK reports' },
    );
    return { accepted: inputs.length - Object.values(dropped).reduce((sum, n) => sum + n, 0), dropped };
  }

  /**
   * The running experiments the token may see in its environment, by flag. One whose strategy no longer buckets as
   * its phase froze (the weights changed) moves to a new phase first, so exposures count where they belong.
   */
  private async experimentsIn(scope: IngestScope, engine: Engine): Promise<Map<string, Experiment>> {
    const visible = async () =>
      (await runningExperiments(this.db))
        .filter((experiment) => experiment.environment === scope.environment)
        .filter((experiment) => scope.projects === '*' || scope.projects.includes(experiment.project));
    let running = await visible();
    const moved = running.filter((experiment) => {
      const phase = experiment.phases.at(-1);
      const strategy = engine
        .flag(experiment.featureName)
        ?.strategies.find((candidate) => candidate.source.id === experiment.strategyId)?.source;
      if (!phase || !strategy) return false;
      const variants = strategy.variants.map((variant) => ({ name: variant.name, weight: variant.weight }));
      const stickiness = strategy.variants[0]?.stickiness || strategy.parameters.stickiness || 'default';
      const groupId = strategy.parameters.groupId || experiment.featureName;
      return JSON.stringify(variants) !== JSON.stringify(phase.variants) || stickiness !== phase.stickiness || groupId !== phase.groupId;
    });
    if (moved.length > 0) {
      for (const experiment of moved) {
        await inUnitOfWork({ db: this.db, clock: this.clock }, SYSTEM_ACTOR, (uow) => followStrategyChanges(uow, experiment.id), {
          inMaintenance: 'SDK reports',
        });
      }
      running = await visible();
    }
    return new Map(running.map((experiment) => [experiment.featureName, experiment]));
  }

  /**
   * Tracked events (OpenFeature's `track()`): kept when their name is an event a metric of the environment measures
   * (others are counted and dropped), under the unit fields experiments of the environment stick to.
   */
  async track(scope: IngestScope, inputs: TrackInput[]): Promise<IngestReport> {
    const instants = this.instants(inputs, '/body/events', OLDEST_EVENT_MS);
    this.admit(scope.tokenKey, inputs.length);
    const [known, fields] = await Promise.all([trackedEventNames(this.db, scope.environment), this.unitFields(scope.environment)]);
    const dropped: Record<string, number> = {};
    const unknown = new Map<string, number>();
    const rows: Array<{ environment: string; event: string; unit_hash: Buffer; at: Date; value: number }> = [];
    let accepted = 0;
    for (const [index, input] of inputs.entries()) {
      if (!known.has(input.event)) {
        unknown.set(input.event, (unknown.get(input.event) ?? 0) + 1);
        dropped['unknown event'] = (dropped['unknown event'] ?? 0) + 1;
        continue;
      }
      const context = (input.context ?? {}) as EvaluationContext;
      const units = fields.flatMap((field) => {
        const value = contextValue(context, field) ?? (field === 'userId' ? input.targetingKey : undefined);
        return value === undefined || value === '' ? [] : [{ field, value }];
      });
      if (units.length === 0) {
        dropped['no unit'] = (dropped['no unit'] ?? 0) + 1;
        continue;
      }
      accepted++;
      for (const { field, value } of units) {
        rows.push({
          environment: scope.environment,
          event: input.event,
          unit_hash: await this.unitHash(field, value),
          at: instants[index]!,
          value: input.value ?? 1,
        });
      }
    }
    if (rows.length > 0) await this.assertRoom(rows.length);
    await inUnitOfWork(
      { db: this.db, clock: this.clock },
      SYSTEM_ACTOR,
      async (uow) => {
        if (rows.length > 0) await uow.tx.insertInto('tracked_events').values(rows).execute();
        for (const [event, count] of [...unknown].sort(([a], [b]) => (a < b ? -1 : 1))) {
          await uow.tx
            .insertInto('tracked_event_drops')
            .values({ environment: scope.environment, event, dropped: count, last_seen_at: uow.now })
            .onConflict((oc) =>
              oc
                .columns(['environment', 'event'])
                .doUpdateSet({ dropped: sql`tracked_event_drops.dropped + ${count}`, last_seen_at: uow.now }),
            )
            .execute();
        }
      },
      { inMaintenance: 'SDK reports' },
    );
    if (this.trackedEventCount) this.trackedEventCount = this.trackedEventCount.then((count) => count + rows.length);
    return { accepted, dropped };
  }

  /**
   * The fields units are identified by in the environment: the user id, and what its drafted and running
   * experiments' strategies stick to (a draft's too, so the days before it starts feed CUPED).
   */
  private async unitFields(environment: string): Promise<string[]> {
    const rows = await this.db
      .selectFrom('experiments as e')
      .innerJoin('feature_strategies as s', 's.id', 'e.strategy_id')
      .select(['s.variants', 's.parameters'])
      .where('e.environment', '=', environment)
      .where('e.status', 'in', ['draft', 'running'])
      .execute();
    const stickiness = rows.map((row) => {
      const variants = row.variants as Array<{ stickiness?: string }>;
      return variants[0]?.stickiness || (row.parameters as Record<string, string>).stickiness || 'default';
    });
    return [...new Set([...ALWAYS_KEPT_UNIT_FIELDS, ...stickiness.filter((field) => field !== 'default' && field !== 'random')])];
  }

  /** On the embedded database, refuses events past its cap with the way out: PostgreSQL. */
  private async assertRoom(adding: number): Promise<void> {
    const cap = this.limits.embeddedTrackedEventCap;
    if (cap === undefined) return;
    this.trackedEventCount ??= this.db
      .selectFrom('tracked_events')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .executeTakeFirstOrThrow()
      .then((row) => Number(row.count));
    const held = await this.trackedEventCount;
    if (held + adding > cap) {
      throw new ServiceUnavailableError(
        `The embedded database keeps at most ${cap} tracked events and holds ${held}: move Vexil to PostgreSQL (DATABASE_URL) for experiments this large`,
      );
    }
  }
}

/** Forgets tracked events older than the retention; returns how many. */
export async function forgetTrackedEvents(db: Db, now: Date, retentionDays: number): Promise<number> {
  const result = await db
    .deleteFrom('tracked_events')
    .where('at', '<', new Date(now.getTime() - retentionDays * 24 * 3_600_000))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** A unit's exposure as kept: one row per experiment, phase and unit. */
interface ExposureRow {
  experimentId: number;
  phase: number;
  unitHash: Buffer;
  variant: number;
  firstAt: Date;
}

/**
 * Keeps exposures, one row per experiment, phase and unit: a repeat changes nothing, an earlier sighting moves
 * `first_at`, another variant marks the unit -1 (seen in two, left out of the analysis).
 */
async function writeExposures(tx: Db, rows: ExposureRow[], source: number): Promise<void> {
  // One statement may not touch a row twice: the rows of one unit are merged first, as the table would merge them.
  const merged = new Map<string, ExposureRow>();
  for (const row of rows) {
    const key = `${row.experimentId}:${row.phase}:${row.unitHash.toString('hex')}`;
    const seen = merged.get(key);
    if (!seen) merged.set(key, { ...row });
    else {
      if (seen.variant !== row.variant) seen.variant = -1;
      if (row.firstAt < seen.firstAt) seen.firstAt = row.firstAt;
    }
  }
  if (merged.size === 0) return;
  await tx
    .insertInto('experiment_exposures')
    .values(
      [...merged.values()].map((row) => ({
        experiment_id: row.experimentId,
        phase: row.phase,
        unit_hash: row.unitHash,
        variant: row.variant,
        first_at: row.firstAt,
        source,
      })),
    )
    .onConflict((oc) =>
      oc
        .columns(['experiment_id', 'phase', 'unit_hash'])
        .doUpdateSet({
          first_at: sql`LEAST(experiment_exposures.first_at, excluded.first_at)`,
          variant: sql`CASE WHEN experiment_exposures.variant <> excluded.variant THEN -1 ELSE experiment_exposures.variant END`,
        })
        .where((eb) =>
          eb.or([
            eb(sql.ref('excluded.first_at'), '<', sql.ref('experiment_exposures.first_at')),
            eb(sql.ref('excluded.variant'), '<>', sql.ref('experiment_exposures.variant')),
          ]),
        ),
    )
    .execute();
}
