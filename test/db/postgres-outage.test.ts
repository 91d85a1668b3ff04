import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eventually } from '../helpers/eventually.js';
import { clusterUnavailable, type PostgresCluster, startPostgresCluster } from '../helpers/postgres-cluster.js';
import { type RunningServer, startServer, stopServer } from '../helpers/server-process.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';

// PostgreSQL killed, restarted and stopped under Vexil while requests run, on a cluster of the test's own: the process
// lives through all of it, a request the database cannot answer is a 503 with Retry-After (never a 500), every
// acknowledged write is there afterwards, and Vexil serves again by itself once PostgreSQL answers.

const unavailable = clusterUnavailable();
const ADMIN_TOKEN = '*:*.outage-admin-token-0123456789abcdef';

describe('when PostgreSQL goes away under load', { skip: unavailable, timeout: 240_000 }, () => {
  let cluster: PostgresCluster;
  let server: RunningServer;
  /** A second instance on the same database that may hold no SDK report in memory. */
  let holdingNothing: RunningServer;

  before(
    async () => {
      cluster = await startPostgresCluster();
      server = await startServer({ DATABASE_URL: cluster.url, INIT_ADMIN_API_TOKENS: ADMIN_TOKEN });
      holdingNothing = await startServer({ DATABASE_URL: cluster.url, SDK_REPORTS_HELD_MAX_MB: '0' });
    },
    { timeout: 60_000 },
  );
  after(async () => {
    if (server) await stopServer(server);
    if (holdingNothing) await stopServer(holdingNothing);
    cluster?.destroy();
  });

  const headers = { authorization: ADMIN_TOKEN, 'content-type': 'application/json' };
  let counter = 0;
  /** Creates a flag; answers its name when Vexil acknowledged it, and the status otherwise. */
  async function write(to = server): Promise<{ name: string; status: number; retryAfter: string | null; errorName?: string }> {
    const name = `outage-${process.pid}-${counter++}`;
    const response = await fetch(`${to.baseUrl}/api/admin/projects/default/features`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name }),
    });
    const body = (await response.json().catch(() => ({}))) as { name?: string };
    return {
      name,
      status: response.status,
      retryAfter: response.headers.get('retry-after'),
      errorName: response.status >= 400 ? body.name : undefined,
    };
  }

  /** Writes in a loop, to both instances in turn, until `stop` resolves; answers every outcome. */
  async function writeUntil(stop: Promise<unknown>) {
    let stopped = false;
    void stop.then(() => (stopped = true));
    const outcomes: Awaited<ReturnType<typeof write>>[] = [];
    while (!stopped) outcomes.push(await write(outcomes.length % 2 === 0 ? server : holdingNothing));
    return outcomes;
  }

  /** Reads the client API with `token` on both instances in a loop until `stop` resolves; answers each failure. */
  async function readUntil(stop: Promise<unknown>, token: string) {
    let stopped = false;
    void stop.then(() => (stopped = true));
    const failures: string[] = [];
    let reads = 0;
    while (!stopped) {
      for (const instance of [server, holdingNothing]) {
        reads++;
        const response = await fetch(`${instance.baseUrl}/api/client/features`, { headers: { authorization: token } }).catch(
          (error: Error) => ({ status: 0, text: async () => error.message }),
        );
        if (response.status !== 200) failures.push(`${response.status} ${await response.text()}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return { reads, failures };
  }

  function assertOnly201Or503(outcomes: Awaited<ReturnType<typeof write>>[], what: string): void {
    for (const outcome of outcomes) {
      if (outcome.status === 201) continue;
      assert.deepEqual(
        [outcome.status, outcome.errorName, outcome.retryAfter],
        [503, 'ServiceUnavailableError', '5'],
        `${what}: ${JSON.stringify(outcome)}`,
      );
    }
  }

  async function listedFlags(): Promise<Set<string>> {
    const response = await fetch(`${server.baseUrl}/api/admin/projects/default/features`, { headers });
    assert.equal(response.status, 200);
    return new Set(((await response.json()) as { features: Array<{ name: string }> }).features.map((feature) => feature.name));
  }

  test('connections killed mid-request and a restart end neither process, lose no acknowledged write, fail no SDK read, and recover within a second', async (t) => {
    const made = await fetch(`${server.baseUrl}/api/admin/api-tokens`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ tokenName: 'restart-sdk', type: 'client', environment: 'development' }),
    });
    assert.equal(made.status, 201);
    const { secret } = (await made.json()) as { secret: string };
    const faults = (async () => {
      await new Promise((resolve) => setTimeout(resolve, 300));
      for (let round = 0; round < 3; round++) {
        assert.ok((await cluster.terminateConnections()) > 0, 'Vexil had connections to kill');
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      cluster.restart();
      await new Promise((resolve) => setTimeout(resolve, 300));
    })();
    const [outcomes, sdkReads] = await Promise.all([writeUntil(faults), readUntil(faults, secret)]);
    for (const instance of [server, holdingNothing]) {
      assert.equal(instance.process.exitCode, null, `the process lives: ${instance.output().slice(-2000)}`);
    }
    assertOnly201Or503(outcomes, 'during kills and a restart');
    t.diagnostic(
      `${outcomes.filter((outcome) => outcome.status === 201).length} writes acknowledged, ${outcomes.filter((outcome) => outcome.status === 503).length} answered 503; ${sdkReads.reads} SDK reads, ${sdkReads.failures.length} failed`,
    );
    assert.deepEqual(sdkReads.failures, [], `SDK reads with a known token never fail (${sdkReads.reads} reads)`);
    assert.ok(sdkReads.reads > 20, `SDKs read throughout (${sdkReads.reads})`);
    // Each instance serves again by itself: the first write after PostgreSQL answers goes through, within a second.
    const recoveries: Awaited<ReturnType<typeof write>>[] = [];
    for (const instance of [server, holdingNothing]) {
      const recoveredBy = Date.now() + 1000;
      let recovered = await write(instance);
      while (recovered.status !== 201 && Date.now() < recoveredBy) recovered = await write(instance);
      assert.equal(recovered.status, 201, JSON.stringify(recovered));
      recoveries.push(recovered);
    }
    const stored = await listedFlags();
    const acknowledged = [...outcomes, ...recoveries].filter((outcome) => outcome.status === 201).map((outcome) => outcome.name);
    assert.ok(acknowledged.length > 5, `writes went through around the faults (${acknowledged.length})`);
    assert.deepEqual(
      acknowledged.filter((name) => !stored.has(name)),
      [],
      'every acknowledged write is stored',
    );
  });

  test('while PostgreSQL is stopped, writes are 503 with Retry-After, /health stays 200 and SDKs keep their flags; it serves again once PostgreSQL is back', async () => {
    const made = await fetch(`${server.baseUrl}/api/admin/api-tokens`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ tokenName: 'outage-sdk', type: 'client', environment: 'development' }),
    });
    assert.equal(made.status, 201);
    const { secret } = (await made.json()) as { secret: string };
    const served = async () => {
      const response = await fetch(`${server.baseUrl}/api/client/features`, { headers: { authorization: secret } });
      return {
        status: response.status,
        names: response.ok ? ((await response.json()) as { features: Array<{ name: string }> }).features.map((f) => f.name).sort() : [],
      };
    };
    // The flags the previous test wrote reach the SDK store once this instance has caught up after that test's faults.
    let before = await served();
    await eventually(async () => {
      before = await served();
      return before.status === 200 && before.names.length > 0;
    }, 10_000);
    const told = (pattern: RegExp) =>
      server
        .output()
        .split('\n')
        .filter((line) => pattern.test(line)).length;
    const scrape = async () => {
      const response = await fetch(`${server.baseUrl}/internal-backstage/prometheus`);
      assert.equal(response.status, 200, 'metrics are served whatever the database does');
      return response.text();
    };
    const databaseUp = async () => /^vexil_database_up (\d)$/m.exec(await scrape())?.[1];
    const heldReports = async () =>
      [...(await scrape()).matchAll(/^vexil_sdk_reports_held_total\{kind="(\w+)",outcome="(\w+)"\} (\d+)$/gm)]
        .map(([, kind, outcome, count]) => `${kind} ${outcome} ${count}`)
        .sort();
    // What an SDK reports while the database is away: its usage of a flag, and itself.
    const flag = before.names[0]!;
    const report = (path: string, body: unknown, to = server) =>
      fetch(`${to.baseUrl}${path}`, {
        method: 'POST',
        headers: { authorization: secret, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const reportedAt = new Date().toISOString();
    // After the restart of the test before, the gauge comes back with the next probe (every second).
    await eventually(async () => (await databaseUp()) === '1', 3_000);
    // Counted once the restart's own lines are written.
    const toldBefore = [told(/PostgreSQL does not answer: requests/), told(/PostgreSQL answers again/)];
    const knownThere = await fetch(`${holdingNothing.baseUrl}/api/client/features`, { headers: { authorization: secret } });
    assert.equal(knownThere.status, 200);
    cluster.stop();
    try {
      // Past the 10 s an SDK token is trusted without asking the database: it is still known.
      await new Promise((resolve) => setTimeout(resolve, 11_000));
      assert.deepEqual(await served(), before, 'an SDK with a known token is served what it had');
      for (let attempt = 0; attempt < 3; attempt++) assertOnly201Or503([await write()], 'while stopped');
      const refused = await write();
      assert.equal(refused.status, 503);
      const health = await fetch(`${server.baseUrl}/health`);
      assert.equal(health.status, 200, 'the process is alive');
      const ready = await fetch(`${server.baseUrl}/ready`);
      assert.equal(ready.status, 503, 'not ready without its database');
      assert.equal(await databaseUp(), '0');
      // SDK reports are held, answered as when they are written.
      const metrics = await report('/api/client/metrics', {
        appName: 'outage-app',
        instanceId: 'pod-1',
        bucket: { start: reportedAt, stop: reportedAt, toggles: { [flag]: { yes: 7, no: 2 } } },
      });
      assert.equal(metrics.status, 202, await metrics.text());
      const registration = await report('/api/client/register', {
        appName: 'outage-app',
        instanceId: 'pod-1',
        sdkVersion: 'unleash-client-node:6.13.0',
        strategies: ['default'],
        started: reportedAt,
        interval: 15_000,
      });
      assert.equal(registration.status, 202, await registration.text());
      assert.deepEqual(await heldReports(), ['metrics held 1', 'registration held 1']);
      // Past the bound a report is dropped, and the SDK told to send it again later.
      const dropped = await report(
        '/api/client/metrics',
        { appName: 'outage-app', bucket: { start: reportedAt, stop: reportedAt, toggles: { [flag]: { yes: 1, no: 0 } } } },
        holdingNothing,
      );
      assert.equal(dropped.status, 503);
      assert.equal(dropped.headers.get('retry-after'), '5');
      assert.match(((await dropped.json()) as { message: string }).message, /holds as many SDK reports as it may/);
      const droppedCount = await fetch(`${holdingNothing.baseUrl}/internal-backstage/prometheus`).then((response) => response.text());
      assert.match(droppedCount, /^vexil_sdk_reports_held_total\{kind="metrics",outcome="dropped"\} 1$/m);
    } finally {
      cluster.start();
    }
    const backBy = Date.now() + 2000;
    let back = await write();
    while (back.status !== 201 && Date.now() < backBy) back = await write();
    assert.equal(back.status, 201, JSON.stringify(back));
    assert.equal(server.process.exitCode, null);
    // The outage is told once when it starts and once when it ends, with its length; the gauge follows.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.deepEqual(
      [told(/PostgreSQL does not answer: requests/), told(/PostgreSQL answers again/)],
      [toldBefore[0]! + 1, toldBefore[1]! + 1],
    );
    assert.match(server.output(), /"downForMs":\d+,"msg":"PostgreSQL answers again"/);
    assert.equal(await databaseUp(), '1');
    // The held reports were written once PostgreSQL answered.
    assert.deepEqual(await heldReports(), [
      'metrics held 1',
      'metrics written_late 1',
      'registration held 1',
      'registration written_late 1',
    ]);
    const usage = await fetch(`${server.baseUrl}/api/admin/client-metrics/features/${flag}/raw?hoursBack=2`, { headers });
    const { lastHourUsage } = (await usage.json()) as { lastHourUsage: Array<{ appName: string; yes: number; no: number }> };
    assert.deepEqual(
      lastHourUsage.map(({ appName, yes, no }) => ({ appName, yes, no })),
      [{ appName: 'outage-app', yes: 7, no: 2 }],
    );
    const application = await fetch(`${server.baseUrl}/api/admin/metrics/applications/outage-app`, { headers });
    const { instances } = (await application.json()) as { instances: Array<{ instanceId: string; sdkVersion: string }> };
    assert.deepEqual(
      instances.map(({ instanceId, sdkVersion }) => ({ instanceId, sdkVersion })),
      [{ instanceId: 'pod-1', sdkVersion: 'unleash-client-node:6.13.0' }],
    );
  });

  test('a PostgreSQL whose address answers nothing (a partition, a failed-over host) gets a 503 within the 10 s connect timeout, not a request that hangs', async (t) => {
    const proxy = await startTcpProxy(new URL(cluster.url));
    const throughProxy = new URL(cluster.url);
    throughProxy.host = new URL(proxy.url).host;
    const behind = await startServer({ DATABASE_URL: throughProxy.toString(), INIT_ADMIN_API_TOKENS: ADMIN_TOKEN });
    try {
      assert.equal((await write(behind)).status, 201);
      proxy.blackhole();
      const started = Date.now();
      const hung = new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error('the request still hangs after 30 s')), 30_000).unref(),
      );
      const outcome = await Promise.race([write(behind), hung]);
      const took = Date.now() - started;
      t.diagnostic(`answered ${outcome.status} after ${took} ms`);
      assert.deepEqual([outcome.status, outcome.errorName, outcome.retryAfter], [503, 'ServiceUnavailableError', '5']);
      assert.equal((await fetch(`${behind.baseUrl}/health`)).status, 200);
      await proxy.restore();
      const backBy = Date.now() + 2000;
      let back = await write(behind);
      while (back.status !== 201 && Date.now() < backBy) back = await write(behind);
      assert.equal(back.status, 201, JSON.stringify(back));
    } finally {
      assert.equal(await stopServer(behind), 0);
      await proxy.close();
    }
  });
});
