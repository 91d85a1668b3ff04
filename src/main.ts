/**
 * `npm start`: the server. Telemetry, when configured, starts first: it must be running before the modules it
 * instruments are loaded, so the server's own modules are imported only then.
 */
import { startTelemetryOrExit } from './telemetry.js';

const telemetry = await startTelemetryOrExit('vexil', 'Vexil');
try {
  const { runServer } = await import('./server-process.js');
  await runServer(telemetry);
} catch (error) {
  process.stderr.write(`Vexil failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
}
