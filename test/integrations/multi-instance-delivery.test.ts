import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { startDeliveryWorker, type DeliveryWorker } from '../../src/workers/delivery-worker.js';
import { composeApp } from '../../src/server.js';
import { systemClock } from '../../src/shared/clock.js';
import { expectStatus } from '../helpers/assertions.js';
import { uniqueName } from '../helpers/fixtures.js';
import { createWebhook } from '../helpers/integrations.js';
import { createProject } from '../helpers/projects.js';
import { startHttpReceiver, type HttpReceiver } from '../helpers/http-receiver.js';
import { usingPostgres } from '../helpers/test-database.js';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../helpers/test-app.js';

/**
 * Several Vexil instances on one PostgreSQL share the deliveries (FOR UPDATE SKIP LOCKED) without sending any
 * twice, and a worker killed mid-delivery loses nothing. PGlite is one process's database, so these need a
 * PostgreSQL server.
 */
const skip = usingPostgres() ? false : 'needs PostgreSQL: set TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test to run it';

const MAIN = join(import.meta.dirname, '../../src/main.ts');
const ALLOW_PRIVATE = { INTEGRATIONS_ALLOW_PRIVATE_NETWORKS: 'true' };

interface Instance {
  handle: DatabaseHandle;
  app: FastifyInstance;
  worker: DeliveryWorker;
  attempted: number;
}

