import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { expectRefused, expectStatus, getOk } from '../helpers/assertions.js';
import { createFlag, createProject, featurePath } from '../helpers/projects.js';
import { createSdkToken } from '../helpers/sdk-fixtures.js';
import { useTestApp } from '../helpers/test-app.js';

// The search's `health` filter: flags past their expected lifetime, never evaluated, unused in production while
// enabled there, or on everywhere and unchanged for weeks.
const ctx = useTestApp();
const DAY = 86_400_000;

async function search(query: string): Promise<string[]> {
  const body = await getOk<{ features: Array<{ name: string }> }>(ctx.admin, `/api/admin/search/features?${query}&limit=100&sortBy=name`);
  return body.features.map((feature) => feature.name);
}

async function report(token: string, flag: string) {
  const now = ctx.clock.now().toISOString();
  expectStatus(
    await ctx
      .as(token)
      .post('/api/client/metrics', { appName: 'shop', bucket: { start: now, stop: now, toggles: { [flag]: { yes: 1, no: 0 } } } }),
    202,
  );
}

describe('flag health', () => {
  test('each problem finds its flags, and only those', async () => {
    const realNow = ctx.clock.now();
    ctx.clock.set(new Date(realNow.getTime() - 60 * DAY));
    const project = await createProject(ctx, { environments: ['development', 'production'] });
    const forgotten = await createFlag(ctx, project, { name: `${project}-forgotten`, type: 'release' });
    const quiet = await createFlag(ctx, project, {
      name: `${project}-quiet`,
      type: 'kill-switch',
      environment: 'production',
      enabled: true,
    });
    const done = await createFlag(ctx, project, { name: `${project}-done`, type: 'kill-switch', environment: 'production', enabled: true });
    expectStatus(await ctx.admin.post(`${featurePath(project, done)}/environments/development/on`), 200);
    const production = await createSdkToken(ctx, 'client', 'production');
    await report(production, done);
    ctx.clock.set(new Date(realNow.getTime() - 40 * DAY));
    await report(production, quiet);
    ctx.clock.set(realNow);
    const fresh = await createFlag(ctx, project, { name: `${project}-fresh`, type: 'release', environment: 'production', enabled: true });
    await report(production, fresh);
    await report(production, done);

    const inProject = `project=IS:${project}`;
    assert.deepEqual(await search(`${inProject}&health=IS:potentially-stale`), [forgotten]);
    assert.deepEqual(await search(`${inProject}&health=IS:never-seen`), [forgotten]);
    assert.deepEqual(await search(`${inProject}&health=IS:unused-in-production`), [quiet]);
    assert.deepEqual(await search(`${inProject}&health=IS:ready-to-remove`), [done]);
    assert.deepEqual(await search(`${inProject}&health=IS_NONE_OF:potentially-stale,never-seen,unused-in-production,ready-to-remove`), [
      fresh,
    ]);

    // A change to the flag resets its three weeks; marking the forgotten one stale ends its lifetime warning.
    expectStatus(await ctx.admin.put(featurePath(project, done), { description: 'still needed' }), 200);
    assert.deepEqual(await search(`${inProject}&health=IS:ready-to-remove`), []);
    expectStatus(await ctx.admin.post(`/api/admin/projects/${project}/stale`, { features: [forgotten], stale: true }), 202);
    assert.deepEqual(await search(`${inProject}&health=IS:potentially-stale`), []);
  });

  test('an unknown health problem is a 400 naming the parameter', async () => {
    await expectRefused(ctx, () => ctx.admin.get('/api/admin/search/features?health=IS:sick'), {
      status: 400,
      name: 'BadDataError',
      path: '/query/health',
    });
  });
});
