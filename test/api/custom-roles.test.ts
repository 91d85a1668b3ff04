import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { expectError, expectStatus, getOk } from '../helpers/assertions.js';
import { eventFields, eventsSince, lastEventId } from '../helpers/events.js';
import { uniqueName } from '../helpers/fixtures.js';
import { createFlag, createProject, featurePath, projectPath } from '../helpers/projects.js';
import { type Client, STRONG_PASSWORD, useTestApp } from '../helpers/test-app.js';

const ctx = useTestApp();

interface Role {
  id: number;
  name: string;
  type: string;
  description: string | null;
  permissions: Array<{ name: string; environment?: string }>;
}

/** A person with a password (a built-in root role unless `rootRole` names another), signed in; answers them and their browser. */
async function person(rootRole: string | number = 'Viewer'): Promise<{ id: number; username: string; browser: Client }> {
  const username = uniqueName('person');
  const created = await ctx.admin.post('/api/admin/user-admin', { username, rootRole, password: STRONG_PASSWORD });
  expectStatus(created, 201);
  const login = await ctx.as().post('/auth/simple/login', { username, password: STRONG_PASSWORD });
  expectStatus(login, 200);
  const cookie = login.cookies.find((entry) => entry.name === 'vexil-session')!;
  return { id: (created.json() as { id: number }).id, username, browser: ctx.withCookie(`vexil-session=${cookie.value}`) };
}

async function createRole(body: Record<string, unknown>): Promise<Role> {
  const response = await ctx.admin.post('/api/admin/roles', { name: uniqueName('role'), description: 'made by a test', ...body });
  expectStatus(response, 201);
  return response.json() as Role;
}

