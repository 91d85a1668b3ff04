import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { expectError, expectStatus, assertEvents, expectRefused } from '../helpers/assertions.js';
import { eventsSince, lastEventId } from '../helpers/events.js';
import { createUserSession, uniqueName } from '../helpers/fixtures.js';
import { useTestApp } from '../helpers/test-app.js';

const ctx = useTestApp();

async function createProject(body: Record<string, unknown>) {
  const response = await ctx.admin.post('/api/admin/projects', body);
  expectStatus(response, 201);
  return response.json() as { id: string; name: string; environments: string[] };
}

async function projectIds(): Promise<string[]> {
  const response = await ctx.admin.get('/api/admin/projects');
  return (response.json() as { projects: Array<{ id: string }> }).projects.map((p) => p.id);
}

describe('a fresh install', () => {
  test('has the default project with development and production', async () => {
    const response = await ctx.admin.get('/api/admin/projects/default');
    expectStatus(response, 200);
    assert.deepEqual(
      { ...(response.json() as object), createdAt: undefined },
      {
        id: 'default',
        name: 'Default',
        description: 'Default project',
        mode: 'open',
        defaultStickiness: 'default',
        environments: ['development', 'production'],
        createdAt: undefined,
        updatedAt: null,
      },
    );
  });
});

describe('creating a project', () => {
  test('returns it, lists it, and records project-created with the project as data', async () => {
    const id = uniqueName('shop');
    const before = await lastEventId(ctx);
    const created = await createProject({ id, name: 'Shop', description: 'The shop', mode: 'protected' });
    assert.equal(created.id, id);
    assert.deepEqual(created.environments, ['development', 'production']);

    const listed = (await ctx.admin.get('/api/admin/projects')).json() as { version: number; projects: unknown[] };
    assert.equal(listed.version, 1);
    assert.deepEqual(
      listed.projects.find((p) => (p as { id: string }).id === id),
      created,
    );

    assertEvents(await eventsSince(ctx, before), [
      { type: 'project-created', featureName: null, project: id, data: created, preData: null },
    ]);
  });

  test('with chosen environments enables only those', async () => {
    const created = await createProject({ id: uniqueName('p'), name: 'P', environments: ['production'] });
    assert.deepEqual(created.environments, ['production']);
  });

  test('without an id derives it from the name, as Unleash does', async () => {
    const name = `My Shop ${uniqueName('x')}`;
    const created = await createProject({ name });
    assert.equal(created.id, name.toLowerCase().replace(/ /g, '-'));
  });

  test('as an Editor records the user as creator', async () => {
    const editor = await createUserSession(ctx, 'Editor');
    const before = await lastEventId(ctx);
    const id = uniqueName('ed');
    expectStatus(await ctx.withCookie(editor.cookie).post('/api/admin/projects', { id, name: 'E' }), 201);
    const [event] = await eventsSince(ctx, before);
    assert.equal(event!.createdBy, editor.username);
    assert.equal(event!.createdByUserId, editor.id);
  });
});

