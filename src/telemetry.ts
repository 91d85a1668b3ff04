/**
 * OpenTelemetry for the server and the edge, exported to any OTLP collector: traces of HTTP requests (with W3C trace
 * context taken from callers and passed on to webhooks and upstreams), database queries and outbound calls, and
 * sampled `feature_flag.evaluation` events. Off, and nothing of the SDK loaded, unless an OTLP endpoint is set.
 *
 * It must start before the modules it instruments are loaded (node:http through Fastify, pg), so each entry
 * (main.ts, edge/main.ts) starts it and only then imports the rest.
 */
import { ConfigError, loadTelemetryConfig, type TelemetryConfig } from './config.js';
import { sampleFlagEvaluations } from './shared/flag-evaluation-events.js';

export interface Telemetry {
  /** Sends what is still buffered, then stops exporting. */
  shutdown(): Promise<void>;
}

export async function startTelemetry(config: TelemetryConfig, serviceName: string): Promise<Telemetry | undefined> {
  if (!config.enabled) return undefined;
  const [{ NodeSDK }, { HttpInstrumentation }, { PgInstrumentation }, { UndiciInstrumentation }] = await Promise.all([
    import('@opentelemetry/sdk-node'),
    import('@opentelemetry/instrumentation-http'),
    import('@opentelemetry/instrumentation-pg'),
    import('@opentelemetry/instrumentation-undici'),
  ]);
  // OTEL_SERVICE_NAME, when set, names the service instead (the SDK reads it).
  process.env.OTEL_SERVICE_NAME ||= serviceName;
  const sdk = new NodeSDK({
    instrumentations: [
      new HttpInstrumentation({
        // A liveness probe every few seconds would bury the traces that matter.
        ignoreIncomingRequestHook: (request) => /^\/(health|ready|internal-backstage\/)/.test(request.url ?? ''),
      }),
      // Statement text only: Kysely sends parameters apart, and their values (names, emails) stay out of traces.
      new PgInstrumentation({ enhancedDatabaseReporting: false }),
      new UndiciInstrumentation(),
    ],
  });
  sdk.start();
  sampleFlagEvaluations(config.flagEvaluationEventsRatio);
  return { shutdown: () => sdk.shutdown() };
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