describe('custom project roles with per-environment permissions', () => {
  test('a role that may change development but not production is refused in production, and says so', async () => {
    const since = await lastEventId(ctx);
    const developer = await createRole({
      name: uniqueName('Developer'),
      type: 'custom',
      permissions: [
        { name: 'CREATE_FEATURE' },
        { name: 'UPDATE_FEATURE' },
        { name: 'UPDATE_FEATURE_ENVIRONMENT', environment: 'development' },
        { name: 'CREATE_FEATURE_STRATEGY', environment: 'development' },
      ],
    });
    assert.deepEqual(developer.permissions, [
      { name: 'CREATE_FEATURE' },
      { name: 'CREATE_FEATURE_STRATEGY', environment: 'development' },
      { name: 'UPDATE_FEATURE' },
      { name: 'UPDATE_FEATURE_ENVIRONMENT', environment: 'development' },
    ]);
    assert.ok(developer.id >= 100);

    const project = await createProject(ctx, { environments: ['development', 'production'] });
    const dev = await person();
    expectStatus(await ctx.admin.put(`${projectPath(project)}/users/${dev.id}/roles`, { roles: [developer.id] }), 200);

    const flag = uniqueName('flag');
    expectStatus(await dev.browser.post(`${projectPath(project)}/features`, { name: flag }), 201);
    expectStatus(await dev.browser.post(`${featurePath(project, flag)}/environments/development/on`), 200);
    expectStatus(await dev.browser.post(`${featurePath(project, flag)}/environments/development/strategies`, { name: 'default' }), 200);
    const refused = expectError(await dev.browser.post(`${featurePath(project, flag)}/environments/production/on`), 403, 'PermissionError');
    assert.match(refused.message, /UPDATE_FEATURE_ENVIRONMENT/);
    assert.match(refused.message, /in production/);
    expectError(
      await dev.browser.post(`${featurePath(project, flag)}/environments/production/strategies`, { name: 'default' }),
      403,
      'PermissionError',
    );
    // Nothing the refusals asked for happened (turning development on gave it its default strategy, then one was added).
    const stored = await getOk<{ environments: Array<{ name: string; enabled: boolean; strategies: unknown[] }> }>(
      ctx.admin,
      featurePath(project, flag),
    );
    assert.deepEqual(
      stored.environments.map(({ name, enabled, strategies }) => [name, enabled, strategies.length]),
      [
        ['development', true, 2],
        ['production', false, 0],
      ],
    );
    // Nor anywhere else: the role counts in its project only, and deleting flags is not in it.
    expectError(await dev.browser.post(`${projectPath('default')}/features`, { name: uniqueName('elsewhere') }), 403, 'PermissionError');
    expectError(await dev.browser.delete(`${featurePath(project, flag)}`), 403, 'PermissionError');

    const me = await getOk<{ permissions: Array<{ permission: string; project?: string; environment?: string }> }>(
      dev.browser,
      '/api/admin/user',
    );
    assert.deepEqual(
      me.permissions.filter((entry) => entry.project === project).sort((a, b) => a.permission.localeCompare(b.permission)),
      [
        { permission: 'CREATE_FEATURE', project },
        { permission: 'CREATE_FEATURE_STRATEGY', project, environment: 'development' },
        { permission: 'UPDATE_FEATURE', project },
        { permission: 'UPDATE_FEATURE_ENVIRONMENT', project, environment: 'development' },
      ],
    );

    // Widened to production, the same request goes through at once.
    expectStatus(
      await ctx.admin.put(`/api/admin/roles/${developer.id}`, {
        name: developer.name,
        type: 'custom',
        permissions: [...developer.permissions, { name: 'UPDATE_FEATURE_ENVIRONMENT', environment: 'production' }],
      }),
      200,
    );
    expectStatus(await dev.browser.post(`${featurePath(project, flag)}/environments/production/on`), 200);

    // Held, the role cannot be deleted, and the refusal names who holds it; once no one does, it can.
    const inUse = expectError(await ctx.admin.delete(`/api/admin/roles/${developer.id}`), 409, 'ConflictError');
    assert.match(inUse.message, new RegExp(`user ${dev.username} in project ${project}`));
    expectStatus(await ctx.admin.put(`${projectPath(project)}/users/${dev.id}/roles`, { roles: [] }), 200);
    expectStatus(await ctx.admin.delete(`/api/admin/roles/${developer.id}`), 200);
    expectError(await ctx.admin.get(`/api/admin/roles/${developer.id}`), 404, 'NotFoundError');

    const roleEvents = eventFields(await eventsSince(ctx, since), 'type', 'createdBy').filter((event) => event.type.startsWith('role-'));
    assert.deepEqual(roleEvents, [
      { type: 'role-created', createdBy: 'admin-token' },
      { type: 'role-updated', createdBy: 'admin-token' },
      { type: 'role-deleted', createdBy: 'admin-token' },
    ]);
  });

  test('a custom project role given to a group applies to its members, and the project access lists it', async () => {
    const reviewer = await createRole({ type: 'custom', permissions: [{ name: 'UPDATE_FEATURE_ENVIRONMENT' }] });
    const project = await createProject(ctx, { environments: ['development', 'production'] });
    const flag = await createFlag(ctx, project);
    const member = await person();
    const group = await ctx.admin.post('/api/admin/groups', { name: uniqueName('Togglers'), users: [{ user: { id: member.id } }] });
    expectStatus(group, 201);
    const groupId = (group.json() as { id: number }).id;
    expectError(await member.browser.post(`${featurePath(project, flag)}/environments/production/on`), 403, 'PermissionError');
    expectStatus(await ctx.admin.post(`${projectPath(project)}/access`, { roles: [reviewer.id], groups: [groupId] }), 200);
    // Without an environment, the permission holds in every one.
    expectStatus(await member.browser.post(`${featurePath(project, flag)}/environments/production/on`), 200);
    const access = await getOk<{ groups: Array<{ id: number; roles: number[] }>; roles: Array<{ id: number; type: string }> }>(
      ctx.admin,
      `${projectPath(project)}/access`,
    );
    assert.deepEqual(access.groups.find((entry) => entry.id === groupId)?.roles, [reviewer.id]);
    assert.ok(access.roles.some((role) => role.id === reviewer.id && role.type === 'custom'));
    const inUse = expectError(await ctx.admin.delete(`/api/admin/roles/${reviewer.id}`), 409, 'ConflictError');
    assert.match(inUse.message, /group Togglers.* in project/);
  });
});

