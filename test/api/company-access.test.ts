import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { expectError, expectRefused, expectStatus, getOk } from '../helpers/assertions.js';
import { eventFields, eventsSince, lastEventId } from '../helpers/events.js';
import { createUserSession, uniqueName } from '../helpers/fixtures.js';
import { createFlag, createProject, featurePath, projectPath } from '../helpers/projects.js';
import { createProtectedProject, moveTo, propose, proposePath, setState } from '../helpers/change-requests.js';
import { type Client, useTestApp } from '../helpers/test-app.js';

const ctx = useTestApp();

const OWNER = 4;
const MEMBER = 5;
const PROJECT_VIEWER = 6;

interface Group {
  id: number;
  name: string;
  description: string | null;
  mappingsSSO: string[];
  rootRole: number | null;
  createdBy: string | null;
  users: Array<{ createdBy: string | null; user: { id: number; username: string | null } }>;
  projects: string[];
  userCount: number;
}

async function person(rootRole: 'Admin' | 'Editor' | 'Viewer'): Promise<{ id: number; username: string; client: Client }> {
  const user = await createUserSession(ctx, rootRole);
  return { id: user.id, username: user.username, client: ctx.withCookie(user.cookie) };
}

async function createGroup(body: Record<string, unknown>): Promise<Group> {
  const response = await ctx.admin.post('/api/admin/groups', body);
  expectStatus(response, 201);
  return response.json() as Group;
}

const groupRead = (id: number) => () => getOk<Group>(ctx.admin, `/api/admin/groups/${id}`);

