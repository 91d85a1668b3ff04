import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { expectError, expectStatus, getVersionedList, onlyEvent } from '../helpers/assertions.js';
import { eventsSince, lastEventId } from '../helpers/events.js';
import { uniqueName } from '../helpers/fixtures.js';
import { useTestApp } from '../helpers/test-app.js';

const ctx = useTestApp();

interface Environment {
  name: string;
  type: string;
  enabled: boolean;
  sortOrder: number;
  projectCount: number;
  apiTokenCount: number;
}

async function listEnvironments(): Promise<Environment[]> {
  return getVersionedList<Environment>(ctx.admin, '/api/admin/environments', 'environments');
}

async function createEnvironment(body: Record<string, unknown>): Promise<Environment> {
  const response = await ctx.admin.post('/api/admin/environments', body);
  expectStatus(response, 201);
  return response.json() as Environment;
}

describe('listing environments', () => {
  test('shows the built-in ones in sort order with their usage', async () => {
    const environments = await listEnvironments();
    const builtIn = environments.filter((e) => e.name === 'development' || e.name === 'production');
    assert.deepEqual(
      builtIn.map(({ name, type, enabled, sortOrder }) => ({ name, type, enabled, sortOrder })),
      [
        { name: 'development', type: 'development', enabled: true, sortOrder: 100 },
        { name: 'production', type: 'production', enabled: true, sortOrder: 200 },
      ],
    );
    assert.ok(builtIn.every((e) => e.projectCount >= 1));
    const sortOrders = environments.map((e) => e.sortOrder);
    assert.deepEqual(
      sortOrders,
      [...sortOrders].sort((a, b) => a - b),
    );
  });
});

describe('creating an environment', () => {
  test('returns it, lists it, and records environment-created', async () => {
    const name = uniqueName('staging');
    const before = await lastEventId(ctx);
    const created = await createEnvironment({ name, type: 'preproduction', sortOrder: 150 });
    assert.deepEqual(created, {
      name,
      type: 'preproduction',
      enabled: true,
      sortOrder: 150,
      projectCount: 0,
      apiTokenCount: 0,
    });
    assert.deepEqual(
      (await listEnvironments()).find((e) => e.name === name),
      created,
    );
    const event = onlyEvent(await eventsSince(ctx, before), 'environment-created');
    assert.equal(event!.environment, name);
    assert.equal(event!.project, null);
    assert.equal(event!.createdBy, 'admin-token');
    assert.equal(event!.createdByUserId, -42);
    assert.deepEqual(event!.data, created);
  });

  test('without a sort order puts it last', async () => {
    const highest = Math.max(...(await listEnvironments()).map((e) => e.sortOrder));
    const created = await createEnvironment({ name: uniqueName('last'), type: 'test' });
    assert.equal(created.sortOrder, highest + 100);
  });

  test('enabled environments are enabled in new projects; disabled ones are not', async () => {
    const on = await createEnvironment({ name: uniqueName('on'), type: 'test' });
    const off = await createEnvironment({ name: uniqueName('off'), type: 'test', enabled: false });
    const project = (await ctx.admin.post('/api/admin/projects', { id: uniqueName('p'), name: 'P' })).json() as {
      environments: string[];
    };
    assert.ok(project.environments.includes(on.name));
    assert.ok(!project.environments.includes(off.name));
  });

  const badBodies: Array<[string, unknown, string]> = [
    ['an invalid name', { name: 'with space', type: 'test' }, '/body/name'],
    ['a missing type', { name: 'typeless' }, '/body/type'],
    ['an unknown type', { name: 'weird', type: 'staging' }, '/body/type'],
    ['a non-integer sortOrder', { name: 'sorted', type: 'test', sortOrder: '5' }, '/body/sortOrder'],
    ['an unknown property', { name: 'extra', type: 'test', protected: true }, '/body/protected'],
  ];
  for (const [label, body, path] of badBodies) {
    test(`rejects ${label}`, async () => {
      const before = await lastEventId(ctx);
      const names = (await listEnvironments()).map((e) => e.name);
      const error = expectError(await ctx.admin.post('/api/admin/environments', body), 400, 'BadDataError');
      assert.ok(
        error.details.some((d) => d.path === path),
        JSON.stringify(error.details),
      );
      assert.deepEqual(
        (await listEnvironments()).map((e) => e.name),
        names,
      );
      assert.deepEqual(await eventsSince(ctx, before), []);
    });
  }

  test('rejects a duplicate name with 409', async () => {
    const before = await lastEventId(ctx);
    const error = expectError(
      await ctx.admin.post('/api/admin/environments', { name: 'production', type: 'test' }),
      409,
      'NameExistsError',
    );
    assert.match(error.message, /"production"/);
    assert.equal((await listEnvironments()).find((e) => e.name === 'production')!.type, 'production');
    assert.deepEqual(await eventsSince(ctx, before), []);
  });
});

