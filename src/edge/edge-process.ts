import { setFlagsFromString } from 'node:v8';
import { ConfigError, loadEdgeConfig, type EdgeConfig } from '../config.js';
import { createLogger } from '../http/plugins/logging.js';
import { hardenPrototypes } from '../shared/prototype-hardening.js';
import type { Telemetry } from '../telemetry.js';
import { startEdge } from './edge-server.js';
import { memoryFitOfThisProcess } from './memory-fit.js';

function readConfig(): EdgeConfig {
  try {
    return loadEdgeConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`Vexil Edge cannot start: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

// As the server does (src/server-process.ts): the old generation grows by half rather than fourfold before it is collected, so
// memory stays near the live set (the flags held) between collections.
setFlagsFromString('--heap-growing-percent=50');

/** A URL as the log may show it: a user name and password in it are secrets. */
function withoutCredentials(url: string): string {
  const shown = new URL(url);
  shown.username = '';
  shown.password = '';
  return shown.toString();
}

/** Vexil Edge, configured as Unleash Edge is (environment variables of the same names); `edge/main.ts` starts it. */
export async function runEdge(telemetry: Telemetry | undefined): Promise<void> {
  hardenPrototypes();
  const config = readConfig();
  const log = createLogger(config.logLevel);
  const startedAt = performance.now();
  const edge = await startEdge(config, log);
  const flagsHeld = edge.services.flags.flagCounts().reduce((sum, [, count]) => sum + count, 0);
  const fit = memoryFitOfThisProcess(flagsHeld);
  if (fit.refusal) {
    process.stderr.write(`Vexil Edge cannot start: ${fit.refusal}\n`);
    process.exit(1);
  }
  if (fit.warning) log.warn(fit.warning);
  telemetry?.exportMetricsOf(edge.services.metrics.registry);
  await edge.app.listen({ port: config.port, host: config.host });
  edge.app.log.info(
    { startupMs: Math.round(performance.now() - startedAt), changes: edge.services.flags.status.changes },
    config.source.kind === 'offline'
      ? `Vexil Edge is serving ${config.source.bootstrapFile} (offline)`
      : `Vexil Edge is serving; its upstream ${withoutCredentials(config.source.upstreamUrl)} is ${edge.services.flags.status.reachable ? 'reachable' : 'unreachable'}`,
  );
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    edge.app.log.info({ signal }, 'Shutting down: finishing requests in flight and sending the usage gathered');
    try {
      await edge.stop();
      await telemetry?.shutdown();
      process.exit(0);
    } catch (error) {
      edge.app.log.error({ err: error }, 'Shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}
