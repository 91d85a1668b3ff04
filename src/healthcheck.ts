import { loadConfig, loadEdgeConfig } from './config.js';

/**
 * The container image's HEALTHCHECK (`node dist/healthcheck.js`): exits 0 when the process of this container
 * answers its health probe, 1 otherwise. One image runs the server or Vexil Edge; the edge is the one given an
 * upstream or a bootstrap file, and it answers on its own port and path.
 */
const edge = Boolean(process.env.UPSTREAM_URL?.trim() || process.env.BOOTSTRAP_FILE?.trim());
const { port, path } = edge
  ? { port: loadEdgeConfig().port, path: '/internal-backstage/health' }
  : { port: loadConfig().port, path: '/health' };

try {
  const answer = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(2500) });
  process.exit(answer.ok ? 0 : 1);
} catch {
  process.exit(1);
}
