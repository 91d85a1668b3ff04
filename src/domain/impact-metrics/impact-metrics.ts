import { sql } from 'kysely';
import type { Db, Tx } from '../../db/database.js';
import type { ImpactMetricType, SafeguardAggregation } from '../../db/schema.js';
import { BadDataError } from '../../shared/errors.js';

/**
 * Impact metrics: counters, gauges and histograms an application defines and its SDK sends with its usage
 * report (`impactMetrics`). Kept per series (application, environment, name, labels) and minute, for a bounded
 * time, with a bounded number of series per application, so an SDK cannot make Vexil keep without limit.
 */

export interface ImpactMetricSample {
  labels?: Record<string, string>;
  value?: number;
  count?: number;
  sum?: number;
}

export interface ImpactMetricReport {
  name: string;
  help?: string;
  type: ImpactMetricType;
  samples: ImpactMetricSample[];
}

export interface ImpactMetricLimits {
  /** Distinct series one application may have; a report that would add more is refused whole. */
  seriesPerApplication: number;
  /** Distinct series of all applications together, so many application names cannot add up without bound. */
  seriesTotal: number;
}

const MINUTE_MS = 60_000;

/** Labels in a stable order, as the key of their series. */
function labelsKey(labels: Record<string, string>): string {
  return JSON.stringify(
    Object.keys(labels)
      .sort()
      .map((key) => [key, labels[key]]),
  );
}

/**
 * Records one report's metrics at the minute it arrives, in the caller's transaction. The SDK's own labels say
 * which application and environment; the token's environment is what counts. The caller has admitted the
 * application (new ones are limited per token and minute). All of it or nothing: a report that would exceed the
 * application's series is refused with the first metric that would.
 */
