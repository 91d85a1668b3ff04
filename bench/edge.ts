/**
 * Vexil Edge in front of the benchmark's server, as `npm run edge` runs it (a process of its own, following a client
 * token of production over every project): what SDKs get from it beside what they get from the server, its idle
 * memory holding every flag, its start-up from a backup with the server away, and one change reaching many streams.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Case, drain, type Measurement, measure, ms, percentile, residentMiB } from './measure.js';
import { freePort } from '../test/helpers/free-port.js';
import { createSdkToken, type Server, TOKEN } from './server.js';

const MAIN = join(import.meta.dirname, '../dist/edge/main.js');
/**
 * The environment `npm run edge` sets before `node` (glibc's allocator settings) and the options it gives Node (the
 * young generation's size), read from package.json's script so that the edge measured is the edge shipped.
 */
const EDGE_SCRIPT = JSON.parse(readFileSync(join(import.meta.dirname, '../package.json'), 'utf8')).scripts.edge as string;
const [EDGE_SCRIPT_ASSIGNMENTS = '', EDGE_SCRIPT_COMMAND = ''] = EDGE_SCRIPT.split(/\bnode\b/);
const EDGE_SCRIPT_ENV = Object.fromEntries(
  EDGE_SCRIPT_ASSIGNMENTS.trim()
    .split(/\s+/)
    .map((assignment) => assignment.split('=')),
) as Record<string, string>;
const EDGE_NODE_OPTIONS = EDGE_SCRIPT_COMMAND.trim()
  .split(/\s+/)
  .filter((argument) => argument.startsWith('--'));

export interface EdgeProcess {
  process: ChildProcess;
  baseUrl: string;
  /** The edge's own account of its start-up (its "serving" log line). */
  startupMs: number;
  /** From spawning the process to the first answer of its client API. */
  toServingMs: number;
  stop(): Promise<void>;
}