describe('updating an environment', () => {
  test('changes type and sort order, recording environment-updated', async () => {
    const created = await createEnvironment({ name: uniqueName('upd'), type: 'test', sortOrder: 10 });
    const before = await lastEventId(ctx);
    const response = await ctx.admin.put(`/api/admin/environments/${created.name}`, { type: 'preproduction', sortOrder: 20 });
    expectStatus(response, 200);
    const updated = response.json() as Environment;
    assert.deepEqual(updated, { ...created, type: 'preproduction', sortOrder: 20 });
    onlyEvent(await eventsSince(ctx, before), 'environment-updated', { preData: created, data: updated });
  });

  test('with unchanged values records nothing', async () => {
    const created = await createEnvironment({ name: uniqueName('same'), type: 'test', sortOrder: 10 });
    const before = await lastEventId(ctx);
    expectStatus(await ctx.admin.put(`/api/admin/environments/${created.name}`, { type: 'test' }), 200);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('rejects renaming, unknown types and unknown environments', async () => {
    const created = await createEnvironment({ name: uniqueName('keep'), type: 'test' });
    expectError(await ctx.admin.put(`/api/admin/environments/${created.name}`, { name: 'other' }), 400, 'BadDataError');
    expectError(await ctx.admin.put(`/api/admin/environments/${created.name}`, { type: 'moon' }), 400, 'BadDataError');
    expectError(await ctx.admin.put(`/api/admin/environments/${uniqueName('ghost')}`, { type: 'test' }), 404, 'NotFoundError');
    const stored = (await ctx.admin.get(`/api/admin/environments/${created.name}`)).json();
    assert.deepEqual(stored, created);
  });

  test('is switched off and on, recording only real changes', async () => {
    const created = await createEnvironment({ name: uniqueName('toggle'), type: 'test' });
    const before = await lastEventId(ctx);
    expectStatus(await ctx.admin.post(`/api/admin/environments/${created.name}/off`), 204);
    expectStatus(await ctx.admin.post(`/api/admin/environments/${created.name}/off`), 204);
    assert.equal(((await ctx.admin.get(`/api/admin/environments/${created.name}`)).json() as Environment).enabled, false);
    expectStatus(await ctx.admin.post(`/api/admin/environments/${created.name}/on`), 204);
    const events = await eventsSince(ctx, before);
    assert.deepEqual(
      events.map((e) => [e.type, (e.preData as Environment).enabled, (e.data as Environment).enabled]),
      [
        ['environment-updated', true, false],
        ['environment-updated', false, true],
      ],
    );
  });
});

describe('deleting an environment', () => {
  test('removes it from its projects and records environment-deleted', async () => {
    const env = await createEnvironment({ name: uniqueName('gone'), type: 'test' });
    const projectId = uniqueName('proj');
    expectStatus(await ctx.admin.post('/api/admin/projects', { id: projectId, name: 'P', environments: ['development', env.name] }), 201);
    const before = await lastEventId(ctx);
    expectStatus(await ctx.admin.delete(`/api/admin/environments/${env.name}`), 200);
    expectError(await ctx.admin.get(`/api/admin/environments/${env.name}`), 404, 'NotFoundError');
    const project = (await ctx.admin.get(`/api/admin/projects/${projectId}`)).json() as { environments: string[] };
    assert.deepEqual(project.environments, ['development']);
    const event = onlyEvent(await eventsSince(ctx, before), 'environment-deleted');
    assert.equal(event!.environment, env.name);
    assert.deepEqual(event!.preData, { ...env, projectCount: 1 });
  });

  test("is refused while it is a project's only environment", async () => {
    const env = await createEnvironment({ name: uniqueName('only'), type: 'test' });
    const projectId = uniqueName('lonely');
    expectStatus(await ctx.admin.post('/api/admin/projects', { id: projectId, name: 'L', environments: [env.name] }), 201);
    const before = await lastEventId(ctx);
    const error = expectError(await ctx.admin.delete(`/api/admin/environments/${env.name}`), 409, 'ConflictError');
    assert.match(error.message, new RegExp(projectId));
    expectStatus(await ctx.admin.get(`/api/admin/environments/${env.name}`), 200);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('of an unknown environment is a 404', async () => {
    expectError(await ctx.admin.delete(`/api/admin/environments/${uniqueName('ghost')}`), 404, 'NotFoundError');
  });
});

describe('sorting environments in one request', () => {
  const create = async () => {
    const name = uniqueName('sorted');
    expectStatus(await ctx.admin.post('/api/admin/environments', { name, type: 'test' }), 201);
    return name;
  };
  const sortOrderOf = async (name: string) => (await ctx.admin.get(`/api/admin/environments/${name}`)).json().sortOrder as number;

  test('gives each named environment its sort order and records environment-updated for each', async () => {
    const first = await create();
    const second = await create();
    const [firstBefore, secondBefore] = [await sortOrderOf(first), await sortOrderOf(second)];
    const before = await lastEventId(ctx);
    expectStatus(await ctx.admin.put('/api/admin/environments/sort-order', { [first]: 7, [second]: -3 }), 200);
    assert.deepEqual([await sortOrderOf(first), await sortOrderOf(second)], [7, -3]);
    const sortOrder = (data: unknown) => (data as { sortOrder: number }).sortOrder;
    assert.deepEqual(
      (await eventsSince(ctx, before)).map((event) => [event.type, event.environment, sortOrder(event.preData), sortOrder(event.data)]),
      [
        ['environment-updated', first, firstBefore, 7],
        ['environment-updated', second, secondBefore, -3],
      ],
    );
  });

  test('an unknown environment is 404 and sorts none; a bad sort order or name is 400', async () => {
    const known = await create();
    const was = await sortOrderOf(known);
    const before = await lastEventId(ctx);
    expectError(
      await ctx.admin.put('/api/admin/environments/sort-order', { [known]: 1, [uniqueName('nowhere')]: 2 }),
      404,
      'NotFoundError',
    );
    expectError(await ctx.admin.put('/api/admin/environments/sort-order', { [known]: 'first' }), 400, 'BadDataError');
    expectError(await ctx.admin.put('/api/admin/environments/sort-order', { [known]: 1.5 }), 400, 'BadDataError');
    expectError(await ctx.admin.put('/api/admin/environments/sort-order', { 'not a name': 1 }), 400, 'BadDataError');
    expectError(await ctx.admin.put('/api/admin/environments/sort-order', [1]), 400, 'BadDataError');
    assert.equal(await sortOrderOf(known), was);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });
});