describe('delivery by several instances on one PostgreSQL', { skip }, () => {
  let ctx: TestApp;
  let receiver: HttpReceiver;
  before(async () => {
    ctx = await startTestApp({ env: { ...ALLOW_PRIVATE, INTEGRATIONS_DELIVERY_TIMEOUT_MS: '2000' } });
    receiver = await startHttpReceiver();
  });
  after(async () => {
    await receiver?.close();
    await ctx?.close();
  });

  /** An instance as src/main.ts runs one: its own connection pool, HTTP app and worker, on the real clock. */
  async function startInstance(): Promise<Instance> {
    const handle = await openDatabase(ctx.databaseConfig);
    const deps = { db: handle.db, clock: systemClock, config: ctx.config, listen: handle.listen };
    const { app } = await composeApp(deps, { logLevel: 'silent' });
    const instance = { handle, app, attempted: 0 } as Instance;
    const ignore = () => undefined;
    const log = {
      debug: ignore,
      warn: ignore,
      error: ignore,
      info: (summary: unknown) => {
        instance.attempted += (summary as { attempted?: number }).attempted ?? 0;
      },
    };
    instance.worker = await startDeliveryWorker({ ...deps, log, listen: handle.listen }, { pollIntervalMs: 1_000 });
    return instance;
  }

  test('three instances deliver 1,000 events to two configurations, each exactly once', async (t) => {
    const project = await createProject(ctx);
    const addons = [
      await createWebhook(ctx, `${receiver.origin}/first`, { projects: [project] }),
      await createWebhook(ctx, `${receiver.origin}/second`, { projects: [project] }),
    ];
    const instances = [await startInstance(), await startInstance(), await startInstance()];
    try {
      const seen = receiver.requests.length;
      const names = Array.from({ length: 1000 }, (_, i) => `many-${i}-${uniqueName('f')}`);
      // Flags are created through all three instances, eight requests at a time.
      for (let start = 0; start < names.length; start += 8) {
        await Promise.all(
          names.slice(start, start + 8).map(async (name, offset) => {
            const response = await instances[(start + offset) % 3]!.app.inject({
              method: 'POST',
              url: `/api/admin/projects/${project}/features`,
              headers: { authorization: ADMIN_TOKEN },
              payload: { name },
            });
            expectStatus(response, 201);
          }),
        );
      }
      await receiver.waitForRequests(seen + 2000, 40_000);
      // Anything sent twice would arrive right behind the rest.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const sent = receiver.requests.slice(seen);
      assert.equal(sent.length, 2000);
      assert.equal(new Set(sent.map((request) => request.headers['x-vexil-delivery'])).size, 2000, 'every delivery id once');
      for (const path of ['/first', '/second']) {
        const flags = sent
          .filter((request) => request.path === path)
          .map((request) => (JSON.parse(request.body) as { featureName: string }).featureName);
        assert.deepEqual([...new Set(flags)].sort(), [...names].sort(), `${path} got every event once`);
        assert.equal(flags.length, 1000);
      }

      const recorded = await ctx.db
        .selectFrom('integration_events')
        .select(['integration_id', 'state', 'event_id'])
        .where('integration_id', 'in', addons)
        .execute();
      assert.equal(recorded.length, 2000, 'one integration event per attempt, one attempt per delivery');
      assert.ok(recorded.every((row) => row.state === 'success'));
      assert.equal(new Set(recorded.map((row) => `${row.integration_id}:${row.event_id}`)).size, 2000);
      const left = await ctx.db.selectFrom('addon_deliveries').select('id').where('addon_id', 'in', addons).execute();
      assert.deepEqual(left, []);
      assert.equal(
        instances.reduce((sum, instance) => sum + instance.attempted, 0),
        2000,
      );

      const createdAt = new Map(
        (await ctx.db.selectFrom('events').select(['feature_name', 'created_at']).where('project', '=', project).execute()).map((row) => [
          row.feature_name,
          row.created_at.getTime(),
        ]),
      );
      const lags = sent
        .map((request) => request.receivedAt - createdAt.get((JSON.parse(request.body) as { featureName: string }).featureName)!)
        .sort((a, b) => a - b);
      const at = (quantile: number) => lags[Math.min(lags.length - 1, Math.floor(quantile * lags.length))];
      t.diagnostic(`attempts per instance: ${instances.map((instance) => instance.attempted).join(', ')}`);
      t.diagnostic(`commit-to-receiver lag of 2,000 deliveries: p50 ${at(0.5)} ms, p95 ${at(0.95)} ms, max ${lags.at(-1)} ms`);
    } finally {
      for (const instance of instances) {
        await instance.worker.stop();
        await instance.app.close();
        await instance.handle.close();
      }
    }
  });

  test('a worker killed mid-delivery loses nothing: after a restart the delivery is made', async () => {
    const project = await createProject(ctx);
    const path = `/${uniqueName('killed')}`;
    const addonId = await createWebhook(ctx, `${receiver.origin}${path}`, { projects: [project] });
    let answered = 0;
    receiver.answer((request) => {
      if (request.path !== path) return { status: 200 };
      answered += 1;
      return answered === 1 ? 'hang' : { status: 200 };
    });
    const databaseUrl = ctx.databaseConfig.kind === 'postgres' ? ctx.databaseConfig.url : '';
    const startServer = (): ChildProcess =>
      spawn(process.execPath, ['--import', 'tsx', MAIN], {
        env: {
          PATH: process.env.PATH ?? '',
          DATABASE_URL: databaseUrl,
          DATABASE_POOL_SIZE: '2',
          PORT: '0',
          HOST: '127.0.0.1',
          LOG_LEVEL: 'warn',
          INTEGRATIONS_DELIVERY_TIMEOUT_MS: '2000',
          ...ALLOW_PRIVATE,
        },
        stdio: 'ignore',
      });
    const exited = (child: ChildProcess) => new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

    const first = startServer();
    const restarted: ChildProcess[] = [];
    try {
      const seen = receiver.requests.length;
      expectStatus(await ctx.admin.post(`/api/admin/projects/${project}/features`, { name: uniqueName('flag') }), 201);
      const [attempt] = (await receiver.waitForRequests(seen + 1, 20_000)).slice(-1);
      first.kill('SIGKILL');
      await exited(first);
      const orphaned = await ctx.db.selectFrom('addon_deliveries').select(['attempts']).where('addon_id', '=', addonId).execute();
      assert.deepEqual(orphaned, [{ attempts: 1 }], 'the claimed delivery is still owed');

      restarted.push(startServer());
      // The killed worker's lease (timeout + 10 s grace) must end before another worker may claim it.
      const [retried] = (await receiver.waitForRequests(seen + 2, 30_000)).slice(-1);
      assert.equal(retried!.path, path);
      assert.equal(
        retried!.headers['x-vexil-delivery'],
        attempt!.headers['x-vexil-delivery'],
        'the same delivery, so the receiver can de-duplicate',
      );
      let recorded: Array<{ state: string; details: unknown }> = [];
      for (let waited = 0; recorded.length === 0 && waited < 5_000; waited += 100) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        recorded = await ctx.db
          .selectFrom('integration_events')
          .select(['state', 'details'])
          .where('integration_id', '=', addonId)
          .execute();
      }
      assert.deepEqual(
        recorded.map((row) => [row.state, (row.details as { attempt: number }).attempt]),
        [['success', 2]],
      );
      const owed = await ctx.db.selectFrom('addon_deliveries').select('id').where('addon_id', '=', addonId).execute();
      assert.deepEqual(owed, []);
      restarted[0]!.kill('SIGTERM');
      assert.equal(await exited(restarted[0]!), 0, 'a graceful shutdown with the worker running exits 0');
    } finally {
      receiver.answer(() => ({ status: 200 }));
      for (const child of [first, ...restarted]) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });
});
