import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { expectError, expectRefused, expectStatus, getOk, onlyEvent } from '../helpers/assertions.js';
import { eventsSince, lastEventId } from '../helpers/events.js';
import { createUserSession, uniqueName } from '../helpers/fixtures.js';
import { createFlag } from '../helpers/projects.js';
import { inUnitOfWork } from '../../src/db/unit-of-work.js';
import { SYSTEM_ACTOR } from '../../src/domain/access/actor.js';
import { setMaintenanceMode } from '../../src/domain/settings/maintenance-mode.js';
import { createSdkToken } from '../helpers/sdk-fixtures.js';
import { openInMaintenance } from '../../src/http/plugins/maintenance.js';
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
      // An export is a read: it answers, and who took the configuration out is still recorded.
      const exportedSince = await lastEventId(ctx);
      expectStatus(await ctx.admin.post('/api/admin/features-batch/export', { environment: 'development', features: [flag] }), 200);
      onlyEvent(await eventsSince(ctx, exportedSince), 'features-exported');
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

  test('every write route of the API answers 503 while it is on, but the few open for a named reason, and nothing is stored', async () => {
    const document = await getOk<{ paths: Record<string, Record<string, unknown>> }>(ctx.admin, '/docs/json');
    const writes = Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.keys(operations)
        .filter((method) => method !== 'get' && method !== 'head')
        .map((method) => ({ method: method.toUpperCase(), path, route: path.replace(/\{(\w+)\}/g, ':$1') })),
    );
    // The routes that still answer, each for its reason: a route added to this list is a decision, not an accident.
    const open = writes
      .filter(({ method, route }) => openInMaintenance(method, route) !== undefined)
      .map(({ method, path }) => `${method} ${path}`);
    assert.deepEqual(open.sort(), OPEN_WRITE_ROUTES.toSorted());
    const refused = writes.filter(({ method, route }) => openInMaintenance(method, route) === undefined);
    assert.ok(refused.length > 150, `${refused.length} write routes refused`);

    const before = await lastEventId(ctx);
    expectStatus(await ctx.admin.post('/api/admin/maintenance', { enabled: true }), 204);
    const since = await lastEventId(ctx);
    try {
      for (const { method, path } of refused) {
        const url = path.replace(/\{(\w+)\}/g, (_match, name: string) => (name === 'projectId' ? 'default' : `x-${name}`));
        const answer = await ctx.admin.inject({ method: method as 'POST', url, payload: {} });
        // Doors with their own credentials (SCIM, signals, invites) ask for them first, as they should.
        if (answer.statusCode === 401 && !path.startsWith('/api/admin/')) continue;
        assert.equal(answer.statusCode, 503, `${method} ${path}: ${answer.body}`);
      }
    } finally {
      expectStatus(await ctx.admin.post('/api/admin/maintenance', { enabled: false }), 204);
    }
    const events = await eventsSince(ctx, before);
    assert.deepEqual(
      events.filter((event) => event.id > since).map((event) => event.type),
      ['setting-updated'],
      'only the switch back off',
    );
  });

  test('a unit of work of any door or worker is refused while it is on: signals, SCIM, invites and MCP tools change nothing', async () => {
    const flag = await createFlag(ctx, 'default', { environment: 'development', enabled: true });
    const endpoint = (await ctx.admin.post('/api/admin/signal-endpoints', { name: uniqueName('alerts') })).json() as {
      id: number;
      name: string;
    };
    const signalToken = (
      (await ctx.admin.post(`/api/admin/signal-endpoints/${endpoint.id}/tokens`, { name: 'alerts' })).json() as { token: string }
    ).token;
    const scimToken = ((await ctx.admin.post('/api/admin/scim/token')).json() as { token: string }).token;
    const invite = (
      await ctx.admin.post('/api/admin/invite-link/tokens', { name: 'invited', expiresAt: new Date(Date.now() + 86_400_000).toISOString() })
    ).json() as { secret: string };
    assert.match(invite.secret, /^\w{16,}/);
    const before = await lastEventId(ctx);
    expectStatus(await ctx.admin.post('/api/admin/maintenance', { enabled: true }), 204);
    const since = await lastEventId(ctx);
    try {
      expectError(
        await ctx.as(signalToken).post(`/api/signal-endpoint/${endpoint.name}`, { event: 'incident' }),
        503,
        'ServiceUnavailableError',
      );
      const scim = await ctx.app.inject({
        method: 'POST',
        url: '/scim/v2/Users',
        headers: { authorization: `Bearer ${scimToken}`, 'content-type': 'application/scim+json' },
        payload: JSON.stringify({ userName: uniqueName('scim'), active: true }),
      });
      assert.equal(scim.statusCode, 503, scim.body);
      expectError(
        await ctx
          .as()
          .post(`/invite/${invite.secret}/signup`, { email: `${uniqueName('new')}@example.com`, name: 'New', password: STRONG_PASSWORD }),
        503,
        'ServiceUnavailableError',
      );
      const tool = await callMcpTool('toggle_flag_environment', {
        projectId: 'default',
        featureName: flag,
        environment: 'development',
        enabled: false,
      });
      assert.match(JSON.stringify(tool), /maintenance mode/);
      // A worker's unit of work meets the same refusal as a request's.
      await assert.rejects(
        inUnitOfWork({ db: ctx.db, clock: ctx.clock }, SYSTEM_ACTOR, (uow) => setMaintenanceMode(uow, true)),
        /maintenance mode/,
      );
      await assert.doesNotReject(inUnitOfWork({ db: ctx.db, clock: ctx.clock }, SYSTEM_ACTOR, async () => 'read', { rollback: true }));
    } finally {
      expectStatus(await ctx.admin.post('/api/admin/maintenance', { enabled: false }), 204);
    }
    assert.deepEqual(
      (await eventsSince(ctx, before)).filter((event) => event.id > since).map((event) => event.type),
      ['setting-updated'],
    );
    const stored = await getOk<{ environments: Array<{ name: string; enabled: boolean }> }>(
      ctx.admin,
      `/api/admin/projects/default/features/${flag}`,
    );
    assert.equal(stored.environments.find((environment) => environment.name === 'development')?.enabled, true);
  });

  /** One MCP tool call as the admin token, through the MCP endpoint's JSON-RPC. */
  async function callMcpTool(name: string, args: Record<string, unknown>): Promise<unknown> {
    const headers = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };
    const opened = await ctx.admin.inject({
      method: 'POST',
      url: '/api/admin/mcp',
      headers,
      payload: {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } },
      },
    });
    const session = opened.headers['mcp-session-id'] as string;
    const called = await ctx.admin.inject({
      method: 'POST',
      url: '/api/admin/mcp',
      headers: { ...headers, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' },
      payload: { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name, arguments: args } },
    });
    return called.body;
  }
});

