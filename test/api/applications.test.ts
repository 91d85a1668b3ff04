import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { pruneClientBookkeeping } from '../../src/domain/client-features/client-registration.js';
import { expectError, expectStatus, getOk } from '../helpers/assertions.js';
import { eventsSince, lastEventId } from '../helpers/events.js';
import { createUserSession, uniqueName } from '../helpers/fixtures.js';
import { createFlag, createProject } from '../helpers/projects.js';
import { createSdkToken } from '../helpers/sdk-fixtures.js';
import { useTestApp } from '../helpers/test-app.js';

// What the applications list and an application's page answer: instances and SDK versions, the flags it
// evaluated this week, and the names it asks for that no flag has (bounded, and without revealing flags of
// projects its token cannot see as missing).
const ctx = useTestApp();

interface Application {
  appName: string;
  instances: Array<{ instanceId: string; sdkVersion: string | null }>;
  flags: Array<{ name: string; project: string; environment: string; yes: number; no: number; lastHour: string }>;
  missingFlags: Array<{ name: string; environment: string }>;
}

async function register(token: string, appName: string, instanceId: string, sdkVersion: string) {
  expectStatus(
    await ctx.as(token).post('/api/client/register', {
      appName,
      instanceId,
      sdkVersion,
      strategies: ['default'],
      started: ctx.clock.now().toISOString(),
      interval: 15000,
    }),
    202,
  );
}

async function report(token: string, appName: string, toggles: Record<string, { yes: number; no: number }>) {
  const now = ctx.clock.now().toISOString();
  expectStatus(await ctx.as(token).post('/api/client/metrics', { appName, bucket: { start: now, stop: now, toggles } }), 202);
}

