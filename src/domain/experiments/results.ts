import { CompiledQuery, sql } from 'kysely';
import type { Db } from '../../db/database.js';
import { boundedRead, type ReadBounds } from '../../db/bounded-read.js';
import { inUnitOfWork, type UnitOfWork } from '../../db/unit-of-work.js';
import { SYSTEM_ACTOR } from '../access/actor.js';
import { ConflictError, NotFoundError } from '../../shared/errors.js';
import {
  type AnalysisInput,
  type AnalysisMetric,
  type AnalysisSql,
  builtInSources,
  PostgresAnalysisSql,
  productColumn,
  squaresColumn,
  sumColumn,
  variableCount,
} from './analysis-sql.js';
import type { Experiment, ExperimentMetricView, MetricRole, PhaseVariant } from './experiments.js';
import { DEFAULT_WINDOW_HOURS } from './metrics.js';
import { dataSourceById, inWarehouse, type WarehouseLimits } from './data-sources.js';
import { adjustPValues, SAMPLE_RATIO_ALARM_P, sampleRatioMismatchP } from './statistics/checks.js';
import { type ArmSums, effectOf, type EffectProblem, type MetricShape } from './statistics/effect.js';
import { normalQuantile } from './statistics/distributions.js';
import { bayesianTest, frequentistTest } from './statistics/tests.js';

/**
 * An experiment's results: the analysis query's sums per variant and metric, through the statistics engine, with
 * the checks that say whether to trust them (sample ratio, units seen in two variants, too few units), and a plain
 * sentence. Each analysis is kept as a snapshot: results read the last one, and their history draws the chart.
 */

/** Below this many units in a variant a metric's comparison is not shown (GrowthBook's default minimum). */
export const MINIMUM_UNITS = 150;
/** Above this share of units seen in two variants the results carry a warning. */
const MULTIPLE_EXPOSURE_WARNING_SHARE = 0.01;
/** The chance to win a Bayesian result must pass to be called a win. */
const WINNING_CHANCE = 0.95;

export interface Comparison {
  /** The effect (relative or absolute, as the experiment says), its interval, and what the engine adds to it. */
  estimate: number;
  interval: [number | null, number | null];
  chanceToWin?: number;
  risk?: [number, number];
  pValue?: number;
  /** The p-value after the correction over goal metrics × variants (frequentist, goal metrics). */
  adjustedPValue?: number;
  /** The result is decided: a chance to win past 95 % (or below 5 %), or a p-value under α. */
  decided: boolean;
}

export interface VariantResult {
  variant: string;
  units: number;
  /** The metric's value over the variant's units, unadjusted (a conversion rate, a mean, a ratio). */
  value: number;
  /** Against the control (the first variant); absent for the control itself. */
  comparison?: Comparison;
  /** Why there is no comparison: too few units, no variance, a control of zero. */
  problem?: EffectProblem | 'too-few-units';
}

export interface MetricResult {
  name: string;
  role: MetricRole;
  kind: ExperimentMetricView['kind'];
  lowerIsBetter: boolean;
  variants: VariantResult[];
}

export interface ExperimentResults {
  experiment: string;
  phase: number;
  engine: Experiment['engine'];
  difference: Experiment['difference'];
  computedAt: string;
  /** Units per variant as exposed (those seen in two variants aside), with the configured weights. */
  exposures: Array<{ variant: string; units: number; weight: number }>;
  multipleExposures: number;
  variantMismatches: number;
  sampleRatio: { pValue: number; alarm: boolean };
  /** What to know before reading the numbers, the sample-ratio alarm first. */
  warnings: string[];
  metrics: MetricResult[];
  summary: string;
}

function shapeOf(metric: AnalysisMetric): MetricShape {
  if (metric.kind === 'ratio') return metric.lookbackHours === null ? 'ratio' : 'adjusted-ratio';
  return metric.lookbackHours === null ? 'plain' : 'adjusted';
}