describe('custom root roles', () => {
  test('a root role of chosen permissions: its holder does what it names and nothing more, and the refusal names the role', async () => {
    const segments = await createRole({
      name: uniqueName('Segment keeper'),
      type: 'root-custom',
      permissions: [{ name: 'CREATE_SEGMENT' }, { name: 'UPDATE_SEGMENT' }],
    });
    const keeper = await person(segments.id);
    const asAdminSees = await getOk<{ rootRole: number }>(ctx.admin, `/api/admin/user-admin/${keeper.id}`);
    assert.equal(asAdminSees.rootRole, segments.id);
    expectStatus(await keeper.browser.post('/api/admin/segments', { name: uniqueName('segment'), constraints: [] }), 201);
    const refused = expectError(
      await keeper.browser.post('/api/admin/projects', { id: uniqueName('p'), name: 'p' }),
      403,
      'PermissionError',
    );
    assert.match(refused.message, new RegExp(`your role ${segments.name} does not have it`));

    // Given back a built-in role, the custom one is free to delete.
    const inUse = expectError(await ctx.admin.delete(`/api/admin/roles/${segments.id}`), 409, 'ConflictError');
    assert.match(inUse.message, new RegExp(`user ${keeper.username}`));
    expectStatus(await ctx.admin.put(`/api/admin/user-admin/${keeper.id}`, { rootRole: 'Editor' }), 200);
    expectStatus(await keeper.browser.post('/api/admin/projects', { id: uniqueName('p'), name: 'p' }), 201);
    expectStatus(await ctx.admin.delete(`/api/admin/roles/${segments.id}`), 200);
  });

  test('a service account may hold a custom root role: its token does what the role names and nothing more, and the role stays while it is held', async () => {
    const segments = await createRole({ type: 'root-custom', permissions: [{ name: 'CREATE_SEGMENT' }] });
    const accounts = await getOk<{ rootRoles: Array<{ id: number; name: string }> }>(ctx.admin, '/api/admin/service-account');
    assert.deepEqual(
      accounts.rootRoles.filter((role) => role.id === segments.id || role.id <= 3).map((role) => role.name),
      ['Admin', 'Editor', 'Viewer', segments.name],
    );
    const username = uniqueName('segment-bot');
    const since = await lastEventId(ctx);
    const created = await ctx.admin.post('/api/admin/service-account', { username, rootRole: segments.id });
    expectStatus(created, 201);
    const account = created.json() as { id: number; rootRole: number };
    assert.equal(account.rootRole, segments.id);
    const expiresAt = new Date(ctx.clock.now().getTime() + 86_400_000).toISOString();
    const token = await ctx.admin.post(`/api/admin/service-account/${account.id}/token`, { description: 'pipeline', expiresAt });
    const bot = ctx.as((token.json() as { secret: string }).secret);
    expectStatus(await bot.post('/api/admin/segments', { name: uniqueName('segment'), constraints: [] }), 201);
    const refused = expectError(await bot.post('/api/admin/projects', { id: uniqueName('p'), name: 'p' }), 403, 'PermissionError');
    assert.match(refused.message, new RegExp(`your role ${segments.name} does not have it`));

    const inUse = expectError(await ctx.admin.delete(`/api/admin/roles/${segments.id}`), 409, 'ConflictError');
    assert.match(inUse.message, new RegExp(`service account ${username}`));
    // A project role is no root role: refused, and the account keeps the one it has.
    const project = await createRole({ type: 'custom', permissions: [{ name: 'UPDATE_FEATURE' }] });
    for (const rootRole of [project.id, 99_999]) {
      expectError(await ctx.admin.put(`/api/admin/service-account/${account.id}`, { rootRole }), 400, 'BadDataError');
    }
    assert.equal((await getOk<{ rootRole: number }>(ctx.admin, `/api/admin/service-account/${account.id}`)).rootRole, segments.id);
    const editor = await ctx.admin.put(`/api/admin/service-account/${account.id}`, { rootRole: 2 });
    assert.equal((editor.json() as { rootRole: number }).rootRole, 2);
    // Recorded with the role given, and the refused changes not at all.
    const recorded = (await eventsSince(ctx, since)).filter((event) => event.type.startsWith('service-account-'));
    assert.deepEqual(
      recorded.map((event) => [
        event.type,
        (event.preData as { rootRole?: number } | null)?.rootRole ?? null,
        (event.data as { username: string; rootRole: number }).rootRole,
        (event.data as { username: string }).username,
      ]),
      [
        ['service-account-created', null, segments.id, username],
        ['service-account-updated', segments.id, 2, username],
      ],
    );
    expectStatus(await bot.post('/api/admin/projects', { id: uniqueName('p'), name: 'p' }), 201);
    expectStatus(await ctx.admin.delete(`/api/admin/roles/${segments.id}`), 200);
  });

  test('the user list offers custom root roles beside the built-in ones; a group may hold one', async () => {
    const auditors = await createRole({ type: 'root-custom', permissions: [{ name: 'READ_API_TOKEN' }] });
    const users = await getOk<{ rootRoles: Array<{ id: number; name: string; type: string }> }>(ctx.admin, '/api/admin/user-admin');
    assert.deepEqual(
      users.rootRoles.slice(0, 3).map((role) => [role.id, role.name, role.type]),
      [
        [1, 'Admin', 'root'],
        [2, 'Editor', 'root'],
        [3, 'Viewer', 'root'],
      ],
    );
    assert.ok(users.rootRoles.some((role) => role.id === auditors.id && role.type === 'root-custom'));
    const member = await person();
    expectError(await member.browser.get('/api/admin/api-tokens'), 403, 'PermissionError');
    const group = await ctx.admin.post('/api/admin/groups', {
      name: uniqueName('Auditors'),
      rootRole: auditors.id,
      users: [{ user: { id: member.id } }],
    });
    expectStatus(group, 201);
    assert.equal((group.json() as { rootRole: number }).rootRole, auditors.id);
    expectStatus(await member.browser.get('/api/admin/api-tokens'), 200);
  });
});

