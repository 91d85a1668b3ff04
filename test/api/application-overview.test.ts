import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { expectError, expectRefused, expectStatus, getOk, onlyEvent } from '../helpers/assertions.js';
import { eventsSince, lastEventId } from '../helpers/events.js';
import { createUserSession, uniqueName } from '../helpers/fixtures.js';
import { createFlag, createProject, projectPath } from '../helpers/projects.js';
import { createSdkToken } from '../helpers/sdk-fixtures.js';
import { useTestApp } from '../helpers/test-app.js';

// Unleash's application pages: an application across environments, its recent instances, outdated SDKs, the
// applications of a project, and describing an application by hand.

const ctx = useTestApp();
const DAY = 86_400_000;

async function register(token: string, appName: string, instanceId: string, sdkVersion: string, strategies = ['default']) {
  const body = { appName, instanceId, sdkVersion, strategies, started: ctx.clock.now().toISOString(), interval: 15000 };
  expectStatus(await ctx.as(token).post('/api/client/register', body), 202);
}

async function report(token: string, appName: string, toggles: Record<string, { yes: number; no: number }>) {
  const now = ctx.clock.now().toISOString();
  expectStatus(await ctx.as(token).post('/api/client/metrics', { appName, bucket: { start: now, stop: now, toggles } }), 202);
}

describe('application overview and instances', () => {
  test('environments, SDKs split by kind, outdated ones, missing flags and strategies, the projects used', async () => {
    const project = await createProject(ctx);
    const flag = await createFlag(ctx, project);
    const development = await createSdkToken(ctx, 'client', 'development', [project]);
    const production = await createSdkToken(ctx, 'client', 'production', [project]);
    const appName = uniqueName('shop');
    const ghost = uniqueName('ghost-flag');
    await register(development, appName, 'dev-2', 'unleash-client-js:3.7.5');
    await register(production, appName, 'prod-1', 'unleash-node-sdk:6.6.1');
    // The application's strategies are those of its latest registration.
    await register(development, appName, 'dev-1', 'unleash-client-node:5.0.0', ['default', 'myCustomStrategy']);
    await report(development, appName, { [flag]: { yes: 3, no: 1 }, [ghost]: { yes: 0, no: 2 } });

    const overview = await getOk<{ environments: Array<{ lastSeen: string | null }> }>(
      ctx.admin,
      `/api/admin/metrics/applications/${appName}/overview`,
    );
    assert.ok(overview.environments.every((environment) => typeof environment.lastSeen === 'string'));
    assert.deepEqual(
      { ...overview, environments: overview.environments.map(({ lastSeen: _, ...rest }) => rest) },
      {
        projects: [project],
        featureCount: 1,
        environments: [
          {
            name: 'development',
            instanceCount: 2,
            sdks: ['unleash-client-js:3.7.5', 'unleash-client-node:5.0.0'],
            frontendSdks: ['unleash-client-js:3.7.5'],
            backendSdks: ['unleash-client-node:5.0.0'],
            issues: { missingFeatures: [ghost], outdatedSdks: ['unleash-client-node:5.0.0'] },
          },
          {
            name: 'production',
            instanceCount: 1,
            sdks: ['unleash-node-sdk:6.6.1'],
            frontendSdks: [],
            backendSdks: ['unleash-node-sdk:6.6.1'],
            issues: { missingFeatures: [], outdatedSdks: [] },
          },
        ],
        issues: { missingStrategies: ['myCustomStrategy'] },
      },
    );

    const instances = await getOk<{ instances: Array<Record<string, unknown>> }>(
      ctx.admin,
      `/api/admin/metrics/instances/${appName}/environment/development`,
    );
    assert.deepEqual(instances.instances.map(({ instanceId, sdkVersion }) => [instanceId, sdkVersion]).sort(), [
      ['dev-1', 'unleash-client-node:5.0.0'],
      ['dev-2', 'unleash-client-js:3.7.5'],
    ]);
    // A day later the instances are no longer current, but the application stays.
    ctx.clock.advance(DAY + 60_000);
    try {
      assert.deepEqual(await getOk(ctx.admin, `/api/admin/metrics/instances/${appName}/environment/development`), { instances: [] });
    } finally {
      ctx.clock.set(new Date());
    }
    expectError(await ctx.admin.get('/api/admin/metrics/applications/no-such-app/overview'), 404, 'NotFoundError');
  });

  test('outdated SDKs, everywhere and among the applications of a project', async () => {
    const project = await createProject(ctx);
    const other = await createProject(ctx);
    const flag = await createFlag(ctx, project);
    const token = await createSdkToken(ctx, 'client', 'development', [project]);
    const otherToken = await createSdkToken(ctx, 'client', 'development', [other]);
    const [old, current, elsewhere] = [uniqueName('old'), uniqueName('current'), uniqueName('elsewhere')];
    await register(token, old, 'o-1', 'unleash-client-java:8.0.0');
    await register(token, current, 'c-1', 'unleash-client-java:9.2.0');
    await register(otherToken, elsewhere, 'e-1', 'unleash-client-java:8.0.0');
    await report(token, old, { [flag]: { yes: 1, no: 0 } });
    await report(token, current, { [flag]: { yes: 1, no: 0 } });

    const everywhere = await getOk<{ sdks: Array<{ sdkVersion: string; applications: string[] }> }>(
      ctx.admin,
      '/api/admin/metrics/sdks/outdated',
    );
    const java8 = everywhere.sdks.find((sdk) => sdk.sdkVersion === 'unleash-client-java:8.0.0');
    assert.ok(java8);
    assert.ok(java8.applications.includes(old) && java8.applications.includes(elsewhere));
    assert.ok(!everywhere.sdks.some((sdk) => sdk.sdkVersion === 'unleash-client-java:9.2.0'));
    assert.deepEqual(await getOk(ctx.admin, `${projectPath(project)}/sdks/outdated`), {
      sdks: [{ sdkVersion: 'unleash-client-java:8.0.0', applications: [old] }],
    });
  });

  test("a project's applications, searchable and paged", async () => {
    const project = await createProject(ctx);
    const flag = await createFlag(ctx, project);
    const token = await createSdkToken(ctx, 'client', 'development', [project]);
    const [alpha, beta] = [`alpha-${project}`, `beta-${project}`];
    await register(token, alpha, 'a-1', 'unleash-client-go:4.1.0');
    await register(token, alpha, 'a-2', 'unleash-client-go:4.2.0');
    await register(token, beta, 'b-1', 'unleash-client-python:6.0.0');
    await report(token, alpha, { [flag]: { yes: 1, no: 0 } });
    await report(token, beta, { [flag]: { yes: 1, no: 0 } });
    const path = `${projectPath(project)}/applications`;
    assert.deepEqual(await getOk(ctx.admin, path), {
      total: 2,
      applications: [
        {
          name: alpha,
          environments: ['development'],
          instances: ['a-1', 'a-2'],
          sdks: [{ name: 'unleash-client-go', versions: ['4.1.0', '4.2.0'] }],
        },
        { name: beta, environments: ['development'], instances: ['b-1'], sdks: [{ name: 'unleash-client-python', versions: ['6.0.0'] }] },
      ],
    });
    const python = await getOk<{ total: number; applications: Array<{ name: string }> }>(ctx.admin, `${path}?query=PYTHON`);
    assert.deepEqual([python.total, python.applications.map((app) => app.name)], [1, [beta]]);
    const page = await getOk<{ total: number; applications: Array<{ name: string }> }>(ctx.admin, `${path}?limit=1&offset=1`);
    assert.deepEqual([page.total, page.applications.map((app) => app.name)], [2, [beta]]);
    expectError(await ctx.admin.get(`${path}?limit=0`), 400, 'BadDataError');
    expectError(await ctx.admin.get(`${projectPath('no-such-project')}/applications`), 404, 'NotFoundError');
  });
});

