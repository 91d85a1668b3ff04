import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { expectError, expectStatus, getOk } from '../helpers/assertions.js';
import { createUserSession, uniqueName } from '../helpers/fixtures.js';
import { createFlag, createProject, featurePath, projectPath } from '../helpers/projects.js';
import { createSdkToken } from '../helpers/sdk-fixtures.js';
import { STRONG_PASSWORD, useTestApp } from '../helpers/test-app.js';

// Unleash's read operations about the instance as a whole that its admin UI and reports call: telemetry, Admins,
// lifecycle stages, unknown flags, a flag's usage, a project's flag creators and dependencies. A fresh database, so
// counts are exact.

describe('what the instance tells about itself', () => {
  const ctx = useTestApp();

  test('telemetry: nothing is collected, and a UI error goes to the log only', async () => {
    assert.deepEqual(await getOk(ctx.admin, '/api/admin/telemetry/settings'), {
      versionInfoCollectionEnabled: false,
      featureInfoCollectionEnabled: false,
    });
    expectStatus(
      await ctx.admin.post('/api/admin/record-ui-error', { errorMessage: 'TypeError: x is undefined', errorStack: 'at y' }),
      204,
    );
    expectError(await ctx.admin.post('/api/admin/record-ui-error', {}), 400, 'BadDataError');
    expectError(await ctx.admin.post('/api/admin/record-ui-error', { errorMessage: 'x'.repeat(2001) }), 400, 'BadDataError');
  });

  test('Admins are counted by how they sign in, for Admins only', async () => {
    assert.deepEqual(await getOk(ctx.admin, '/api/admin/user-admin/admin-count'), { password: 0, noPassword: 0, service: 0 });
    expectStatus(
      await ctx.admin.post('/api/admin/user-admin', { username: uniqueName('a'), rootRole: 'Admin', password: STRONG_PASSWORD }),
      201,
    );
    expectStatus(await ctx.admin.post('/api/admin/user-admin', { email: `${uniqueName('b')}@example.com`, rootRole: 'Admin' }), 201);
    expectStatus(
      await ctx.admin.post('/api/admin/user-admin', { username: uniqueName('e'), rootRole: 'Editor', password: STRONG_PASSWORD }),
      201,
    );
    expectStatus(await ctx.admin.post('/api/admin/service-account', { username: uniqueName('ci'), name: 'CI', rootRole: 1 }), 201);
    assert.deepEqual(await getOk(ctx.admin, '/api/admin/user-admin/admin-count'), { password: 1, noPassword: 1, service: 1 });
    const editor = await createUserSession(ctx, 'Editor');
    expectError(await ctx.withCookie(editor.cookie).get('/api/admin/user-admin/admin-count'), 403, 'PermissionError');
  });

  test('flags are counted by the last stage of their lifecycle', async () => {
    const project = await createProject(ctx);
    await createFlag(ctx, project);
    await createFlag(ctx, project, { environment: 'development', enabled: true });
    await createFlag(ctx, project, { environment: 'production', enabled: true });
    const completed = await createFlag(ctx, project, { environment: 'production', enabled: true });
    expectStatus(await ctx.admin.post(`${featurePath(project, completed)}/lifecycle/complete`, { status: 'kept' }), 200);
    const archived = await createFlag(ctx, project);
    expectStatus(await ctx.admin.delete(featurePath(project, archived)), 202);
    assert.deepEqual(await getOk(ctx.admin, '/api/admin/lifecycle/count'), { initial: 1, preLive: 1, live: 1, completed: 1, archived: 1 });
  });
});