describe('groups', () => {
  test('create, read, update and delete a group, each recorded; members are listed with who added them', async () => {
    const alice = await person('Viewer');
    const bob = await person('Viewer');
    const before = await lastEventId(ctx);
    const name = uniqueName('team');
    const group = await createGroup({
      name,
      description: 'The DX squad',
      mappingsSSO: ['dx', ' dx ', 'platform'],
      rootRole: 2,
      users: [{ user: { id: alice.id } }],
    });
    assert.equal(group.name, name);
    assert.deepEqual(group.mappingsSSO, ['dx', 'platform']);
    assert.equal(group.rootRole, 2);
    assert.equal(group.createdBy, 'admin-token');
    assert.deepEqual(
      group.users.map((member) => [member.user.id, member.createdBy]),
      [[alice.id, 'admin-token']],
    );
    assert.equal(group.userCount, 1);

    const listed = (await getOk<{ groups: Group[] }>(ctx.admin, '/api/admin/groups')).groups.find((g) => g.id === group.id);
    assert.deepEqual(listed, group);

    const updated = await ctx.admin.put(`/api/admin/groups/${group.id}`, {
      name,
      mappingsSSO: ['dx'],
      rootRole: null,
      users: [{ user: { id: bob.id } }],
    });
    expectStatus(updated, 200);
    assert.deepEqual(
      (updated.json() as Group).users.map((member) => member.user.id),
      [bob.id],
    );
    assert.equal((updated.json() as Group).rootRole, null);
    expectStatus(await ctx.admin.delete(`/api/admin/groups/${group.id}`), 200);
    expectStatus(await ctx.admin.get(`/api/admin/groups/${group.id}`), 404);

    const events = await eventsSince(ctx, before);
    assert.deepEqual(
      eventFields(
        events.filter((event) => event.type.startsWith('group-')),
        'type',
        'createdBy',
      ),
      [
        { type: 'group-created', createdBy: 'admin-token' },
        { type: 'group-updated', createdBy: 'admin-token' },
        { type: 'group-deleted', createdBy: 'admin-token' },
      ],
    );
    const created = events.find((event) => event.type === 'group-created')!;
    assert.deepEqual((created.data as { users: unknown }).users, [{ id: alice.id, username: alice.username }]);
  });

  test("a group's root role adds to its members' own; removing them from the group takes it away", async () => {
    const viewer = await person('Viewer');
    const body = { id: uniqueName('proj'), name: 'by a group editor' };
    await expectRefused(ctx, () => viewer.client.post('/api/admin/projects', body), { status: 403, name: 'PermissionError' });
    const group = await createGroup({ name: uniqueName('editors'), rootRole: 2, users: [{ user: { id: viewer.id } }] });
    expectStatus(await viewer.client.post('/api/admin/projects', body), 201);
    expectStatus(await ctx.admin.put(`/api/admin/groups/${group.id}`, { name: group.name, rootRole: 2, users: [] }), 200);
    await expectRefused(ctx, () => viewer.client.post('/api/admin/projects', { ...body, id: uniqueName('proj') }), {
      status: 403,
      name: 'PermissionError',
    });
  });

  test('deleting a group ends what it allowed at the member’s next request, in the session already open', async () => {
    const viewer = await person('Viewer');
    const group = await createGroup({ name: uniqueName('admins'), rootRole: 1, users: [{ user: { id: viewer.id } }] });
    expectStatus(await viewer.client.get('/api/admin/user-admin'), 200);
    expectStatus(await ctx.admin.delete(`/api/admin/groups/${group.id}`), 200);
    expectError(await viewer.client.get('/api/admin/user-admin'), 403, 'PermissionError');
  });

  test('bad group input is refused with a 400 (or 409 for a taken name) and nothing changes', async () => {
    const group = await createGroup({ name: uniqueName('stable'), mappingsSSO: ['a'] });
    const read = groupRead(group.id);
    const cases: Array<[string, Record<string, unknown>, number, string, string?]> = [
      ['an unknown member', { name: group.name, users: [{ user: { id: 987654 } }] }, 400, 'BadDataError', '/body/users/0/user/id'],
      ['a root role that does not exist', { name: group.name, rootRole: 7 }, 400, 'BadDataError', '/body/rootRole'],
      ['an empty name', { name: '  ' }, 400, 'BadDataError', '/body/name'],
      ['an unknown field', { name: group.name, owner: 'me' }, 400, 'BadDataError'],
      [
        'more than 100 SSO mappings',
        { name: group.name, mappingsSSO: Array.from({ length: 101 }, (_, i) => `g${i}`) },
        400,
        'BadDataError',
      ],
    ];
    for (const [, body, status, name, path] of cases) {
      await expectRefused(ctx, () => ctx.admin.put(`/api/admin/groups/${group.id}`, body), { status, name, path }, read);
    }
    const other = await createGroup({ name: uniqueName('other') });
    await expectRefused(
      ctx,
      () => ctx.admin.put(`/api/admin/groups/${other.id}`, { name: group.name.toUpperCase() }),
      { status: 409, name: 'NameExistsError' },
      groupRead(other.id),
    );
    await expectRefused(ctx, () => ctx.admin.post('/api/admin/groups', { name: group.name }), { status: 409, name: 'NameExistsError' });
  });

  test('only Admins manage groups', async () => {
    const editor = await person('Editor');
    await expectRefused(ctx, () => editor.client.post('/api/admin/groups', { name: uniqueName('g') }), {
      status: 403,
      name: 'PermissionError',
    });
    expectStatus(await editor.client.get('/api/admin/groups'), 403);
  });
});

/**
 * One request per permission a project role can grant, in a project with one flag (and a parent flag, and a
 * strategy made by the admin token), with the status it answers when allowed. Run in this order: the last ones
 * archive the flag and try to delete the project.
 */