describe('describing an application', () => {
  const read = async (appName: string) => {
    const { description, url, color, icon, strategies } = await getOk<Record<string, unknown>>(
      ctx.admin,
      `/api/admin/metrics/applications/${appName}`,
    );
    return { description, url, color, icon, strategies };
  };

  test('creates it, then changes only what is given; each with its event', async () => {
    const appName = uniqueName('described');
    let before = await lastEventId(ctx);
    const body = { description: 'Checkout', url: 'https://git.example.com/checkout', color: '#aa0000', strategies: ['default'] };
    expectStatus(await ctx.admin.post(`/api/admin/metrics/applications/${appName}`, body), 202);
    onlyEvent(await eventsSince(ctx, before), 'application-created', { data: { appName, ...body } });
    assert.deepEqual(await read(appName), { ...body, icon: null });

    before = await lastEventId(ctx);
    expectStatus(await ctx.admin.post(`/api/admin/metrics/applications/${appName}`, { icon: 'cart' }), 202);
    const previous = {
      description: 'Checkout',
      url: 'https://git.example.com/checkout',
      color: '#aa0000',
      icon: null,
      strategies: ['default'],
    };
    onlyEvent(await eventsSince(ctx, before), 'application-updated', {
      data: { appName, ...previous, icon: 'cart' },
      preData: { appName, ...previous },
    });
    assert.deepEqual(await read(appName), { ...previous, icon: 'cart' });
  });

  test('bad input is a 400 at its field and changes nothing; only an Admin may describe', async () => {
    const appName = uniqueName('kept');
    expectStatus(await ctx.admin.post(`/api/admin/metrics/applications/${appName}`, { description: 'kept' }), 202);
    for (const [body, path] of [
      [{ url: 'javascript:alert(1)' }, '/body/url'],
      [{ description: 'x'.repeat(1001) }, '/body/description'],
      [{ strategies: 'default' }, '/body/strategies'],
      [{ colour: 'red' }, '/body/colour'],
    ] as const) {
      await expectRefused(
        ctx,
        () => ctx.admin.post(`/api/admin/metrics/applications/${appName}`, body),
        { status: 400, name: 'BadDataError', path },
        () => read(appName),
      );
    }
    const editor = await createUserSession(ctx, 'Editor');
    await expectRefused(
      ctx,
      () => ctx.withCookie(editor.cookie).post(`/api/admin/metrics/applications/${appName}`, { description: 'mine' }),
      { status: 403, name: 'PermissionError' },
      () => read(appName),
    );
  });
});