describe('what a custom root role cannot reach beyond its permissions', () => {
  test('CREATE_API_TOKEN makes SDK tokens, never admin tokens, and cannot extend one', async () => {
    const tokenMakers = await createRole({ type: 'root-custom', permissions: [{ name: 'CREATE_API_TOKEN' }, { name: 'READ_API_TOKEN' }] });
    const maker = await person(tokenMakers.id);
    const since = await lastEventId(ctx);
    const refused = expectError(
      await maker.browser.post('/api/admin/api-tokens', { tokenName: uniqueName('mint'), type: 'admin' }),
      403,
      'PermissionError',
    );
    assert.deepEqual(refused.permissions, ['ADMIN']);
    assert.match(refused.message, /Only an Admin may create or extend admin tokens/);
    const adminToken = await ctx.admin.post('/api/admin/api-tokens', { tokenName: uniqueName('ops'), type: 'admin' });
    expectStatus(adminToken, 201);
    const { secret } = adminToken.json() as { secret: string };
    const extend = expectError(
      await maker.browser.put(`/api/admin/api-tokens/${encodeURIComponent(secret)}`, { expiresAt: '2999-01-01T00:00:00.000Z' }),
      403,
      'PermissionError',
    );
    assert.deepEqual(extend.permissions, ['ADMIN']);
    const events = await eventsSince(ctx, since);
    assert.deepEqual(
      events.map((event) => [event.type, event.createdBy]),
      [['api-token-created', 'admin-token']],
    );
    const sdkToken = await maker.browser.post('/api/admin/api-tokens', {
      tokenName: uniqueName('sdk'),
      type: 'client',
      environment: 'development',
    });
    expectStatus(sdkToken, 201);
    assert.equal((sdkToken.json() as { type: string }).type, 'client');
  });

  test('a project role with PROJECT_USER_ACCESS_WRITE gives people access, and groups only with PROJECT_GROUP_ACCESS_WRITE', async () => {
    const project = await createProject(ctx);
    const userManagers = await createRole({ type: 'custom', permissions: [{ name: 'PROJECT_USER_ACCESS_WRITE' }] });
    const manager = await person('Viewer');
    expectStatus(await ctx.admin.post(`${projectPath(project)}/access`, { roles: [userManagers.id], users: [manager.id] }), 200);
    const group = await ctx.admin.post('/api/admin/groups', { name: uniqueName('everyone') });
    expectStatus(group, 201);
    const groupId = (group.json() as { id: number }).id;
    const colleague = await person('Viewer');
    const since = await lastEventId(ctx);
    for (const refused of [
      await manager.browser.post(`${projectPath(project)}/access`, { roles: [4], groups: [groupId] }),
      await manager.browser.post(`${projectPath(project)}/access`, { roles: [4], users: [colleague.id], groups: [groupId] }),
      await manager.browser.put(`${projectPath(project)}/groups/${groupId}/roles`, { roles: [4] }),
    ]) {
      assert.deepEqual(expectError(refused, 403, 'PermissionError').permissions, ['PROJECT_GROUP_ACCESS_WRITE']);
    }
    assert.deepEqual(await eventsSince(ctx, since), []);
    expectStatus(await manager.browser.post(`${projectPath(project)}/access`, { roles: [5], users: [colleague.id] }), 200);
  });

  test('UPDATE_ADDON cannot point an integration elsewhere and keep its secrets', async () => {
    const editors = await createRole({ type: 'root-custom', permissions: [{ name: 'UPDATE_ADDON' }] });
    const editor = await person(editors.id);
    const created = await ctx.admin.post('/api/admin/addons', {
      provider: 'datadog',
      enabled: true,
      parameters: { url: 'https://api.datadoghq.eu/api/v1/events', apiKey: 'dd-secret-key' },
      events: ['feature-created'],
    });
    expectStatus(created, 201);
    const { id } = created.json() as { id: number };
    const read = async () => (await getOk<{ parameters: Record<string, string> }>(ctx.admin, `/api/admin/addons/${id}`)).parameters;
    const before = await read();
    assert.equal(before.apiKey, '*****');
    const since = await lastEventId(ctx);
    const moved = expectError(
      await editor.browser.put(`/api/admin/addons/${id}`, {
        provider: 'datadog',
        enabled: true,
        parameters: { url: 'https://collector.attacker.example/api/v1/events', apiKey: '*****' },
        events: ['feature-created'],
      }),
      400,
      'BadDataError',
    );
    assert.deepEqual(moved.details, [
      {
        path: '/body/parameters/apiKey',
        message: '"apiKey" must be sent again: "url" changed, and a stored secret is never sent to a new destination',
      },
    ]);
    assert.deepEqual(await read(), before);
    assert.deepEqual(await eventsSince(ctx, since), []);
    // The same destination keeps the secret; a new one takes a new secret.
    const same = await editor.browser.put(`/api/admin/addons/${id}`, {
      provider: 'datadog',
      enabled: true,
      description: 'kept',
      parameters: { url: 'https://api.datadoghq.eu/api/v1/events', apiKey: '*****' },
      events: ['feature-created'],
    });
    expectStatus(same, 200);
    const stored = await ctx.db.selectFrom('addons').select('parameters').where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal((stored.parameters as Record<string, string>).apiKey, 'dd-secret-key');
    expectStatus(
      await editor.browser.put(`/api/admin/addons/${id}`, {
        provider: 'datadog',
        enabled: true,
        parameters: { url: 'https://api.datadoghq.com/api/v1/events', apiKey: 'a-new-key' },
        events: ['feature-created'],
      }),
      200,
    );
  });
});

