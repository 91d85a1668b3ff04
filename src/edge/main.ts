/**
 * `npm run edge`: Vexil Edge. Telemetry, when configured, starts first: it must be running before the modules it
 * instruments are loaded, so the edge's own modules are imported only then.
 */
import { startTelemetryOrExit } from '../telemetry.js';

const telemetry = await startTelemetryOrExit('vexil-edge', 'Vexil Edge');
try {
  const { runEdge } = await import('./edge-process.js');
  await runEdge(telemetry);
} catch (error) {
  process.stderr.write(`Vexil Edge failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
}