describe("what SDKs reported about flags, and a project's flags as a whole", () => {
  const ctx = useTestApp();

  test("names no flag has are listed with who evaluated them where, until a flag takes the name; a flag's usage this hour", async () => {
    const flag = await createFlag(ctx, 'default', { name: 'checkout' });
    const token = await createSdkToken(ctx, 'client', 'development');
    const now = new Date().toISOString();
    const toggles = { checkout: { yes: 4, no: 1 }, 'chekout-typo': { yes: 0, no: 3 } };
    expectStatus(await ctx.as(token).post('/api/client/metrics', { appName: 'web', bucket: { start: now, stop: now, toggles } }), 202);

    const { unknownFlags } = await getOk<{
      unknownFlags: Array<{
        name: string;
        lastEventAt: string | null;
        reports: Array<{ appName: string; environments: Array<{ environment: string }> }>;
      }>;
    }>(ctx.admin, '/api/admin/metrics/unknown-flags');
    assert.deepEqual(
      unknownFlags.map(({ name, lastEventAt, reports }) => ({
        name,
        lastEventAt,
        reports: reports.map(({ appName, environments }) => ({ appName, environments: environments.map((e) => e.environment) })),
      })),
      [{ name: 'chekout-typo', lastEventAt: null, reports: [{ appName: 'web', environments: ['development'] }] }],
    );

    const usage = await getOk<{
      featureName: string;
      lastHourUsage: Array<{ environment: string; appName: string; yes: number; no: number }>;
      seenApplications: string[];
    }>(ctx.admin, `/api/admin/client-metrics/features/${flag}`);
    assert.deepEqual(
      usage.lastHourUsage.map(({ environment, appName, yes, no }) => ({ environment, appName, yes, no })),
      [{ environment: 'development', appName: 'web', yes: 4, no: 1 }],
    );
    assert.deepEqual([usage.featureName, usage.seenApplications], [flag, ['web']]);
    expectError(await ctx.admin.get('/api/admin/client-metrics/features/no-such-flag'), 404, 'NotFoundError');

    await createFlag(ctx, 'default', { name: 'chekout-typo' });
    assert.deepEqual((await getOk<{ unknownFlags: unknown[] }>(ctx.admin, '/api/admin/metrics/unknown-flags')).unknownFlags, []);
  });

  test('who made the flags, whether they depend on each other, and what archiving some would do', async () => {
    const project = await createProject(ctx);
    const maker = await createUserSession(ctx, 'Editor');
    const asMaker = ctx.withCookie(maker.cookie);
    const [parent, child] = [uniqueName('parent'), uniqueName('child')];
    expectStatus(await asMaker.post(`${projectPath(project)}/features`, { name: parent }), 201);
    expectStatus(await ctx.admin.post(`${projectPath(project)}/features`, { name: child }), 201);
    assert.deepEqual(await getOk(ctx.admin, `${projectPath(project)}/flag-creators`), [{ id: maker.id, name: maker.username }]);

    assert.equal(await getOk(ctx.admin, `${projectPath(project)}/dependencies`), false);
    expectStatus(await ctx.admin.post(`${featurePath(project, child)}/dependencies`, { feature: parent }), 200);
    assert.equal(await getOk(ctx.admin, `${projectPath(project)}/dependencies`), true);

    const validate = (features: string[]) => ctx.admin.post(`${projectPath(project)}/archive/validate`, { features });
    assert.deepEqual((await validate([parent])).json(), { parentsWithChildFeatures: [parent], hasDeletedDependencies: true });
    assert.deepEqual((await validate([parent, child])).json(), { parentsWithChildFeatures: [], hasDeletedDependencies: true });
    const lone = await createFlag(ctx, project);
    assert.deepEqual((await validate([lone])).json(), { parentsWithChildFeatures: [], hasDeletedDependencies: false });
    expectError(await validate(['not a name']), 400, 'BadDataError');
    expectError(await ctx.admin.get('/api/admin/projects/no-such-project/flag-creators'), 404, 'NotFoundError');
  });

  test('who made flags across projects: searched by name, username or email, a page at a time', async () => {
    const [first, second] = [await createUserSession(ctx, 'Editor'), await createUserSession(ctx, 'Editor')];
    for (const maker of [first, second]) {
      expectStatus(await ctx.withCookie(maker.cookie).post(`${projectPath('default')}/features`, { name: uniqueName('made') }), 201);
    }
    type Creators = { total: number; flagCreators: Array<{ id: number; name: string }> };
    const all = await getOk<Creators>(ctx.admin, '/api/admin/flag-creators?limit=10000');
    assert.ok([first.id, second.id].every((id) => all.flagCreators.some((creator) => creator.id === id)));
    assert.equal(all.total, all.flagCreators.length);
    assert.deepEqual(await getOk(ctx.admin, `/api/admin/flag-creators?q=${second.username}`), {
      total: 1,
      flagCreators: [{ id: second.id, name: second.username }],
    });
    // A username matches at its start only.
    assert.deepEqual(await getOk(ctx.admin, `/api/admin/flag-creators?q=${second.username.slice(3)}`), { total: 0, flagCreators: [] });
    const page = await getOk<Creators>(ctx.admin, '/api/admin/flag-creators?limit=1&offset=1');
    assert.deepEqual([page.total, page.flagCreators], [all.total, all.flagCreators.slice(1, 2)]);
    expectError(await ctx.admin.get('/api/admin/flag-creators?limit=0'), 400, 'BadDataError');
  });
});

describe("deleting a project's archived flags at once", () => {
  const ctx = useTestApp();

  test('archived flags of the project go for good, all or none; a live flag or another project’s is a 404 and nothing goes', async () => {
    const project = await createProject(ctx);
    const [first, second, live] = [await createFlag(ctx, project), await createFlag(ctx, project), await createFlag(ctx, project)];
    expectStatus(await ctx.admin.post(`${projectPath(project)}/archive`, { features: [first, second] }), 202);
    const archived = async () =>
      (await getOk<{ features: Array<{ name: string }> }>(ctx.admin, `/api/admin/archive/features/${project}`)).features
        .map((f) => f.name)
        .sort();
    const refused = await ctx.admin.post(`${projectPath(project)}/delete`, { features: [first, live] });
    expectError(refused, 404, 'NotFoundError');
    assert.deepEqual(await archived(), [first, second].sort());
    expectStatus(await ctx.admin.post(`${projectPath(project)}/delete`, { features: [first, second] }), 200);
    assert.deepEqual(await archived(), []);
    expectError(await ctx.admin.post(`${projectPath(project)}/delete`, { features: 'all' }), 400, 'BadDataError');
  });
});
