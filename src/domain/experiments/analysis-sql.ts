import type { Aggregation, MetricView } from './metrics.js';

/*
 * The analysis as one SQL statement, which returns one row of sums per variant and nothing else: the database does
 * the heavy part (a join of units with their events), the statistics engine the rest. Where the units and events
 * come from is the builder's input (Vexil's own tables, or a warehouse's queries); what differs between SQL
 * dialects is a handful of methods, so another warehouse (ClickHouse, BigQuery, Snowflake) is a subclass.
 */

/**
 * One metric as the query computes it per unit: its definition (a `windowHours` of null counts up to the end of the
 * analysis), and for CUPED the hours before exposure whose value is the covariate.
 */
export type AnalysisMetric = Pick<
  MetricView,
  'kind' | 'event' | 'aggregation' | 'denominatorEvent' | 'denominatorAggregation' | 'windowHours' | 'cap'
> & { lookbackHours: number | null };

export interface AnalysisInput {
  /** SQL yielding one row per exposed unit: `unit`, `variant` (an index; -1 for one seen in two), `first_at`. */
  units: SourceQuery;
  /** SQL yielding tracked events: `unit`, `event`, `at`, `value`. */
  events: SourceQuery;
  /** The analysis covers what happened before this instant. */
  end: Date;
  metrics: AnalysisMetric[];
}

/** A piece of SQL with its own parameters, written with the builder's `bind`. */
export type SourceQuery = (bind: (value: unknown) => string) => string;

export interface AnalysisQuery {
  sql: string;
  parameters: unknown[];
}

/** The per-unit variables of a metric, in the statistics engine's order (effect.ts). */
export function variableCount(metric: AnalysisMetric): number {
  return (metric.kind === 'ratio' ? 2 : 1) * (metric.lookbackHours === null ? 1 : 2);
}

/** Column names of a metric's sums: `m0_v1_sum`, `m0_v1_squares`, `m0_v0_v1_product`. */
export const sumColumn = (metric: number, variable: number) => `m${metric}_v${variable}_sum`;
export const squaresColumn = (metric: number, variable: number) => `m${metric}_v${variable}_squares`;
export const productColumn = (metric: number, i: number, j: number) => `m${metric}_v${i}_v${j}_product`;

export abstract class AnalysisSql {
  /** The placeholder of the `index`th parameter (1-based), which is `value`. */
  protected abstract placeholder(index: number, value: unknown): string;
  /** `instant` moved by a whole number of hours given as a bound parameter. */
  protected abstract plusHours(instant: string, hours: string): string;
  /** A floating-point zero-or-value: how the dialect writes CASE WHEN (portable, but some prefer IF). */
  protected conditional(condition: string, value: string): string {
    return `CASE WHEN ${condition} THEN ${value} END`;
  }
  /** The smaller of two values. */
  protected least(a: string, b: string): string {
    return `LEAST(${a}, ${b})`;
  }
  protected abstract castDouble(expression: string): string;
  protected abstract castText(expression: string): string;

  /**
   * A warehouse's own tables as the analysis's sources, through the queries of its data source: assignments
   * (`unit_id`, `timestamp`, `experiment_key`, `variant`) of this experiment since the phase started, one row per unit
   * with its first assignment (-1 for a unit assigned two variants), and events (`unit_id`, `event`, `timestamp`,
   * `value`). Variant names become the phase's indexes; an unknown name is not the experiment's.
   */
  warehouseSources(
    queries: { assignmentQuery: string; eventsQuery: string },
    experiment: { key: string; variants: string[]; phaseStartedAt: Date },
  ): Pick<AnalysisInput, 'units' | 'events'> {
    return {
      units: (bind) => {
        const index = `CASE ${experiment.variants.map((name, i) => `WHEN ${this.castText('a.variant')} = ${bind(name)} THEN ${i}`).join(' ')} END`;
        return [
          `SELECT unit, CASE WHEN MIN(variant) <> MAX(variant) THEN -1 ELSE MIN(variant) END AS variant, MIN(at) AS first_at FROM (`,
          `  SELECT ${this.castText('a.unit_id')} AS unit, ${index} AS variant, a.timestamp AS at FROM (${queries.assignmentQuery}) AS a`,
          `  WHERE ${this.castText('a.experiment_key')} = ${bind(experiment.key)} AND a.timestamp >= ${bind(experiment.phaseStartedAt)}`,
          `) AS assigned WHERE variant IS NOT NULL GROUP BY unit`,
        ].join('\n');
      },
      events: () =>
        `SELECT ${this.castText('w.unit_id')} AS unit, ${this.castText('w.event')} AS event, w.timestamp AS at, ${this.castDouble('w.value')} AS value FROM (${queries.eventsQuery}) AS w`,
    };
  }

