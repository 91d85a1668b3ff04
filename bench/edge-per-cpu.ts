/**
 * Vexil Edge on Unleash Edge's published terms: requests per CPU on `/api/frontend` and `/api/client/features`
 * with 350 flags (about 100 kB), and the same at 5,000 flags beside it.
 *   npm run bench:edge [-- --flags 350,5000 --duration 10 --connections 16]
 * A server on an embedded database of its own gets the flags through the import API; an edge follows it pinned to
 * CPU 0 (`taskset`, as a container given one CPU), the load generator runs on CPU 1, and the server is paused
 * (SIGSTOP) while the edge is measured, as it stands on other machines in production. Each case runs three rounds;
 * the median is shown with every round beside it. At the first size, changes made one after another on the server
 * are timed to a stream behind two chained edges.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { execFileSync } from 'node:child_process';
import { type Case, drain, type Measurement, measure, ms, residentMiB } from './measure.js';
import { createSdkToken, startServer, TOKEN } from './server.js';
import { changesThroughChainedEdges, startEdgeProcess } from './edge.js';

/** Unleash Edge's published figures for 350 flags, one CPU, 128 MiB. */
const UNLEASH_EDGE = { frontend: { requestsPerSecond: 6900, p95: 7.4 }, clientFeatures: { requestsPerSecond: 3236, p95: 16 } };
const ROUNDS = 3;
const IMPORT_CHUNK = 1000;

/**
 * Flags of about 300 bytes each, as Unleash Edge's 350 flags in 100 kB: enabled in production, a gradual rollout by
 * the user's id to everyone, so each request hashes every flag and its answer lists them all.
 */
function importDocument(names: string[]) {
  return {
    features: names.map((name) => ({ name, type: 'release' })),
    featureStrategies: names.map((name) => ({
      name: 'flexibleRollout',
      featureName: name,
      parameters: { rollout: '100', stickiness: 'default', groupId: name },
      constraints: [],
      segments: [],
    })),
    featureEnvironments: names.map((name) => ({ name, featureName: name, enabled: true })),
    tagTypes: [],
  };
}

async function importFlags(baseUrl: string, count: number): Promise<void> {
  const names = Array.from({ length: count }, (_, i) => `flag-${String(i).padStart(5, '0')}`);
  for (let from = 0; from < names.length; from += IMPORT_CHUNK) {
    const answer = await fetch(`${baseUrl}/api/admin/features-batch/import`, {
      method: 'POST',
      headers: { authorization: TOKEN, 'content-type': 'application/json' },
      body: JSON.stringify({ project: 'default', environment: 'production', data: importDocument(names.slice(from, from + IMPORT_CHUNK)) }),
    });
    if (!answer.ok) throw new Error(`the import answered ${answer.status}: ${await answer.text()}`);
  }
}

function median(rounds: Measurement[]): { median: Measurement; all: string; errors: number } {
  const sorted = [...rounds].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond);
  return {
    median: sorted[Math.floor(sorted.length / 2)]!,
    all: rounds.map((round) => round.requestsPerSecond.toFixed(0)).join(', '),
    errors: rounds.reduce((sum, round) => sum + round.errors, 0),
  };
}

