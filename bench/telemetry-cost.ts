/**
 * What OpenTelemetry costs the frontend API, the busiest path it instruments:
 *   npm run bench:telemetry -- --data-dir ./bench-data [--duration 10]
 * Runs bench/run.ts's frontend API case (a new userId each request) on the seeded data four times: telemetry off;
 * on, every request traced and exported over OTLP/HTTP to a collector this script runs (it takes and drops what
 * arrives), with no evaluation recorded as a `feature_flag.evaluation` event, with the default 1%, and with every
 * one. Prints each run's table row and what reached the collector.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    'data-dir': { type: 'string' },
    'database-url': { type: 'string' },
    duration: { type: 'string', default: '5' },
  },
});
const database = values['database-url'] ? ['--database-url', values['database-url']] : ['--data-dir', values['data-dir'] ?? './bench-data'];

let received = { requests: 0, bytes: 0 };
const collector = createServer((request, response) => {
  request.on('data', (chunk: Buffer) => (received.bytes += chunk.length));
  request.on('end', () => {
    received.requests++;
    response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});
await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;

const runs: Array<{ name: string; settings: string[] }> = [
  { name: 'telemetry off', settings: [] },
  { name: 'traces on, no evaluation events', settings: [`OTEL_EXPORTER_OTLP_ENDPOINT=${endpoint}`, 'FLAG_EVALUATION_EVENTS_RATIO=0'] },
  { name: 'traces on, 1% of evaluations as events (default)', settings: [`OTEL_EXPORTER_OTLP_ENDPOINT=${endpoint}`] },
  {
    name: 'traces on, every evaluation as an event',
    settings: [`OTEL_EXPORTER_OTLP_ENDPOINT=${endpoint}`, 'FLAG_EVALUATION_EVENTS_RATIO=1'],
  },
];
process.stdout.write(
  '| telemetry | c=1 req/s | c=1 p50 | c=1 p99 | c=N req/s | c=N p50 | c=N p99 | sent to the collector |\n|---|---|---|---|---|---|---|---|\n',
);
for (const run of runs) {
  received = { requests: 0, bytes: 0 };
  // Run asynchronously: the collector in this process must keep answering while the benchmark runs.
  const args = [
    '--import',
    'tsx',
    join(import.meta.dirname, 'run.ts'),
    '--only',
    '--cases',
    'frontend API',
    '--duration',
    values.duration,
    ...database,
  ];
  const output = await new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, [...args, ...run.settings.flatMap((setting) => ['--server-env', setting])], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.on('exit', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`bench/run.ts exited with ${code}`))));
  });
  const row = output.split('\n').find((line) => line.startsWith('| frontend API'));
  const cells =
    row
      ?.split('|')
      .slice(2, -1)
      .map((cell) => cell.trim()) ?? [];
  const sent = run.settings.length === 0 ? '—' : `${received.requests} exports, ${(received.bytes / 1024 / 1024).toFixed(1)} MiB`;
  process.stdout.write(`| ${run.name} | ${cells.join(' | ')} | ${sent} |\n`);
}
collector.close();
