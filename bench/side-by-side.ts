/**
 * Vexil and Unleash side by side on the same flags: the frontend API with a new userId each request.
 *   npm run bench:side-by-side -- --data-dir ./bench-data [--duration 10]
 * Starts Vexil on the seeded data, and the real unleash-server from npm (the dev dependency) on a database of its
 * own on the PostgreSQL at TEST_DATABASE_URL (or 127.0.0.1:5432), copies the production environment's flags and
 * segments into Unleash through its import API, then loads each frontend API in turn (16 connections) and prints
 * req/s and p99 for both and their ratio.
 */
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { reachablePostgres, startUnleash } from '../test/helpers/unleash-server.js';
import { createSdkToken, startServer, TOKEN } from './server.js';

interface Segment {
  id: number;
  name: string;
  constraints: unknown[];
}

async function call(baseUrl: string, authorization: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text.slice(0, 500)}`);
  return text ? JSON.parse(text) : undefined;
}

/** A personal access token: Unleash refuses admin tokens for imports. */
async function unleashPersonalToken(baseUrl: string, adminToken: string): Promise<string> {
  const password = 'Vexil-bench-Passw0rd!';
  await call(baseUrl, adminToken, 'POST', '/api/admin/user-admin', { username: 'bench', rootRole: 1, password, sendEmail: false });
  const login = await fetch(`${baseUrl}/auth/simple/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'bench', password }),
  });
  const cookie = login.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const created = await fetch(`${baseUrl}/api/admin/user/tokens`, {
    method: 'POST',
    headers: { cookie, 'content-type': 'application/json' },
    body: JSON.stringify({ description: 'bench', expiresAt: new Date(Date.now() + 86_400_000).toISOString() }),
  });
  return ((await created.json()) as { secret: string }).secret;
}

async function load(baseUrl: string, token: string, seconds: number) {
  let user = 0;
  const result = await autocannon({
    url: `${baseUrl}/api/frontend`,
    connections: 16,
    duration: seconds,
    headers: { authorization: token },
    requests: [
      {
        setupRequest: (request) => ({
          ...request,
          path: `/api/frontend?userId=u${++user}&properties[plan]=${user % 3 === 0 ? 'pro' : 'free'}`,
        }),
      },
    ],
  });
  return { perSecond: result.requests.average, p99: result.latency.p99, errors: result.errors + result.non2xx };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { 'data-dir': { type: 'string', default: './bench-data' }, duration: { type: 'string', default: '10' } },
  });
  const postgres = await reachablePostgres();
  if (!postgres) throw new Error('Unleash needs PostgreSQL: set TEST_DATABASE_URL or start one on 127.0.0.1:5432');
  const vexil = await startServer({ DATA_DIR: values['data-dir']! });
  const unleash = await startUnleash(postgres);
  try {
    const exported = await call(vexil.baseUrl, TOKEN, 'POST', '/api/admin/features-batch/export', { environment: 'production' });
    const segments = (await call(vexil.baseUrl, TOKEN, 'GET', '/api/admin/segments')).segments as Segment[];
    const used = new Set((exported.segments as Array<{ id: number }>).map((segment) => segment.id));
    for (const segment of segments.filter((s) => used.has(s.id))) {
      await call(unleash.baseUrl, unleash.adminToken, 'POST', '/api/admin/segments', {
        name: segment.name,
        constraints: segment.constraints,
      });
    }
    const pat = await unleashPersonalToken(unleash.baseUrl, unleash.adminToken);
    // Every flag into Unleash's default project, whichever Vexil project holds it (evaluation does not read
    // projects), a hundred flags per import: Unleash takes request bodies of up to 100 kB.
    const names = (exported.features as Array<{ name: string }>).map((feature) => feature.name);
    const byFlag = (list: unknown, inPart: Set<string>) =>
      ((list as Array<{ featureName?: string; feature?: string; name?: string }> | undefined) ?? []).filter((entry) =>
        inPart.has(entry.featureName ?? entry.feature ?? entry.name ?? ''),
      );
    for (let start = 0; start < names.length; start += 100) {
      const part = new Set(names.slice(start, start + 100));
      const data = {
        ...exported,
        features: byFlag(exported.features, part),
        featureStrategies: byFlag(exported.featureStrategies, part),
        featureEnvironments: byFlag(exported.featureEnvironments, part),
        featureTags: byFlag(exported.featureTags, part),
        dependencies: byFlag(exported.dependencies, part),
        links: byFlag(exported.links, part),
      };
      await call(unleash.baseUrl, pat, 'POST', '/api/admin/features-batch/import', { project: 'default', environment: 'production', data });
    }
    const vexilToken = await createSdkToken(vexil.baseUrl, TOKEN, 'frontend', 'side-by-side');
    const unleashToken = await createSdkToken(unleash.baseUrl, unleash.adminToken, 'frontend', 'side-by-side');
    const probe = async (baseUrl: string, token: string) =>
      ((await call(baseUrl, token, 'GET', '/api/frontend?userId=probe')).toggles as unknown[]).length;
    // Unleash refreshes its frontend API's flags a moment after a change.
    for (let wait = 0; wait < 60 && (await probe(unleash.baseUrl, unleashToken)) === 0; wait++)
      await new Promise((r) => setTimeout(r, 1000));
    const seconds = Number(values.duration);
    await load(vexil.baseUrl, vexilToken, 2);
    await load(unleash.baseUrl, unleashToken, 2);
    const ofVexil = await load(vexil.baseUrl, vexilToken, seconds);
    const ofUnleash = await load(unleash.baseUrl, unleashToken, seconds);
    const flags = (exported.features as unknown[]).length;
    process.stdout.write(
      [
        `Frontend API side by side, ${flags.toLocaleString('en')} flags (production), a new userId each request, 16 connections, ${seconds} s each:`,
        `| server | flags on for the probe user | req/s | p99 | errors |`,
        '|---|---|---|---|---|',
        `| Vexil | ${await probe(vexil.baseUrl, vexilToken)} | ${ofVexil.perSecond.toFixed(0)} | ${ofVexil.p99} ms | ${ofVexil.errors} |`,
        `| Unleash ${unleash.version} | ${await probe(unleash.baseUrl, unleashToken)} | ${ofUnleash.perSecond.toFixed(0)} | ${ofUnleash.p99} ms | ${ofUnleash.errors} |`,
        `Vexil answers ${(ofVexil.perSecond / ofUnleash.perSecond).toFixed(1)}× as many requests per second.`,
        '',
      ].join('\n'),
    );
  } finally {
    vexil.process.kill('SIGTERM');
    await unleash.stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`side-by-side failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
