import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startDeliveryWorker } from '../../src/workers/delivery-worker.js';
import { expectStatus } from '../helpers/assertions.js';
import { uniqueName } from '../helpers/fixtures.js';
import { createWebhook, useAppWithReceiver } from '../helpers/integrations.js';
import { createProject } from '../helpers/projects.js';

/** The running worker: woken by the commit's NOTIFY rather than by polling, and stopped gracefully. */
const { ctx, receiver } = useAppWithReceiver({ INTEGRATIONS_DELIVERY_TIMEOUT_MS: '2000' });

/** Polling so rare that only a notification can explain a prompt delivery. */
const NO_POLLING_MS = 10 * 60_000;

function startWorker() {
  return startDeliveryWorker(
    { db: ctx.db, clock: ctx.clock, config: ctx.config, log: ctx.app.log, listen: ctx.listen },
    { pollIntervalMs: NO_POLLING_MS },
  );
}

async function setUp(path: string): Promise<{ project: string; addonId: number }> {
  const project = await createProject(ctx);
  return { project, addonId: await createWebhook(ctx, `${receiver.origin}${path}`, { projects: [project] }) };
}

describe('the delivery worker', () => {
  test('a commit wakes it: the event is delivered at once, without waiting for a poll', async (t) => {
    const path = `/${uniqueName('prompt')}`;
    const { project, addonId } = await setUp(path);
    const worker = await startWorker();
    try {
      const lags: number[] = [];
      const seen = receiver.requests.length;
      for (let i = 0; i < 5; i += 1) {
        const committedAt = Date.now();
        expectStatus(await ctx.admin.post(`/api/admin/projects/${project}/features`, { name: uniqueName('flag') }), 201);
        // The delivery may arrive before the creating request has even answered.
        const [request] = (await receiver.waitForRequests(seen + i + 1, 5_000)).slice(-1);
        assert.equal(request!.path, path);
        lags.push(request!.receivedAt - committedAt);
      }
      t.diagnostic(`commit-to-receiver lag over 5 deliveries: ${lags.join(', ')} ms`);
      assert.ok(Math.max(...lags) < 5_000);
    } finally {
      await worker.stop();
    }
    const recorded = (await ctx.admin.get(`/api/admin/addons/${addonId}/events`)).json() as { integrationEvents: Array<{ state: string }> };
    assert.deepEqual(
      recorded.integrationEvents.map((event) => event.state),
      Array(5).fill('success'),
    );
  });

  test('stopping lets the attempt in flight finish and record its result', async () => {
    const path = `/${uniqueName('slow')}`;
    const { project, addonId } = await setUp(path);
    receiver.answer((request) => ({ status: 200, delayMs: request.path === path ? 500 : 0 }));
    const worker = await startWorker();
    const seen = receiver.requests.length;
    expectStatus(await ctx.admin.post(`/api/admin/projects/${project}/features`, { name: uniqueName('flag') }), 201);
    await receiver.waitForRequests(seen + 1, 5_000);
    await worker.stop();
    const summary = (await ctx.admin.get(`/api/admin/addons/${addonId}`)).json() as {
      deliveries: { pending: number; lastSuccessAt: string | null };
    };
    assert.equal(summary.deliveries.pending, 0);
    assert.notEqual(summary.deliveries.lastSuccessAt, null);
    receiver.answer(() => ({ status: 200 }));
  });
});