  /** Units per variant of the same sources (-1: assigned two variants): the sample-ratio check's counts. */
  exposureCounts(units: SourceQuery, end: Date): AnalysisQuery {
    const parameters: unknown[] = [];
    const bind = (value: unknown) => {
      parameters.push(value);
      return this.placeholder(parameters.length, value);
    };
    const endPlaceholder = bind(end);
    return {
      sql: `SELECT variant, COUNT(*) AS units FROM (${units(bind)}) AS exposed WHERE first_at < ${endPlaceholder} GROUP BY variant ORDER BY variant`,
      parameters,
    };
  }

  build(input: AnalysisInput): AnalysisQuery {
    const parameters: unknown[] = [];
    const bind = (value: unknown) => {
      parameters.push(value);
      return this.placeholder(parameters.length, value);
    };
    const end = bind(input.end);
    const perUnit: string[] = [];
    const sums: string[] = [];
    input.metrics.forEach((metric, m) => {
      const variables = this.variablesOf(metric, bind, end);
      perUnit.push(...variables.map((expression, v) => `${expression} AS m${m}_v${v}`));
      variables.forEach((_, i) => {
        sums.push(`SUM(m${m}_v${i}) AS ${sumColumn(m, i)}`, `SUM(m${m}_v${i} * m${m}_v${i}) AS ${squaresColumn(m, i)}`);
        for (let j = i + 1; j < variables.length; j++) sums.push(`SUM(m${m}_v${i} * m${m}_v${j}) AS ${productColumn(m, i, j)}`);
      });
    });
    const events = [
      ...new Set(input.metrics.flatMap((metric) => (metric.denominatorEvent ? [metric.event, metric.denominatorEvent] : [metric.event]))),
    ];
    const longestLookback = Math.max(0, ...input.metrics.map((metric) => metric.lookbackHours ?? 0));
    const unitsSql = input.units(bind);
    const eventsSql = input.events(bind);
    const sql = [
      'WITH units AS (',
      `  SELECT unit, variant, first_at FROM (${unitsSql}) AS exposed WHERE variant >= 0 AND first_at < ${end}`,
      '), events AS (',
      `  SELECT unit, event, at, value FROM (${eventsSql}) AS tracked`,
      `  WHERE event IN (${events.map((event) => bind(event)).join(', ')}) AND at < ${end}`,
      '), per_unit AS (',
      `  SELECT u.variant,`,
      `    ${perUnit.join(',\n    ')}`,
      '  FROM units u',
      `  LEFT JOIN events e ON e.unit = u.unit AND e.at >= ${this.plusHours('u.first_at', bind(-longestLookback))}`,
      '  GROUP BY u.unit, u.variant',
      ')',
      `SELECT variant, COUNT(*) AS units,`,
      `  ${sums.join(',\n  ')}`,
      'FROM per_unit',
      'GROUP BY variant',
      'ORDER BY variant',
    ].join('\n');
    return { sql, parameters };
  }

