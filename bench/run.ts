import { createServer as createHttpServer } from 'node:http';
import { connect, type Socket } from 'node:net';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { edgeLines } from './edge.js';
import { engineLines } from './engine.js';
import { type Case, drain, measure, ms, percentile, rssKiB } from './measure.js';
import { createSdkToken, type Server, startServer, TOKEN } from './server.js';
import { InMemStorageProvider, Unleash, UnleashEvents } from 'unleash-client';

async function getJson<T>(baseUrl: string, path: string): Promise<T> {
  const response = await fetch(`${baseUrl}${path}`, { headers: { authorization: TOKEN } });
  if (!response.ok) throw new Error(`GET ${path} answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as T;
}

/** What SDKs poll: a client token of the production environment over every project, and the ETag it gets. */
async function sdkCases(baseUrl: string): Promise<Case[]> {
  const secret = await createSdkToken(baseUrl, TOKEN, 'client', 'sdk');
  const first = await fetch(`${baseUrl}/api/client/features`, { headers: { authorization: secret } });
  const body = (await first.json()) as { features: unknown[] };
  const etag = first.headers.get('etag')!;
  const label = `${body.features.length} flags`;
  const frontendSecret = await createSdkToken(baseUrl, TOKEN, 'frontend', 'frontend');
  const enabled = (
    (await (await fetch(`${baseUrl}/api/frontend?userId=probe`, { headers: { authorization: frontendSecret } })).json()) as {
      toggles: unknown[];
    }
  ).toggles.length;
  let user = 0;
  return [
    // 304 first: the 200 case leaves the load generator itself busy with megabytes of bodies for a while.
    { name: `client features (${label}), 304`, path: '/api/client/features', headers: { authorization: secret, 'if-none-match': etag } },
    {
      // Each request a user of its own, as browsers send: nothing can be answered from a previous request's context.
      name: `frontend API, a new userId each request (${label}; ${enabled} on for the probe user)`,
      path: '/api/frontend?userId=u0',
      headers: { authorization: frontendSecret },
      requestOf: () => ({ path: `/api/frontend?userId=u${++user}&properties[plan]=${user % 3 === 0 ? 'pro' : 'free'}` }),
    },
    // OpenFeature web providers ask for every flag of their scope, evaluated for their context: browsers and
    // fetch take a compressed answer, a client that asks for none gets it plain.
    ...[
      ['compressed, as browsers and fetch ask', 'gzip, deflate, br'],
      ['plain', undefined],
    ].map(
      ([encoding, acceptEncoding]): Case => ({
        name: `OFREP bulk evaluation, a new targetingKey each request (${label}; ${encoding})`,
        path: '/ofrep/v1/evaluate/flags',
        method: 'POST',
        headers: {
          authorization: secret,
          'content-type': 'application/json',
          ...(acceptEncoding ? { 'accept-encoding': acceptEncoding } : {}),
        },
        requestOf: () => ({
          path: '/ofrep/v1/evaluate/flags',
          body: JSON.stringify({ context: { targetingKey: `u${++user}`, plan: user % 3 === 0 ? 'pro' : 'free' } }),
        }),
      }),
    ),
    { name: `client features (${label}), 200`, path: '/api/client/features', headers: { authorization: secret }, connections: 64 },
  ];
}

/** The cases of the benchmark issue, with parameters taken from the seeded data. */
async function cases(baseUrl: string): Promise<Case[]> {
  const creators = await getJson<Array<{ id: number; name: string }>>(baseUrl, '/api/admin/event-creators');
  const user = creators.find((c) => c.name.startsWith('bench-user-')) ?? creators[0]!;
  const { total } = await getJson<{ total: number }>(baseUrl, '/api/admin/search/features?limit=1');
  const sample = (await getJson<{ features: Array<{ name: string; project: string }> }>(baseUrl, '/api/admin/search/features?limit=100'))
    .features;
  let updates = 0;
  const day = (daysAgo: number) => new Date(Date.now() - daysAgo * 86_400_000).toISOString().slice(0, 10);
  return [
    { name: 'events: 100 newest', path: '/api/admin/events' },
    { name: 'events of one flag', path: '/api/admin/events/flag-0000042' },
    { name: 'event search: no filter', path: '/api/admin/search/events' },
    { name: 'event search: type', path: '/api/admin/search/events?type=IS:feature-environment-enabled' },
    { name: 'event search: query (rare term)', path: '/api/admin/search/events?query=zanzibar' },
    { name: 'event search: query (common term, ~13% of events)', path: '/api/admin/search/events?query=payments' },
    { name: 'event search: query (term in every event)', path: '/api/admin/search/events?query=rollout' },
    { name: 'event search: from/to (one week)', path: `/api/admin/search/events?from=IS:${day(187)}&to=IS:${day(181)}` },
    { name: 'event search: createdBy', path: `/api/admin/search/events?createdBy=IS:${user.id}` },
    { name: 'feature search: no filter', path: '/api/admin/search/features' },
    { name: 'feature search: query', path: '/api/admin/search/features?query=checkout' },
    { name: 'feature search: tag', path: '/api/admin/search/features?tag=INCLUDE:team:payments' },
    { name: 'feature search: status', path: '/api/admin/search/features?status=production:enabled' },
    { name: 'feature search: sortBy=name', path: '/api/admin/search/features?sortBy=name' },
    {
      name: 'feature search: sortBy=environment:production',
      path: '/api/admin/search/features?sortBy=environment:production&sortOrder=desc',
    },
    { name: 'feature search: deep page', path: `/api/admin/search/features?offset=${Math.max(0, total - 50)}` },
    {
      // Each a real change (a new description), recorded as an event, spread over 100 flags as a team's edits are.
      name: 'flag updates: PUT a new description (100 flags)',
      path: `/api/admin/projects/${sample[0]!.project}/features/${sample[0]!.name}`,
      method: 'PUT',
      headers: { authorization: TOKEN, 'content-type': 'application/json' },
      requestOf: () => {
        const flag = sample[++updates % sample.length]!;
        return {
          path: `/api/admin/projects/${flag.project}/features/${flag.name}`,
          body: JSON.stringify({ description: `benchmark update ${updates}` }),
        };
      },
    },
  ];
}

/** Reads a streamed answer to the end while sampling the server's RSS every 10 ms. */
async function streamWithMemory(server: Server, path: string) {
  const pid = server.process.pid!;
  const before = await rssKiB(pid);
  let peak = before;
  const sampler = setInterval(() => {
    rssKiB(pid).then(
      (rss) => (peak = Math.max(peak, rss)),
      () => {},
    );
  }, 10);
  const started = performance.now();
  const response = await fetch(`${server.baseUrl}${path}`, { headers: { authorization: TOKEN } });
  if (!response.ok) throw new Error(`GET ${path} answered ${response.status}`);
  let firstByteMs = 0;
  let bytes = 0;
  for await (const chunk of response.body!) {
    if (bytes === 0) firstByteMs = performance.now() - started;
    bytes += (chunk as Uint8Array).length;
  }
  clearInterval(sampler);
  return { beforeMiB: before / 1024, peakMiB: peak / 1024, firstByteMs, totalMs: performance.now() - started, bytes };
}

interface StartupProfile {
  /** Spawn to the first healthy answer, as an orchestrator sees it. */
  toHealthyMs: number;
  /** The server's own account (its `Vexil started` log line): total and per phase. */
  startupMs: number;
  phases: Record<string, number>;
  /** After 5 s idle: resident memory, and the heap and off-heap parts of it (from the metrics endpoint). */
  idle: { rssMiB: number; heapUsedMiB: number; heapTotalMiB: number; externalMiB: number };
}

/** One start on the existing database with info logs read from its output, then 5 s of idling. */
async function profileStartup(env: Record<string, string>): Promise<StartupProfile> {
  const server = await startServer({ ...env, LOG_LEVEL: 'info' }, { captureOutput: true });
  try {
    await new Promise((resolve) => setTimeout(resolve, 5000));
    const line = server
      .output()
      .split('\n')
      .find((entry) => entry.includes('"Vexil started"'));
    if (!line) throw new Error(`no "Vexil started" line in: ${server.output()}`);
    const { startupMs, phases } = JSON.parse(line) as { startupMs: number; phases: Record<string, number> };
    const metrics = await (await fetch(`${server.baseUrl}/internal-backstage/prometheus`)).text();
    const sample = (name: string) => Number(new RegExp(`^${name} (\\S+)`, 'm').exec(metrics)?.[1] ?? Number.NaN) / 1024 / 1024;
    return {
      toHealthyMs: server.toHealthyMs,
      startupMs,
      phases,
      idle: {
        rssMiB: (await rssKiB(server.process.pid!)) / 1024,
        heapUsedMiB: sample('nodejs_heap_size_used_bytes'),
        heapTotalMiB: sample('nodejs_heap_size_total_bytes'),
        externalMiB: sample('nodejs_external_memory_bytes'),
      },
    };
  } finally {
    server.process.kill('SIGTERM');
    await new Promise((resolve) => server.process.once('exit', resolve));
  }
}

/**
 * Webhook delivery lag: a receiver on 127.0.0.1 gets a webhook for every flag update while the bench makes
 * `rate` updates a second for `seconds`; lag is from the moment the update's response arrives (the change is
 * committed) to the moment its delivery arrives. A delivery that beats the response counts as 0.
 */
async function deliveryLag(server: Server, project: string, rate: number, seconds: number) {
  const committedAt = new Map<string, number>();
  const lags: number[] = [];
  const receiver = createHttpServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const marker = (JSON.parse(body) as { data?: { description?: string } }).data?.description;
      const committed = marker ? committedAt.get(marker) : undefined;
      if (marker && committed !== undefined) lags.push(Math.max(0, performance.now() - committed));
      else if (marker) committedAt.set(marker, -1); // arrived before the response: lag 0
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const port = (receiver.address() as { port: number }).port;
  const call = (method: string, path: string, body: unknown) =>
    fetch(`${server.baseUrl}${path}`, {
      method,
      headers: { authorization: TOKEN, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const flags = Array.from({ length: 10 }, (_, i) => `lag-flag-${i}-${Date.now()}`);
  for (const flag of flags) await call('POST', `/api/admin/projects/${project}/features`, { name: flag });
  const addon = await call('POST', '/api/admin/addons', {
    provider: 'webhook',
    enabled: true,
    description: 'delivery lag benchmark',
    parameters: { url: `http://127.0.0.1:${port}/hook` },
    events: ['feature-metadata-updated'],
    projects: [project],
    environments: [],
  });
  if (!addon.ok) throw new Error(`Creating the webhook failed: ${addon.status} ${await addon.text()}`);
  const addonId = ((await addon.json()) as { id: number }).id;
  const total = rate * seconds;
  const started = performance.now();
  const updates: Array<Promise<unknown>> = [];
  for (let i = 0; i < total; i += 1) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const marker = `lag ${i}`;
    updates.push(
      call('PUT', `/api/admin/projects/${project}/features/${flags[i % flags.length]}`, { description: marker }).then(() => {
        if (committedAt.get(marker) === -1) lags.push(0);
        else committedAt.set(marker, performance.now());
      }),
    );
  }
  await Promise.all(updates);
  const deadline = performance.now() + 30_000;
  while (lags.length < total && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  receiver.close();
  // The receiver is gone: a webhook left behind would fail every later run's deliveries.
  await call('DELETE', `/api/admin/addons/${addonId}`, undefined);
  const sorted = [...lags].sort((a, b) => a - b);
  return { sent: total, delivered: lags.length, p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99) };
}

