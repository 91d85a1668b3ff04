/**
 * `npm run edge`: Vexil Edge. Telemetry, when configured, starts first: it must be running before the modules it
 * instruments are loaded, so the edge's own modules are imported only then.
 */
import { startTelemetryOrExit } from '../telemetry.js';
import { checkRunningEdge, edgeCommand } from './command-line.js';

// Unleash Edge's command line: its arguments become the variables every reader below takes.
const command = edgeCommand(process.argv.slice(2), process.env);
if (command.kind === 'refused') {
  process.stderr.write(`Vexil Edge cannot start: ${command.message}\n`);
  process.exit(1);
}
Object.assign(process.env, command.variables);
if (command.kind === 'check') {
  const healthy = await checkRunningEdge(command.probe, process.env.EDGE_URL?.trim() || undefined);
  process.stdout.write(`${healthy ? 'OK' : `The edge is not ${command.probe === 'ready' ? 'ready' : 'healthy'}`}\n`);
  process.exit(healthy ? 0 : 1);
}

const telemetry = await startTelemetryOrExit('vexil-edge', 'Vexil Edge');
try {
  const { runEdge } = await import('./edge-process.js');
  await runEdge(telemetry);
} catch (error) {
  process.stderr.write(`Vexil Edge failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
}