describe('applications', () => {
  test('the list shows instances and SDK versions; the page shows flags evaluated and names no flag has', async () => {
    const project = await createProject(ctx);
    const hidden = await createProject(ctx);
    const flag = await createFlag(ctx, project);
    const elsewhere = await createFlag(ctx, hidden);
    const token = await createSdkToken(ctx, 'client', 'development', [project]);
    const appName = uniqueName('checkout-service');
    await register(token, appName, 'pod-1', 'unleash-client-node:6.12.1');
    await register(token, appName, 'pod-2', 'unleash-client-node:6.13.0');
    await report(token, appName, { [flag]: { yes: 7, no: 3 }, 'no-such-flag-typo': { yes: 0, no: 4 }, [elsewhere]: { yes: 1, no: 0 } });
    await report(token, appName, { [flag]: { yes: 1, no: 1 } });

    const list = await getOk<{
      applications: Array<{ appName: string; instances: number; sdkVersions: string[]; environments: string[] }>;
    }>(ctx.admin, `/api/admin/metrics/applications?query=${appName}`);
    assert.deepEqual(
      list.applications.map(({ appName: name, instances, sdkVersions, environments }) => ({ name, instances, sdkVersions, environments })),
      [
        {
          name: appName,
          instances: 2,
          sdkVersions: ['unleash-client-node:6.12.1', 'unleash-client-node:6.13.0'],
          environments: ['development'],
        },
      ],
    );

    const page = await getOk<Application>(ctx.admin, `/api/admin/metrics/applications/${appName}`);
    assert.deepEqual(page.instances.map((instance) => instance.instanceId).sort(), ['pod-1', 'pod-2']);
    assert.deepEqual(page.flags, [{ name: flag, project, environment: 'development', yes: 8, no: 4, lastHour: page.flags[0]!.lastHour }]);
    assert.deepEqual(
      page.missingFlags.map(({ name, environment }) => ({ name, environment })),
      [{ name: 'no-such-flag-typo', environment: 'development' }],
      'a flag of a project the token cannot see exists: it is neither counted nor called missing',
    );

    // Once the flag exists, the warning goes.
    await createFlag(ctx, project, { name: 'no-such-flag-typo' });
    assert.deepEqual((await getOk<Application>(ctx.admin, `/api/admin/metrics/applications/${appName}`)).missingFlags, []);
  });

  test('an application keeps at most 100 missing names, however many it sends', async () => {
    const token = await createSdkToken(ctx, 'client', 'development');
    const appName = uniqueName('typo-machine');
    await register(token, appName, 'pod', 'unleash-client-node:6.12.1');
    const toggles = Object.fromEntries(Array.from({ length: 150 }, (_, i) => [`${appName}-missing-${i}`, { yes: 1, no: 0 }]));
    await report(token, appName, toggles);
    await report(token, appName, Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`${appName}-later-${i}`, { yes: 1, no: 0 }])));
    const page = await getOk<Application>(ctx.admin, `/api/admin/metrics/applications/${appName}`);
    assert.equal(page.missingFlags.length, 100);
    assert.ok(page.missingFlags.every((flag) => flag.name.startsWith(`${appName}-missing-`)));
  });

  test("a flag's hourly usage carries each variant's count, and hours older than the retention go", async () => {
    const flag = await createFlag(ctx, 'default');
    const token = await createSdkToken(ctx, 'client', 'development');
    const now = ctx.clock.now().toISOString();
    const toggles = { [flag]: { yes: 5, no: 1, variants: { blue: 3, green: 2, disabled: 1 } } };
    expectStatus(
      await ctx.as(token).post('/api/client/metrics', { appName: 'paint-shop', bucket: { start: now, stop: now, toggles } }),
      202,
    );
    const usage = await getOk<{ lastHourUsage: Array<{ appName: string; yes: number; no: number; variants: Record<string, number> }> }>(
      ctx.admin,
      `/api/admin/client-metrics/features/${flag}/raw?hoursBack=2`,
    );
    assert.deepEqual(
      usage.lastHourUsage.map(({ appName, yes, no, variants }) => ({ appName, yes, no, variants })),
      [{ appName: 'paint-shop', yes: 5, no: 1, variants: { blue: 3, green: 2, disabled: 1 } }],
    );
    const tooMany = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`v${i}`, 1]));
    const refused = await ctx.as(token).post('/api/client/metrics', {
      appName: 'paint-shop',
      bucket: { start: now, stop: now, toggles: { [flag]: { yes: 1, no: 0, variants: tooMany } } },
    });
    assert.equal(refused.statusCode, 400);

    ctx.clock.advance(36 * 86_400_000);
    await pruneClientBookkeeping(ctx.db, ctx.clock.now(), { instanceRetentionHours: 48, applicationRetentionDays: 30 });
    const left = await ctx.db.selectFrom('feature_variant_usage_hourly').select('variant').where('feature_name', '=', flag).execute();
    assert.deepEqual(left, []);
    ctx.clock.set(new Date());
  });
});

describe('forgetting an application', () => {
  test('an Admin deletes an application with its instances, recorded; an unknown one is a 200 that records nothing', async () => {
    const token = await createSdkToken(ctx, 'client', 'development');
    const appName = `forgotten-${Date.now()}`;
    expectStatus(
      await ctx.as(token).post('/api/client/register', {
        appName,
        instanceId: 'pod-1',
        strategies: ['default'],
        started: new Date().toISOString(),
        interval: 15_000,
      }),
      202,
    );
    expectStatus(await ctx.admin.get(`/api/admin/metrics/applications/${appName}`), 200);
    const before = await lastEventId(ctx);
    expectStatus(await ctx.admin.delete(`/api/admin/metrics/applications/${appName}`), 200);
    assert.deepEqual(
      (await eventsSince(ctx, before)).map((event) => [event.type, event.preData]),
      [['application-deleted', { appName }]],
    );
    expectError(await ctx.admin.get(`/api/admin/metrics/applications/${appName}`), 404, 'NotFoundError');
    const after = await lastEventId(ctx);
    expectStatus(await ctx.admin.delete(`/api/admin/metrics/applications/${appName}`), 200);
    assert.deepEqual(await eventsSince(ctx, after), []);
    const editor = await createUserSession(ctx, 'Editor');
    expectError(await ctx.withCookie(editor.cookie).delete(`/api/admin/metrics/applications/${appName}`), 403, 'PermissionError');
  });
});