/** Starts dist/edge/main.js on a free port, on one CPU when `pinnedTo` names it (as a container given one CPU is). */
export async function startEdgeProcess(env: Record<string, string>, token: string, pinnedTo?: number): Promise<EdgeProcess> {
  const port = await freePort();
  const started = performance.now();
  const [command, args] =
    pinnedTo === undefined
      ? [process.execPath, [...EDGE_NODE_OPTIONS, MAIN]]
      : ['taskset', ['-c', String(pinnedTo), process.execPath, ...EDGE_NODE_OPTIONS, MAIN]];
  const child = spawn(command, args, {
    env: { PATH: process.env.PATH ?? '', ...EDGE_SCRIPT_ENV, INTERFACE: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', process.stderr],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const baseUrl = `http://127.0.0.1:${port}`;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`Vexil Edge exited with ${child.exitCode} while starting: ${output}`);
    const answer = await fetch(`${baseUrl}/api/client/features`, { headers: { authorization: token } }).catch(() => undefined);
    if (answer?.ok) {
      await answer.arrayBuffer();
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const toServingMs = performance.now() - started;
  const line = output.split('\n').find((entry) => entry.includes('Vexil Edge is serving'));
  const startupMs = line ? (JSON.parse(line) as { startupMs: number }).startupMs : Number.NaN;
  return {
    process: child,
    baseUrl,
    startupMs,
    toServingMs,
    async stop() {
      child.kill('SIGTERM');
      if (child.exitCode === null) await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

async function call(baseUrl: string, method: string, path: string, body?: unknown): Promise<Response> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: TOKEN, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${await response.text()}`);
  return response;
}

/**
 * `count` streams opened on the edge (each on a narrow scope: what is measured is a connection's cost, not `count`
 * hydrations), then one flag toggled on the server; the time from sending the toggle to each stream's update.
 */
async function streamsThroughEdge(server: Server, edge: EdgeProcess, client: string, project: string, count: number) {
  const prefix = `edge-streams-${Date.now()}`;
  const flag = `${prefix}-flag`;
  await call(server.baseUrl, 'POST', `/api/admin/projects/${project}/features`, { name: flag });
  // The new flag reaches the edge before the streams open: its own arrival is not the change measured.
  while (!(await fetch(`${edge.baseUrl}/api/client/features/${flag}`, { headers: { authorization: client } })).ok) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const request = `GET /api/client/streaming?namePrefix=${prefix} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${client}\r\nAccept: text/event-stream\r\n\r\n`;
  const port = Number(new URL(edge.baseUrl).port);
  const sockets: Socket[] = [];
  const arrivals: number[] = [];
  let sentAt = 0;
  const open = () =>
    new Promise<void>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.write(request));
      socket.setEncoding('utf8');
      let connected = false;
      let arrived = false;
      socket.on('data', (text: string) => {
        if (!connected && text.includes('unleash-connected')) {
          connected = true;
          resolve();
        } else if (connected && !arrived && sentAt > 0 && text.includes('unleash-updated')) {
          arrived = true;
          arrivals.push(performance.now() - sentAt);
        }
      });
      socket.on('error', reject);
      sockets.push(socket);
    });
  for (let opened = 0; opened < count; opened += 200) {
    await Promise.all(Array.from({ length: Math.min(200, count - opened) }, open));
  }
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const rssMiB = (await residentMiB(edge.process.pid!)).total;
  sentAt = performance.now();
  await call(server.baseUrl, 'POST', `/api/admin/projects/${project}/features/${flag}/environments/production/on`);
  const deadline = performance.now() + 30_000;
  while (arrivals.length < count && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  for (const socket of sockets) socket.destroy();
  // Archived and deleted, so the seeded data holds the same flags for the next run.
  await call(server.baseUrl, 'DELETE', `/api/admin/projects/${project}/features/${flag}`);
  await call(server.baseUrl, 'DELETE', `/api/admin/archive/${flag}`);
  const sorted = [...arrivals].sort((a, b) => a - b);
  return {
    count,
    reached: arrivals.length,
    rssMiB,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    max: sorted.at(-1) ?? Number.NaN,
  };
}

const rate = (value: number) => `${value.toFixed(0)} req/s`;

/** Rounds of each comparison between the edge and the server. */
const ROUNDS = 3;

/** The median round's rate and p99, with every round's rate beside it. */
function shown(rounds: Measurement[]): [string, string] {
  const sorted = [...rounds].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond);
  const median = sorted[Math.floor(sorted.length / 2)]!;
  const errors = rounds.reduce((sum, round) => sum + round.errors, 0);
  const all = rounds.map((round) => round.requestsPerSecond.toFixed(0)).join(', ');
  return [`${rate(median.requestsPerSecond)} (${all})`, `${ms(median.p99)}${errors > 0 ? ` (${errors} errors)` : ''}`];
}

export async function edgeLines(server: Server, options: { duration: number; project: string; streams: number }): Promise<string[]> {
  const client = await createSdkToken(server.baseUrl, TOKEN, 'client', 'edge');
  const frontend = await createSdkToken(server.baseUrl, TOKEN, 'frontend', 'edge-frontend');
  const backupFolder = await mkdtemp(join(tmpdir(), 'vexil-edge-bench-'));
  const lines: string[] = [];
  let edge = await startEdgeProcess({ UPSTREAM_URL: server.baseUrl, TOKENS: client, BACKUP_FOLDER: backupFolder }, client);
  try {
    const first = await fetch(`${edge.baseUrl}/api/client/features`, { headers: { authorization: client } });
    const { features } = (await first.json()) as { features: Array<{ enabled: boolean }> };
    const etag = first.headers.get('etag')!;
    const on = features.filter((feature) => feature.enabled).length;
    // V8 gives back what start-up left behind once allocation has been quiet for a while (its memory reducer): the
    // figure 5 s after start-up still holds that garbage, the one after 30 s is what an idle edge keeps.
    await new Promise((resolve) => setTimeout(resolve, 5000));
    const earlyMiB = (await residentMiB(edge.process.pid!)).total;
    await new Promise((resolve) => setTimeout(resolve, 25_000));
    const idle = await residentMiB(edge.process.pid!);
    lines.push(
      `Vexil Edge holding ${features.length.toLocaleString('en')} flags (${on} on in production): RSS ${earlyMiB.toFixed(0)} MiB 5 s after start-up, ${idle.total.toFixed(0)} MiB idle after 30 s (anonymous ${idle.anonymous.toFixed(0)} MiB, mapped from files ${idle.files.toFixed(0)} MiB)`,
    );

    let user = 0;
    const cases: Array<Case & { connections: number }> = [
      {
        name: 'client features, 304 with the current ETag',
        path: '/api/client/features',
        headers: { authorization: client, 'if-none-match': etag },
        connections: 16,
      },
      { name: 'client features, 200 (the whole body)', path: '/api/client/features', headers: { authorization: client }, connections: 64 },
      {
        name: `frontend API, a new userId each request (${on} flags on)`,
        path: '/api/frontend?userId=u0',
        headers: { authorization: frontend },
        requestOf: () => ({ path: `/api/frontend?userId=u${++user}&properties[plan]=${user % 3 === 0 ? 'pro' : 'free'}` }),
        connections: 16,
      },
    ];
    lines.push('', `| case | edge req/s | edge p99 | server req/s | server p99 |`, '|---|---|---|---|---|');
    for (const benchCase of cases) {
      const warmed = async (baseUrl: string, probe: string) => {
        await drain(baseUrl, probe);
        await measure(baseUrl, benchCase, 1, 1); // warm-up: JIT, caches, and the edge's first check of the token
      };
      // In production the upstream stands on other machines; here it shares the two cores with the edge and the
      // load generator, and its background work (schedulers, the embedded database's upkeep) would be measured
      // as the edge's. It is paused (SIGSTOP: its connections stay open) while the edge is measured.
      const atEdge: Measurement[] = [];
      const atServer: Measurement[] = [];
      // The two are measured in turns and the median of each kept: one run of either moves by a third from run to
      // run on two shared cores, more than the difference to be seen.
      const measureEdge = async () => {
        await warmed(edge.baseUrl, '/internal-backstage/health');
        server.process.kill('SIGSTOP');
        const result = await measure(edge.baseUrl, benchCase, benchCase.connections, options.duration).finally(() =>
          server.process.kill('SIGCONT'),
        );
        atEdge.push(result);
      };
      const measureServer = async () => {
        await warmed(server.baseUrl, '/health');
        atServer.push(await measure(server.baseUrl, benchCase, benchCase.connections, options.duration));
      };
      // Which goes first changes from round to round, so that neither always follows the other's load.
      for (let round = 0; round < ROUNDS; round++) {
        for (const next of round % 2 === 0 ? [measureEdge, measureServer] : [measureServer, measureEdge]) await next();
      }
      lines.push(`| ${benchCase.name}, c=${benchCase.connections} | ${[...shown(atEdge), ...shown(atServer)].join(' | ')} |`);
      process.stderr.write(`${lines.at(-1)}\n`);
    }
    lines.push('');

    const streams = await streamsThroughEdge(server, edge, client, options.project, options.streams);
    lines.push(
      `${streams.count.toLocaleString('en')} streaming SDKs on one edge (edge RSS ${streams.rssMiB.toFixed(0)} MiB with them open): one change on the server reached ${streams.reached.toLocaleString('en')} of them, p50 ${ms(streams.p50)}, p99 ${ms(streams.p99)}, max ${ms(streams.max)}`,
    );
    await edge.stop();

    // The server away: a port nobody listens on. The edge serves from its backup.
    const nobody = `http://127.0.0.1:${await freePort()}`;
    const starts: EdgeProcess[] = [];
    for (let run = 0; run < 3; run++) {
      edge = await startEdgeProcess(
        { UPSTREAM_URL: nobody, TOKENS: client, BACKUP_FOLDER: backupFolder, UPSTREAM_REQUEST_TIMEOUT: '1' },
        client,
      );
      starts.push(edge);
      await edge.stop();
    }
    const median = starts.sort((a, b) => a.toServingMs - b.toServingMs)[1]!;
    lines.push(
      `Start-up from the backup with the server away, median of 3: ${ms(median.startupMs)} by the edge's account, ${ms(median.toServingMs)} from spawning to its first answer of the client API (Node's own start included)`,
    );
  } finally {
    await edge.stop();
    await rm(backupFolder, { recursive: true, force: true });
  }
  return lines;
}

/**
 * `count` changes, one after another, each the toggle of a flag on the server, timed from sending it to the update
 * on a stream opened on the second of two chained edges (server → edge → edge → SDK): what an SDK behind a
 * regional edge that follows a central one waits for.
 */
export async function changesThroughChainedEdges(
  server: Server,
  client: string,
  count: number,
): Promise<{ count: number; reached: number; p50: number; p99: number; max: number }> {
  const flag = `edge-chain-${Date.now()}`;
  await call(server.baseUrl, 'POST', '/api/admin/projects/default/features', { name: flag });
  await call(server.baseUrl, 'POST', `/api/admin/projects/default/features/${flag}/environments/production/strategies`, {
    name: 'default',
  });
  const central = await startEdgeProcess({ UPSTREAM_URL: server.baseUrl, TOKENS: client }, client);
  const regional = await startEdgeProcess({ UPSTREAM_URL: central.baseUrl, TOKENS: client }, client);
  const socket = connect(Number(new URL(regional.baseUrl).port), '127.0.0.1');
  try {
    while (!(await fetch(`${regional.baseUrl}/api/client/features/${flag}`, { headers: { authorization: client } })).ok) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    socket.setEncoding('utf8');
    let connected: () => void = () => {};
    let updated: () => void = () => {};
    const greeting = new Promise<void>((resolve) => (connected = resolve));
    let text = '';
    socket.on('data', (chunk: string) => {
      text += chunk;
      if (text.includes('unleash-connected')) connected();
      // Only whole events count: an update is announced by its event line and ends with a blank line.
      let at = text.indexOf('event: unleash-updated');
      while (at >= 0 && text.indexOf('\n\n', at) >= 0) {
        text = text.slice(text.indexOf('\n\n', at) + 2);
        updated();
        at = text.indexOf('event: unleash-updated');
      }
      if (at < 0) text = text.slice(-64);
    });
    socket.write(
      `GET /api/client/streaming?namePrefix=${flag} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${client}\r\nAccept: text/event-stream\r\n\r\n`,
    );
    await greeting;
    const latencies: number[] = [];
    for (let change = 0; change < count; change++) {
      const arrived = new Promise<boolean>((resolve) => {
        updated = () => resolve(true);
        setTimeout(() => resolve(false), 10_000).unref();
      });
      const sentAt = performance.now();
      await call(
        server.baseUrl,
        'POST',
        `/api/admin/projects/default/features/${flag}/environments/production/${change % 2 === 0 ? 'on' : 'off'}`,
      );
      if (await arrived) latencies.push(performance.now() - sentAt);
    }
    const sorted = [...latencies].sort((a, b) => a - b);
    return {
      count,
      reached: latencies.length,
      p50: percentile(sorted, 0.5),
      p99: percentile(sorted, 0.99),
      max: sorted.at(-1) ?? Number.NaN,
    };
  } finally {
    socket.destroy();
    await regional.stop();
    await central.stop();
    await call(server.baseUrl, 'DELETE', `/api/admin/projects/default/features/${flag}`);
    await call(server.baseUrl, 'DELETE', `/api/admin/archive/${flag}`);
  }
}
