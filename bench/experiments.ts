// `npm run bench:experiments`: the experiments' figures the issue asks for, printed with their data sizes.
//
// 1. The statistics engine on 10,000 simulated experiments (A/A false positives, coverage, peeking, CUPED, SRM).
// 2. Track ingestion through HTTP: events per second one server takes, and its memory while it does.
// 3. The analysis of 1,000,000 exposed units and 10,000,000 tracked events, three metrics, on PostgreSQL.
//
// Options: --database-url (a PostgreSQL server whose database `postgres` lets it create one of its own; default
// postgres://postgres@127.0.0.1:5432/postgres), --units, --events, --ingest-seconds.
import { execFileSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { simulateExperiments } from '../test/helpers/experiment-simulation.js';
import { startServer, TOKEN, createSdkToken } from './server.js';

const { values } = parseArgs({
  options: {
    'database-url': { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' },
    units: { type: 'string', default: '1000000' },
    events: { type: 'string', default: '10000000' },
    'ingest-seconds': { type: 'string', default: '10' },
    simulations: { type: 'string', default: '10000' },
  },
});
const UNITS = Number(values.units);
const EVENTS = Number(values.events);

function section(title: string) {
  process.stdout.write(`\n## ${title}\n\n`);
}

function rssMiB(pid: number): number {
  return (
    Number(
      execFileSync('ps', ['-o', 'rss=', '-p', String(pid)])
        .toString()
        .trim(),
    ) / 1024
  );
}

async function api<T>(baseUrl: string, method: string, path: string, body?: unknown, authorization = TOKEN): Promise<T> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return (await response.json().catch(() => undefined)) as T;
}

async function simulation(): Promise<void> {
  section(`Statistics engine: ${Number(values.simulations).toLocaleString('en')} simulated experiments (1,000 units per arm)`);
  const started = performance.now();
  const figures = simulateExperiments(Number(values.simulations));
  const pct = (value: number) => `${(value * 100).toFixed(2)} %`;
  process.stdout.write(
    [
      `| figure | value | bar |`,
      `|---|---|---|`,
      `| A/A false-positive rate, Welch at α = 0.05 | ${pct(figures.falsePositiveRate)} | 4.5–5.5 % |`,
      `| A/A Bayesian chance to win > 95 % | ${pct(figures.bayesianFalseWinRate)} | ≈ 5 % |`,
      `| 95 % interval coverage of a known 5 % lift | ${pct(figures.coverage)} | 94–96 % |`,
      `| 30 daily peeks, fixed horizon | ${pct(figures.peekingFalsePositiveRate.fixedHorizon)} | (inflated) |`,
      `| 30 daily peeks, confidence sequence | ${pct(figures.peekingFalsePositiveRate.sequential)} | ≤ 5 % |`,
      `| CUPED interval width at ρ = 0.7 | ${figures.cupedWidthRatio.toFixed(3)} of unadjusted | ≈ 0.714 |`,
      `| SRM alarms, 50/50 as configured | ${pct(figures.sampleRatioAlarms.configured)} | ≈ 0.1 % |`,
      `| SRM alarms, injected 48/52 at 100,000 units | ${pct(figures.sampleRatioAlarms.skewed)} | 100 % |`,
      `(${((performance.now() - started) / 1000).toFixed(1)} s)`,
      '',
    ].join('\n'),
  );
}

async function main(): Promise<void> {
  await simulation();

  const admin = new pg.Client({ connectionString: values['database-url'] });
  try {
    await admin.connect();
  } catch (error) {
    process.stdout.write(
      `\nNo PostgreSQL at ${values['database-url']} (${(error as Error).message}): the ingestion and analysis figures are skipped.\n`,
    );
    return;
  }
  const database = `vexil_bench_experiments_${Date.now()}`;
  await admin.query(`CREATE DATABASE ${database}`);
  const url = new URL(values['database-url']!);
  url.pathname = `/${database}`;
  const server = await startServer({
    DATABASE_URL: url.toString(),
    EXPERIMENT_EVENTS_PER_MINUTE: '100000000',
    EXPERIMENT_ANALYSIS_TIMEOUT_MS: '600000',
  });
  const db = new pg.Client({ connectionString: url.toString() });
  await db.connect();
  try {
    // The experiment: a flag's two variants in production, three metrics.
    const variants = ['control', 'treatment'].map((name) => ({ name, weight: 500, weightType: 'variable', stickiness: 'userId' }));
    await api(server.baseUrl, 'POST', '/api/admin/projects/default/features', { name: 'bench-button' });
    const strategy = await api<{ id: string }>(
      server.baseUrl,
      'POST',
      '/api/admin/projects/default/features/bench-button/environments/production/strategies',
      {
        name: 'flexibleRollout',
        parameters: { rollout: '100', stickiness: 'userId', groupId: 'bench-button' },
        variants,
      },
    );
    const metrics = '/api/admin/environments/production/experiment-metrics';
    await api(server.baseUrl, 'POST', metrics, { name: 'checkout', kind: 'proportion', event: 'checkout' });
    await api(server.baseUrl, 'POST', metrics, { name: 'revenue', kind: 'mean', event: 'purchase', aggregation: 'sum', cap: 1000 });
    await api(server.baseUrl, 'POST', metrics, {
      name: 'order-value',
      kind: 'ratio',
      event: 'purchase',
      aggregation: 'sum',
      denominatorEvent: 'order',
    });
    await api(server.baseUrl, 'POST', '/api/admin/projects/default/experiments', {
      name: 'bench',
      featureName: 'bench-button',
      environment: 'production',
      strategyId: strategy.id,
      metrics: [
        { metric: 'checkout', role: 'goal' },
        { metric: 'revenue', role: 'secondary' },
        { metric: 'order-value', role: 'secondary' },
      ],
    });
    await api(server.baseUrl, 'POST', '/api/admin/projects/default/experiments/bench/start');

    // Ingestion: clients post batches of 1,000 events as fast as the server takes them.
    const seconds = Number(values['ingest-seconds']);
    section(`Track ingestion: batches of 1,000 events over HTTP for ${seconds} s, 8 clients at a time`);
    const token = await createSdkToken(server.baseUrl, TOKEN, 'client', 'track');
    const rssBefore = rssMiB(server.process.pid!);
    let sent = 0;
    let peakRss = rssBefore;
    const deadline = performance.now() + seconds * 1000;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: 8 }, async (_, client) => {
        let batch = 0;
        while (performance.now() < deadline) {
          const events = Array.from({ length: 1000 }, (_, i) => ({
            event: i % 3 === 0 ? 'order' : 'purchase',
            context: { userId: `ingest-${client}-${batch}-${i % 200}` },
            value: i % 50,
          }));
          await api(server.baseUrl, 'POST', '/api/client/track', { events }, token);
          sent += events.length;
          batch++;
          if (batch % 10 === 0) peakRss = Math.max(peakRss, rssMiB(server.process.pid!));
        }
      }),
    );
    const elapsed = (performance.now() - started) / 1000;
    process.stdout.write(
      `${sent.toLocaleString('en')} events in ${elapsed.toFixed(1)} s: **${Math.round(sent / elapsed).toLocaleString('en')} events/s** (bar ≥ 20,000); server RSS ${rssBefore.toFixed(0)} MiB before, ${peakRss.toFixed(0)} MiB at most while ingesting\n`,
    );
    await db.query('DELETE FROM tracked_events');

    // The analysis: exposures and events written straight into the tables (hashes as the server makes them do not
    // matter to the join: the same expression on both sides), then one analysis through the API.
    section(`Analysis: ${UNITS.toLocaleString('en')} exposed units, ${EVENTS.toLocaleString('en')} tracked events, 3 metrics, PostgreSQL`);
    const { rows } = await db.query<{ id: number }>(`SELECT id FROM experiments WHERE name = 'bench'`);
    const experimentId = rows[0]!.id;
    const seedStarted = performance.now();
    await db.query(
      `INSERT INTO experiment_exposures (experiment_id, phase, unit_hash, variant, first_at, source)
       SELECT $1, 1, decode(md5('u' || i), 'hex'), i % 2, now() - interval '10 days' + (i % 86400) * interval '1 second', 1
       FROM generate_series(1, $2::integer) AS i`,
      [experimentId, UNITS],
    );
    const chunk = 2_000_000;
    for (let from = 0; from < EVENTS; from += chunk) {
      // Each event belongs to a unit; a third are orders, the rest purchases, a tenth of units check out; all after
      // their unit's first exposure, a few before it (the CUPED window) and some past the 72-hour window.
      await db.query(
        `INSERT INTO tracked_events (environment, event, unit_hash, at, value)
         SELECT 'production',
                CASE WHEN i % 10 = 0 THEN 'checkout' WHEN i % 3 = 0 THEN 'order' ELSE 'purchase' END,
                decode(md5('u' || (1 + (i::bigint * 7919) % $3::integer)), 'hex'),
                now() - interval '10 days' + ((1 + (i::bigint * 7919) % $3::integer) % 86400) * interval '1 second' + (i % 200) * interval '1 hour' - interval '5 hours',
                (i % 97)::double precision
         FROM generate_series($1::integer, $2::integer) AS i`,
        [from + 1, Math.min(EVENTS, from + chunk), UNITS],
      );
    }
    await db.query('ANALYZE experiment_exposures');
    await db.query('ANALYZE tracked_events');
    process.stdout.write(`seeded in ${((performance.now() - seedStarted) / 1000).toFixed(0)} s\n`);
    const timings: number[] = [];
    for (let run = 0; run < 3; run++) {
      const analysed = performance.now();
      const results = await api<{ exposures: Array<{ units: number }>; metrics: Array<{ name: string }> }>(
        server.baseUrl,
        'POST',
        '/api/admin/projects/default/experiments/bench/results',
      );
      timings.push((performance.now() - analysed) / 1000);
      if (run === 0) {
        const units = results.exposures.reduce((sum, arm) => sum + arm.units, 0);
        process.stdout.write(
          `${units.toLocaleString('en')} units analysed on ${results.metrics.map((metric) => metric.name).join(', ')}\n`,
        );
      }
      // A second analysis within 30 s answers the first's: wait it out, so each run is a real one.
      await new Promise((resolve) => setTimeout(resolve, 31_000));
    }
    process.stdout.write(`analysis: **${timings.map((t) => `${t.toFixed(2)} s`).join(', ')}** (three runs; bar ≤ 10 s on 2 cores)\n`);
  } finally {
    await db.end();
    server.process.kill('SIGTERM');
    await new Promise((resolve) => server.process.once('exit', resolve));
    await admin.query(`DROP DATABASE ${database}`);
    await admin.end();
  }
}

await main();
