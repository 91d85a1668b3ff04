import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { expectError, expectStatus } from '../helpers/assertions.js';
import { createUserSession, uniqueName } from '../helpers/fixtures.js';
import { createFlag, featurePath, projectPath } from '../helpers/projects.js';
import { useTestApp, type Client } from '../helpers/test-app.js';

// A private project is seen by its members and Admins only: to anyone else it does not exist, in its own paths, in
// the project list, the feature search and the playground.

const ctx = useTestApp();
const MEMBER = 5;

async function privateProjectWithFlag(): Promise<{ project: string; flag: string }> {
  const project = uniqueName('secret');
  expectStatus(await ctx.admin.post('/api/admin/projects', { id: project, name: project, mode: 'private' }), 201);
  const flag = await createFlag(ctx, project, { strategies: [{ name: 'default' }] });
  return { project, flag };
}

async function signedIn(rootRole: 'Editor' | 'Viewer'): Promise<{ id: number; client: Client }> {
  const person = await createUserSession(ctx, rootRole);
  return { id: person.id, client: ctx.withCookie(person.cookie) };
}

const projectIds = (response: { json(): unknown }) => (response.json() as { projects: { id: string }[] }).projects.map((p) => p.id);
const searchedNames = (response: { json(): unknown }) =>
  (response.json() as { features: { name: string }[] }).features.map((feature) => feature.name);
const playgroundNames = (response: { json(): unknown }) =>
  (response.json() as { features: { name: string }[] }).features.map((feature) => feature.name);

describe('private projects', () => {
  test("an Editor who is no member gets a 404 for the project's paths and its flags' paths, reads and writes alike", async () => {
    const { project, flag } = await privateProjectWithFlag();
    const editor = (await signedIn('Editor')).client;
    for (const path of [
      projectPath(project),
      `${projectPath(project)}/features`,
      featurePath(project, flag),
      `/api/admin/events/${flag}`,
    ]) {
      expectError(await editor.get(path), 404, 'NotFoundError');
    }
    expectError(await editor.post(`${featurePath(project, flag)}/environments/development/off`), 404, 'NotFoundError');
    // Nothing changed: the flag is still on.
    const stored = (await ctx.admin.get(featurePath(project, flag))).json() as { environments: { name: string; enabled: boolean }[] };
    assert.equal(stored.environments.find((env) => env.name === 'development')?.enabled, true);
  });

  test('the project list, the feature search and the playground leave it out for a non-member, not for a member or an Admin', async () => {
    const { project, flag } = await privateProjectWithFlag();
    const open = await createFlag(ctx, 'default', { name: uniqueName(`${flag}-open`), strategies: [{ name: 'default' }] });
    const outsider = (await signedIn('Viewer')).client;
    const member = await signedIn('Viewer');
    expectStatus(await ctx.admin.put(`${projectPath(project)}/users/${member.id}/roles`, { roles: [MEMBER] }), 200);

    const search = `/api/admin/search/features?query=${flag}`;
    const play = { environment: 'development', context: { appName: 'test' } };
    const outsiderPlayground = playgroundNames(await outsider.post('/api/admin/playground', play));
    assert.equal(projectIds(await outsider.get('/api/admin/projects')).includes(project), false);
    assert.deepEqual(searchedNames(await outsider.get(search)), [open]);
    assert.equal(outsiderPlayground.includes(flag), false);
    assert.equal(outsiderPlayground.includes(open), true);

    for (const client of [member.client, ctx.admin]) {
      assert.equal(projectIds(await client.get('/api/admin/projects')).includes(project), true);
      assert.deepEqual(searchedNames(await client.get(search)).sort(), [flag, open].sort());
      assert.equal(playgroundNames(await client.post('/api/admin/playground', play)).includes(flag), true);
      expectStatus(await client.get(featurePath(project, flag)), 200);
    }
  });
});