describe('the built-in roles, as roles of the same kind', () => {
  test('are listed first and read with their permissions; they cannot be changed or deleted', async () => {
    const roles = await getOk<{ version: number; roles: Array<{ id: number; name: string; type: string }> }>(ctx.admin, '/api/admin/roles');
    assert.equal(roles.version, 1);
    assert.deepEqual(
      roles.roles.slice(0, 6).map((role) => [role.id, role.name, role.type]),
      [
        [1, 'Admin', 'root'],
        [2, 'Editor', 'root'],
        [3, 'Viewer', 'root'],
        [4, 'Owner', 'project'],
        [5, 'Member', 'project'],
        [6, 'Viewer', 'project'],
      ],
    );
    const editor = await getOk<Role>(ctx.admin, '/api/admin/roles/2');
    const names = editor.permissions.map((permission) => permission.name);
    assert.ok(names.includes('CREATE_PROJECT') && names.includes('UPDATE_FEATURE_ENVIRONMENT'));
    assert.ok(!names.includes('ADMIN') && !names.includes('CREATE_API_TOKEN'));
    assert.deepEqual((await getOk<Role>(ctx.admin, '/api/admin/roles/6')).permissions, []);
    expectError(await ctx.admin.put('/api/admin/roles/2', { name: 'Editor', type: 'root-custom', permissions: [] }), 400, 'BadDataError');
    expectError(await ctx.admin.delete('/api/admin/roles/4'), 400, 'BadDataError');
  });

  test('the permission catalogue lists root and project permissions and each environment’s', async () => {
    const { permissions } = await getOk<{
      permissions: {
        root: Array<{ name: string }>;
        project: Array<{ name: string }>;
        environments: Array<{ name: string; permissions: Array<{ name: string; environment: string }> }>;
      };
    }>(ctx.admin, '/api/admin/permissions');
    assert.ok(permissions.root.some((entry) => entry.name === 'ADMIN'));
    assert.deepEqual(
      permissions.project.map((entry) => entry.name),
      [
        'CREATE_FEATURE',
        'UPDATE_FEATURE',
        'DELETE_FEATURE',
        'UPDATE_FEATURE_DEPENDENCY',
        'UPDATE_PROJECT',
        'DELETE_PROJECT',
        'PROJECT_USER_ACCESS_WRITE',
        'PROJECT_GROUP_ACCESS_WRITE',
        'READ_PROJECT_API_TOKEN',
        'CREATE_PROJECT_API_TOKEN',
        'DELETE_PROJECT_API_TOKEN',
      ],
    );
    const production = permissions.environments.find((environment) => environment.name === 'production');
    assert.deepEqual(
      production?.permissions.map((entry) => [entry.name, entry.environment]),
      [
        ['CREATE_FEATURE_STRATEGY', 'production'],
        ['UPDATE_FEATURE_STRATEGY', 'production'],
        ['DELETE_FEATURE_STRATEGY', 'production'],
        ['UPDATE_FEATURE_ENVIRONMENT', 'production'],
        ['UPDATE_FEATURE_ENVIRONMENT_VARIANTS', 'production'],
        ['APPROVE_CHANGE_REQUEST', 'production'],
        ['APPLY_CHANGE_REQUEST', 'production'],
      ],
    );
  });
});