function analysisMetricOf(metric: ExperimentMetricView, cupedDays: number | null): AnalysisMetric {
  return {
    kind: metric.kind,
    event: metric.event,
    aggregation: metric.aggregation,
    denominatorEvent: metric.denominatorEvent,
    denominatorAggregation: metric.denominatorAggregation,
    windowHours: metric.windowHours ?? DEFAULT_WINDOW_HOURS,
    cap: metric.cap,
    lookbackHours: cupedDays === null ? null : cupedDays * 24,
  };
}

type SumsRow = Record<string, number | string | null>;

function armOf(row: SumsRow | undefined, metric: AnalysisMetric, index: number): ArmSums {
  const count = variableCount(metric);
  const number = (column: string) => Number(row?.[column] ?? 0);
  const products: Record<string, number> = {};
  for (let i = 0; i < count; i++) for (let j = i + 1; j < count; j++) products[`${i},${j}`] = number(productColumn(index, i, j));
  return {
    units: number('units'),
    variables: Array.from({ length: count }, (_, v) => ({
      sum: number(sumColumn(index, v)),
      sumSquares: number(squaresColumn(index, v)),
      binary: metric.kind === 'proportion',
    })),
    products,
  };
}

const percent = (value: number, digits = 1) => `${(value * 100).toFixed(digits)}%`;
const signedPercent = (value: number) => `${value >= 0 ? '+' : ''}${percent(value)}`;
/** A chance as a sentence says it: never a flat 100 % or 0 %, which no finite sample gives. */
const chanceText = (value: number) => (value > 0.995 ? 'over 99%' : value < 0.005 ? 'under 1%' : percent(value, 0));

export interface AnalysisRun {
  experiment: Experiment;
  /** The phase analysed: the last, unless named. */
  phase?: number;
  end: Date;
}

/** Vexil's own tables are PostgreSQL's (or the embedded PGlite's) dialect. */
const BUILT_IN_DIALECT: AnalysisSql = new PostgresAnalysisSql();

/** Runs the analysis on Vexil's own tables and computes the results. */
export async function analyseExperiment(db: Db, run: AnalysisRun, dialect: AnalysisSql = BUILT_IN_DIALECT): Promise<ExperimentResults> {
  const { experiment, end } = run;
  const phase = phaseOf(experiment, run.phase);
  const input: AnalysisInput = {
    ...builtInSources(experiment.id, phase.phase, experiment.environment),
    end,
    metrics: analysisMetricsOf(experiment),
  };
  const query = dialect.build(input);
  const [sums, exposures] = await Promise.all([
    db.executeQuery<SumsRow>(CompiledQuery.raw(query.sql, query.parameters)),
    db
      .selectFrom('experiment_exposures')
      .select(['variant', sql<number>`count(*)`.as('units')])
      .where('experiment_id', '=', experiment.id)
      .where('phase', '=', phase.phase)
      .groupBy('variant')
      .execute(),
  ]);
  return resultsOf(experiment, phase, sums.rows, exposures, end);
}

/**
 * Runs the same analysis in the experiment's warehouse: its assignments and events, read by its data source's
 * queries, in one read-only transaction there; only the sums per variant come back.
 */
export async function analyseInWarehouse(db: Db, run: AnalysisRun, limits: WarehouseLimits): Promise<ExperimentResults> {
  const { experiment, end } = run;
  const phase = phaseOf(experiment, run.phase);
  const source = await dataSourceById(db, experiment.dataSourceId!);
  const sources = BUILT_IN_DIALECT.warehouseSources(source, {
    key: experiment.dataSource!.experimentKey,
    variants: phase.variants.map((variant) => variant.name),
    phaseStartedAt: new Date(phase.startedAt),
  });
  const query = BUILT_IN_DIALECT.build({ ...sources, end, metrics: analysisMetricsOf(experiment) });
  const counts = BUILT_IN_DIALECT.exposureCounts(sources.units, end);
  return inWarehouse(source, limits, async (client) => {
    const sums = await client.query<SumsRow>(query.sql, query.parameters);
    const exposures = await client.query<{ variant: number; units: string }>(counts.sql, counts.parameters);
    return resultsOf(
      experiment,
      phase,
      sums.rows,
      exposures.rows.map((row) => ({ variant: Number(row.variant), units: Number(row.units) })),
      end,
    );
  });
}