async function attempts(project: string) {
  const flag = await createFlag(ctx, project);
  const parent = await createFlag(ctx, project);
  const env = `${featurePath(project, flag)}/environments/development`;
  const strategy = (await ctx.admin.post(`${env}/strategies`, { name: 'default' })).json() as { id: string };
  const group = await createGroup({ name: uniqueName('holders') });
  return {
    CREATE_FEATURE: { allowed: 201, send: (c: Client) => c.post(`${projectPath(project)}/features`, { name: uniqueName('flag') }) },
    UPDATE_FEATURE: { allowed: 200, send: (c: Client) => c.put(featurePath(project, flag), { description: uniqueName('d') }) },
    'UPDATE_FEATURE (tags, by flag name)': {
      allowed: 201,
      send: (c: Client) => c.post(`/api/admin/features/${flag}/tags`, { type: 'simple', value: uniqueName('t') }),
    },
    UPDATE_FEATURE_ENVIRONMENT: { allowed: 200, send: (c: Client) => c.post(`${env}/on`) },
    CREATE_FEATURE_STRATEGY: { allowed: 200, send: (c: Client) => c.post(`${env}/strategies`, { name: 'default' }) },
    UPDATE_FEATURE_STRATEGY: {
      allowed: 200,
      send: (c: Client) => c.put(`${env}/strategies/${strategy.id}`, { name: 'default', title: uniqueName('title') }),
    },
    UPDATE_FEATURE_ENVIRONMENT_VARIANTS: {
      allowed: 200,
      send: (c: Client) => c.put(`${env}/variants`, [{ name: 'a', weight: 1000, weightType: 'variable', stickiness: 'default' }]),
    },
    UPDATE_FEATURE_DEPENDENCY: {
      allowed: 200,
      send: (c: Client) => c.post(`${featurePath(project, flag)}/dependencies`, { feature: parent }),
    },
    DELETE_FEATURE_STRATEGY: { allowed: 200, send: (c: Client) => c.delete(`${env}/strategies/${strategy.id}`) },
    UPDATE_PROJECT: { allowed: 200, send: (c: Client) => c.put(projectPath(project), { name: uniqueName('renamed') }) },
    PROJECT_USER_ACCESS_WRITE: {
      allowed: 200,
      send: (c: Client) => c.post(`${projectPath(project)}/access`, { roles: [PROJECT_VIEWER], users: [1] }),
    },
    PROJECT_GROUP_ACCESS_WRITE: {
      allowed: 200,
      send: (c: Client) => c.put(`${projectPath(project)}/groups/${group.id}/roles`, { roles: [MEMBER] }),
    },
    DELETE_FEATURE: { allowed: 202, send: (c: Client) => c.delete(featurePath(project, flag)) },
    // Allowed, the project is not deleted: it still has flags.
    DELETE_PROJECT: { allowed: 409, send: (c: Client) => c.delete(projectPath(project)) },
  };
}

type Attempt = keyof Awaited<ReturnType<typeof attempts>>;

const MEMBER_MAY: Attempt[] = [
  'CREATE_FEATURE',
  'UPDATE_FEATURE',
  'UPDATE_FEATURE (tags, by flag name)',
  'UPDATE_FEATURE_ENVIRONMENT',
  'CREATE_FEATURE_STRATEGY',
  'UPDATE_FEATURE_STRATEGY',
  'UPDATE_FEATURE_ENVIRONMENT_VARIANTS',
  'UPDATE_FEATURE_DEPENDENCY',
  'DELETE_FEATURE_STRATEGY',
  'DELETE_FEATURE',
];
const ALLOWED: Record<'Owner' | 'Member' | 'Viewer', Attempt[]> = {
  Owner: [...MEMBER_MAY, 'UPDATE_PROJECT', 'PROJECT_USER_ACCESS_WRITE', 'PROJECT_GROUP_ACCESS_WRITE', 'DELETE_PROJECT'],
  Member: MEMBER_MAY,
  Viewer: [],
};
const ROLE_IDS = { Owner: OWNER, Member: MEMBER, Viewer: PROJECT_VIEWER };

