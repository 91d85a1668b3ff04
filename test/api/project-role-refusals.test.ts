import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { expectRefused, expectStatus } from '../helpers/assertions.js';
import { createUserSession, uniqueName } from '../helpers/fixtures.js';
import { createFlag, createProject, featurePath, projectPath } from '../helpers/projects.js';
import { useTestApp, type Client } from '../helpers/test-app.js';

// The project routes added for Unleash's API, asked by someone whose only rights are a role in one project: each
// works in that project as far as the role goes, and is refused (403 naming the permission, nothing changed) beyond
// it, in another project or past the role.

const ctx = useTestApp();
const [OWNER, MEMBER] = [4, 5];

async function personIn(project: string, role: number): Promise<Client> {
  const person = await createUserSession(ctx, 'Viewer');
  expectStatus(await ctx.admin.put(`${projectPath(project)}/users/${person.id}/roles`, { roles: [role] }), 200);
  return ctx.withCookie(person.cookie);
}

const refused = (send: () => ReturnType<Client['get']>, permission: string) =>
  expectRefused(ctx, send, { status: 403, name: 'PermissionError' }).then((error) => assert.deepEqual(error.permissions, [permission]));

describe('project roles on the project routes', () => {
  test("a Member hands out the project's SDK tokens, but not another project's, and changes none of its settings", async () => {
    const [mine, theirs] = [await createProject(ctx), await createProject(ctx)];
    const member = await personIn(mine, MEMBER);
    const token = { tokenName: uniqueName('t'), type: 'client', environment: 'development' };
    const made = await member.post(`${projectPath(mine)}/api-tokens`, token);
    expectStatus(made, 201);
    expectStatus(await member.get(`${projectPath(mine)}/api-tokens`), 200);
    expectStatus(await member.delete(`${projectPath(mine)}/api-tokens/${(made.json() as { id: number }).id}`), 200);
    await refused(() => member.post(`${projectPath(theirs)}/api-tokens`, token), 'CREATE_PROJECT_API_TOKEN');
    await refused(() => member.get(`${projectPath(theirs)}/api-tokens`), 'READ_PROJECT_API_TOKEN');

    const rollout = { name: 'flexibleRollout', constraints: [], parameters: { rollout: '10', stickiness: 'default', groupId: '' } };
    await refused(() => member.post(`${projectPath(mine)}/environments/production/default-strategy`, rollout), 'UPDATE_PROJECT');
    await refused(() => member.post(`${projectPath(mine)}/context`, { name: uniqueName('field') }), 'UPDATE_PROJECT');
  });

  test("an Owner sets the project's default strategies and context fields, and no other project's", async () => {
    const [mine, theirs] = [await createProject(ctx), await createProject(ctx)];
    const owner = await personIn(mine, OWNER);
    const rollout = { name: 'flexibleRollout', constraints: [], parameters: { rollout: '10', stickiness: 'default', groupId: '' } };
    expectStatus(await owner.post(`${projectPath(mine)}/environments/production/default-strategy`, rollout), 200);
    expectStatus(await owner.post(`${projectPath(mine)}/context`, { name: uniqueName('field') }), 201);
    await refused(() => owner.post(`${projectPath(theirs)}/environments/production/default-strategy`, rollout), 'UPDATE_PROJECT');
    await refused(() => owner.post(`${projectPath(theirs)}/context`, { name: uniqueName('field') }), 'UPDATE_PROJECT');
  });

  test("a Member links the project's flags, and no other project's", async () => {
    const [mine, theirs] = [await createProject(ctx), await createProject(ctx)];
    const [myFlag, theirFlag] = [await createFlag(ctx, mine), await createFlag(ctx, theirs)];
    const member = await personIn(mine, MEMBER);
    expectStatus(await member.post(`${featurePath(mine, myFlag)}/link`, { url: 'https://wiki.example.com/a' }), 204);
    await refused(() => member.post(`${featurePath(theirs, theirFlag)}/link`, { url: 'https://wiki.example.com/b' }), 'UPDATE_FEATURE');
  });

  test('a Viewer of the instance reads the reports of any project but writes nothing through them', async () => {
    const project = await createProject(ctx);
    const viewer = ctx.withCookie((await createUserSession(ctx, 'Viewer')).cookie);
    for (const report of ['overview', 'status', 'insights', 'health-report', 'dora', 'applications', 'sdks/outdated', 'context']) {
      expectStatus(await viewer.get(`${projectPath(project)}/${report}`), 200);
    }
    await refused(() => viewer.post('/api/admin/metrics/applications/some-app', { description: 'x' }), 'ADMIN');
    await refused(() => viewer.put('/api/admin/feature-types/release/lifetime', { lifetimeDays: 1 }), 'ADMIN');
    await refused(
      () => viewer.post('/api/admin/invite-link/tokens', { name: 'x', expiresAt: new Date(Date.now() + 86_400_000).toISOString() }),
      'ADMIN',
    );
    await refused(() => viewer.get('/api/admin/instance-admin/statistics'), 'ADMIN');
    await refused(() => viewer.post('/api/admin/edge-clients', { name: 'x' }), 'ADMIN');
  });
});