function phaseOf(experiment: Experiment, wanted: number | undefined) {
  const phase = wanted === undefined ? experiment.phases.at(-1) : experiment.phases.find((candidate) => candidate.phase === wanted);
  if (!phase) throw new ConflictError(`Experiment "${experiment.name}" has not started: it has no results yet`);
  return phase;
}

const analysisMetricsOf = (experiment: Experiment) =>
  experiment.metrics.map((metric) => analysisMetricOf(metric, experiment.cuped?.lookbackDays ?? null));

/** The results from the sums: pure, so the warehouse path and the tests reach the same numbers. */
export function resultsOf(
  experiment: Experiment,
  phase: { phase: number; variants: PhaseVariant[]; variantMismatches: number; startedAt: string },
  rows: SumsRow[],
  exposures: Array<{ variant: number; units: number }>,
  end: Date,
): ExperimentResults {
  const unitsOf = (variant: number) => Number(exposures.find((row) => row.variant === variant)?.units ?? 0);
  const exposed = phase.variants.map((variant, index) => ({ variant: variant.name, units: unitsOf(index), weight: variant.weight }));
  const multipleExposures = unitsOf(-1);
  const totalUnits = exposed.reduce((sum, arm) => sum + arm.units, 0) + multipleExposures;
  const srmP = sampleRatioMismatchP(
    exposed.map((arm) => arm.units),
    exposed.map((arm) => arm.weight),
  );
  const metrics = experiment.metrics.map((metric) => analysisMetricOf(metric, experiment.cuped?.lookbackDays ?? null));
  const rowOf = (variant: number) => rows.find((row) => Number(row.variant) === variant);

  const results: MetricResult[] = experiment.metrics.map((metric, m) => {
    const analysed = metrics[m]!;
    const shape = shapeOf(analysed);
    const control = armOf(rowOf(0), analysed, m);
    const variants = phase.variants.map((variant, v): VariantResult => {
      const arm = armOf(rowOf(v), analysed, m);
      const value =
        arm.units === 0
          ? 0
          : analysed.kind === 'ratio'
            ? arm.variables[0]!.sum / (arm.variables[1]!.sum || Number.NaN)
            : arm.variables[0]!.sum / arm.units;
      const result: VariantResult = { variant: variant.name, units: arm.units, value: Number.isFinite(value) ? value : 0 };
      if (v === 0) return result;
      if (arm.units < MINIMUM_UNITS || control.units < MINIMUM_UNITS) return { ...result, problem: 'too-few-units' };
      const effect = effectOf(shape, control, arm, experiment.difference);
      if (!effect.ok) return { ...result, problem: effect.problem };
      if (experiment.engine === 'bayesian') {
        const posterior = bayesianTest(effect.moments, { alpha: experiment.alpha, inverse: metric.lowerIsBetter }, experiment.difference);
        return {
          ...result,
          comparison: {
            estimate: posterior.estimate,
            interval: posterior.interval,
            chanceToWin: posterior.chanceToWin,
            risk: posterior.risk,
            decided: posterior.chanceToWin >= WINNING_CHANCE || posterior.chanceToWin <= 1 - WINNING_CHANCE,
          },
        };
      }
      const test = frequentistTest(effect.moments, {
        alpha: experiment.alpha,
        side: 'two-sided',
        ...(experiment.sequential ? { sequential: experiment.sequential } : {}),
      });
      return {
        ...result,
        comparison: { estimate: test.estimate, interval: test.interval, pValue: test.pValue, decided: test.pValue < experiment.alpha },
      };
    });
    return { name: metric.name, role: metric.role, kind: metric.kind, lowerIsBetter: metric.lowerIsBetter, variants };
  });

  if (experiment.engine === 'frequentist' && experiment.correction !== 'none')
    applyCorrection(results, experiment.correction, experiment.alpha);

  const warnings: string[] = [];
  const alarm = srmP < SAMPLE_RATIO_ALARM_P;
  if (alarm) {
    warnings.push(
      `Sample ratio mismatch (p = ${srmP.toPrecision(2)}): units did not split as the weights say (${exposed.map((arm) => `${arm.variant} ${arm.units}`).join(', ')}). Something assigns or counts units unevenly; do not trust these results until it is found.`,
    );
  }
  if (totalUnits > 0 && multipleExposures / totalUnits > MULTIPLE_EXPOSURE_WARNING_SHARE) {
    warnings.push(
      `${multipleExposures} units (${percent(multipleExposures / totalUnits)}) were seen in two variants and are left out: their stickiness value is shared, or the variants changed under them.`,
    );
  }
  if (phase.variantMismatches > 0) {
    warnings.push(
      `${phase.variantMismatches} reported exposures named another variant than Vexil's evaluation gives: check the SDKs' configuration is current.`,
    );
  }
  return {
    experiment: experiment.name,
    phase: phase.phase,
    engine: experiment.engine,
    difference: experiment.difference,
    computedAt: end.toISOString(),
    exposures: exposed,
    multipleExposures,
    variantMismatches: phase.variantMismatches,
    sampleRatio: { pValue: srmP, alarm },
    warnings,
    metrics: results,
    summary: summaryOf(experiment, results, alarm, exposed, phase.startedAt, end),
  };
}

