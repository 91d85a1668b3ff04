import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startHttpReceiver, type HttpReceiver } from '../helpers/http-receiver.js';
import { type RunningServer, startServer, stopServer } from '../helpers/server-process.js';
import { createServerDatabase, usingPostgres } from '../helpers/test-database.js';

/**
 * OpenTelemetry as an operator turns it on: Vexil started as `npm start` runs it with only the standard OTEL_*
 * variables, exporting OTLP/HTTP (JSON) to a collector the test runs; spans and events are read from what arrives.
 */
const EDGE_MAIN = join(import.meta.dirname, '../../src/edge/main.ts');
const ADMIN_TOKEN = '*:*.telemetry-test-admin-token-0123456789';
const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

type Attributes = Array<{ key: string; value: Record<string, unknown> }>;
interface Span {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Attributes;
}
interface LogRecord {
  eventName?: string;
  traceId?: string;
  attributes: Attributes;
}

/** An OTLP attribute list as a plain object (OTLP JSON wraps each value by its type). */
function attributesOf(attributes: Attributes = []): Record<string, unknown> {
  return Object.fromEntries(attributes.map(({ key, value }) => [key, Object.values(value)[0]]));
}

/** What `find` finds once it has arrived at the collector; fails after `timeoutMs`. */
async function arrived<T>(find: () => T | undefined, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = find();
    if (found !== undefined) return found;
    if (Date.now() > deadline)
      throw new Error(
        `nothing arrived within ${timeoutMs} ms; the collector has ${collector.requests.map((request) => request.path).join(', ')}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

let collector: HttpReceiver;
let webhookReceiver: HttpReceiver;
let server: RunningServer;
let dataDir: string;
let dropDatabase: () => Promise<void>;

function spans(): Array<Span & { service: string }> {
  return collector.requests
    .filter((request) => request.path === '/v1/traces')
    .flatMap((request) =>
      (
        JSON.parse(request.body).resourceSpans as Array<{ resource: { attributes: Attributes }; scopeSpans: Array<{ spans: Span[] }> }>
      ).flatMap((resource) =>
        resource.scopeSpans.flatMap((scope) =>
          scope.spans.map((span) => ({ ...span, service: String(attributesOf(resource.resource.attributes)['service.name']) })),
        ),
      ),
    );
}

function evaluationEvents(): LogRecord[] {
  return collector.requests
    .filter((request) => request.path === '/v1/logs')
    .flatMap((request) =>
      (JSON.parse(request.body).resourceLogs as Array<{ scopeLogs: Array<{ logRecords: LogRecord[] }> }>).flatMap((resource) =>
        resource.scopeLogs.flatMap((scope) => scope.logRecords),
      ),
    )
    .filter((record) => record.eventName === 'feature_flag.evaluation');
}

async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${server.baseUrl}${path}`, {
    method,
    headers: { authorization: ADMIN_TOKEN, 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

/** A token of the type given for the development environment, all projects: its secret. */
async function developmentToken(tokenName: string, type: 'client' | 'frontend'): Promise<string> {
  const token = await call('POST', '/api/admin/api-tokens', { tokenName, type, environment: 'development', projects: ['*'] });
  assert.equal(token.status, 201);
  return token.body.secret as string;
}

describe('OpenTelemetry export', () => {
  before(async () => {
    collector = await startHttpReceiver();
    webhookReceiver = await startHttpReceiver();
    dataDir = await mkdtemp(join(tmpdir(), 'vexil-telemetry-'));
    const database = await createServerDatabase();
    dropDatabase = database.drop;
    server = await startServer({
      ...database.env,
      DATA_DIR: dataDir,
      INIT_ADMIN_API_TOKENS: ADMIN_TOKEN,
      INTEGRATIONS_ALLOW_PRIVATE_NETWORKS: 'true',
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.origin,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_METRIC_EXPORT_INTERVAL: '500',
      // Exported within a fifth of a second rather than the default five, so the test need not wait.
      OTEL_BSP_SCHEDULE_DELAY: '200',
      OTEL_BLRP_SCHEDULE_DELAY: '200',
      FLAG_EVALUATION_EVENTS_RATIO: '1',
    });
  });

  after(async () => {
    await stopServer(server);
    await Promise.all([collector.close(), webhookReceiver.close()]);
    await rm(dataDir, { recursive: true, force: true });
    await dropDatabase();
  });

  test("a request's span continues the caller's trace, is named by its route, says the actor's kind and holds its queries", async () => {
    const created = await call(
      'POST',
      '/api/admin/projects/default/features',
      { name: 'traced-flag' },
      { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` },
    );
    assert.equal(created.status, 201);

    const request = await arrived(() => spans().find((span) => span.traceId === CALLER_TRACE && span.kind === 2));
    assert.equal(request.name, 'POST /api/admin/projects/:projectId/features');
    assert.equal(request.parentSpanId, CALLER_SPAN);
    assert.equal(request.service, 'vexil');
    const attributes = attributesOf(request.attributes);
    assert.equal(attributes['http.route'], '/api/admin/projects/:projectId/features');
    assert.equal(attributes['vexil.actor.kind'], 'admin-token');
    assert.equal(attributes['http.response.status_code'] ?? attributes['http.status_code'], 201);

    // The flag's insert, as a database span of the same trace (PGlite's own, or the pg instrumentation's).
    const queries = await arrived(() => {
      const found = spans().filter((span) => span.traceId === CALLER_TRACE && span.kind === 3 && /INSERT/i.test(span.name));
      return found.length > 0 ? found : undefined;
    });
    const insert = queries
      .map((span) => attributesOf(span.attributes))
      .find((query) => /insert into "features"/i.test(String(query['db.query.text'] ?? query['db.statement'])));
    assert.ok(insert, `no insert into features among ${JSON.stringify(queries.map((span) => span.name))}`);
    assert.equal(insert['db.system.name'] ?? insert['db.system'], 'postgresql');
    assert.equal(usingPostgres() ? insert['db.namespace'] !== 'pglite' : insert['db.namespace'] === 'pglite', true);

    // Nothing exported carries the token, nor a secret a request's address carried (its span keeps it masked).
    const resetToken = 'telemetry-secret-reset-token-0123456789';
    assert.equal((await call('GET', `/auth/reset/validate?token=${resetToken}`)).status, 401);
    const masked = await arrived(() =>
      spans().find((span) => {
        const target = attributesOf(span.attributes);
        return String(target['url.query'] ?? target['http.target'] ?? '').includes('token=[redacted]');
      }),
    );
    assert.ok(masked, 'the reset request was traced');
    assert.ok(collector.requests.every((exported) => !exported.body.includes('telemetry-test-admin-token')));
    assert.ok(collector.requests.every((exported) => !exported.body.includes(resetToken)));
  });

  test('the frontend API records feature_flag.evaluation events (the sample is all of them here) in the request’s trace', async () => {
    assert.equal((await call('POST', '/api/admin/projects/default/features', { name: 'evaluated-flag' })).status, 201);
    const enabled = await call('POST', '/api/admin/projects/default/features/evaluated-flag/environments/development/on');
    assert.equal(enabled.status, 200);
    const secret = await developmentToken('web', 'frontend');

    const traceId = 'aaaabbbbccccddddeeeeffff00001111';
    const answer = await fetch(`${server.baseUrl}/api/frontend/all?userId=42`, {
      headers: { authorization: secret, traceparent: `00-${traceId}-${CALLER_SPAN}-01` },
    });
    assert.equal(answer.status, 200);

    const events = await arrived(() => {
      const found = evaluationEvents().filter((event) => event.traceId === traceId);
      return found.length >= 2 ? found : undefined;
    });
    const byFlag = Object.fromEntries(
      events.map((event) => [attributesOf(event.attributes)['feature_flag.key'], attributesOf(event.attributes)]),
    );
    assert.deepEqual(byFlag['evaluated-flag'], {
      'feature_flag.key': 'evaluated-flag',
      'feature_flag.provider.name': 'Vexil',
      'feature_flag.set.id': 'default',
      'feature_flag.result.variant': 'on',
      'feature_flag.result.value': true,
      'feature_flag.result.reason': 'static',
    });
    assert.deepEqual(byFlag['traced-flag'], {
      'feature_flag.key': 'traced-flag',
      'feature_flag.provider.name': 'Vexil',
      'feature_flag.set.id': 'default',
      'feature_flag.result.variant': 'off',
      'feature_flag.result.value': false,
      'feature_flag.result.reason': 'disabled',
    });
    const request = spans().find((span) => span.traceId === traceId && span.kind === 2);
    assert.equal(request && attributesOf(request.attributes)['vexil.actor.kind'], 'frontend-token');
  });

  test('a webhook delivery carries W3C trace context, and its outbound call is a span of that trace', async () => {
    const addon = await call('POST', '/api/admin/addons', {
      provider: 'webhook',
      enabled: true,
      events: ['feature-created'],
      parameters: { url: `${webhookReceiver.origin}/hook` },
    });
    assert.equal(addon.status, 201);
    assert.equal((await call('POST', '/api/admin/projects/default/features', { name: 'announced-flag' })).status, 201);

    const [delivery] = await webhookReceiver.waitForRequests(1, 15_000);
    const traceparent = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/.exec(String(delivery!.headers.traceparent));
    assert.ok(traceparent, `no traceparent header: ${JSON.stringify(delivery!.headers)}`);
    const outbound = await arrived(() => spans().find((span) => span.spanId === traceparent[2]));
    assert.equal(outbound.traceId, traceparent[1]);
    assert.equal(outbound.kind, 3);
    assert.match(String(attributesOf(outbound.attributes)['url.full']), /\/hook$/);
  });

  test("Vexil's metrics arrive over OTLP by the names, kinds and values Prometheus scrapes", async () => {
    const scrape = await (await fetch(`${server.baseUrl}/internal-backstage/prometheus`)).text();
    const kinds = new Map([...scrape.matchAll(/^# TYPE (\S+) (counter|gauge|histogram)$/gm)].map((match) => [match[1]!, match[2]!]));
    // Those with a sample now (a labelled metric nothing has counted yet has none in either format).
    const scraped = [...kinds.keys()].filter((name) => new RegExp(`^${name}(_bucket|_sum|_count)?[{ ]`, 'm').test(scrape));
    assert.ok(scraped.includes('http_request_duration_seconds') && scraped.some((name) => name.startsWith('vexil_')));

    type OtlpMetric = {
      name: string;
      sum?: { isMonotonic: boolean };
      gauge?: unknown;
      histogram?: { dataPoints: Array<{ attributes: Attributes; count: string; bucketCounts: string[]; explicitBounds: number[] }> };
    };
    const exported = () =>
      new Map(
        collector.requests
          .filter((request) => request.path === '/v1/metrics')
          .flatMap((request) =>
            (JSON.parse(request.body).resourceMetrics as Array<{ scopeMetrics: Array<{ metrics: OtlpMetric[] }> }>).flatMap((resource) =>
              resource.scopeMetrics.flatMap((scope) => scope.metrics),
            ),
          )
          .map((metric) => [metric.name, metric]),
      );
    // The flags the tests above made, as a histogram series of their own (exports are cumulative: a later one has all).
    const creations = (found: Map<string, OtlpMetric>) =>
      found.get('http_request_duration_seconds')?.histogram?.dataPoints.find((point) => {
        const attributes = attributesOf(point.attributes);
        return attributes.route === '/api/admin/projects/:projectId/features' && attributes.method === 'POST' && Number(point.count) >= 3;
      });
    const metrics = await arrived(() => {
      const found = exported();
      return scraped.every((name) => found.has(name)) && creations(found) ? found : undefined;
    });
    for (const name of scraped) {
      const metric = metrics.get(name)!;
      const kind = metric.histogram ? 'histogram' : metric.gauge ? 'gauge' : metric.sum?.isMonotonic ? 'counter' : 'other';
      assert.equal(kind, kinds.get(name), name);
    }
    const created = creations(metrics)!;
    assert.equal(created.bucketCounts.length, created.explicitBounds.length + 1);
    assert.equal(
      created.bucketCounts.reduce((sum, count) => sum + Number(count), 0),
      Number(created.count),
    );
  });

  test("the edge traces its requests as vexil-edge, and its calls upstream continue into the server's spans", async () => {
    const secret = await developmentToken('edge', 'client');
    const edge = spawn(process.execPath, ['--import', 'tsx', EDGE_MAIN], {
      env: {
        PATH: process.env.PATH ?? '',
        PORT: '0',
        HOST: '127.0.0.1',
        UPSTREAM_URL: server.baseUrl,
        TOKENS: secret,
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.origin,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_BSP_SCHEDULE_DELAY: '200',
        OTEL_METRICS_EXPORTER: 'none',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise((resolve) => edge.once('exit', resolve));
    try {
      let output = '';
      edge.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      edge.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const edgeUrl = await arrived(() => /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1]);
      const traceId = 'eeee0000eeee0000eeee0000eeee0000';
      const answer = await fetch(`${edgeUrl}/api/client/features`, {
        headers: { authorization: secret, traceparent: `00-${traceId}-${CALLER_SPAN}-01` },
      });
      assert.equal(answer.status, 200);

      const request = await arrived(() => spans().find((span) => span.traceId === traceId && span.kind === 2));
      assert.equal(request.service, 'vexil-edge');
      assert.equal(request.name, 'GET /api/client/features');
      assert.equal(attributesOf(request.attributes)['vexil.actor.kind'], 'client-token');
      // The edge's own calls to the server (its start-up fetch, its stream): each the parent of the server's span.
      const upstream = await arrived(() =>
        spans().find(
          (span) =>
            span.service === 'vexil-edge' &&
            span.kind === 3 &&
            spans().some((served) => served.service === 'vexil' && served.kind === 2 && served.parentSpanId === span.spanId),
        ),
      );
      assert.ok(String(attributesOf(upstream.attributes)['url.full']).startsWith(server.baseUrl));
    } finally {
      edge.kill('SIGTERM');
      await exited;
    }
  });

  test('health probes make no spans', async () => {
    assert.equal((await fetch(`${server.baseUrl}/health`)).status, 200);
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.deepEqual(
      spans()
        .filter((span) => /health/.test(span.name))
        .map((span) => span.name),
      [],
    );
  });
});