  /** The metric's per-unit variables: value (and denominator), then the same before exposure for CUPED. */
  private variablesOf(metric: AnalysisMetric, bind: (value: unknown) => string, end: string): string[] {
    const after = (event: string) => {
      const windowEnd = metric.windowHours === null ? end : this.least(this.plusHours('u.first_at', bind(metric.windowHours)), end);
      return `e.event = ${bind(event)} AND e.at >= u.first_at AND e.at < ${windowEnd}`;
    };
    const before = (event: string) =>
      `e.event = ${bind(event)} AND e.at < u.first_at AND e.at >= ${this.plusHours('u.first_at', bind(-(metric.lookbackHours ?? 0)))}`;
    const value = (condition: string, aggregation: Aggregation, capped: boolean) => {
      if (metric.kind === 'proportion') return `MAX(CASE WHEN ${condition} THEN 1 ELSE 0 END)`;
      const total =
        aggregation === 'count'
          ? `COUNT(${this.conditional(condition, '1')})`
          : `COALESCE(SUM(${this.conditional(condition, 'e.value')}), 0)`;
      const asDouble = this.castDouble(total);
      return capped && metric.cap !== null ? this.least(asDouble, bind(metric.cap)) : asDouble;
    };
    const post = [value(after(metric.event), metric.aggregation, true)];
    if (metric.kind === 'ratio') post.push(value(after(metric.denominatorEvent!), metric.denominatorAggregation ?? 'count', false));
    if (metric.lookbackHours === null) return post;
    const pre = [value(before(metric.event), metric.aggregation, true)];
    if (metric.kind === 'ratio') pre.push(value(before(metric.denominatorEvent!), metric.denominatorAggregation ?? 'count', false));
    return [...post, ...pre];
  }
}

/** PostgreSQL (and the embedded PGlite): `$n` parameters, intervals by multiplication. */
export class PostgresAnalysisSql extends AnalysisSql {
  protected placeholder(index: number): string {
    return `$${index}`;
  }
  protected plusHours(instant: string, hours: string): string {
    return `(${instant} + ${hours}::integer * interval '1 hour')`;
  }
  protected castDouble(expression: string): string {
    return `(${expression})::double precision`;
  }
  protected castText(expression: string): string {
    return `(${expression})::text`;
  }
}

/**
 * ClickHouse's SQL for the same analysis: typed parameters (`{p1:DateTime64(3)}`), hours by `addHours`, `if`,
 * `toFloat64` and `toString`. Vexil has no ClickHouse client yet: this class is what a new warehouse takes besides
 * one, and its snapshot test holds the SQL it writes.
 */
export class ClickHouseAnalysisSql extends AnalysisSql {
  protected placeholder(index: number, value: unknown): string {
    const type =
      value instanceof Date ? 'DateTime64(3)' : typeof value === 'number' ? (Number.isInteger(value) ? 'Int64' : 'Float64') : 'String';
    return `{p${index}:${type}}`;
  }
  protected plusHours(instant: string, hours: string): string {
    return `addHours(${instant}, toInt64(${hours}))`;
  }
  protected override conditional(condition: string, value: string): string {
    return `if(${condition}, ${value}, NULL)`;
  }
  protected castDouble(expression: string): string {
    return `toFloat64(${expression})`;
  }
  protected castText(expression: string): string {
    return `toString(${expression})`;
  }
}

/** Vexil's own tables as the analysis's sources: one phase's exposures, and the environment's tracked events. */
export function builtInSources(experimentId: number, phase: number, environment: string): Pick<AnalysisInput, 'units' | 'events'> {
  return {
    units: (bind) =>
      `SELECT unit_hash AS unit, variant, first_at FROM experiment_exposures WHERE experiment_id = ${bind(experimentId)} AND phase = ${bind(phase)}`,
    events: (bind) => `SELECT unit_hash AS unit, event, at, value FROM tracked_events WHERE environment = ${bind(environment)}`,
  };
}