/** Holm or Benjamini–Hochberg over goal metrics × variants; the interval is widened to match the adjusted p-value. */
function applyCorrection(results: MetricResult[], correction: Experiment['correction'], alpha: number): void {
  const family = results
    .filter((metric) => metric.role === 'goal')
    .flatMap((metric) => metric.variants.filter((variant) => variant.comparison?.pValue !== undefined));
  const adjusted = adjustPValues(
    family.map((variant) => variant.comparison!.pValue!),
    correction,
  );
  family.forEach((variant, index) => {
    const comparison = variant.comparison!;
    const p = adjusted[index]!;
    comparison.adjustedPValue = p;
    comparison.decided = p < alpha;
    // The interval whose test would give the adjusted p-value: the same centre, its half-width scaled (normal approximation).
    const [low, high] = comparison.interval;
    if (low === null || high === null || p >= 1 || comparison.pValue! <= 0) return;
    const scale = normalQuantile(1 - p / 2) / normalQuantile(1 - comparison.pValue! / 2);
    if (!(scale > 0) || !Number.isFinite(scale)) return;
    const halfWidth = (high - low) / 2 / scale;
    comparison.interval = [comparison.estimate - halfWidth, comparison.estimate + halfWidth];
  });
}

function summaryOf(
  experiment: Experiment,
  metrics: MetricResult[],
  alarm: boolean,
  exposed: Array<{ variant: string; units: number }>,
  startedAt: string,
  end: Date,
): string {
  if (alarm) return 'Units did not split as configured (sample ratio mismatch): the results cannot be trusted until the cause is found.';
  const goal = metrics.find((metric) => metric.role === 'goal');
  if (!goal) return 'The experiment has no goal metric.';
  const control = goal.variants[0]!;
  const compared = goal.variants.slice(1);
  const waiting = compared.filter((variant) => variant.problem === 'too-few-units');
  if (compared.length === 0) return 'The experiment has one variant only.';
  if (waiting.length === compared.length) {
    const fewest = Math.min(...exposed.map((arm) => arm.units));
    return `Too few units yet: each variant needs ${MINIMUM_UNITS} on ${goal.name}, the smallest has ${fewest}. Keep running.`;
  }
  const withResult = compared.filter((variant) => variant.comparison);
  if (withResult.length === 0)
    return `No comparison on ${goal.name} yet: ${compared[0]!.problem === 'zero-baseline' ? `${control.variant} has a value of zero` : 'the values do not vary'}.`;
  const better = (variant: VariantResult) => (goal.lowerIsBetter ? -variant.comparison!.estimate : variant.comparison!.estimate);
  const best = withResult.reduce((a, b) => (better(b) > better(a) ? b : a));
  const comparison = best.comparison!;
  const lift =
    experiment.difference === 'relative'
      ? signedPercent(comparison.estimate)
      : `${comparison.estimate >= 0 ? '+' : ''}${comparison.estimate.toPrecision(3)}`;
  const remaining = remainingTime(experiment, best, exposed, startedAt, end);
  if (experiment.engine === 'bayesian') {
    const chance = comparison.chanceToWin!;
    if (chance >= WINNING_CHANCE)
      return `${best.variant} wins on ${goal.name} with ${chanceText(chance)} chance to beat ${control.variant} (${lift}). Ship it when the guardrails hold.`;
    if (chance <= 1 - WINNING_CHANCE)
      return `${control.variant} is ahead on ${goal.name}: every variant has at most ${chanceText(chance)} chance to beat it.`;
    const leader =
      chance >= 0.5
        ? `${best.variant} is ahead on ${goal.name} with ${chanceText(chance)} chance to win (${lift})`
        : `No variant is ahead of ${control.variant} on ${goal.name} (best: ${best.variant}, ${chanceText(chance)} chance to win)`;
    return `${leader}; keep running${remaining ? ` until about ${remaining}` : ''}.`;
  }
  const p = comparison.adjustedPValue ?? comparison.pValue!;
  if (comparison.decided)
    return `${best.variant} ${better(best) > 0 ? 'beats' : 'loses to'} ${control.variant} on ${goal.name} (${lift}, p = ${p.toPrecision(2)}).`;
  return `No variant differs from ${control.variant} on ${goal.name} yet (best: ${best.variant} ${lift}, p = ${p.toPrecision(2)}); keep running${remaining ? ` until about ${remaining}` : ''}.`;
}