describe('bad input when creating a project', () => {
  const cases: Array<[string, unknown, number, string, string]> = [
    ['an invalid id', { id: 'has space', name: 'x' }, 400, 'BadDataError', '/body/id'],
    ['an id of 101 characters', { id: 'a'.repeat(101), name: 'x' }, 400, 'BadDataError', '/body/id'],
    ['the id ".."', { id: '..', name: 'x' }, 400, 'BadDataError', '/body/id'],
    ['a missing name', { id: 'no-name' }, 400, 'BadDataError', '/body/name'],
    ['a name of the wrong type', { id: 'typed', name: 42 }, 400, 'BadDataError', '/body/name'],
    ['an unknown property', { id: 'extra', name: 'x', owner: 'me' }, 400, 'BadDataError', '/body/owner'],
    ['an unknown mode', { id: 'moded', name: 'x', mode: 'secret' }, 400, 'BadDataError', '/body/mode'],
    ['an empty environment list', { id: 'empty', name: 'x', environments: [] }, 400, 'BadDataError', '/body/environments'],
  ];
  for (const [label, body, status, name, path] of cases) {
    test(`rejects ${label}`, async () => {
      await expectRefused(ctx, () => ctx.admin.post('/api/admin/projects', body), { status, name, path }, projectIds);
    });
  }

  test('rejects an unknown environment with 404 and stores nothing', async () => {
    const id = uniqueName('noenv');
    const before = await lastEventId(ctx);
    const error = expectError(
      await ctx.admin.post('/api/admin/projects', { id, name: 'x', environments: ['development', 'moon'] }),
      404,
      'NotFoundError',
    );
    assert.match(error.message, /"moon"/);
    expectError(await ctx.admin.get(`/api/admin/projects/${id}`), 404, 'NotFoundError');
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('rejects a duplicate id with 409 NameExistsError', async () => {
    const id = uniqueName('dup');
    await createProject({ id, name: 'First' });
    const before = await lastEventId(ctx);
    const error = expectError(await ctx.admin.post('/api/admin/projects', { id, name: 'Second' }), 409, 'NameExistsError');
    assert.match(error.message, new RegExp(id));
    const stored = (await ctx.admin.get(`/api/admin/projects/${id}`)).json() as { name: string };
    assert.equal(stored.name, 'First');
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('rejects a body with several problems, listing each', async () => {
    const error = expectError(await ctx.admin.post('/api/admin/projects', { id: 'a b', foo: 1 }), 400, 'BadDataError');
    assert.deepEqual(error.details.map((d) => d.path).sort(), ['/body/foo', '/body/id', '/body/name']);
    assert.match(error.details.find((d) => d.path === '/body/id')!.message, /got "a b"/);
  });
});

describe('updating a project', () => {
  test('records project-updated with before and after', async () => {
    const id = uniqueName('upd');
    const created = await createProject({ id, name: 'Before', description: 'old' });
    const before = await lastEventId(ctx);
    const response = await ctx.admin.put(`/api/admin/projects/${id}`, { name: 'After', description: 'new' });
    expectStatus(response, 200);
    const updated = response.json() as { name: string; description: string; updatedAt: string };
    assert.equal(updated.name, 'After');
    assert.equal(updated.description, 'new');
    assert.ok(updated.updatedAt);

    assertEvents(await eventsSince(ctx, before), [
      { type: 'project-updated', featureName: null, project: id, data: updated, preData: created },
    ]);
  });

  test('with the same values changes nothing and records nothing', async () => {
    const id = uniqueName('same');
    await createProject({ id, name: 'Same', description: 'd' });
    const before = await lastEventId(ctx);
    const response = await ctx.admin.put(`/api/admin/projects/${id}`, { name: 'Same', description: 'd' });
    expectStatus(response, 200);
    assert.equal((response.json() as { updatedAt: unknown }).updatedAt, null);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('rejects a body id that differs from the path, and an unknown project', async () => {
    const id = uniqueName('ren');
    await createProject({ id, name: 'R' });
    const error = expectError(await ctx.admin.put(`/api/admin/projects/${id}`, { id: 'other', name: 'R2' }), 400, 'BadDataError');
    assert.equal(error.details[0]!.path, '/body/id');
    expectError(await ctx.admin.put('/api/admin/projects/does-not-exist', { name: 'x' }), 404, 'NotFoundError');
  });

  test('is refused to a Viewer, changing nothing', async () => {
    const id = uniqueName('view');
    await createProject({ id, name: 'Kept' });
    const viewer = await createUserSession(ctx, 'Viewer');
    const before = await lastEventId(ctx);
    const error = expectError(
      await ctx.withCookie(viewer.cookie).put(`/api/admin/projects/${id}`, { name: 'Changed' }),
      403,
      'PermissionError',
    );
    assert.deepEqual(error.permissions, ['UPDATE_PROJECT']);
    assert.equal(((await ctx.admin.get(`/api/admin/projects/${id}`)).json() as { name: string }).name, 'Kept');
    assert.deepEqual(await eventsSince(ctx, before), []);
  });
});

describe('deleting a project', () => {
  test('removes it and records project-deleted with the project as preData', async () => {
    const id = uniqueName('del');
    const created = await createProject({ id, name: 'Doomed' });
    const before = await lastEventId(ctx);
    expectStatus(await ctx.admin.delete(`/api/admin/projects/${id}`), 200);
    expectError(await ctx.admin.get(`/api/admin/projects/${id}`), 404, 'NotFoundError');
    assertEvents(await eventsSince(ctx, before), [
      { type: 'project-deleted', featureName: null, project: id, data: null, preData: created },
    ]);
  });

  test('refuses the default project and unknown projects', async () => {
    expectError(await ctx.admin.delete('/api/admin/projects/default'), 400, 'BadDataError');
    expectError(await ctx.admin.delete(`/api/admin/projects/${uniqueName('none')}`), 404, 'NotFoundError');
    expectStatus(await ctx.admin.get('/api/admin/projects/default'), 200);
  });
});

describe('environments of a project', () => {
  test('are added and removed, each recording its event', async () => {
    const id = uniqueName('envs');
    await createProject({ id, name: 'Envs', environments: ['development'] });
    let before = await lastEventId(ctx);
    expectStatus(await ctx.admin.post(`/api/admin/projects/${id}/environments`, { environment: 'production' }), 200);
    let project = (await ctx.admin.get(`/api/admin/projects/${id}`)).json() as { environments: string[] };
    assert.deepEqual(project.environments, ['development', 'production']);
    let [event, ...rest] = await eventsSince(ctx, before);
    assert.deepEqual(rest, []);
    assert.equal(event!.type, 'project-environment-added');
    assert.equal(event!.project, id);
    assert.equal(event!.environment, 'production');
    assert.deepEqual(event!.data, { project: id, environment: 'production' });

    before = await lastEventId(ctx);
    expectStatus(await ctx.admin.delete(`/api/admin/projects/${id}/environments/development`), 200);
    project = (await ctx.admin.get(`/api/admin/projects/${id}`)).json() as { environments: string[] };
    assert.deepEqual(project.environments, ['production']);
    [event, ...rest] = await eventsSince(ctx, before);
    assert.deepEqual(rest, []);
    assert.equal(event!.type, 'project-environment-removed');
    assert.equal(event!.environment, 'development');
    assert.deepEqual(event!.preData, { project: id, environment: 'development' });
  });

  test('bad input: unknown environment, already enabled, not enabled, last one, unknown project', async () => {
    const id = uniqueName('envbad');
    await createProject({ id, name: 'EnvBad', environments: ['development'] });
    const before = await lastEventId(ctx);
    expectError(await ctx.admin.post(`/api/admin/projects/${id}/environments`, { environment: 'moon' }), 404, 'NotFoundError');
    const duplicate = expectError(
      await ctx.admin.post(`/api/admin/projects/${id}/environments`, { environment: 'development' }),
      409,
      'NameExistsError',
    );
    assert.match(duplicate.message, /already enabled/);
    expectError(await ctx.admin.delete(`/api/admin/projects/${id}/environments/production`), 404, 'NotFoundError');
    const last = expectError(await ctx.admin.delete(`/api/admin/projects/${id}/environments/development`), 409, 'ConflictError');
    assert.match(last.message, /only environment/);
    expectError(
      await ctx.admin.post(`/api/admin/projects/${uniqueName('ghost')}/environments`, { environment: 'development' }),
      404,
      'NotFoundError',
    );
    expectError(await ctx.admin.post(`/api/admin/projects/${id}/environments`, { env: 'production' }), 400, 'BadDataError');
    const project = (await ctx.admin.get(`/api/admin/projects/${id}`)).json() as { environments: string[] };
    assert.deepEqual(project.environments, ['development']);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });
});
