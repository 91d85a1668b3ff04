import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import type { Context, Unleash } from 'unleash-client';
import { expectStatus } from '../helpers/assertions.js';
import { eventsSince, lastEventId } from '../helpers/events.js';
import { eventually } from '../helpers/eventually.js';
import { createFlag, createProject } from '../helpers/projects.js';
import { createSdkToken, startNodeSdk } from '../helpers/sdk-fixtures.js';
import { runAdminCommand, startServer, stopServer } from '../helpers/server-process.js';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../helpers/test-app.js';
import { reachablePostgres, startUnleash, UNLEASH_PACKAGES, type RunningUnleash } from '../helpers/unleash-server.js';

/**
 * Moving in from Unleash: the real unleash-server from npm is filled through its admin API with flags using
 * every strategy kind, constraint operator, segments, strategy and environment variants, dependencies, tags,
 * stale and archived flags; `npm run admin -- import-unleash` brings it into a Vexil; the official Node SDK
 * then evaluates both servers' flags for the same 1,000 contexts, and every answer agrees.
 */
const postgres = await reachablePostgres();
const skip = postgres ? false : 'no PostgreSQL answers (TEST_DATABASE_URL or 127.0.0.1:5432); unleash-server needs one';

let unleash: RunningUnleash;
let ctx: TestApp;
let vexilUrl: string;
const sdks: Unleash[] = [];

