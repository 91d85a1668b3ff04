import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { expectError, expectRefused, expectStatus, getOk } from '../helpers/assertions.js';
import { createUserSession } from '../helpers/fixtures.js';
import { createProject, projectPath } from '../helpers/projects.js';
import { useTestApp } from '../helpers/test-app.js';

// What Unleash's admin UI reads of the person signed in (profile, roles) and remembers of them (feedback answered,
// splash screens seen), per person and bounded.

const OWNER = 4;
const MEMBER = 5;

interface Role {
  id: number;
  name: string;
  type: string;
  project: string | null;
}

describe('the profile and roles of the person signed in', () => {
  const ctx = useTestApp();

  test('the profile names the root role, the projects and groups, and whether there is a password to change', async () => {
    const person = await createUserSession(ctx, 'Editor');
    const own = await createProject(ctx);
    const throughGroup = await createProject(ctx);
    await createProject(ctx);
    expectStatus(await ctx.admin.post(`${projectPath(own)}/access`, { roles: [MEMBER], users: [person.id] }), 200);
    const group = (await ctx.admin.post('/api/admin/groups', { name: `platform-${own}`, users: [{ user: { id: person.id } }] })).json() as {
      id: number;
    };
    expectStatus(await ctx.admin.post(`${projectPath(throughGroup)}/access`, { roles: [OWNER], groups: [group.id] }), 200);
    const client = ctx.withCookie(person.cookie);

    const profile = await getOk<{
      rootRole: Role;
      projects: string[];
      groups: Array<{ id: number; name: string }>;
      subscriptions: string[];
      features: unknown[];
      canChangePassword: boolean;
    }>(client, '/api/admin/user/profile');
    assert.deepEqual(
      { ...profile, rootRole: { id: profile.rootRole.id, name: profile.rootRole.name, type: profile.rootRole.type } },
      {
        rootRole: { id: 2, name: 'Editor', type: 'root' },
        projects: [own, throughGroup].sort(),
        groups: [{ id: group.id, name: `platform-${own}`, description: null }],
        subscriptions: [],
        features: [],
        canChangePassword: true,
      },
    );

    const all = await getOk<{ version: number; roles: Role[] }>(client, '/api/admin/user/roles');
    assert.deepEqual(
      all.roles.map(({ name, type, project }) => ({ name, type, project })),
      [
        { name: 'Editor', type: 'root', project: null },
        ...[
          { name: 'Member', type: 'project', project: own },
          { name: 'Owner', type: 'project', project: throughGroup },
        ].sort((a, b) => a.project.localeCompare(b.project)),
      ],
    );
    const inOne = await getOk<{ roles: Role[] }>(client, `/api/admin/user/roles?projectId=${throughGroup}`);
    assert.deepEqual(
      inOne.roles.map(({ name, project }) => ({ name, project })),
      [{ name: 'Owner', project: throughGroup }],
    );
    expectError(await client.get('/api/admin/user/roles?projectId=not%20a%20name'), 400, 'BadDataError');
  });

  test('a token has no profile: a 400 that says so', async () => {
    expectError(await ctx.admin.get('/api/admin/user/profile'), 400, 'BadDataError');
    expectError(await ctx.admin.get('/api/admin/user/roles'), 400, 'BadDataError');
  });
});

describe('what the admin UI remembers of a person', () => {
  const ctx = useTestApp();

  test('feedback answered and splash screens seen come back with the user, for that person only', async () => {
    const person = await createUserSession(ctx, 'Viewer');
    const other = await createUserSession(ctx, 'Viewer');
    const client = ctx.withCookie(person.cookie);

    const given = await client.post('/api/admin/feedback', { feedbackId: 'pnps' });
    expectStatus(given, 200);
    const answer = given.json() as { userId: number; feedbackId: string; neverShow: boolean; given: string | null };
    assert.deepEqual([answer.userId, answer.feedbackId, answer.neverShow, typeof answer.given], [person.id, 'pnps', false, 'string']);
    const declined = await client.put('/api/admin/feedback/pnps', { neverShow: true });
    expectStatus(declined, 200);
    assert.deepEqual((declined.json() as { neverShow: boolean; given: string }).neverShow, true);
    assert.equal((declined.json() as { given: string }).given, answer.given, 'when it was given stays');
    const seen = await client.post('/api/admin/splash/new-navigation');
    expectStatus(seen, 200);
    assert.deepEqual(seen.json(), { userId: person.id, splashId: 'new-navigation', seen: true });

    const me = await getOk<{ feedback: Array<{ feedbackId: string; neverShow: boolean }>; splash: Record<string, boolean> }>(
      client,
      '/api/admin/user',
    );
    assert.deepEqual(
      me.feedback.map(({ feedbackId, neverShow }) => ({ feedbackId, neverShow })),
      [{ feedbackId: 'pnps', neverShow: true }],
    );
    assert.deepEqual(me.splash, { 'new-navigation': true });
    const theirs = await getOk<{ feedback: unknown[]; splash: Record<string, boolean> }>(ctx.withCookie(other.cookie), '/api/admin/user');
    assert.deepEqual([theirs.feedback, theirs.splash], [[], {}]);
  });

  test('bad input is a 400; feedback is your own; a person keeps at most 100 of each', async () => {
    const person = await createUserSession(ctx, 'Viewer');
    const client = ctx.withCookie(person.cookie);
    expectError(await client.post('/api/admin/feedback', {}), 400, 'BadDataError');
    expectError(await client.post('/api/admin/feedback', { feedbackId: 'x'.repeat(101) }), 400, 'BadDataError');
    expectError(await client.post('/api/admin/feedback', { feedbackId: 'pnps', extra: 1 }), 400, 'BadDataError');
    expectError(await client.put('/api/admin/feedback/pnps', { given: 'yesterday' }), 400, 'BadDataError');
    await expectRefused(ctx, () => client.put('/api/admin/feedback/pnps', { userId: person.id + 1000 }), {
      status: 400,
      name: 'BadDataError',
      path: '/body/userId',
    });
    expectError(await ctx.admin.post('/api/admin/splash/tour'), 400, 'BadDataError');
    for (let index = 0; index < 100; index++) expectStatus(await client.post(`/api/admin/splash/screen-${index}`), 200);
    expectError(await client.post('/api/admin/splash/one-too-many'), 400, 'BadDataError');
    // One already seen is seen again without room.
    expectStatus(await client.post('/api/admin/splash/screen-0'), 200);
    const me = await getOk<{ splash: Record<string, boolean> }>(client, '/api/admin/user');
    assert.equal(Object.keys(me.splash).length, 100);
    assert.equal(me.splash['one-too-many'], undefined);
  });
});
