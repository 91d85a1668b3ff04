import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parse } from 'csv-parse/sync';
import { expectRefused, expectStatus, getOk } from '../helpers/assertions.js';
import { createUserSession } from '../helpers/fixtures.js';
import { createFlag, createProject, featurePath } from '../helpers/projects.js';
import { createSdkToken } from '../helpers/sdk-fixtures.js';
import { useTestApp } from '../helpers/test-app.js';

// Unleash's instance statistics: counts of what the installation holds, for Admins, as JSON and as CSV.

const ctx = useTestApp();
type Statistics = Record<string, unknown> & {
  instanceId: string;
  sum: string;
  apiTokens: Record<string, number>;
  activeUsers: Record<string, number>;
};
const read = () => getOk<Statistics>(ctx.admin, '/api/admin/instance-admin/statistics');

describe('instance statistics', () => {
  test('count what the instance holds, and follow what is added', async () => {
    const before = await read();
    assert.match(before.instanceId, /^[0-9a-f-]{36}$/);
    assert.equal((await read()).instanceId, before.instanceId, 'the id stays');
    assert.equal(typeof before.versionOSS, 'string');
    assert.deepEqual([before.SAMLenabled, before.OIDCenabled, before.passwordAuthEnabled, before.SCIMenabled], [false, false, true, false]);

    await createUserSession(ctx, 'Editor');
    await createUserSession(ctx, 'Viewer');
    const project = await createProject(ctx);
    await createFlag(ctx, project, {
      strategies: [
        { name: 'default', constraints: [{ contextName: 'userId', operator: 'IN', values: ['a', 'b', 'c', 'd', 'e', 'f', 'g'] }] },
        { name: 'default' },
        { name: 'default' },
      ],
    });
    const archived = await createFlag(ctx, project);
    expectStatus(await ctx.admin.delete(featurePath(project, archived)), 202);
    await createSdkToken(ctx, 'client', 'development', [project]);
    expectStatus(await ctx.admin.post('/api/admin/segments', { name: 'stats-segment', constraints: [] }), 201);

    const after = await read();
    const delta = (key: string) => (after[key] as number) - (before[key] as number);
    assert.deepEqual(
      Object.fromEntries(
        ['users', 'readOnlyUsers', 'featureToggles', 'archivedFeatureToggles', 'projects', 'segments'].map((key) => [key, delta(key)]),
      ),
      { users: 2, readOnlyUsers: 1, featureToggles: 1, archivedFeatureToggles: 1, projects: 1, segments: 1 },
    );
    assert.equal((after.apiTokens.client ?? 0) - (before.apiTokens.client ?? 0), 1);
    assert.ok(after.activeUsers.last7! >= 2, 'the two who signed in are active');
    assert.ok((after.maxEnvironmentStrategies as number) >= 3);
    assert.ok((after.maxConstraintValues as number) >= 7);
    assert.notEqual(after.sum, before.sum, 'the signature follows the figures');
  });

  test('the CSV holds the same figures; only an Admin reads them', async () => {
    const response = await ctx.admin.get('/api/admin/instance-admin/statistics/csv');
    expectStatus(response, 200);
    assert.match(String(response.headers['content-type']), /^text\/csv/);
    assert.match(String(response.headers['content-disposition']), /^attachment; filename="vexil-[0-9a-f-]{36}-\d+\.csv"$/);
    const [header, row] = parse(response.body) as string[][];
    const figures = Object.fromEntries(header!.map((key, index) => [key, row![index]]));
    const json = await read();
    assert.equal(figures.instanceId, json.instanceId);
    assert.equal(figures.users, String(json.users));
    assert.deepEqual(JSON.parse(figures.apiTokens!), json.apiTokens);

    const editor = ctx.withCookie((await createUserSession(ctx, 'Editor')).cookie);
    for (const path of ['/api/admin/instance-admin/statistics', '/api/admin/instance-admin/statistics/csv']) {
      await expectRefused(ctx, () => editor.get(path), { status: 403, name: 'PermissionError' });
    }
  });
});