async function unleashCall(method: string, path: string, body?: unknown): Promise<Response> {
  const response = await fetch(`${unleash.baseUrl}${path}`, {
    method,
    headers: { authorization: unleash.adminToken, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`Unleash ${method} ${path}: ${response.status} ${await response.text()}`);
  return response;
}

const FEATURES = '/api/admin/projects/default/features';

/** Whether Unleash recorded the flag's first lifecycle stage, which its event poller does up to a second after creation. */
async function lifecycleRecorded(flag: string): Promise<boolean> {
  const stages = (await (await unleashCall('GET', `${FEATURES}/${flag}/lifecycle`)).json()) as Array<{ stage: string }>;
  return stages.some(({ stage }) => stage === 'initial');
}
const strategyOf = (flag: string, environment: string, strategy: unknown) =>
  unleashCall('POST', `${FEATURES}/${flag}/environments/${environment}/strategies`, strategy);
const turnOn = (flag: string, environment: string) => unleashCall('POST', `${FEATURES}/${flag}/environments/${environment}/on`);

const constraint = (contextName: string, operator: string, values: string | string[], extra: Record<string, unknown> = {}) => ({
  contextName,
  operator,
  ...(Array.isArray(values) ? { values } : { value: values }),
  ...extra,
});

/** Every operator Unleash 7 has (it has no SEMVER_GTE or SEMVER_LTE), each on a strategy of its own in one flag, so any one that matches turns it on. */
const OPERATOR_CONSTRAINTS = [
  constraint('plan', 'IN', ['pro', 'team']),
  constraint('plan', 'NOT_IN', ['free', 'pro', 'team']),
  constraint('email', 'STR_STARTS_WITH', ['admin@']),
  constraint('email', 'STR_ENDS_WITH', ['@VEXIL.DEV'], { caseInsensitive: true }),
  constraint('email', 'STR_CONTAINS', ['+beta']),
  constraint('age', 'NUM_EQ', '42'),
  constraint('age', 'NUM_GT', '90'),
  constraint('age', 'NUM_GTE', '88'),
  constraint('age', 'NUM_LT', '3'),
  constraint('age', 'NUM_LTE', '5', { inverted: true }),
  constraint('currentTime', 'DATE_AFTER', '2020-01-01T00:00:00.000Z'),
  constraint('currentTime', 'DATE_BEFORE', '2020-01-01T00:00:00.000Z'),
  constraint('version', 'SEMVER_EQ', '1.2.3'),
  constraint('version', 'SEMVER_GT', '3.0.0'),
  constraint('version', 'SEMVER_LT', '1.0.0-beta.2'),
  constraint('email', 'REGEX', '^me\\+', { caseInsensitive: true }),
];

/** Projects beyond Unleash 8's default of 15 feature searches a minute. */
const LEGACY_TEAMS = 16;

/** Fills Unleash with what a real team has; returns the flag names to compare. */
async function fillUnleash(): Promise<string[]> {
  await unleashCall('POST', '/api/admin/context', {
    name: 'plan',
    stickiness: true,
    legalValues: [{ value: 'free' }, { value: 'pro', description: 'Paying' }, { value: 'team' }],
  });
  await unleashCall('POST', '/api/admin/tag-types', { name: 'team', description: 'Owning team' });
  await unleashCall('POST', '/api/admin/strategies', {
    name: 'custom-rollout',
    description: 'A strategy of our own',
    parameters: [{ name: 'percent', type: 'percentage', description: 'How many', required: false }],
  });
  const segment = (await (
    await unleashCall('POST', '/api/admin/segments', {
      name: 'beta-testers',
      description: 'Beta testers',
      constraints: [constraint('userId', 'IN', ['u1', 'u2', 'u3', 'u10', 'u100', 'u500'])],
    })
  ).json()) as { id: number };
  const eu = (await (
    await unleashCall('POST', '/api/admin/segments', { name: 'europe', constraints: [constraint('region', 'IN', ['eu'])] })
  ).json()) as { id: number };

  const create = async (name: string, extra: Record<string, unknown> = {}) => {
    await unleashCall('POST', FEATURES, { name, ...extra });
    return name;
  };
  const flags: string[] = [];

  flags.push(await create('rollout', { type: 'experiment', description: 'Half of everyone', impressionData: true }));
  for (const environment of ['development', 'production']) {
    await strategyOf('rollout', environment, {
      name: 'flexibleRollout',
      parameters: { rollout: environment === 'production' ? '30' : '70', stickiness: 'default', groupId: 'rollout' },
      variants: [
        { name: 'red', weight: 500, weightType: 'variable', stickiness: 'default', payload: { type: 'string', value: 'r' } },
        { name: 'green', weight: 500, weightType: 'variable', stickiness: 'default' },
      ],
    });
    await turnOn('rollout', environment);
  }
  await unleashCall('POST', '/api/admin/features/rollout/tags', { type: 'team', value: 'growth' });

  flags.push(await create('sticky-session'));
  await strategyOf('sticky-session', 'production', {
    name: 'flexibleRollout',
    parameters: { rollout: '45', stickiness: 'sessionId', groupId: 'other-group' },
  });
  await strategyOf('sticky-session', 'production', {
    name: 'flexibleRollout',
    title: 'Pro plan',
    parameters: { rollout: '20', stickiness: 'plan', groupId: 'sticky-session' },
    constraints: [constraint('plan', 'IN', ['pro'])],
  });
  await turnOn('sticky-session', 'production');

  flags.push(await create('operators'));
  for (const c of OPERATOR_CONSTRAINTS) await strategyOf('operators', 'production', { name: 'default', constraints: [c] });
  await turnOn('operators', 'production');

  flags.push(await create('segmented', { type: 'permission' }));
  await strategyOf('segmented', 'production', {
    name: 'flexibleRollout',
    parameters: { rollout: '100', stickiness: 'default', groupId: 'segmented' },
    segments: [segment.id, eu.id],
  });
  await strategyOf('segmented', 'production', { name: 'default', segments: [segment.id], disabled: true });
  await turnOn('segmented', 'production');

  // Unleash 7 keeps the older built-in strategies only where an instance still uses them; add those it has.
  const builtIn = new Set(
    ((await (await unleashCall('GET', '/api/admin/strategies')).json()) as { strategies: Array<{ name: string }> }).strategies.map(
      (s) => s.name,
    ),
  );
  flags.push(await create('classic'));
  if (builtIn.has('userWithId')) await strategyOf('classic', 'production', { name: 'userWithId', parameters: { userIds: 'u7, u8,u9' } });
  if (builtIn.has('remoteAddress')) {
    await strategyOf('classic', 'production', { name: 'remoteAddress', parameters: { IPs: '10.0.0.1, 192.168.1.0/24' } });
  }
  await strategyOf('classic', 'production', { name: 'custom-rollout', parameters: { percent: '50' } });
  await strategyOf('classic', 'production', {
    name: 'flexibleRollout',
    parameters: { rollout: '10', stickiness: 'random', groupId: 'classic' },
    constraints: [constraint('userId', 'IN', ['never'])],
  });
  await turnOn('classic', 'production');

  // Unleash 7 refuses environment variants on new flags ("use strategy variants instead"): fixed and variable
  // weights, payloads and stickiness on a strategy.
  flags.push(await create('variants', { type: 'experiment' }));
  await strategyOf('variants', 'production', {
    name: 'flexibleRollout',
    parameters: { rollout: '100', stickiness: 'userId', groupId: 'variants' },
    variants: [
      { name: 'a', weight: 200, weightType: 'fix', stickiness: 'userId', payload: { type: 'json', value: '{"n":1}' } },
      { name: 'b', weight: 400, weightType: 'variable', stickiness: 'userId', payload: { type: 'number', value: '7' } },
      { name: 'c', weight: 400, weightType: 'variable', stickiness: 'userId' },
    ],
  });
  await turnOn('variants', 'production');

  flags.push(await create('parent'));
  await strategyOf('parent', 'production', {
    name: 'flexibleRollout',
    parameters: { rollout: '60', stickiness: 'userId', groupId: 'parent' },
    variants: [
      { name: 'on-a', weight: 500, weightType: 'variable', stickiness: 'userId' },
      { name: 'on-b', weight: 500, weightType: 'variable', stickiness: 'userId' },
    ],
  });
  await turnOn('parent', 'production');
  flags.push(await create('child'));
  await strategyOf('child', 'production', { name: 'default' });
  await turnOn('child', 'production');
  await unleashCall('POST', `${FEATURES}/child/dependencies`, { feature: 'parent', enabled: true, variants: ['on-a'] });

  flags.push(await create('stale-but-on'));
  await strategyOf('stale-but-on', 'production', { name: 'default' });
  await turnOn('stale-but-on', 'production');
  await unleashCall('POST', '/api/admin/projects/default/stale', { features: ['stale-but-on'], stale: true });

  flags.push(await create('off-with-strategies'));
  await strategyOf('off-with-strategies', 'production', { name: 'default' });

  await create('retired', { description: 'Gone' });
  await unleashCall('DELETE', `${FEATURES}/retired`);

  // A flag's own variants, set as Unleash's UI sets them (…/variants); Unleash 7 and 8 serve them only there.
  flags.push(await create('flag-variants', { type: 'experiment' }));
  await strategyOf('flag-variants', 'production', { name: 'default' });
  await turnOn('flag-variants', 'production');
  await unleashCall('PUT', `${FEATURES}/flag-variants/environments/production/variants`, [
    { name: 'x', weight: 700, weightType: 'fix', stickiness: 'userId', payload: { type: 'string', value: 'ex' } },
    { name: 'y', weight: 300, weightType: 'variable', stickiness: 'userId', overrides: [{ contextName: 'userId', values: ['u1'] }] },
  ]);
  // A child that needs a variant of a parent with flag variants.
  flags.push(await create('variant-child'));
  await strategyOf('variant-child', 'production', { name: 'default' });
  await turnOn('variant-child', 'production');
  await unleashCall('POST', `${FEATURES}/variant-child/dependencies`, { feature: 'flag-variants', enabled: true, variants: ['x'] });

  // A segment of the project, used by a flag of it.
  const scoped = (await (
    await unleashCall('POST', '/api/admin/segments', {
      name: 'default-project-staff',
      project: 'default',
      constraints: [constraint('email', 'STR_ENDS_WITH', ['@vexil.dev'])],
    })
  ).json()) as { id: number };
  flags.push(await create('scoped-segment'));
  await strategyOf('scoped-segment', 'production', { name: 'default', segments: [scoped.id] });
  await turnOn('scoped-segment', 'production');

  // A link (Unleash 7.1 and later keep them), and a default strategy for the project's production: both come over.
  await unleashCall('POST', `${FEATURES}/rollout/link`, { url: 'https://wiki.example.com/rollout', title: 'Runbook' }).catch(
    () => undefined,
  );
  await unleashCall('POST', '/api/admin/projects/default/environments/production/default-strategy', {
    name: 'flexibleRollout',
    constraints: [],
    parameters: { rollout: '50', stickiness: 'userId', groupId: '' },
  });

  // A project left from a Pro or Enterprise past: Unleash OSS no longer lists it, yet serves SDKs its flags.
  const database = new pg.Client({ connectionString: unleash.databaseUrl });
  await database.connect();
  await database.query(`INSERT INTO projects (id, name) VALUES ('legacy', 'Legacy')`);
  await database.query(
    `INSERT INTO project_environments (project_id, environment_name) VALUES ('legacy', 'development'), ('legacy', 'production')`,
  );
  await unleashCall('POST', '/api/admin/projects/legacy/features', { name: 'legacy-flag' });
  await unleashCall('POST', '/api/admin/projects/legacy/features/legacy-flag/environments/production/strategies', {
    name: 'flexibleRollout',
    parameters: { rollout: '40', stickiness: 'userId', groupId: 'legacy-flag' },
  });
  await unleashCall('POST', '/api/admin/projects/legacy/features/legacy-flag/environments/production/on');
  flags.push('legacy-flag');
  // More such projects than Unleash 8 allows searches a minute (15, its default, left on here).
  for (let i = 0; i < LEGACY_TEAMS; i += 1) {
    const project = `team-${i}`;
    await database.query(`INSERT INTO projects (id, name) VALUES ($1, $1)`, [project]);
    await database.query(`INSERT INTO project_environments (project_id, environment_name) VALUES ($1, 'production')`, [project]);
    await unleashCall('POST', `/api/admin/projects/${project}/features`, { name: `${project}-switch` });
    await unleashCall('POST', `/api/admin/projects/${project}/features/${project}-switch/environments/production/strategies`, {
      name: 'default',
    });
    await unleashCall('POST', `/api/admin/projects/${project}/features/${project}-switch/environments/production/on`);
    flags.push(`${project}-switch`);
  }
  await database.end();

  // More archived flags than one page of Unleash's search, each tagged.
  for (let i = 0; i < 105; i += 1) {
    const name = `old-${String(i).padStart(3, '0')}`;
    await create(name);
    await unleashCall('POST', `/api/admin/features/${name}/tags`, { type: 'team', value: 'legacy' });
    await unleashCall('DELETE', `${FEATURES}/${name}`);
  }
  return flags;
}

/** 1,000 contexts spread over every field the flags read. */
function contexts(): Context[] {
  const plans = ['free', 'pro', 'team', 'other'];
  const emails = ['admin@x.io', 'a@vexil.dev', 'me+beta@x.io', 'me@x.io'];
  const versions = ['0.4.0', '1.0.0-beta.1', '1.2.3', '2.9.9', '3.0.1', '10.0.0'];
  return Array.from({ length: 1000 }, (_, i) => ({
    userId: `u${i}`,
    sessionId: `s${(i * 7919) % 1000}`,
    remoteAddress: i % 5 === 0 ? '10.0.0.1' : `192.168.${i % 3}.${i % 250}`,
    properties: {
      plan: plans[i % plans.length]!,
      email: emails[i % emails.length]!,
      age: String(i % 100),
      version: versions[i % versions.length]!,
      region: i % 3 === 0 ? 'eu' : 'us',
    },
  }));
}

async function unleashClientToken(environment: string): Promise<string> {
  const response = await unleashCall('POST', '/api/admin/api-tokens', {
    tokenName: `sdk-${environment}`,
    type: 'client',
    environment,
    projects: ['*'],
  });
  return ((await response.json()) as { secret: string }).secret;
}

async function vexilSegmentId(name: string): Promise<number> {
  const segments = (await ctx.admin.get('/api/admin/segments')).json() as { segments: Array<{ id: number; name: string }> };
  return segments.segments.find((s) => s.name === name)!.id;
}

/** A user of Unleash's own, signed in, with a personal access token. */
async function unleashPersonalToken(): Promise<string> {
  const password = 'Vexil-peer-Passw0rd!';
  await unleashCall('POST', '/api/admin/user-admin', { username: 'importer', rootRole: 1, password, sendEmail: false });
  const login = await fetch(`${unleash.baseUrl}/auth/simple/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'importer', password }),
  });
  assert.equal(login.status, 200, await login.text());
  const cookie = login.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const created = await fetch(`${unleash.baseUrl}/api/admin/user/tokens`, {
    method: 'POST',
    headers: { cookie, 'content-type': 'application/json' },
    body: JSON.stringify({ description: 'import', expiresAt: new Date(Date.now() + 86_400_000).toISOString() }),
  });
  const body = await created.text();
  assert.equal(created.status, 201, body);
  return (JSON.parse(body) as { secret: string }).secret;
}

for (const peer of UNLEASH_PACKAGES) {
  describe(`import from a running Unleash (${peer})`, { skip, timeout: 300_000 }, () => {
    let flags: string[];
    let importOutput: string;
    let importNotices: string;
    let eventsBefore: number;

    before(async () => {
      unleash = await startUnleash(postgres!, peer);
      assert.equal(unleash.version.split('.')[0], peer === 'unleash-server' ? '7' : '8');
      flags = await fillUnleash();
      ctx = await startTestApp();
      vexilUrl = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
      eventsBefore = await lastEventId(ctx);
      const result = await runAdminCommand(
        ['import-unleash', '--from', unleash.baseUrl, '--from-token', unleash.adminToken, '--url', vexilUrl, '--token', ADMIN_TOKEN],
        {},
      );
      assert.equal(result.code, 0, `import-unleash failed: ${result.stderr}${result.stdout}`);
      importOutput = result.stdout;
      importNotices = result.stderr;
    });

    after(async () => {
      for (const sdk of sdks) sdk.destroy();
      await new Promise((resolve) => setTimeout(resolve, 500));
      await ctx?.close();
      await unleash?.stop();
    });

    test(`every evaluation and variant of the official SDK agrees for 1,000 contexts`, async () => {
      for (const environment of ['development', 'production']) {
        const fromUnleash = await startNodeSdk(unleash.baseUrl, await unleashClientToken(environment), { refreshInterval: 3_600_000 });
        const fromVexil = await startNodeSdk(vexilUrl, await createSdkToken(ctx, 'client', environment), { refreshInterval: 3_600_000 });
        sdks.push(fromUnleash, fromVexil);
        let enabledAnswers = 0;
        for (const context of contexts()) {
          for (const flag of flags) {
            const expected = fromUnleash.isEnabled(flag, context);
            assert.equal(fromVexil.isEnabled(flag, context), expected, `${flag} in ${environment} for ${JSON.stringify(context)}`);
            if (expected) enabledAnswers++;
            assert.deepEqual(
              fromVexil.getVariant(flag, context),
              fromUnleash.getVariant(flag, context),
              `variant of ${flag} in ${environment}`,
            );
          }
        }
        // Both on and off answers were compared, so agreement is not two servers saying "off" to everything.
        const answers = 1000 * flags.length;
        assert.ok(enabledAnswers > 500 && enabledAnswers < answers, `${enabledAnswers} of ${answers} answers were on in ${environment}`);
      }
    });

    test('what was brought is Unleash’s, recorded as events, and listed with what was not', async () => {
      const feature = (await ctx.admin.get('/api/admin/projects/default/features/rollout')).json() as {
        type: string;
        description: string;
        impressionData: boolean;
        tags: unknown[];
      };
      assert.deepEqual(
        [feature.type, feature.description, feature.impressionData, feature.tags],
        ['experiment', 'Half of everyone', true, [{ type: 'team', value: 'growth' }]],
      );
      const stale = (await ctx.admin.get('/api/admin/projects/default/features/stale-but-on')).json() as { stale: boolean };
      assert.equal(stale.stale, true);
      const child = (await ctx.admin.get('/api/admin/projects/default/features/child')).json() as { dependencies: unknown[] };
      assert.deepEqual(child.dependencies, [{ feature: 'parent', enabled: true, variants: ['on-a'] }]);
      const archived = await ctx.admin.get('/api/admin/search/features?query=retired&archived=IS:true');
      expectStatus(archived, 200);
      assert.deepEqual(
        (archived.json() as { features: Array<{ name: string; archivedAt: string | null }> }).features.map((f) => [
          f.name,
          f.archivedAt !== null,
        ]),
        [['retired', true]],
      );
      const segments = (await ctx.admin.get('/api/admin/segments')).json() as { segments: Array<{ name: string; project: string | null }> };
      assert.deepEqual(segments.segments.map((s) => [s.name, s.project]).sort(), [
        ['beta-testers', null],
        ['default-project-staff', 'default'],
        ['europe', null],
      ]);
      const variants = (await ctx.admin.get('/api/admin/projects/default/features/flag-variants')).json() as {
        environments: Array<{ name: string; variants: Array<{ name: string; weight: number; overrides?: unknown[] }> }>;
      };
      assert.deepEqual(
        variants.environments.find((env) => env.name === 'production')!.variants.map((v) => [v.name, v.weight, v.overrides ?? []]),
        [
          ['x', 700, []],
          ['y', 300, [{ contextName: 'userId', values: ['u1'] }]],
        ],
      );
      const oldOnes = await ctx.admin.get('/api/admin/search/features?query=old-&archived=IS:true&limit=1000');
      const old = (oldOnes.json() as { features: Array<{ name: string; tags: Array<{ type: string; value: string }> }> }).features;
      assert.equal(old.length, 105, "every archived flag, past the first page of Unleash's search");
      assert.ok(
        old.every((f) => f.tags.some((tag) => tag.type === 'team' && tag.value === 'legacy')),
        'with their tags',
      );
      const custom = await ctx.admin.get('/api/admin/strategies/custom-rollout');
      expectStatus(custom, 200);

      const events = await eventsSince(ctx, eventsBefore);
      assert.ok(events.some((e) => e.type === 'feature-created' && e.featureName === 'rollout'));
      assert.ok(events.every((e) => e.createdBy === 'admin-token'));
      assert.match(importOutput, /Read from Unleash: 18 projects, 136 flags, 3 segments/);
      assert.match(
        importOutput,
        /Unleash's admin API does not list the projects legacy, team-0, team-1, .*team-9, yet serves SDKs their flags: brought too\./,
      );
      // 18 projects, more than the 15 searches a minute Unleash 8 allows by default: archived flags are read in
      // one search for all, so the import needs no wait (the client waits out a 429 if one comes all the same).
      assert.doesNotMatch(importNotices, /Could not|failed/);
      // The project's default strategy and the flag's link came over as Unleash has them.
      const overview = (await ctx.admin.get('/api/admin/projects/default/overview')).json() as {
        environments: Array<{ environment: string; defaultStrategy?: { name: string; parameters: Record<string, string> } }>;
      };
      const production = overview.environments.find((environment) => environment.environment === 'production');
      assert.deepEqual(
        [production?.defaultStrategy?.name, production?.defaultStrategy?.parameters],
        ['flexibleRollout', { rollout: '50', stickiness: 'userId', groupId: '' }],
      );
      const unleashLinks =
        ((await (await unleashCall('GET', `${FEATURES}/rollout`)).json()) as { links?: Array<{ url: string; title: string | null }> })
          .links ?? [];
      const vexilLinks = (await ctx.admin.get('/api/admin/projects/default/features/rollout')).json() as {
        links: Array<{ url: string; title: string | null }>;
      };
      assert.deepEqual(
        vexilLinks.links.map(({ url, title }) => [url, title]),
        unleashLinks.map(({ url, title }) => [url, title]),
      );
      assert.doesNotMatch(importOutput, /default strategies|feature links/);
      assert.match(importOutput, /Not brought over:\n {2}- users \(\d+\): passwords cannot be read/);
      assert.match(importOutput, /API tokens \(\d+\): secrets cannot be read/);
    });

    test('importing again changes nothing', async () => {
      const before = await lastEventId(ctx);
      const result = await runAdminCommand(
        ['import-unleash', '--from', unleash.baseUrl, '--from-token', unleash.adminToken, '--url', vexilUrl, '--token', ADMIN_TOKEN],
        {},
      );
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /Nothing to change: the configuration already matches\./);
      assert.match(
        result.stdout,
        /Compared what SDKs get from Unleash and from Vexil: \d+ flag answers in \d+ environment and project scopes\. No difference\./,
      );
      // Nothing but the comparison's own client tokens, made and deleted again.
      assert.deepEqual([...new Set((await eventsSince(ctx, before)).map((event) => event.type))].sort(), [
        'api-token-created',
        'api-token-deleted',
      ]);
    });

    test('the comparison prints each difference an SDK could see, and the import exits 3', async () => {
      const flag = await createFlag(ctx, 'default', { name: 'only-in-vexil', environment: 'production', enabled: true });
      try {
        const result = await runAdminCommand(
          ['import-unleash', '--from', unleash.baseUrl, '--from-token', unleash.adminToken, '--url', vexilUrl, '--token', ADMIN_TOKEN],
          {},
        );
        assert.equal(result.code, 3, result.stderr);
        const differences = result.stdout.split('\n').filter((line) => line.startsWith('  ≠ '));
        // SDKs of every environment get the flag (off where it is not on), so each scope sees it.
        assert.deepEqual(
          differences,
          ['development', 'production'].flatMap((environment) => [
            `  ≠ ${environment}, all projects: flag "${flag}" is served by Vexil, not by the source`,
            `  ≠ ${environment}, project default: flag "${flag}" is served by Vexil, not by the source`,
          ]),
        );
        assert.match(result.stdout, /4 differences: SDKs would see Vexil answer otherwise than Unleash\.\n$/);
      } finally {
        expectStatus(await ctx.admin.delete(`/api/admin/projects/default/features/${flag}`), 202);
      }
    });

    test('a failure part-way says what was written before it, where it stopped, and what was not reached', async () => {
      await unleashCall('POST', FEATURES, { name: 'clash' });
      const elsewhere = await createProject(ctx, { id: 'elsewhere' });
      await createFlag(ctx, elsewhere, { name: 'clash' });
      try {
        const result = await runAdminCommand(
          ['import-unleash', '--from', unleash.baseUrl, '--from-token', unleash.adminToken, '--url', vexilUrl, '--token', ADMIN_TOKEN],
          {},
        );
        assert.equal(result.code, 1, result.stdout);
        assert.match(result.stderr, /^vexil admin: (Nothing to change|Changed: )/);
        assert.match(result.stderr, /Stopped at project "default": Vexil answered 40\d .*clash/);
        assert.match(
          result.stderr,
          /Nothing of project "default" was written; not reached: project "legacy", project "team-0", .*project "team-9"\. Import again once the cause is fixed/,
        );
      } finally {
        expectStatus(await ctx.admin.delete(`/api/admin/projects/${elsewhere}/features/clash`), 202);
        expectStatus(await ctx.admin.delete('/api/admin/archive/clash'), 200);
        await unleashCall('DELETE', `${FEATURES}/clash`);
        // Deleted before Unleash records its lifecycle, the flag makes that insert fail on a foreign key, and
        // unleash-server exits.
        await eventually(() => lifecycleRecorded('clash'));
        await unleashCall('DELETE', '/api/admin/archive/clash');
      }
    });

    test('a change in Unleash is brought by the next import, and a dry run only shows it', async () => {
      await unleashCall('POST', `${FEATURES}/off-with-strategies/environments/production/on`);
      const args = [
        'import-unleash',
        '--from',
        unleash.baseUrl,
        '--from-token',
        unleash.adminToken,
        '--url',
        vexilUrl,
        '--token',
        ADMIN_TOKEN,
      ];
      const dry = await runAdminCommand([...args, '--dry-run'], {});
      assert.equal(dry.code, 0, dry.stderr);
      assert.match(dry.stdout, /~ updated {2}flag "off-with-strategies" in "production": enabled → true/);
      assert.match(dry.stdout, /Dry run: nothing was written\./);
      assert.match(dry.stdout, /Would overwrite in Vexil to match Unleash \(flags that were already there\): off-with-strategies\./);
      const feature = async () =>
        (
          (await ctx.admin.get('/api/admin/projects/default/features/off-with-strategies')).json() as {
            environments: Array<{ name: string; enabled: boolean }>;
          }
        ).environments.find((e) => e.name === 'production')!.enabled;
      assert.equal(await feature(), false);
      const real = await runAdminCommand(args, {});
      assert.equal(real.code, 0, real.stderr);
      assert.equal(await feature(), true);
    });

    test('Unleash’s export file imports into Vexil as already equal, and Vexil’s into Unleash, which then evaluates alike', async () => {
      const fromUnleash = (await (
        await unleashCall('POST', '/api/admin/features-batch/export', { environment: 'production', project: 'default' })
      ).json()) as { features: Array<{ name: string }> };
      assert.ok(fromUnleash.features.some((f) => f.name === 'segmented'));
      const document = { project: 'default', environment: 'production', data: fromUnleash };
      const validation = await ctx.admin.post('/api/admin/features-batch/validate', document);
      expectStatus(validation, 200);
      assert.deepEqual((validation.json() as { errors: unknown[] }).errors, []);
      const imported = await ctx.admin.post('/api/admin/features-batch/import', document);
      expectStatus(imported, 200);
      assert.deepEqual(
        (imported.json() as { changes: unknown[] }).changes,
        [],
        'the configuration import-unleash brought is what Unleash exports',
      );

      const flag = 'made-in-vexil';
      await createFlag(ctx, 'default', {
        name: flag,
        environment: 'production',
        strategies: [
          {
            name: 'flexibleRollout',
            parameters: { rollout: '35', stickiness: 'userId', groupId: flag },
            constraints: [{ contextName: 'plan', operator: 'IN', values: ['pro', 'team'] }],
            variants: [
              { name: 'x', weight: 300, weightType: 'variable', stickiness: 'userId', payload: { type: 'json', value: '{"x":true}' } },
              { name: 'y', weight: 700, weightType: 'variable', stickiness: 'userId' },
            ],
          },
          { name: 'default', segments: [await vexilSegmentId('beta-testers')] },
        ],
      });
      const fromVexil = await ctx.admin.post('/api/admin/features-batch/export', { environment: 'production', features: [flag] });
      expectStatus(fromVexil, 200);
      // Unleash refuses admin tokens for imports: a person's access token, as its documentation asks.
      const pat = await unleashPersonalToken();
      const intoUnleash = await fetch(`${unleash.baseUrl}/api/admin/features-batch/import`, {
        method: 'POST',
        headers: { authorization: pat, 'content-type': 'application/json' },
        body: JSON.stringify({ project: 'default', environment: 'production', data: fromVexil.json() }),
      });
      assert.equal(intoUnleash.status, 200, await intoUnleash.text());

      // Unleash refreshes what its client API serves a moment after a change (its cache of answers): wait for it.
      const unleashToken = await unleashClientToken('production');
      await eventually(async () => {
        const served = (await (
          await fetch(`${unleash.baseUrl}/api/client/features`, {
            headers: { authorization: unleashToken, 'unleash-client-spec': '5.2.0' },
          })
        ).json()) as { features: Array<{ name: string }> };
        return served.features.some((f) => f.name === flag);
      }, 10_000);
      const unleashSdk = await startNodeSdk(unleash.baseUrl, unleashToken, { refreshInterval: 3_600_000 });
      const vexilSdk = await startNodeSdk(vexilUrl, await createSdkToken(ctx, 'client', 'production'), { refreshInterval: 3_600_000 });
      sdks.push(unleashSdk, vexilSdk);
      let on = 0;
      for (const context of contexts()) {
        const expected = unleashSdk.isEnabled(flag, context);
        assert.equal(vexilSdk.isEnabled(flag, context), expected, JSON.stringify(context));
        assert.deepEqual(vexilSdk.getVariant(flag, context), unleashSdk.getVariant(flag, context));
        if (expected) on++;
      }
      assert.ok(on > 50 && on < 950, `${on} of 1,000 answers were on`);
    });

    test('without --url it writes into the server’s own database, as the system', async () => {
      const dataDir = await mkdtemp(join(tmpdir(), 'vexil-import-'));
      try {
        const result = await runAdminCommand(['import-unleash', '--from', unleash.baseUrl, '--from-token', unleash.adminToken], {
          DATA_DIR: dataDir,
        });
        assert.equal(result.code, 0, `${result.stderr}${result.stdout}`);
        assert.match(result.stdout, /^Changed: .*\d+ created/m);
        const server = await startServer({ DATA_DIR: dataDir, INIT_ADMIN_API_TOKENS: ADMIN_TOKEN });
        try {
          const get = async (path: string) => (await fetch(`${server.baseUrl}${path}`, { headers: { authorization: ADMIN_TOKEN } })).json();
          const rollout = (await get('/api/admin/projects/default/features/rollout')) as {
            environments: Array<{ name: string; enabled: boolean; strategies: Array<{ parameters: Record<string, string> }> }>;
          };
          const production = rollout.environments.find((e) => e.name === 'production')!;
          assert.deepEqual([production.enabled, production.strategies.map((s) => s.parameters.rollout)], [true, ['30']]);
          const events = (await get('/api/admin/search/events?type=IS:feature-created&limit=1000')) as {
            events: Array<{ createdBy: string; featureName: string }>;
          };
          assert.deepEqual(
            events.events.map((e) => e.createdBy),
            events.events.map(() => 'system'),
          );
          assert.ok(events.events.some((e) => e.featureName === 'rollout'));
        } finally {
          await stopServer(server);
        }
      } finally {
        await rm(dataDir, { recursive: true, force: true });
      }
    });

    test('an unreachable Unleash and a bad token fail with the reason and a non-zero exit', async () => {
      const unreachable = await runAdminCommand(
        ['import-unleash', '--from', 'http://127.0.0.1:9', '--from-token', 'x', '--url', vexilUrl, '--token', ADMIN_TOKEN],
        {},
      );
      assert.equal(unreachable.code, 1);
      assert.match(unreachable.stderr, /Could not reach Unleash at http:\/\/127\.0\.0\.1:9/);
      const badToken = await runAdminCommand(
        ['import-unleash', '--from', unleash.baseUrl, '--from-token', '*:*.wrong', '--url', vexilUrl, '--token', ADMIN_TOKEN],
        {},
      );
      assert.equal(badToken.code, 1);
      assert.match(badToken.stderr, /Unleash refused the token \(401/);
    });
  });
}