/**
 * When the leading comparison would be decided if its effect held: its standard error shrinks as 1/√n, so the units
 * needed grow as (z / |estimate/SE|)²; the days at the rate units arrived so far.
 */
function remainingTime(
  experiment: Experiment,
  best: VariantResult,
  exposed: Array<{ variant: string; units: number }>,
  startedAt: string,
  end: Date,
): string | undefined {
  const comparison = best.comparison!;
  const [low, high] = comparison.interval;
  if (low === null || high === null || comparison.estimate === 0) return undefined;
  const z = experiment.engine === 'bayesian' ? normalQuantile(WINNING_CHANCE) : normalQuantile(1 - experiment.alpha / 2);
  const standardError = (high - low) / 2 / normalQuantile(1 - experiment.alpha / 2);
  const needed = (z / Math.abs(comparison.estimate / standardError)) ** 2;
  const units = exposed.reduce((sum, arm) => sum + arm.units, 0);
  const total = units * needed;
  if (!Number.isFinite(total) || total <= units) return undefined;
  const days = (end.getTime() - Date.parse(startedAt)) / 86_400_000;
  const perDay = days > 0 ? units / days : 0;
  const more = perDay > 0 ? Math.ceil((total - units) / perDay) : undefined;
  const unitsText = `${Math.ceil(total).toLocaleString('en')} units`;
  return more === undefined
    ? unitsText
    : `${unitsText} (${more} more day${more === 1 ? '' : 's'} at the current rate), if the effect holds`;
}

export interface SnapshotView {
  takenAt: string;
  results: ExperimentResults;
}

/** Keeps the results as the experiment's newest snapshot. */
export async function storeSnapshot(uow: UnitOfWork, experimentId: number, results: ExperimentResults): Promise<void> {
  await uow.tx
    .insertInto('experiment_snapshots')
    .values({ experiment_id: experimentId, phase: results.phase, taken_at: uow.now, results: JSON.stringify(results) })
    .execute();
}

