/**
 * Vexil's metrics over OTLP by the names Prometheus scrapes them: a metric producer for OpenTelemetry's metric reader
 * that reads the prom-client registry at each export. Counters become cumulative sums, gauges gauges and histograms
 * explicit-bucket histograms (Prometheus's cumulative `le` buckets turned into per-bucket counts). Loaded only when
 * telemetry is on.
 */
import { type Attributes, type HrTime, ValueType } from '@opentelemetry/api';
import { emptyResource } from '@opentelemetry/resources';
import {
  AggregationTemporality,
  type CollectionResult,
  type DataPoint,
  DataPointType,
  type Histogram,
  type MetricData,
  type MetricProducer,
} from '@opentelemetry/sdk-metrics';
import type { MetricObjectWithValues, MetricValue, MetricValueWithName, Registry } from 'prom-client';

const hrTime = (ms: number): HrTime => [Math.floor(ms / 1000), Math.round((ms % 1000) * 1e6)];

type Labels = Record<string, string | number>;
const attributesOf = (labels: Labels | undefined): Attributes =>
  Object.fromEntries(Object.entries(labels ?? {}).map(([key, value]) => [key, String(value)]));

/** A Prometheus histogram's series, one per label set: its buckets (cumulative, by `le`), sum and count. */
function histogramPoints(values: MetricValueWithName<string>[], name: string, startTime: HrTime, endTime: HrTime): DataPoint<Histogram>[] {
  const series = new Map<string, { attributes: Attributes; buckets: Array<[number, number]>; sum: number; count: number }>();
  for (const { metricName, labels, value } of values) {
    const { le, ...rest } = (labels ?? {}) as Labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    let entry = series.get(key);
    if (!entry) series.set(key, (entry = { attributes: attributesOf(rest), buckets: [], sum: 0, count: 0 }));
    if (metricName === `${name}_bucket` && le !== undefined && le !== '+Inf') entry.buckets.push([Number(le), value]);
    else if (metricName === `${name}_sum`) entry.sum = value;
    else if (metricName === `${name}_count`) entry.count = value;
  }
  return [...series.values()].map(({ attributes, buckets, sum, count }) => {
    buckets.sort(([a], [b]) => a - b);
    // OTLP counts each bucket on its own, the last one (above every boundary) included.
    const counts = [
      ...buckets.map(([, cumulative], index) => cumulative - (buckets[index - 1]?.[1] ?? 0)),
      count - (buckets.at(-1)?.[1] ?? 0),
    ];
    return { startTime, endTime, attributes, value: { buckets: { boundaries: buckets.map(([bound]) => bound), counts }, sum, count } };
  });
}

function metricData(metric: MetricObjectWithValues<MetricValue<string>>, startTime: HrTime, endTime: HrTime): MetricData | undefined {
  const descriptor = { name: metric.name, description: metric.help, unit: '', valueType: ValueType.DOUBLE };
  const points = () =>
    metric.values.map(
      (value): DataPoint<number> => ({ startTime, endTime, attributes: attributesOf(value.labels as Labels), value: value.value }),
    );
  // prom-client's types call it an enum; its JSON holds the type's name, as the text format writes it.
  switch (metric.type as unknown as string) {
    case 'counter':
      return {
        descriptor,
        aggregationTemporality: AggregationTemporality.CUMULATIVE,
        dataPointType: DataPointType.SUM,
        isMonotonic: true,
        dataPoints: points(),
      };
    case 'gauge':
      return {
        descriptor,
        aggregationTemporality: AggregationTemporality.CUMULATIVE,
        dataPointType: DataPointType.GAUGE,
        dataPoints: points(),
      };
    case 'histogram':
      return {
        descriptor,
        aggregationTemporality: AggregationTemporality.CUMULATIVE,
        dataPointType: DataPointType.HISTOGRAM,
        dataPoints: histogramPoints(metric.values as MetricValueWithName<string>[], metric.name, startTime, endTime),
      };
    default:
      // Summaries have no OTLP counterpart the SDK can send; Vexil defines none.
      return undefined;
  }
}

export class PrometheusMetricProducer implements MetricProducer {
  /** Set once the server (or edge) has made its registry; until then an export carries none of its metrics. */
  registry: Registry | undefined;
  /** Prometheus's counters count from the process's start: so do the cumulative sums. */
  private readonly startTime = hrTime(performance.timeOrigin);

  async collect(): Promise<CollectionResult> {
    const metrics = this.registry ? await this.registry.getMetricsAsJSON() : [];
    const endTime = hrTime(Date.now());
    return {
      // The reader sends these under the SDK's own resource (service name, host, process).
      resourceMetrics: {
        resource: emptyResource(),
        scopeMetrics: [
          {
            scope: { name: 'vexil' },
            metrics: metrics.flatMap((metric) => metricData(metric, this.startTime, endTime) ?? []),
          },
        ],
      },
      errors: [],
    };
  }
}