describe('project roles', () => {
  for (const role of ['Owner', 'Member', 'Viewer'] as const) {
    test(`a root Viewer who is ${role} of a project: each permission allowed or refused there, and refused in another project`, async () => {
      const user = await person('Viewer');
      const project = await createProject(ctx);
      const elsewhere = await createProject(ctx);
      expectStatus(await ctx.admin.post(`${projectPath(project)}/access`, { roles: [ROLE_IDS[role]], users: [user.id] }), 200);
      const here = await attempts(project);
      const there = await attempts(elsewhere);
      for (const [permission, attempt] of Object.entries(here) as Array<[Attempt, (typeof here)[Attempt]]>) {
        const elsewhereResponse = await there[permission].send(user.client);
        assert.equal(elsewhereResponse.statusCode, 403, `${role} of ${project} may not use ${permission} in ${elsewhere}`);
        const response = await attempt.send(user.client);
        const expected = ALLOWED[role].includes(permission) ? attempt.allowed : 403;
        assert.equal(response.statusCode, expected, `${role} and ${permission}: got ${response.statusCode} ${response.body}`);
      }
    });
  }

  test("/api/admin/user lists a project role's permissions with their project", async () => {
    const user = await person('Viewer');
    const project = await createProject(ctx);
    expectStatus(await ctx.admin.post(`${projectPath(project)}/access`, { roles: [MEMBER], users: [user.id] }), 200);
    const me = await getOk<{ permissions: Array<{ permission: string; project?: string }> }>(user.client, '/api/admin/user');
    assert.deepEqual(
      me.permissions.filter((entry) => entry.project === project).map((entry) => entry.permission),
      [
        'CREATE_FEATURE',
        'UPDATE_FEATURE',
        'DELETE_FEATURE',
        'UPDATE_FEATURE_ENVIRONMENT',
        'CREATE_FEATURE_STRATEGY',
        'UPDATE_FEATURE_STRATEGY',
        'DELETE_FEATURE_STRATEGY',
        'UPDATE_FEATURE_ENVIRONMENT_VARIANTS',
        'UPDATE_FEATURE_DEPENDENCY',
        'APPROVE_CHANGE_REQUEST',
        'APPLY_CHANGE_REQUEST',
        'READ_PROJECT_API_TOKEN',
        'CREATE_PROJECT_API_TOKEN',
        'DELETE_PROJECT_API_TOKEN',
      ],
    );
    assert.deepEqual(
      me.permissions.filter((entry) => entry.project === undefined).map((entry) => entry.permission),
      ['READ'],
    );
  });

  test("a group's project role reaches its members, and leaving the group takes it away", async () => {
    const user = await person('Viewer');
    const project = await createProject(ctx);
    const group = await createGroup({ name: uniqueName('squad'), users: [{ user: { id: user.id } }] });
    const create = () => user.client.post(`${projectPath(project)}/features`, { name: uniqueName('flag') });
    expectStatus(await create(), 403);
    expectStatus(await ctx.admin.post(`${projectPath(project)}/access`, { roles: [MEMBER], groups: [group.id] }), 200);
    expectStatus(await create(), 201);
    const access = await getOk<{ groups: Array<{ id: number; roles: number[]; userCount: number }> }>(
      ctx.admin,
      `${projectPath(project)}/access`,
    );
    assert.deepEqual(access.groups, [{ id: group.id, name: group.name, description: null, userCount: 1, roles: [MEMBER], roleId: MEMBER }]);
    expectStatus(await ctx.admin.put(`/api/admin/groups/${group.id}`, { name: group.name, users: [] }), 200);
    expectStatus(await create(), 403);
  });

  test('roles are set, replaced and removed per user and per group, each recorded on the project', async () => {
    const user = await person('Viewer');
    const group = await createGroup({ name: uniqueName('g') });
    const project = await createProject(ctx);
    const before = await lastEventId(ctx);
    expectStatus(await ctx.admin.post(`${projectPath(project)}/access`, { roles: [MEMBER], users: [user.id], groups: [group.id] }), 200);
    expectStatus(await ctx.admin.put(`${projectPath(project)}/users/${user.id}/roles`, { roles: [OWNER] }), 200);
    const access = await getOk<{ users: Array<{ id: number; roles: number[] }>; roles: Array<{ id: number; name: string }> }>(
      ctx.admin,
      `${projectPath(project)}/access`,
    );
    assert.deepEqual(
      access.users.map((u) => [u.id, u.roles]),
      [[user.id, [OWNER]]],
    );
    assert.deepEqual(
      access.roles.map((r) => [r.id, r.name]),
      [
        [OWNER, 'Owner'],
        [MEMBER, 'Member'],
        [PROJECT_VIEWER, 'Viewer'],
      ],
    );
    expectStatus(await ctx.admin.delete(`${projectPath(project)}/users/${user.id}/roles`), 200);
    expectStatus(await ctx.admin.delete(`${projectPath(project)}/groups/${group.id}/roles`), 200);
    expectStatus(await ctx.admin.delete(`${projectPath(project)}/groups/${group.id}/roles`), 404);
    const after = await getOk<{ users: unknown[]; groups: unknown[] }>(ctx.admin, `${projectPath(project)}/access`);
    assert.deepEqual([after.users, after.groups], [[], []]);
    assert.deepEqual(eventFields(await eventsSince(ctx, before), 'type', 'project'), [
      { type: 'project-access-added', project },
      { type: 'project-access-user-roles-updated', project },
      { type: 'project-access-user-roles-deleted', project },
      { type: 'project-access-group-roles-deleted', project },
    ]);
  });

  test('bad access input is a 400 naming the entry, and nothing is granted', async () => {
    const project = await createProject(ctx);
    const user = await person('Viewer');
    const read = () => getOk(ctx.admin, `${projectPath(project)}/access`);
    const cases: Array<[Record<string, unknown>, number, string, string?]> = [
      [{ roles: [99], users: [user.id] }, 400, 'BadDataError', '/body/roles/0'],
      [{ roles: [], users: [user.id] }, 400, 'BadDataError', '/body/roles'],
      [{ roles: [MEMBER], users: [987654] }, 400, 'BadDataError', '/body/users/0'],
      [{ roles: [MEMBER], groups: [987654] }, 400, 'BadDataError', '/body/groups/0'],
      [{ roles: [MEMBER] }, 400, 'BadDataError', '/body/users'],
      [{ roles: [MEMBER], users: Array.from({ length: 1001 }, (_, i) => i + 1) }, 400, 'BadDataError', '/body/users'],
    ];
    for (const [body, status, name, path] of cases) {
      await expectRefused(ctx, () => ctx.admin.post(`${projectPath(project)}/access`, body), { status, name, path }, read);
    }
    await expectRefused(ctx, () => ctx.admin.put(`${projectPath(project)}/users/${user.id}/roles`, { roles: [1] }), {
      status: 400,
      name: 'BadDataError',
      path: '/body/roles/0',
    });
    expectStatus(await ctx.admin.post(`${projectPath('no-such-project')}/access`, { roles: [MEMBER], users: [user.id] }), 404);
  });

  test('an Editor who creates a project owns it and may decide who else works in it; another Editor may not', async () => {
    const editor = await person('Editor');
    const other = await person('Editor');
    const viewer = await person('Viewer');
    const project = uniqueName('mine');
    expectStatus(await editor.client.post('/api/admin/projects', { id: project, name: project }), 201);
    const access = await getOk<{ users: Array<{ id: number; roles: number[] }> }>(ctx.admin, `${projectPath(project)}/access`);
    assert.deepEqual(
      access.users.map((u) => [u.id, u.roles]),
      [[editor.id, [OWNER]]],
    );
    expectStatus(await editor.client.post(`${projectPath(project)}/access`, { roles: [MEMBER], users: [viewer.id] }), 200);
    await expectRefused(ctx, () => other.client.post(`${projectPath(project)}/access`, { roles: [MEMBER], users: [other.id] }), {
      status: 403,
      name: 'PermissionError',
    });
  });

  test('change requests follow project roles: a Member proposes, another approves and applies; a project Viewer may not approve', async () => {
    const { project, flags } = await createProtectedProject(ctx);
    const [author, reviewer, onlooker] = [await person('Viewer'), await person('Viewer'), await person('Viewer')];
    expectStatus(await ctx.admin.post(`${projectPath(project)}/access`, { roles: [MEMBER], users: [author.id, reviewer.id] }), 200);
    expectStatus(await ctx.admin.post(`${projectPath(project)}/access`, { roles: [PROJECT_VIEWER], users: [onlooker.id] }), 200);
    const draft = await propose(author.client, project, { feature: flags[0], action: 'updateEnabled', payload: { enabled: true } });
    await moveTo(author.client, project, draft.id, { state: 'In review' });
    await expectRefused(ctx, () => setState(onlooker.client, project, draft.id, { state: 'Approved' }), {
      status: 403,
      name: 'PermissionError',
    });
    assert.equal((await moveTo(reviewer.client, project, draft.id, { state: 'Approved' })).state, 'Approved');
    assert.equal((await moveTo(reviewer.client, project, draft.id, { state: 'Applied' })).state, 'Applied');
    const other = await createProtectedProject(ctx);
    await expectRefused(
      ctx,
      () =>
        author.client.post(proposePath(other.project), { feature: other.flags[0], action: 'updateEnabled', payload: { enabled: true } }),
      { status: 403, name: 'PermissionError' },
    );
  });

  test('moving a flag needs a role in the project it moves to', async () => {
    const user = await person('Viewer');
    const from = await createProject(ctx);
    const to = await createProject(ctx);
    const flag = await createFlag(ctx, from);
    expectStatus(await ctx.admin.post(`${projectPath(from)}/access`, { roles: [MEMBER], users: [user.id] }), 200);
    await expectRefused(ctx, () => user.client.post(`${featurePath(from, flag)}/changeProject`, { newProjectId: to }), {
      status: 403,
      name: 'PermissionError',
    });
    expectStatus(await ctx.admin.post(`${projectPath(to)}/access`, { roles: [MEMBER], users: [user.id] }), 200);
    expectStatus(await user.client.post(`${featurePath(from, flag)}/changeProject`, { newProjectId: to }), 200);
  });
});