/** The snapshots of a phase, oldest first: the newest is the results, all of them the chart. */
export async function snapshotsOf(db: Db, experiment: Experiment, phase?: number): Promise<SnapshotView[]> {
  const wanted = phase ?? experiment.phases.at(-1)?.phase;
  if (wanted === undefined) return [];
  if (!experiment.phases.some((candidate) => candidate.phase === wanted)) {
    throw new NotFoundError(`Experiment "${experiment.name}" has no phase ${wanted}`);
  }
  const rows = await db
    .selectFrom('experiment_snapshots')
    .select(['taken_at', 'results'])
    .where('experiment_id', '=', experiment.id)
    .where('phase', '=', wanted)
    .orderBy('taken_at')
    .execute();
  return rows.map((row) => ({ takenAt: row.taken_at.toISOString(), results: row.results as ExperimentResults }));
}

/** A new analysis is not run for an experiment analysed less than this long ago: the last one answers. */
const REANALYSIS_INTERVAL_MS = 30_000;

/**
 * The analyses this instance runs: one at a time per experiment (concurrent asks share it), and none again within
 * 30 seconds of the last, so that nobody holding the read permission can keep the database busy by asking.
 */
export class ExperimentAnalyses {
  private readonly running = new Map<string, Promise<ExperimentResults>>();
  private readonly recent = new Map<string, { at: number; results: ExperimentResults }>();

  constructor(
    private readonly db: Db,
    private readonly clock: { now(): Date },
    /** How a warehouse is reached: private networks allowed or not, and its statement timeout. */
    private readonly warehouse: WarehouseLimits,
  ) {}

  private analyse(experiment: Experiment, phase: number | undefined, bounds: ReadBounds): Promise<ExperimentResults> {
    const key = `${experiment.id}:${phase ?? 'last'}`;
    const now = this.clock.now();
    const recent = this.recent.get(key);
    if (recent && now.getTime() - recent.at < REANALYSIS_INTERVAL_MS) return Promise.resolve(recent.results);
    let running = this.running.get(key);
    if (!running) {
      const run = { experiment, phase, end: now };
      running = (
        experiment.dataSourceId === null
          ? boundedRead(this.db, bounds, (db) => analyseExperiment(db, run))
          : analyseInWarehouse(this.db, run, { ...this.warehouse, statementTimeoutMs: bounds.timeoutMs })
      ).finally(() => this.running.delete(key));
      this.running.set(key, running);
      running.then(
        (results) => {
          if (this.recent.size > 1000) this.recent.clear();
          this.recent.set(key, { at: now.getTime(), results });
        },
        () => undefined,
      );
    }
    return running;
  }

  /** The phase's newest snapshot, or an analysis run now (and not kept) when there is none. */
  async latest(experiment: Experiment, phase: number | undefined, bounds: ReadBounds): Promise<ExperimentResults> {
    const snapshots = await snapshotsOf(this.db, experiment, phase);
    const newest = snapshots.at(-1);
    return newest ? newest.results : this.analyse(experiment, phase, bounds);
  }

  /** A new analysis, kept as the phase's newest snapshot. */
  async refresh(experiment: Experiment, phase: number | undefined, bounds: ReadBounds): Promise<ExperimentResults> {
    const results = await this.analyse(experiment, phase, bounds);
    await inUnitOfWork({ db: this.db, clock: this.clock }, SYSTEM_ACTOR, async (uow) => {
      const newest = await uow.tx
        .selectFrom('experiment_snapshots')
        .select('results')
        .where('experiment_id', '=', experiment.id)
        .where('phase', '=', results.phase)
        .orderBy('taken_at', 'desc')
        .limit(1)
        .executeTakeFirst();
      // The same analysis asked for twice is kept once.
      if ((newest?.results as ExperimentResults | undefined)?.computedAt !== results.computedAt)
        await storeSnapshot(uow, experiment.id, results);
    });
    return results;
  }
}
