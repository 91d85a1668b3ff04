/**
 * OpenTelemetry for the server and the edge, exported to any OTLP collector: traces of HTTP requests (with W3C trace
 * context taken from callers and passed on to webhooks and upstreams), database queries and outbound calls, and
 * sampled `feature_flag.evaluation` events. Off, and nothing of the SDK loaded, unless an OTLP endpoint is set.
 *
 * It must start before the modules it instruments are loaded (node:http through Fastify, pg), so each entry
 * (main.ts, edge/main.ts) starts it and only then imports the rest.
 */
import type { Span } from '@opentelemetry/api';
import type { Registry } from 'prom-client';
import { ConfigError, loadTelemetryConfig, type OtlpProtocol, type TelemetryConfig } from './config.js';
import { sampleFlagEvaluations } from './shared/flag-evaluation-events.js';
import { redactUrl } from './shared/redact-url.js';

export interface Telemetry {
  /** Exports the metrics of this registry (the Prometheus endpoint's) over OTLP from now on, when metrics are on. */
  exportMetricsOf(registry: Registry): void;
  /** Sends what is still buffered, then stops exporting. */
  shutdown(): Promise<void>;
}

/** The OTLP metric exporter for a protocol, as the SDK itself chooses one; it reads its endpoint and headers itself. */
async function metricExporter(protocol: OtlpProtocol) {
  switch (protocol) {
    case 'grpc':
      return new (await import('@opentelemetry/exporter-metrics-otlp-grpc')).OTLPMetricExporter();
    case 'http/json':
      return new (await import('@opentelemetry/exporter-metrics-otlp-http')).OTLPMetricExporter();
    case 'http/protobuf':
      return new (await import('@opentelemetry/exporter-metrics-otlp-proto')).OTLPMetricExporter();
  }
}

export async function startTelemetry(config: TelemetryConfig, serviceName: string): Promise<Telemetry | undefined> {
  if (!config.enabled) return undefined;
  const [
    { NodeSDK },
    { HttpInstrumentation },
    { PgInstrumentation },
    { UndiciInstrumentation },
    { PeriodicExportingMetricReader },
    { PrometheusMetricProducer },
  ] = await Promise.all([
    import('@opentelemetry/sdk-node'),
    import('@opentelemetry/instrumentation-http'),
    import('@opentelemetry/instrumentation-pg'),
    import('@opentelemetry/instrumentation-undici'),
    import('@opentelemetry/sdk-metrics'),
    import('./shared/prometheus-metric-producer.js'),
  ]);
  // Vexil's metrics are prom-client's: one reader exports them by their Prometheus names (the SDK would otherwise make
  // one from the environment, with none of them).
  const metrics = new PrometheusMetricProducer();
  const metricReaders = config.metrics
    ? [
        new PeriodicExportingMetricReader({
          exporter: await metricExporter(config.metrics.protocol),
          exportIntervalMillis: config.metrics.exportIntervalMs,
          exportTimeoutMillis: Math.min(30_000, config.metrics.exportIntervalMs),
          metricProducers: [metrics],
        }),
      ]
    : [];
  const sdk = new NodeSDK({
    serviceName: config.serviceName ?? serviceName,
    metricReaders,
    instrumentations: [
      new HttpInstrumentation({
        // A liveness probe every few seconds would bury the traces that matter.
        ignoreIncomingRequestHook: (request) => /^\/(health|ready|internal-backstage\/)/.test(request.url ?? ''),
        // A request's address carries secrets (reset tokens, invite secrets, token secrets in paths): spans keep it
        // with them masked, as the request log does.
        requestHook: (span, request) => {
          // Incoming requests have a `url`; outgoing ones go to addresses an operator configured.
          if ('url' in request && request.url) maskUrlAttributes(span, request.url);
        },
      }),
      // Statement text only: Kysely sends parameters apart, and their values (names, emails) stay out of traces.
      new PgInstrumentation({ enhancedDatabaseReporting: false }),
      new UndiciInstrumentation(),
    ],
  });
  sdk.start();
  sampleFlagEvaluations(config.flagEvaluationEventsRatio);
  return {
    exportMetricsOf: (registry) => {
      metrics.registry = registry;
    },
    shutdown: () => sdk.shutdown(),
  };
}

/** The URL attributes of an incoming request's span (old and stable semantic conventions), with secrets masked. */
function maskUrlAttributes(span: Span, url: string): void {
  const masked = redactUrl(url);
  const [path = masked, query] = masked.split('?', 2);
  span.setAttribute('http.target', masked);
  span.setAttribute('url.path', path);
  if (query !== undefined) span.setAttribute('url.query', query);
  const full = (span as unknown as { attributes?: Record<string, unknown> }).attributes?.['http.url'];
  if (typeof full === 'string') span.setAttribute('http.url', redactUrl(full));
}

/** Telemetry as the entries start it: an invalid setting stops start-up with one line, as any other setting does. */
export async function startTelemetryOrExit(serviceName: string, product: string): Promise<Telemetry | undefined> {
  let config: TelemetryConfig;
  try {
    config = loadTelemetryConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${product} cannot start: ${error.message}\n`);
    process.exit(1);
  }
  return startTelemetry(config, serviceName);
}