describe('service accounts', () => {
  test('a service account acts through its own token, under its own name, and is listed with its last use', async () => {
    const before = await lastEventId(ctx);
    const username = uniqueName('ci-bot');
    const created = await ctx.admin.post('/api/admin/service-account', { username, name: 'CI pipeline', rootRole: 2 });
    expectStatus(created, 201);
    const account = created.json() as { id: number; accountType: string; tokens: unknown[]; seenAt: string | null };
    assert.equal(account.accountType, 'Service Account');
    assert.deepEqual(account.tokens, []);
    const tokenResponse = await ctx.admin.post(`/api/admin/service-account/${account.id}/token`, {
      description: 'deploys',
      expiresAt: new Date(ctx.clock.now().getTime() + 86_400_000).toISOString(),
    });
    expectStatus(tokenResponse, 201);
    const token = tokenResponse.json() as { id: number; secret: string };
    assert.match(token.secret, /^user:/);

    const project = await createProject(ctx);
    const bot = ctx.as(token.secret);
    expectStatus(await bot.post(`${projectPath(project)}/features`, { name: uniqueName('from-ci') }), 201);
    const events = await eventsSince(ctx, before);
    assert.deepEqual(
      events.filter((event) => event.type === 'feature-created').map((event) => event.createdBy),
      [username],
    );
    for (const event of events) assert.ok(!JSON.stringify(event).includes(token.secret), `${event.type} must not carry the secret`);

    const listed = (
      await getOk<{
        serviceAccounts: Array<{
          id: number;
          seenAt: string | null;
          tokens: Array<{ id: number; seenAt: string | null; secret?: string }>;
        }>;
      }>(ctx.admin, '/api/admin/service-account')
    ).serviceAccounts.find((entry) => entry.id === account.id)!;
    assert.equal(listed.seenAt, ctx.clock.now().toISOString());
    assert.deepEqual(
      listed.tokens.map((t) => [t.id, t.seenAt, t.secret]),
      [[token.id, ctx.clock.now().toISOString(), undefined]],
    );
    const users = await getOk<{ users: Array<{ id: number }> }>(ctx.admin, '/api/admin/user-admin');
    assert.ok(!users.users.some((user) => user.id === account.id), 'service accounts are not listed among users');
    expectStatus(await ctx.admin.get(`/api/admin/user-admin/${account.id}`), 404);

    expectStatus(await ctx.admin.delete(`/api/admin/service-account/${account.id}/token/${token.id}`), 200);
    expectStatus(await bot.get('/api/admin/projects'), 401);
    expectStatus(await ctx.admin.delete(`/api/admin/service-account/${account.id}`), 200);
    assert.deepEqual(
      (await eventsSince(ctx, before))
        .filter((event) => event.type.startsWith('service-account-') || event.type.startsWith('pat-'))
        .map((event) => event.type),
      ['service-account-created', 'pat-created', 'pat-deleted', 'service-account-deleted'],
    );
  });

  test("a service account's token cannot make tokens for itself", async () => {
    const created = await ctx.admin.post('/api/admin/service-account', { username: uniqueName('viewer-bot'), rootRole: 3 });
    expectStatus(created, 201);
    const account = created.json() as { id: number };
    const expiresAt = new Date(ctx.clock.now().getTime() + 86_400_000).toISOString();
    const token = (await ctx.admin.post(`/api/admin/service-account/${account.id}/token`, { description: 'reads', expiresAt })).json() as {
      id: number;
      secret: string;
    };
    const bot = ctx.as(token.secret);
    const refused = await expectRefused(ctx, () => bot.post('/api/admin/user/tokens', { description: 'mine', expiresAt }), {
      status: 403,
      name: 'PermissionError',
    });
    assert.match(refused.message, /made by an Admin/);
    const stored = await ctx.db.selectFrom('personal_access_tokens').select('id').where('user_id', '=', account.id).execute();
    assert.deepEqual(stored, [{ id: token.id }], 'only the token the Admin made');
  });

  test('a service account cannot sign in with a password', async () => {
    const username = uniqueName('robot');
    expectStatus(await ctx.admin.post('/api/admin/service-account', { username, rootRole: 3 }), 201);
    expectStatus(await ctx.as().post('/auth/simple/login', { username, password: 'anything-at-all-1A' }), 401);
  });

  test('bad service account input is refused and nothing changes', async () => {
    const username = uniqueName('svc');
    const created = await ctx.admin.post('/api/admin/service-account', { username, rootRole: 3 });
    expectStatus(created, 201);
    const id = (created.json() as { id: number }).id;
    const read = () => getOk(ctx.admin, `/api/admin/service-account/${id}`);
    await expectRefused(ctx, () => ctx.admin.post('/api/admin/service-account', { username, rootRole: 3 }), {
      status: 409,
      name: 'NameExistsError',
    });
    await expectRefused(ctx, () => ctx.admin.post('/api/admin/service-account', { username: 'two words', rootRole: 3 }), {
      status: 400,
      name: 'BadDataError',
      path: '/body/username',
    });
    await expectRefused(
      ctx,
      () => ctx.admin.put(`/api/admin/service-account/${id}`, { rootRole: 9 }),
      { status: 400, name: 'BadDataError', path: '/body/rootRole' },
      read,
    );
    await expectRefused(
      ctx,
      () => ctx.admin.post(`/api/admin/service-account/${id}/token`, { description: 'old', expiresAt: '2000-01-01T00:00:00.000Z' }),
      { status: 400, name: 'BadDataError', path: '/body/expiresAt' },
      read,
    );
    expectStatus(await ctx.admin.put('/api/admin/service-account/987654', { name: 'x' }), 404);
    const editor = await person('Editor');
    await expectRefused(ctx, () => editor.client.post('/api/admin/service-account', { username: uniqueName('x'), rootRole: 3 }), {
      status: 403,
      name: 'PermissionError',
    });
  });
});