/**
 * Change-to-SDK latency: `sdkCount` official Node SDKs stream from `reader` while a flag is toggled `toggles`
 * times through `writer` (on PostgreSQL another instance; on PGlite the same one). Latency runs from sending
 * the toggle to an SDK evaluating the new state, for every SDK and toggle.
 */
async function changeToSdkLatency(writer: Server, reader: Server, project: string, sdkCount: number, toggles: number) {
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${writer.baseUrl}${path}`, {
      method,
      headers: { authorization: TOKEN, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
    return response;
  };
  const token = (
    (await (
      await call('POST', '/api/admin/api-tokens', {
        tokenName: `bench-stream-${Date.now()}`,
        type: 'client',
        environment: 'production',
        projects: ['*'],
      })
    ).json()) as { secret: string }
  ).secret;
  const flag = `latency-${Date.now()}`;
  await call('POST', `/api/admin/projects/${project}/features`, { name: flag });
  const toggle = (on: boolean) =>
    call('POST', `/api/admin/projects/${project}/features/${flag}/environments/production/${on ? 'on' : 'off'}`);
  const sdks = Array.from(
    { length: sdkCount },
    (_, i) =>
      new Unleash({
        url: `${reader.baseUrl}/api/`,
        appName: `bench-streaming-${i}`,
        customHeaders: { Authorization: token },
        disableMetrics: true,
        storageProvider: new InMemStorageProvider(),
        experimentalMode: { type: 'streaming' },
        // Twenty SDKs in one process stand for twenty applications here.
        skipInstanceCountWarning: true,
      }),
  );
  try {
    await Promise.all(sdks.map((sdk) => new Promise((resolve) => sdk.once(UnleashEvents.Synchronized, resolve))));
    const latencies: number[] = [];
    for (let i = 0; i < toggles; i += 1) {
      const on = i % 2 === 0;
      const sent = performance.now();
      const arrivals = sdks.map(
        (sdk) =>
          new Promise<void>((resolve, reject) => {
            const timeout = setTimeout(() => reject(new Error(`toggle ${i} did not reach an SDK within 10 s`)), 10_000);
            const check = () => {
              if (sdk.isEnabled(flag) !== on) return;
              latencies.push(performance.now() - sent);
              clearTimeout(timeout);
              sdk.off(UnleashEvents.Changed, check);
              resolve();
            };
            sdk.on(UnleashEvents.Changed, check);
            check();
          }),
      );
      await toggle(on);
      await Promise.all(arrivals);
    }
    const sorted = latencies.sort((a, b) => a - b);
    return { samples: sorted.length, p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), max: sorted.at(-1) ?? Number.NaN };
  } finally {
    for (const sdk of sdks) sdk.destroy();
  }
}

/**
 * Many SDKs streaming from one instance: `count` server-sent event streams opened (each on a narrow scope, so
 * what is measured is a connection's cost, not `count` copies of a full hydration), one of them never reading.
 * Reports the server's RSS growth, `/health` under load meanwhile, and how long one change takes to reach every
 * stream.
 */
async function manyStreams(server: Server, project: string, count: number) {
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${server.baseUrl}${path}`, {
      method,
      headers: { authorization: TOKEN, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${await response.text()}`);
    return response;
  };
  const prefix = `streams-${Date.now()}`;
  const flag = `${prefix}-flag`;
  await call('POST', `/api/admin/projects/${project}/features`, { name: flag });
  const created = await call('POST', '/api/admin/api-tokens', {
    tokenName: prefix,
    type: 'client',
    environment: 'production',
    projects: [project],
  });
  const { secret } = (await created.json()) as { secret: string };
  const request = `GET /api/client/streaming?namePrefix=${prefix} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${secret}\r\nAccept: text/event-stream\r\n\r\n`;
  const port = Number(new URL(server.baseUrl).port);
  const sockets: Socket[] = [];
  const arrivals: Array<(text: string) => void> = [];
  const open = () =>
    new Promise<void>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.write(request));
      socket.setEncoding('utf8');
      let connected = false;
      socket.on('data', (text: string) => {
        if (!connected && text.includes('unleash-connected')) {
          connected = true;
          resolve();
        } else for (const arrival of arrivals) arrival(text);
      });
      socket.on('error', reject);
      sockets.push(socket);
    });
  const before = await rssKiB(server.process.pid!);
  for (let opened = 0; opened < count; opened += 200) {
    await Promise.all(Array.from({ length: Math.min(200, count - opened) }, open));
  }
  sockets[0]!.pause(); // a client that stopped reading
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const after = await rssKiB(server.process.pid!);
  const health = await autocannon({ url: `${server.baseUrl}/health`, connections: 16, duration: 5 });
  let reached = 0;
  const allReached = new Promise<void>((resolve) => {
    arrivals.push((text) => {
      if (text.includes('unleash-updated') && ++reached === count - 1) resolve();
    });
  });
  const started = performance.now();
  await call('POST', `/api/admin/projects/${project}/features/${flag}/environments/production/on`);
  await allReached;
  const broadcastMs = performance.now() - started;
  for (const socket of sockets) socket.destroy();
  return { count, growthMiB: (after - before) / 1024, healthP99: health.latency.p99, healthRps: health.requests.average, broadcastMs };
}

/** Change to SDK: on PostgreSQL the change travels to another instance (LISTEN/NOTIFY); the embedded engine has one. */
async function changeLine(server: Server, env: Record<string, string>, project: string): Promise<string> {
  const reader = env.DATABASE_URL ? await startServer(env) : server;
  try {
    const latency = await changeToSdkLatency(server, reader, project, 20, 50);
    const across = reader === server ? 'the same instance' : 'another instance on the same PostgreSQL';
    return `Change to SDK: a flag toggled 50 times, 20 streaming Node SDKs on ${across}: ${latency.samples} arrivals, p50 ${ms(latency.p50)}, p99 ${ms(latency.p99)}, max ${ms(latency.max)}`;
  } finally {
    if (reader !== server) reader.process.kill('SIGTERM');
  }
}

const streamsLine = (streams: Awaited<ReturnType<typeof manyStreams>>) =>
  `${streams.count.toLocaleString('en')} open streams (one not reading): server RSS +${streams.growthMiB.toFixed(0)} MiB; /health meanwhile at c=16 ${streams.healthRps.toFixed(0)} req/s, p99 ${streams.healthP99} ms; one change reached every stream in ${streams.broadcastMs.toFixed(0)} ms`;

/** Each selected case at one connection and at its concurrency, as table rows. */
async function measureCases(baseUrl: string, filter: string | undefined, duration: number): Promise<string[]> {
  const rows: string[] = [];
  const all = [...(await cases(baseUrl)), ...(await sdkCases(baseUrl))];
  // Cases that name no headers are the admin API's, called with the admin token.
  const selected = all
    .filter((c) => !filter || c.name.includes(filter))
    .map((c) => ({ ...c, headers: c.headers ?? { authorization: TOKEN } }));
  for (const benchCase of selected) {
    await drain(baseUrl);
    await measure(baseUrl, benchCase, 1, 1); // warm-up: plans, caches, JIT
    const one = await measure(baseUrl, benchCase, 1, duration);
    await drain(baseUrl);
    const connections = benchCase.connections ?? 16;
    const many = await measure(baseUrl, benchCase, connections, duration);
    const errors = one.errors + many.errors;
    rows.push(
      `| ${benchCase.name} | ${one.requestsPerSecond.toFixed(0)} | ${ms(one.p50)} | ${ms(one.p99)} | c=${connections}: ${many.requestsPerSecond.toFixed(0)} | ${ms(many.p50)} | ${ms(many.p99)} |${errors > 0 ? ` ${errors} errors |` : ''}`,
    );
    process.stderr.write(`${rows.at(-1)}\n`);
  }
  return rows;
}

const TABLE_HEAD = ['| case | c=1 req/s | c=1 p50 | c=1 p99 | c=N req/s | c=N p50 | c=N p99 |', '|---|---|---|---|---|---|---|'];

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      'database-url': { type: 'string' },
      'data-dir': { type: 'string' },
      duration: { type: 'string', default: '5' },
      'hot-project': { type: 'string', default: 'bench-0' },
      cases: { type: 'string' },
      /** With --cases: measure only those cases (no start-up, streaming, export, delivery or change-to-SDK figures). */
      only: { type: 'boolean', default: false },
      'lag-seconds': { type: 'string', default: '10' },
      streams: { type: 'string', default: '10000' },
      /** NAME=VALUE, repeatable: settings for the server under test (e.g. OpenTelemetry's, by bench/telemetry-cost.ts). */
      'server-env': { type: 'string', multiple: true, default: [] },
    },
  });
  const env: Record<string, string> = {
    ...(values['database-url'] ? { DATABASE_URL: values['database-url'] } : { DATA_DIR: values['data-dir'] ?? './bench-data' }),
    ...Object.fromEntries(
      values['server-env'].map((setting) => [setting.slice(0, setting.indexOf('=')), setting.slice(setting.indexOf('=') + 1)]),
    ),
  };
  const duration = Number(values.duration);
  const only = values.only && values.cases !== undefined;
  // Three starts, the median reported: the first may pay for cold file caches.
  const profiles: StartupProfile[] = [];
  for (let run = 0; run < (only ? 0 : 3); run++) profiles.push(await profileStartup(env));
  const startup = profiles.sort((a, b) => a.toHealthyMs - b.toHealthyMs)[1]!;
  const server = await startServer(env);
  const edgeOptions = { duration, project: values['hot-project'], streams: Number(values.streams) };
  try {
    if (only) {
      process.stdout.write(`${[...TABLE_HEAD, ...(await measureCases(server.baseUrl, values.cases, duration))].join('\n')}\n`);
      if ('open streams'.includes(values.cases!))
        process.stdout.write(`${streamsLine(await manyStreams(server, values['hot-project'], Number(values.streams)))}\n`);
      if ('change to sdk'.includes(values.cases!)) process.stdout.write(`${await changeLine(server, env, values['hot-project'])}\n`);
      if ('evaluation engine'.includes(values.cases!)) process.stdout.write(`${(await engineLines(server.baseUrl, TOKEN)).join('\n')}\n`);
      if ('vexil edge'.includes(values.cases!)) process.stdout.write(`${(await edgeLines(server, edgeOptions)).join('\n')}\n`);
      return;
    }
    // First, on the fresh server: its memory then shows what streaming costs, not what earlier cases left.
    const stream = await streamWithMemory(server, `/api/admin/events?project=${values['hot-project']}`);
    const exported = await streamWithMemory(server, '/api/admin/events/export?format=ndjson');
    const exportedCsv = await streamWithMemory(server, '/api/admin/events/export?format=csv');
    const { totalEvents } = await getJson<{ totalEvents: number }>(server.baseUrl, '/api/admin/events');
    const rows = await measureCases(server.baseUrl, values.cases, duration);
    await drain(server.baseUrl);
    const lag = await deliveryLag(server, values['hot-project'], 200, Number(values['lag-seconds']));
    await drain(server.baseUrl);
    const streams = await manyStreams(server, values['hot-project'], Number(values.streams));
    const change = await changeLine(server, env, values['hot-project']);
    const engine = await engineLines(server.baseUrl, TOKEN);
    const edge = await edgeLines(server, edgeOptions);
    // What the metrics endpoint shows after all of the above: Vexil's own series, and the process's memory.
    const scrape = await (await fetch(`${server.baseUrl}/internal-backstage/prometheus`)).text();
    const scraped = scrape
      .split('\n')
      .filter((line) =>
        /^(vexil_|process_resident_memory_bytes|nodejs_eventloop_lag_p99_seconds|http_request_duration_seconds_count\{method="GET",route="\/api\/client\/features")/.test(
          line,
        ),
      );
    const phases = Object.entries(startup.phases)
      .map(([phase, took]) => `${phase} ${took} ms`)
      .join(', ');
    const exportLine = (format: string, result: Awaited<ReturnType<typeof streamWithMemory>>) =>
      `Export of all ${totalEvents.toLocaleString('en')} events as ${format}: ${(result.bytes / 1024 / 1024).toFixed(0)} MiB in ${(result.totalMs / 1000).toFixed(1)} s, first byte after ${ms(result.firstByteMs)}, server RSS ${result.beforeMiB.toFixed(0)} MiB before, ${result.peakMiB.toFixed(0)} MiB at peak (+${(result.peakMiB - result.beforeMiB).toFixed(0)} MiB)`;
    process.stdout.write(
      [
        '',
        ...TABLE_HEAD,
        ...rows,
        '',
        `Streaming every event of ${values['hot-project']}: ${(stream.bytes / 1024 / 1024).toFixed(0)} MiB in ${(stream.totalMs / 1000).toFixed(1)} s, first byte after ${ms(stream.firstByteMs)}, server RSS ${stream.beforeMiB.toFixed(0)} MiB before, ${stream.peakMiB.toFixed(0)} MiB at peak`,
        streamsLine(streams),
        `Webhook delivery lag at 200 events/s for ${values['lag-seconds']} s: ${lag.delivered} of ${lag.sent} delivered, p50 ${ms(lag.p50)}, p99 ${ms(lag.p99)}`,
        change,
        ...engine,
        '',
        ...edge,
        '',
        exportLine('NDJSON', exported),
        exportLine('CSV', exportedCsv),
        `Start-up on the existing database, median of 3 (spawn to first healthy answer): ${ms(startup.toHealthyMs)}; by the server's account ${ms(startup.startupMs)}: ${phases}`,
        `Idle after start-up (5 s): RSS ${startup.idle.rssMiB.toFixed(0)} MiB, of which V8 heap ${startup.idle.heapUsedMiB.toFixed(0)} MiB used of ${startup.idle.heapTotalMiB.toFixed(0)} MiB, external (buffers, WebAssembly) ${startup.idle.externalMiB.toFixed(0)} MiB`,
        '',
        'Metrics scraped at the end (vexil_* series, resident memory, event-loop lag p99, client features requests):',
        '```',
        ...scraped,
        '```',
        '',
      ].join('\n'),
    );
  } finally {
    server.process.kill('SIGTERM');
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