/** The write routes that answer while maintenance mode is on (see OPEN_IN_MAINTENANCE for each one's reason). */
const OPEN_WRITE_ROUTES = [
  'POST /api/admin/maintenance',
  'POST /api/admin/features/validate',
  'POST /api/admin/features-batch/validate',
  'POST /api/admin/constraints/validate',
  'POST /api/admin/context/validate',
  'POST /api/admin/projects/{projectId}/archive/validate',
  'POST /api/admin/projects/{projectId}/context/validate',
  'POST /api/admin/roles/validate',
  'POST /api/admin/segments/validate',
  'POST /api/admin/tag-types/validate',
  'POST /api/admin/user-admin/validate-password',
  'POST /api/admin/playground',
  'POST /api/admin/playground/advanced',
  'POST /api/admin/events/search',
  'POST /api/admin/features-batch/export',
  'POST /api/admin/flags-file/apply',
  'POST /api/admin/mcp',
  'DELETE /api/admin/mcp',
  'POST /api/frontend',
  'POST /api/frontend/all',
  'POST /api/proxy',
  'POST /api/proxy/all',
  'POST /ofrep/v1/evaluate/flags',
  'POST /ofrep/v1/evaluate/flags/{key}',
  'POST /api/client/register',
  'POST /api/client/metrics',
  'POST /api/client/metrics/bulk',
  'POST /api/frontend/client/metrics',
  'POST /api/frontend/client/register',
  'POST /api/proxy/client/metrics',
  'POST /api/proxy/client/register',
  'POST /api/client/exposures',
  'POST /api/client/track',
  'POST /api/frontend/exposures',
  'POST /api/frontend/track',
  'POST /auth/simple/login',
  'POST /auth/saml/callback',
  'POST /auth/reset/validate-password',
  'POST /logout',
  'POST /edge/validate',
];
