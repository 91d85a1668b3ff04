import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { runDeliveryPass } from '../../src/workers/delivery-worker.js';
import { createProtectedProject, createTeam, propose } from '../helpers/change-requests.js';
import { expectStatus } from '../helpers/assertions.js';
import { uniqueName } from '../helpers/fixtures.js';
import { startHttpReceiver, type HttpReceiver } from '../helpers/http-receiver.js';
import { eventually } from '../helpers/eventually.js';
import { createFlag } from '../helpers/projects.js';
import { createSdkToken } from '../helpers/sdk-fixtures.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { usingPostgres } from '../helpers/test-database.js';
import { parseSamples } from '../helpers/prometheus.js';

/**
 * GET /internal-backstage/prometheus after real traffic: admin requests, SDK requests, a streaming SDK, a failing
 * webhook and a change request. Each metric is read back with the value that traffic must have produced.
 */
let ctx: TestApp;
let receiver: HttpReceiver;
let baseUrl: string;
before(async () => {
  ctx = await startTestApp({ env: { INTEGRATIONS_ALLOW_PRIVATE_NETWORKS: 'true' } });
  receiver = await startHttpReceiver();
  baseUrl = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
});
after(async () => {
  await receiver.close();
  await ctx.close();
});

async function scrape(): Promise<Map<string, number>> {
  const response = await ctx.as().get('/internal-backstage/prometheus');
  expectStatus(response, 200);
  assert.match(String(response.headers['content-type']), /^text\/plain; version=0\.0\.4/);
  return parseSamples(response.body);
}

// Database-wide figures are read at most every few seconds: the first scrape of this file must come after the traffic.
describe('GET /internal-backstage/prometheus', () => {
  test('counts requests, SDK traffic, streaming SDKs, deliveries, events and change requests', async () => {
    const project = uniqueName('metrics');
    expectStatus(await ctx.admin.post('/api/admin/projects', { id: project, name: project }), 201);
    receiver.answer(() => ({ status: 500 }));
    const addon = await ctx.admin.post('/api/admin/addons', {
      provider: 'webhook',
      enabled: true,
      events: ['feature-created'],
      projects: [project],
      parameters: { url: `${receiver.origin}/hooks/metrics` },
    });
    expectStatus(addon, 201);
    const addonId = (addon.json() as { id: number }).id;
    const flags = [uniqueName('a'), uniqueName('b')];
    for (const flag of flags) await createFlag(ctx, project, { name: flag, enabled: true });
    expectStatus(await ctx.admin.get(`/api/admin/projects/${uniqueName('missing')}`), 404);

    const token = await createSdkToken(ctx, 'client', 'development');
    expectStatus(await ctx.as(token).get('/api/client/features'), 200);
    expectStatus(await ctx.as(token).get('/api/client/features'), 200);

    // One SDK holds a stream open while the metrics are read.
    const stream = new AbortController();
    const connected = await fetch(`${baseUrl}/api/client/streaming`, { headers: { authorization: token }, signal: stream.signal });
    assert.equal(connected.status, 200);
    await connected.body!.getReader().read();

    const result = await runDeliveryPass({ db: ctx.db, clock: ctx.clock, config: ctx.config, log: ctx.app.log, metrics: ctx.metrics });
    assert.deepEqual(result, { attempted: 2, delivered: 0, failed: 2 });

    const team = await createTeam(ctx);
    const {
      project: protectedProject,
      flags: [protectedFlag],
    } = await createProtectedProject(ctx);
    await propose(team.author.client, protectedProject, [{ feature: protectedFlag, action: 'updateEnabled', payload: { enabled: true } }]);

    const samples = await scrape();
    const integration = `integration="${addonId}",provider="webhook"`;
    const expected: Array<[string, number]> = [
      ['http_request_duration_seconds_count{method="GET",route="/api/admin/projects/:projectId",status_code="404"}', 1],
      ['vexil_client_api_requests_total{endpoint="GET /api/client/features",status_code="200"}', 2],
      ['vexil_client_streaming_connections', 1],
      [`vexil_integration_deliveries_total{${integration},outcome="retrying"}`, 2],
      [`vexil_integration_delivery_lag_seconds_count{${integration}}`, 2],
      [`vexil_db_integration_backlog{${integration}}`, 2],
      ['vexil_db_change_requests{state="Draft"}', 1],
      ['vexil_db_change_requests{state="Applied"}', 0],
      ['vexil_db_events{type="feature-created"}', 3],
    ];
    assert.deepEqual(
      expected.map(([key]) => [key, samples.get(key)]),
      expected,
    );
    assert.ok(samples.get(`vexil_db_integration_backlog_oldest_seconds{${integration}}`)! >= 0);
    assert.ok(samples.get('http_request_duration_seconds_sum{method="GET",route="/api/admin/projects/:projectId",status_code="404"}')! > 0);

    stream.abort();
    await eventually(async () => (await scrape()).get('vexil_client_streaming_connections') === 0);
  });

  test('answers without credentials, with process metrics', async () => {
    const samples = await scrape();
    assert.ok(samples.get('process_resident_memory_bytes')! > 10_000_000, 'resident memory is reported');
    assert.ok(samples.has('nodejs_eventloop_lag_seconds'));
    assert.ok(samples.has('nodejs_heap_size_used_bytes'));
    if (usingPostgres()) {
      assert.equal(samples.get('vexil_db_pool_connections{state="max"}'), 5);
      assert.ok(samples.get('vexil_db_pool_connections{state="open"}')! >= 1);
      assert.equal(samples.get('vexil_db_pool_connections{state="waiting"}'), 0);
    } else {
      assert.ok(![...samples.keys()].some((key) => key.startsWith('vexil_db_pool_connections')), 'the embedded engine has no pool');
    }
  });
});
