import { loadEdgeConfig } from '../../src/config.js';
import { startEdge, type RunningEdge } from '../../src/edge/edge-server.js';
import { createLogger } from '../../src/http/plugins/logging.js';

export interface TestEdge {
  edge: RunningEdge;
  /** Where SDKs reach it. */
  url: string;
  close(): Promise<void>;
}

/**
 * Vexil Edge in this process, listening on a free port, configured by the environment variables its users set. Its
 * timers run on long intervals unless the test sets them: the test drives rounds with `edge.runOnce()`.
 */
export async function startTestEdge(env: Record<string, string>): Promise<TestEdge> {
  const config = loadEdgeConfig({
    FEATURES_REFRESH_INTERVAL_SECONDS: '3600',
    METRICS_INTERVAL_SECONDS: '3600',
    UPSTREAM_REQUEST_TIMEOUT: '2',
    ...env,
    PORT: '0',
  });
  const edge = await startEdge(config, createLogger('silent'));
  const url = await edge.app.listen({ port: 0, host: '127.0.0.1' });
  return { edge, url, close: () => edge.stop() };
}