export async function recordImpactMetrics(
  tx: Tx,
  input: { appName: string; environment: string; metrics: ImpactMetricReport[]; now: Date },
  limits: ImpactMetricLimits,
): Promise<number> {
  const minute = minuteOf(input.now);
  const samples = input.metrics.flatMap((metric, metricIndex) =>
    metric.samples.map((sample, sampleIndex) => {
      // The SDK puts its application and environment among the labels; they are the series' own columns here.
      const { appName: _appName, environment: _environment, ...labels } = sample.labels ?? {};
      return { metric, metricIndex, sampleIndex, labels, key: labelsKey(labels), sample };
    }),
  );
  if (samples.length === 0) return 0;
  // One writer per application at a time, so two reports cannot both slip under the series limit.
  await sql`SELECT pg_advisory_xact_lock(hashtext(${`impact-metrics:${input.appName}`}))`.execute(tx);
  const existing = await tx
    .selectFrom('impact_metric_series')
    .select(['id', 'name', 'type', 'labels_key', 'environment'])
    .where('app_name', '=', input.appName)
    .execute();
  const known = new Map(
    existing.filter((row) => row.environment === input.environment).map((row) => [`${row.name}\u0000${row.labels_key}`, row]),
  );
  let total: number | undefined;
  let seriesCount = existing.length;
  const seriesIds: number[] = [];
  for (const { metric, metricIndex, labels, key } of samples) {
    const found = known.get(`${metric.name}\u0000${key}`);
    if (found) {
      if (found.type !== metric.type) {
        throw new BadDataError(`Impact metric ${metric.name} is a ${found.type}, not a ${metric.type}`, [
          { path: `/body/impactMetrics/${metricIndex}/type`, message: `${metric.name} was first reported as a ${found.type}` },
        ]);
      }
      seriesIds.push(found.id);
      continue;
    }
    total ??= Number(
      (
        await tx
          .selectFrom('impact_metric_series')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
    if (total >= limits.seriesTotal) {
      throw new BadDataError(`Vexil already keeps ${limits.seriesTotal} impact metric series, the most it keeps`, [
        { path: `/body/impactMetrics/${metricIndex}`, message: 'no new series can be kept until old ones expire' },
      ]);
    }
    if (seriesCount >= limits.seriesPerApplication) {
      throw new BadDataError(
        `Application ${input.appName} already has ${limits.seriesPerApplication} impact metric series, the most Vexil keeps`,
        [
          {
            path: `/body/impactMetrics/${metricIndex}`,
            message: `a new series of ${metric.name} would exceed ${limits.seriesPerApplication} series for ${input.appName}; use fewer label values`,
          },
        ],
      );
    }
    const row = await tx
      .insertInto('impact_metric_series')
      .values({
        app_name: input.appName,
        environment: input.environment,
        name: metric.name,
        type: metric.type,
        labels: JSON.stringify(labels),
        labels_key: key,
        help: metric.help ?? null,
        created_at: input.now,
      })
      .returning(['id', 'name', 'type', 'labels_key', 'environment'])
      .executeTakeFirstOrThrow();
    known.set(`${metric.name}\u0000${key}`, row);
    seriesCount += 1;
    total += 1;
    seriesIds.push(row.id);
  }
  for (const [index, { metric, sample }] of samples.entries()) {
    // Counters add their increments, gauges their samples (for an average) and keep the latest, histograms
    // their observations' sum and count.
    const value = metric.type === 'histogram' ? (sample.sum ?? 0) : (sample.value ?? 0);
    const count = metric.type === 'histogram' ? (sample.count ?? 0) : 1;
    await tx
      .insertInto('impact_metric_minutes')
      .values({ series_id: seriesIds[index]!, minute, value, samples: count, last: value })
      .onConflict((conflict) =>
        conflict.columns(['series_id', 'minute']).doUpdateSet({
          value: sql`impact_metric_minutes.value + excluded.value`,
          samples: sql`impact_metric_minutes.samples + excluded.samples`,
          last: sql`excluded.last`,
        }),
      )
      .execute();
  }
  return samples.length;
}

/** The start of the minute `at` falls in: impact metrics are kept per minute. */
export function minuteOf(at: Date): Date {
  return new Date(Math.floor(at.getTime() / MINUTE_MS) * MINUTE_MS);
}

export interface MetricSelector {
  metricName: string;
  environment: string;
  appName?: string | null;
  labelSelectors?: Record<string, string[]>;
}

function seriesOf(db: Db, selector: MetricSelector) {
  let query = db
    .selectFrom('impact_metric_series')
    .select('id')
    .where('name', '=', selector.metricName)
    .where('environment', '=', selector.environment);
  if (selector.appName) query = query.where('app_name', '=', selector.appName);
  for (const [label, values] of Object.entries(selector.labelSelectors ?? {})) {
    if (values.length === 0) continue;
    query = query.where(sql<boolean>`labels ->> ${label} IN (${sql.join(values)})`);
  }
  return query;
}

/**
 * The metric's value over the last `windowMinutes` minutes, as a safeguard reads it: `count` the increments,
 * `rps` those per second, `avg` the mean of the samples, `sum` the latest value of each series added up.
 * Undefined when nothing was reported in the window.
 */
export async function aggregateMetric(
  db: Db,
  selector: MetricSelector,
  aggregation: SafeguardAggregation,
  windowMinutes: number,
  now: Date,
  /** The first minute that counts (a safeguard armed again starts afresh); rps still spans the whole window. */
  firstMinute: Date | null = null,
): Promise<number | undefined> {
  const since = new Date(Math.max(now.getTime() - windowMinutes * MINUTE_MS, (firstMinute?.getTime() ?? 0) - 1));
  const minutes = db
    .selectFrom('impact_metric_minutes')
    .where('series_id', 'in', seriesOf(db, selector))
    .where('minute', '>', since)
    .where('minute', '<=', now);
  if (aggregation === 'sum') {
    const latest = await minutes
      .select(['series_id', 'last'])
      .distinctOn('series_id')
      .orderBy('series_id')
      .orderBy('minute', 'desc')
      .execute();
    return latest.length === 0 ? undefined : latest.reduce((total, row) => total + row.last, 0);
  }
  const row = await minutes
    .select([sql<number | null>`sum(value)`.as('value'), sql<string | null>`sum(samples)`.as('samples')])
    .executeTakeFirst();
  if (!row || row.value === null || row.samples === null || Number(row.samples) === 0) return undefined;
  const value = Number(row.value);
  switch (aggregation) {
    case 'count':
      return value;
    case 'rps':
      return value / (windowMinutes * 60);
    case 'avg':
      return value / Number(row.samples);
  }
}

export interface MetricPoint {
  minute: string;
  value: number;
}

/** A metric per minute over the last hours, for charts: increments for counters, the mean for gauges and histograms. */
export async function metricSeries(db: Db, selector: MetricSelector, hours: number, now: Date): Promise<MetricPoint[]> {
  const rows = await db
    .selectFrom('impact_metric_minutes as m')
    .innerJoin('impact_metric_series as s', 's.id', 'm.series_id')
    .select([
      'm.minute',
      sql<number>`CASE WHEN bool_or(s.type = 'counter') THEN sum(m.value) ELSE sum(m.value) / greatest(sum(m.samples), 1) END`.as('value'),
    ])
    .where('m.series_id', 'in', seriesOf(db, selector))
    .where('m.minute', '>', new Date(now.getTime() - hours * 3_600_000))
    .groupBy('m.minute')
    .orderBy('m.minute')
    .execute();
  return rows.map((row) => ({ minute: row.minute.toISOString(), value: Number(row.value) }));
}

/** The metrics applications reported in an environment, for choosing one in a safeguard or chart. */
export async function availableMetrics(db: Db, environment?: string) {
  let query = db
    .selectFrom('impact_metric_series')
    .select(['name', 'type', 'app_name', sql<string | null>`max(help)`.as('help'), sql<string>`count(*)`.as('series')])
    .groupBy(['name', 'type', 'app_name'])
    .orderBy('name')
    .limit(1000);
  if (environment) query = query.where('environment', '=', environment);
  const rows = await query.execute();
  return rows.map((row) => ({ name: row.name, type: row.type, appName: row.app_name, help: row.help, series: Number(row.series) }));
}

/** Forgets minutes older than the retention, and series with none left. */
export async function deleteOldImpactMetrics(db: Db, retentionDays: number, now: Date): Promise<void> {
  const before = new Date(now.getTime() - retentionDays * 86_400_000);
  await db.deleteFrom('impact_metric_minutes').where('minute', '<', before).execute();
  await db
    .deleteFrom('impact_metric_series')
    .where('created_at', '<', before)
    .where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom('impact_metric_minutes').select('series_id').whereRef('series_id', '=', 'impact_metric_series.id'))),
    )
    .execute();
}