describe('bad role input is a 400 (or 409) and changes nothing', () => {
  test('each mistake names its field', async () => {
    const before = await getOk<{ roles: unknown[] }>(ctx.admin, '/api/admin/roles');
    const bad = async (body: Record<string, unknown>, status = 400, name = 'BadDataError') =>
      expectError(
        await ctx.admin.post('/api/admin/roles', { name: uniqueName('bad'), type: 'custom', permissions: [], ...body }),
        status,
        name,
      );
    assert.match(
      (await bad({ permissions: [{ name: 'CREATE_FEATURE', environment: 'development' }] })).message,
      /takes no environment|whole project/,
    );
    assert.match(
      (await bad({ permissions: [{ name: 'UPDATE_FEATURE_ENVIRONMENT', environment: 'nowhere' }] })).message,
      /no environment "nowhere"/,
    );
    assert.match((await bad({ permissions: [{ name: 'ADMIN' }] })).message, /not one a project role can hold/);
    assert.match((await bad({ type: 'root-custom', permissions: [{ name: 'MAKE_COFFEE' }] })).message, /not one a root role can hold/);
    await bad({ permissions: [{ environment: 'development' }] });
    await bad({ type: 'owner' });
    await bad({ name: '   ' });
    await bad({ permissions: Array.from({ length: 1001 }, () => ({ name: 'CREATE_FEATURE' })) });
    await bad({ name: 'editor' }, 409, 'NameExistsError');
    await bad({ permissions: [{ name: 'CREATE_FEATURE', surprise: true }] });
    const existing = await createRole({ type: 'custom', permissions: [] });
    await bad({ name: existing.name.toUpperCase() }, 409, 'NameExistsError');
    expectError(
      await ctx.admin.put(`/api/admin/roles/${existing.id}`, { name: existing.name, type: 'root-custom', permissions: [] }),
      400,
      'BadDataError',
    );
    expectError(await ctx.admin.put('/api/admin/user-admin/1', { rootRole: 99_999 }), 400, 'BadDataError');
    expectError(await ctx.admin.put(`${projectPath('default')}/users/1/roles`, { roles: [99_999] }), 400, 'BadDataError');
    // A custom root role is no project role, and the other way round.
    const rootOne = await createRole({ type: 'root-custom', permissions: [] });
    expectError(await ctx.admin.put(`${projectPath('default')}/users/1/roles`, { roles: [rootOne.id] }), 400, 'BadDataError');
    expectError(await ctx.admin.put('/api/admin/user-admin/1', { rootRole: existing.id }), 400, 'BadDataError');
    const after = await getOk<{ roles: Array<{ id: number }> }>(ctx.admin, '/api/admin/roles');
    assert.deepEqual(
      after.roles.map((role) => role.id),
      [...(before.roles as Array<{ id: number }>).map((role) => role.id), existing.id, rootOne.id],
    );
  });

  test('only Admins make roles; anyone signed in reads them', async () => {
    const viewer = await person();
    expectStatus(await viewer.browser.get('/api/admin/roles'), 200);
    expectError(
      await viewer.browser.post('/api/admin/roles', { name: uniqueName('x'), type: 'custom', permissions: [] }),
      403,
      'PermissionError',
    );
    expectError(await viewer.browser.post('/api/admin/roles/validate', { name: uniqueName('x') }), 403, 'PermissionError');
    expectStatus(await ctx.admin.post('/api/admin/roles/validate', { name: uniqueName('x') }), 200);
    expectError(await ctx.admin.post('/api/admin/roles/validate', { name: 'Owner' }), 409, 'NameExistsError');
  });
});