async function measureSize(flags: number, options: { duration: number; connections: number; changes: number }): Promise<string[]> {
  const { duration, connections } = options;
  const dataDir = await mkdtemp(join(tmpdir(), 'vexil-edge-cpu-'));
  const server = await startServer({ DATA_DIR: dataDir });
  const edgeCpu = 0;
  try {
    await importFlags(server.baseUrl, flags);
    const client = await createSdkToken(server.baseUrl, TOKEN, 'client', 'edge-cpu');
    const frontend = await createSdkToken(server.baseUrl, TOKEN, 'frontend', 'edge-cpu-frontend');
    const edge = await startEdgeProcess({ UPSTREAM_URL: server.baseUrl, TOKENS: client }, client, edgeCpu);
    try {
      const whole = await fetch(`${edge.baseUrl}/api/client/features`, { headers: { authorization: client } });
      const body = Buffer.from(await whole.arrayBuffer());
      const held = (JSON.parse(body.toString('utf8')) as { features: unknown[] }).features.length;
      let user = 0;
      const cases: Array<Case & { target?: { requestsPerSecond: number; p95: number } }> = [
        {
          name: `/api/frontend, a new userId each request (${held} flags evaluated, all on)`,
          path: '/api/frontend',
          headers: { authorization: frontend },
          requestOf: () => ({ path: `/api/frontend?userId=u${++user}` }),
          target: flags === 350 ? UNLEASH_EDGE.frontend : undefined,
        },
        {
          name: `/api/client/features, the whole body (${(body.length / 1024).toFixed(0)} kB)`,
          path: '/api/client/features',
          headers: { authorization: client },
          target: flags === 350 ? UNLEASH_EDGE.clientFeatures : undefined,
        },
      ];
      const lines = [
        `**${held.toLocaleString('en')} flags** (${(body.length / 1024).toFixed(0)} kB of client features), edge on one CPU, c=${connections}, ${duration} s a round:`,
        '',
        '| case | req/s (median; rounds) | p50 | p97.5 (≥ p95) | p99 | Unleash Edge |',
        '|---|---|---|---|---|---|',
      ];
      for (const benchCase of cases) {
        await drain(edge.baseUrl, '/internal-backstage/health');
        await measure(edge.baseUrl, benchCase, 1, 1); // warm-up: JIT, the token's first check
        const rounds: Measurement[] = [];
        for (let round = 0; round < ROUNDS; round++) {
          server.process.kill('SIGSTOP');
          rounds.push(await measure(edge.baseUrl, benchCase, connections, duration).finally(() => server.process.kill('SIGCONT')));
        }
        const { median: shown, all, errors } = median(rounds);
        const target = benchCase.target;
        const verdict = target
          ? `${target.requestsPerSecond.toLocaleString('en')} req/s, p95 ${target.p95} ms: ${shown.requestsPerSecond >= target.requestsPerSecond && shown.p97_5 <= target.p95 ? '✔' : '✘'}`
          : '(not published)';
        lines.push(
          `| ${benchCase.name} | **${shown.requestsPerSecond.toFixed(0)}** (${all})${errors > 0 ? `, ${errors} errors` : ''} | ${ms(shown.p50)} | ${ms(shown.p97_5)} | ${ms(shown.p99)} | ${verdict} |`,
        );
        process.stderr.write(`${lines.at(-1)}\n`);
      }
      const rss = await residentMiB(edge.process.pid!);
      lines.push('', `Edge RSS after the load: ${rss.total.toFixed(0)} MiB (anonymous ${rss.anonymous.toFixed(0)} MiB).`, '');
      if (options.changes > 0) {
        const chain = await changesThroughChainedEdges(server, client, options.changes);
        lines.push(
          `${chain.count.toLocaleString('en')} changes one after another, server → edge → edge → a stream: ${chain.reached.toLocaleString('en')} arrived, p50 ${ms(chain.p50)}, **p99 ${ms(chain.p99)}**, max ${ms(chain.max)} (target p99 ≤ 1 s: ${chain.reached === chain.count && chain.p99 <= 1000 ? '✔' : '✘'})`,
          '',
        );
      }
      return lines;
    } finally {
      await edge.stop();
    }
  } finally {
    server.process.kill('SIGCONT');
    server.process.kill('SIGTERM');
    if (server.process.exitCode === null) await new Promise((resolve) => server.process.once('exit', resolve));
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      flags: { type: 'string', default: '350,5000' },
      duration: { type: 'string', default: '10' },
      connections: { type: 'string', default: '16' },
      /** Changes sent through two chained edges at the first size: 0 leaves the measurement out. */
      changes: { type: 'string', default: '1000' },
    },
  });
  if (availableParallelism() < 2) throw new Error('the edge takes CPU 0 and the load generator CPU 1: two CPUs are needed');
  // The load generator keeps off the edge's CPU.
  execFileSync('taskset', ['-a', '-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });
  const lines: string[] = [];
  for (const [index, flags] of values.flags.split(',').map(Number).entries()) {
    const changes = index === 0 ? Number(values.changes) : 0;
    lines.push(...(await measureSize(flags, { duration: Number(values.duration), connections: Number(values.connections), changes })));
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

await main();
