import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { expectError, expectRefused, expectStatus, getOk, onlyEvent } from '../helpers/assertions.js';
import { eventsSince, lastEventId } from '../helpers/events.js';
import { createUserSession, uniqueName } from '../helpers/fixtures.js';
import { createFlag } from '../helpers/projects.js';
import { createSdkToken } from '../helpers/sdk-fixtures.js';
import { STRONG_PASSWORD, useTestApp } from '../helpers/test-app.js';

// Unleash's maintenance mode: an Admin turns it on, and until it is off every change through the admin API is a 503
// while reads, checks, sign-in and everything SDKs do go on.

describe('maintenance mode', () => {
  const ctx = useTestApp();

  test('while on, admin changes are a 503 and nothing is stored; reads, checks, sign-in and SDKs go on', async () => {
    const flag = await createFlag(ctx, 'default', { environment: 'development', enabled: true });
    const token = await createSdkToken(ctx, 'client', 'development');
    const editor = await createUserSession(ctx, 'Editor');
    const username = uniqueName('person');
    expectStatus(await ctx.admin.post('/api/admin/user-admin', { username, rootRole: 'Viewer', password: STRONG_PASSWORD }), 201);
    assert.deepEqual(await getOk(ctx.admin, '/api/admin/maintenance'), { enabled: false });
    await expectRefused(ctx, () => ctx.withCookie(editor.cookie).post('/api/admin/maintenance', { enabled: true }), {
      status: 403,
      name: 'PermissionError',
    });

    const before = await lastEventId(ctx);
    expectStatus(await ctx.admin.post('/api/admin/maintenance', { enabled: true }), 204);
    onlyEvent(await eventsSince(ctx, before), 'setting-updated', {
      data: { id: 'maintenance.mode', enabled: true },
      preData: { id: 'maintenance.mode', enabled: false },
    });
    try {
      assert.deepEqual(await getOk(ctx.admin, '/api/admin/maintenance'), { enabled: true });
      assert.equal((await getOk<{ maintenanceMode: boolean }>(ctx.admin, '/api/admin/ui-config')).maintenanceMode, true);
      const refusal = await expectRefused(
        ctx,
        () => ctx.withCookie(editor.cookie).post('/api/admin/projects', { id: uniqueName('p'), name: 'new' }),
        { status: 503, name: 'ServiceUnavailableError' },
        () => getOk(ctx.admin, '/api/admin/projects'),
      );
      assert.match(refusal.message, /maintenance mode/);
      await expectRefused(ctx, () => ctx.admin.post(`/api/admin/projects/default/features/${flag}/environments/development/off`), {
        status: 503,
        name: 'ServiceUnavailableError',
      });
      await expectRefused(ctx, () => ctx.admin.delete(`/api/admin/projects/default/features/${flag}`), {
        status: 503,
        name: 'ServiceUnavailableError',
      });
      await expectRefused(
        ctx,
        () => ctx.admin.patch(`/api/admin/projects/default/features/${flag}`, [{ op: 'replace', path: '/description', value: 'x' }]),
        {
          status: 503,
          name: 'ServiceUnavailableError',
        },
      );
      // An unknown caller is told to sign in first.
      expectError(await ctx.as().post('/api/admin/projects', { id: 'x', name: 'x' }), 401, 'AuthenticationRequired');

      expectStatus(await ctx.admin.get(`/api/admin/projects/default/features/${flag}`), 200);
      expectStatus(await ctx.admin.post('/api/admin/features/validate', { name: uniqueName('free') }), 200);
      expectStatus(await ctx.admin.post('/api/admin/playground', { environment: 'development', context: {} }), 200);
      expectStatus(await ctx.as().post('/auth/simple/login', { username, password: STRONG_PASSWORD }), 200);
      const served = await ctx.as(token).get('/api/client/features');
      expectStatus(served, 200);
      assert.deepEqual(
        (served.json() as { features: Array<{ name: string; enabled: boolean }> }).features.map(({ name, enabled }) => [name, enabled]),
        [[flag, true]],
      );
      const now = new Date().toISOString();
      expectStatus(
        await ctx.as(token).post('/api/client/metrics', { appName: 'web', bucket: { start: now, stop: now, toggles: {} } }),
        202,
      );
      expectError(await ctx.admin.post('/api/admin/maintenance', { enabled: 'yes' }), 400, 'BadDataError');
    } finally {
      expectStatus(await ctx.admin.post('/api/admin/maintenance', { enabled: false }), 204);
    }
    expectStatus(await ctx.withCookie(editor.cookie).post('/api/admin/projects', { id: uniqueName('p'), name: 'after' }), 201);
  });
});
