import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { expectError, expectStatus, assertDetailAt, assertEvents, getOk, getVersionedList } from '../helpers/assertions.js';
import { eventsSince, lastEventId } from '../helpers/events.js';
import { createUserSession, uniqueName, sendMalformedJson } from '../helpers/fixtures.js';
import { useTestApp } from '../helpers/test-app.js';
import { createProject } from '../helpers/projects.js';

const ctx = useTestApp();

interface FeatureEnvironment {
  name: string;
  environment: string;
  featureName: string;
  type: string;
  enabled: boolean;
  sortOrder: number;
  variantCount: number;
  strategies: unknown[];
  variants: unknown[];
  lastSeenAt: string | null;
  hasStrategies: boolean;
  hasEnabledStrategies: boolean;
}

interface Feature {
  name: string;
  project: string;
  type: string;
  description: string | null;
  impressionData: boolean;
  stale: boolean;
  archived: boolean;
  archivedAt: string | null;
  createdAt: string;
  lastSeenAt: string | null;
  favorite: boolean;
  environments: FeatureEnvironment[];
  tags: unknown[];
  dependencies: unknown[];
  children: string[];
  lifecycle: { stage: string; status: string | null; enteredStageAt: string } | null;
  createdBy: { id: number; name: string; imageUrl: string };
}

const FEATURE_TYPES = ['release', 'experiment', 'operational', 'kill-switch', 'permission', 'sunset'];

async function createFlag(project: string, body: Record<string, unknown> = {}): Promise<Feature> {
  const response = await ctx.admin.post(`/api/admin/projects/${project}/features`, { name: uniqueName('flag'), ...body });
  expectStatus(response, 201);
  return response.json() as Feature;
}

async function getFlag(project: string, name: string): Promise<Feature> {
  return getOk<Feature>(ctx.admin, `/api/admin/projects/${project}/features/${name}`);
}

async function listFlags(project: string): Promise<Feature[]> {
  return getVersionedList<Feature>(ctx.admin, `/api/admin/projects/${project}/features`, 'features');
}

async function listArchived(project: string): Promise<Feature[]> {
  return getVersionedList<Feature>(ctx.admin, `/api/admin/archive/features/${project}`, 'features');
}

async function archive(project: string, name: string): Promise<void> {
  expectStatus(await ctx.admin.delete(`/api/admin/projects/${project}/features/${name}`), 202);
}

const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);

/** What events carry as a flag: its own fields without per-environment configuration. */
function metadataOf(feature: Feature) {
  return {
    name: feature.name,
    project: feature.project,
    type: feature.type,
    description: feature.description,
    impressionData: feature.impressionData,
    stale: feature.stale,
    archived: feature.archived,
    archivedAt: feature.archivedAt,
    createdAt: feature.createdAt,
  };
}

function environmentView(featureName: string, name: string, type: string, sortOrder: number): FeatureEnvironment {
  return {
    name,
    environment: name,
    featureName,
    type,
    enabled: false,
    sortOrder,
    variantCount: 0,
    strategies: [],
    variants: [],
    lastSeenAt: null,
    hasStrategies: false,
    hasEnabledStrategies: false,
  };
}

describe('creating a flag', () => {
  test('answers 201 with the full flag, environments in sort order, and records feature-created', async () => {
    // An environment whose sort order puts it first although its name sorts between the others.
    const early = uniqueName('env');
    expectStatus(await ctx.admin.post('/api/admin/environments', { name: early, type: 'test', sortOrder: 50 }), 201);
    const project = await createProject(ctx, { environments: ['production', early, 'development'] });
    const name = uniqueName('checkout');
    const before = await lastEventId(ctx);

    const response = await ctx.admin.post(`/api/admin/projects/${project}/features`, {
      name,
      type: 'experiment',
      description: 'New checkout',
      impressionData: true,
    });
    expectStatus(response, 201);
    const created = response.json() as Feature;
    const now = ctx.clock.now().toISOString();
    assert.deepEqual(created, {
      name,
      project,
      type: 'experiment',
      description: 'New checkout',
      impressionData: true,
      stale: false,
      archived: false,
      archivedAt: null,
      createdAt: now,
      lastSeenAt: null,
      favorite: false,
      environments: [
        environmentView(name, early, 'test', 50),
        environmentView(name, 'development', 'development', 100),
        environmentView(name, 'production', 'production', 200),
      ],
      tags: [],
      dependencies: [],
      children: [],
      lifecycle: { stage: 'initial', status: null, enteredStageAt: now },
      createdBy: { id: -42, name: 'admin-token', imageUrl: '' },
      links: [],
    });
    assert.deepEqual(await getFlag(project, name), created);

    assertEvents(await eventsSince(ctx, before), [
      { type: 'feature-created', featureName: name, project, data: metadataOf(created), preData: null },
    ]);
  });

  test('defaults the type to release, description to null and impression data to false', async () => {
    const project = await createProject(ctx);
    const created = await createFlag(project);
    assert.equal(created.type, 'release');
    assert.equal(created.description, null);
    assert.equal(created.impressionData, false);
    assert.equal((await getFlag(project, created.name)).type, 'release');
  });

  test('accepts each of the five flag types', async () => {
    const project = await createProject(ctx);
    for (const type of FEATURE_TYPES) {
      const created = await createFlag(project, { type });
      assert.equal(created.type, type);
      assert.equal((await getFlag(project, created.name)).type, type);
    }
    const listed = await listFlags(project);
    assert.deepEqual(listed.map((flag) => flag.type).sort(), [...FEATURE_TYPES].sort());
  });

  test('through a session records the user as creator', async () => {
    const editor = await createUserSession(ctx, 'Editor');
    const project = await createProject(ctx);
    const name = uniqueName('by-user');
    const before = await lastEventId(ctx);
    const response = await ctx.withCookie(editor.cookie).post(`/api/admin/projects/${project}/features`, { name });
    expectStatus(response, 201);
    const created = response.json() as Feature;
    assert.deepEqual(created.createdBy, { id: editor.id, name: editor.username, imageUrl: '' });
    assert.deepEqual((await getFlag(project, name)).createdBy, created.createdBy);
    assertEvents(await eventsSince(ctx, before), [
      {
        type: 'feature-created',
        featureName: name,
        project,
        createdBy: editor.username,
        createdByUserId: editor.id,
        data: metadataOf(created),
        preData: null,
      },
    ]);
  });
});

describe('bad input when creating a flag', () => {
  async function rejectsCreate(body: unknown, status: number, name: string, path?: string) {
    const project = await createProject(ctx);
    const existing = await createFlag(project);
    const listBefore = await listFlags(project);
    const before = await lastEventId(ctx);
    const error = expectError(await ctx.admin.post(`/api/admin/projects/${project}/features`, body), status, name);
    if (path) assertDetailAt(error, path);
    assert.deepEqual(await listFlags(project), listBefore);
    assert.deepEqual(
      listBefore.map((flag) => flag.name),
      [existing.name],
    );
    assert.deepEqual(await eventsSince(ctx, before), []);
    return error;
  }

  test('rejects a name with a space', async () => {
    const error = await rejectsCreate({ name: 'has space' }, 400, 'BadDataError', '/body/name');
    assert.match(error.details.find((d) => d.path === '/body/name')!.message, /has space/);
  });

  test('rejects a name of 101 characters', async () => {
    await rejectsCreate({ name: 'a'.repeat(101) }, 400, 'BadDataError', '/body/name');
  });

  test('rejects the name ".."', async () => {
    await rejectsCreate({ name: '..' }, 400, 'BadDataError', '/body/name');
  });

  test('rejects a missing name', async () => {
    await rejectsCreate({ type: 'release' }, 400, 'BadDataError', '/body/name');
  });

  test('rejects an unknown type', async () => {
    await rejectsCreate({ name: uniqueName('typed'), type: 'forever' }, 400, 'BadDataError', '/body/type');
  });

  test('rejects an unknown body property', async () => {
    await rejectsCreate({ name: uniqueName('extra'), owner: 'me' }, 400, 'BadDataError', '/body/owner');
  });

  test('rejects impressionData of the wrong type', async () => {
    await rejectsCreate({ name: uniqueName('imp'), impressionData: 'yes' }, 400, 'BadDataError', '/body/impressionData');
  });

  test('rejects malformed JSON', async () => {
    const project = await createProject(ctx);
    const listBefore = await listFlags(project);
    const before = await lastEventId(ctx);
    const error = expectError(
      await sendMalformedJson(ctx.admin, 'POST', `/api/admin/projects/${project}/features`, '{"name": "half'),
      400,
      'BadDataError',
    );
    assertDetailAt(error, '/body');
    assert.deepEqual(await listFlags(project), listBefore);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('rejects a duplicate name in the same project with 409', async () => {
    const project = await createProject(ctx);
    const existing = await createFlag(project, { description: 'first' });
    const before = await lastEventId(ctx);
    const error = expectError(
      await ctx.admin.post(`/api/admin/projects/${project}/features`, { name: existing.name, description: 'second' }),
      409,
      'NameExistsError',
    );
    assert.match(error.message, new RegExp(existing.name));
    assertDetailAt(error, '/body/name');
    assert.deepEqual(await getFlag(project, existing.name), existing);
    assert.deepEqual(await listFlags(project), [existing]);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('rejects the name of an archived flag with 409', async () => {
    const project = await createProject(ctx);
    const existing = await createFlag(project);
    await archive(project, existing.name);
    const archived = await listArchived(project);
    const before = await lastEventId(ctx);
    expectError(await ctx.admin.post(`/api/admin/projects/${project}/features`, { name: existing.name }), 409, 'NameExistsError');
    assert.deepEqual(await listFlags(project), []);
    assert.deepEqual(await listArchived(project), archived);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('rejects the name of a flag in another project with 409', async () => {
    const owner = await createProject(ctx);
    const existing = await createFlag(owner);
    const other = await createProject(ctx);
    const before = await lastEventId(ctx);
    expectError(await ctx.admin.post(`/api/admin/projects/${other}/features`, { name: existing.name }), 409, 'NameExistsError');
    assert.deepEqual(await getFlag(owner, existing.name), existing);
    assert.deepEqual(await listFlags(other), []);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('rejects an unknown project with 404', async () => {
    const project = uniqueName('ghost');
    const name = uniqueName('orphan');
    const before = await lastEventId(ctx);
    const error = expectError(await ctx.admin.post(`/api/admin/projects/${project}/features`, { name }), 404, 'NotFoundError');
    assert.match(error.message, new RegExp(project));
    expectError(await ctx.admin.get(`/api/admin/projects/${project}/features`), 404, 'NotFoundError');
    assert.deepEqual(await eventsSince(ctx, before), []);
    // The name stays free.
    const real = await createProject(ctx);
    expectStatus(await ctx.admin.post(`/api/admin/projects/${real}/features`, { name }), 201);
  });

  test('refuses a Viewer with 403 naming CREATE_FEATURE', async () => {
    const viewer = await createUserSession(ctx, 'Viewer');
    const project = await createProject(ctx);
    const name = uniqueName('viewer');
    const before = await lastEventId(ctx);
    const error = expectError(
      await ctx.withCookie(viewer.cookie).post(`/api/admin/projects/${project}/features`, { name }),
      403,
      'PermissionError',
    );
    assert.deepEqual(error.permissions, ['CREATE_FEATURE']);
    assert.deepEqual(await listFlags(project), []);
    expectError(await ctx.admin.get(`/api/admin/projects/${project}/features/${name}`), 404, 'NotFoundError');
    assert.deepEqual(await eventsSince(ctx, before), []);
  });
});

describe('reading flags', () => {
  test("lists the project's live flags, not archived ones nor other projects'", async () => {
    const project = await createProject(ctx);
    const first = await createFlag(project, { description: 'one' });
    const second = await createFlag(project, { type: 'operational' });
    const gone = await createFlag(project);
    await archive(project, gone.name);
    const elsewhere = await createProject(ctx);
    await createFlag(elsewhere);

    const listed = await listFlags(project);
    assert.deepEqual([...listed].sort(byName), [first, second].sort(byName));
    const archivedList = await listArchived(project);
    assert.deepEqual(
      archivedList.map((flag) => flag.name),
      [gone.name],
    );
  });

  test('a Viewer can read the list and a flag', async () => {
    const viewer = await createUserSession(ctx, 'Viewer');
    const project = await createProject(ctx);
    const flag = await createFlag(project);
    const list = await ctx.withCookie(viewer.cookie).get(`/api/admin/projects/${project}/features`);
    expectStatus(list, 200);
    assert.deepEqual((list.json() as { features: Feature[] }).features, [flag]);
    const one = await ctx.withCookie(viewer.cookie).get(`/api/admin/projects/${project}/features/${flag.name}`);
    expectStatus(one, 200);
    assert.deepEqual(one.json(), flag);
  });

  test('an unknown flag is 404', async () => {
    const project = await createProject(ctx);
    const error = expectError(await ctx.admin.get(`/api/admin/projects/${project}/features/${uniqueName('nope')}`), 404, 'NotFoundError');
    assert.match(error.message, new RegExp(project));
  });

  test("a flag under another project's path is 404", async () => {
    const owner = await createProject(ctx);
    const flag = await createFlag(owner);
    const other = await createProject(ctx);
    expectError(await ctx.admin.get(`/api/admin/projects/${other}/features/${flag.name}`), 404, 'NotFoundError');
    assert.deepEqual(await getFlag(owner, flag.name), flag);
  });

  test('listing an unknown project is 404', async () => {
    expectError(await ctx.admin.get(`/api/admin/projects/${uniqueName('ghost')}/features`), 404, 'NotFoundError');
  });
});

describe('updating a flag with PUT', () => {
  /** A PUT of one field: the answer and the stored flag are the flag with that field changed, and its event says so. */
  const SINGLE_FIELD_UPDATES: Array<{
    title: string;
    created?: Record<string, unknown>;
    body: Record<string, unknown>;
    event: (before: Feature, after: Feature) => { type: string; data: unknown; preData: unknown };
  }> = [
    {
      title: 'a new description records feature-metadata-updated with the flag before and after',
      created: { description: 'old' },
      body: { description: 'new' },
      event: (before, after) => ({ type: 'feature-metadata-updated', data: metadataOf(after), preData: metadataOf(before) }),
    },
    {
      title: 'impressionData records feature-metadata-updated',
      body: { impressionData: true },
      event: (before, after) => ({ type: 'feature-metadata-updated', data: metadataOf(after), preData: metadataOf(before) }),
    },
    {
      title: 'a new type records feature-type-updated',
      body: { type: 'kill-switch' },
      event: () => ({ type: 'feature-type-updated', data: { type: 'kill-switch' }, preData: { type: 'release' } }),
    },
  ];

  for (const update of SINGLE_FIELD_UPDATES) {
    test(update.title, async () => {
      const project = await createProject(ctx);
      const flag = await createFlag(project, update.created);
      const before = await lastEventId(ctx);
      const response = await ctx.admin.put(`/api/admin/projects/${project}/features/${flag.name}`, update.body);
      expectStatus(response, 200);
      const updated = response.json() as Feature;
      assert.deepEqual(updated, { ...flag, ...update.body });
      assert.deepEqual(await getFlag(project, flag.name), updated);
      assertEvents(await eventsSince(ctx, before), [{ featureName: flag.name, project, ...update.event(flag, updated) }]);
    });
  }

  test('stale true then false records feature-stale-on then feature-stale-off', async () => {
    const project = await createProject(ctx);
    const flag = await createFlag(project);
    let before = await lastEventId(ctx);
    expectStatus(await ctx.admin.put(`/api/admin/projects/${project}/features/${flag.name}`, { stale: true }), 200);
    assert.deepEqual(await getFlag(project, flag.name), { ...flag, stale: true });
    assertEvents(await eventsSince(ctx, before), [
      { type: 'feature-stale-on', featureName: flag.name, project, data: { stale: true }, preData: { stale: false } },
    ]);

    before = await lastEventId(ctx);
    expectStatus(await ctx.admin.put(`/api/admin/projects/${project}/features/${flag.name}`, { stale: false }), 200);
    assert.deepEqual(await getFlag(project, flag.name), flag);
    assertEvents(await eventsSince(ctx, before), [
      { type: 'feature-stale-off', featureName: flag.name, project, data: { stale: false }, preData: { stale: true } },
    ]);
  });

  test('sending the same values changes nothing and records nothing', async () => {
    const project = await createProject(ctx);
    const flag = await createFlag(project, { description: 'same', type: 'experiment', impressionData: true });
    const before = await lastEventId(ctx);
    const response = await ctx.admin.put(`/api/admin/projects/${project}/features/${flag.name}`, {
      name: flag.name,
      description: 'same',
      type: 'experiment',
      impressionData: true,
      stale: false,
      archived: false,
    });
    expectStatus(response, 200);
    assert.deepEqual(response.json(), flag);
    assert.deepEqual(await getFlag(project, flag.name), flag);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  async function rejectsPut(body: unknown, status: number, name: string, path?: string) {
    const project = await createProject(ctx);
    const flag = await createFlag(project, { description: 'kept' });
    const before = await lastEventId(ctx);
    const error = expectError(await ctx.admin.put(`/api/admin/projects/${project}/features/${flag.name}`, body), status, name);
    if (path) assertDetailAt(error, path);
    assert.deepEqual(await getFlag(project, flag.name), flag);
    assert.deepEqual(await eventsSince(ctx, before), []);
    return error;
  }

  test('renaming through name is 400', async () => {
    await rejectsPut({ name: 'renamed', description: 'changed' }, 400, 'BadDataError', '/body/name');
  });

  test('archived true is 400', async () => {
    await rejectsPut({ archived: true, description: 'changed' }, 400, 'BadDataError', '/body/archived');
  });

  test('an unknown type is 400', async () => {
    await rejectsPut({ type: 'forever' }, 400, 'BadDataError', '/body/type');
  });

  test('an unknown property is 400', async () => {
    await rejectsPut({ description: 'changed', owner: 'me' }, 400, 'BadDataError', '/body/owner');
  });

  test('a stale value of the wrong type is 400', async () => {
    await rejectsPut({ stale: 'yes' }, 400, 'BadDataError', '/body/stale');
  });

  test('an unknown flag is 404', async () => {
    const project = await createProject(ctx);
    const name = uniqueName('nope');
    const before = await lastEventId(ctx);
    expectError(await ctx.admin.put(`/api/admin/projects/${project}/features/${name}`, { description: 'x' }), 404, 'NotFoundError');
    assert.deepEqual(await listFlags(project), []);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test("a flag under another project's path is 404 and stays unchanged", async () => {
    const owner = await createProject(ctx);
    const flag = await createFlag(owner, { description: 'kept' });
    const other = await createProject(ctx);
    const before = await lastEventId(ctx);
    expectError(
      await ctx.admin.put(`/api/admin/projects/${other}/features/${flag.name}`, { description: 'hijacked' }),
      404,
      'NotFoundError',
    );
    assert.deepEqual(await getFlag(owner, flag.name), flag);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('a Viewer is refused with 403 naming UPDATE_FEATURE', async () => {
    const viewer = await createUserSession(ctx, 'Viewer');
    const project = await createProject(ctx);
    const flag = await createFlag(project, { description: 'kept' });
    const before = await lastEventId(ctx);
    const error = expectError(
      await ctx.withCookie(viewer.cookie).put(`/api/admin/projects/${project}/features/${flag.name}`, { description: 'x' }),
      403,
      'PermissionError',
    );
    assert.deepEqual(error.permissions, ['UPDATE_FEATURE']);
    assert.deepEqual(await getFlag(project, flag.name), flag);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });
});

describe('updating a flag with a JSON Patch', () => {
  test('replace /description records feature-metadata-updated', async () => {
    const project = await createProject(ctx);
    const flag = await createFlag(project, { description: 'old' });
    const before = await lastEventId(ctx);
    const response = await ctx.admin.patch(`/api/admin/projects/${project}/features/${flag.name}`, [
      { op: 'replace', path: '/description', value: 'patched' },
    ]);
    expectStatus(response, 200);
    const patched = response.json() as Feature;
    assert.deepEqual(patched, { ...flag, description: 'patched' });
    assert.deepEqual(await getFlag(project, flag.name), patched);
    assertEvents(await eventsSince(ctx, before), [
      { type: 'feature-metadata-updated', featureName: flag.name, project, data: metadataOf(patched), preData: metadataOf(flag) },
    ]);
  });

  test('replace /stale records feature-stale-on', async () => {
    const project = await createProject(ctx);
    const flag = await createFlag(project);
    const before = await lastEventId(ctx);
    const response = await ctx.admin.patch(`/api/admin/projects/${project}/features/${flag.name}`, [
      { op: 'replace', path: '/stale', value: true },
    ]);
    expectStatus(response, 200);
    assert.deepEqual(response.json(), { ...flag, stale: true });
    assert.deepEqual(await getFlag(project, flag.name), { ...flag, stale: true });
    assertEvents(await eventsSince(ctx, before), [
      { type: 'feature-stale-on', featureName: flag.name, project, data: { stale: true }, preData: { stale: false } },
    ]);
  });

  test('a passing test operation lets the rest apply', async () => {
    const project = await createProject(ctx);
    const flag = await createFlag(project, { description: 'expected' });
    const response = await ctx.admin.patch(`/api/admin/projects/${project}/features/${flag.name}`, [
      { op: 'test', path: '/description', value: 'expected' },
      { op: 'replace', path: '/description', value: 'after test' },
    ]);
    expectStatus(response, 200);
    assert.equal((await getFlag(project, flag.name)).description, 'after test');
  });

  async function rejectsPatch(operations: unknown, path: string) {
    const project = await createProject(ctx);
    const flag = await createFlag(project, { description: 'kept' });
    const before = await lastEventId(ctx);
    const error = expectError(
      await ctx.admin.patch(`/api/admin/projects/${project}/features/${flag.name}`, operations),
      400,
      'BadDataError',
    );
    assertDetailAt(error, path);
    assert.deepEqual(await getFlag(project, flag.name), flag);
    assert.deepEqual(await eventsSince(ctx, before), []);
    return error;
  }

  test('a failing test operation is 400 and applies nothing', async () => {
    await rejectsPatch(
      [
        { op: 'replace', path: '/stale', value: true },
        { op: 'test', path: '/description', value: 'something else' },
        { op: 'replace', path: '/description', value: 'changed' },
      ],
      '/body/1',
    );
  });

  test('a patch introducing an unknown field is 400', async () => {
    const error = await rejectsPatch([{ op: 'add', path: '/owner', value: 'me' }], '/body');
    assert.match(error.details.map((d) => d.message).join(' '), /owner/);
  });

  test('a value of the wrong type is 400', async () => {
    await rejectsPatch([{ op: 'replace', path: '/stale', value: 'yes' }], '/body');
  });

  test('a description of the wrong type is 400', async () => {
    await rejectsPatch([{ op: 'replace', path: '/description', value: 42 }], '/body');
  });

  test('an unknown type is 400', async () => {
    await rejectsPatch([{ op: 'replace', path: '/type', value: 'forever' }], '/body/type');
  });

  test('renaming is 400', async () => {
    await rejectsPatch([{ op: 'replace', path: '/name', value: 'renamed' }], '/body/name');
  });

  test('archiving is 400', async () => {
    await rejectsPatch([{ op: 'replace', path: '/archived', value: true }], '/body/archived');
  });

  test('an unknown op is 400', async () => {
    await rejectsPatch([{ op: 'merge', path: '/description', value: 'x' }], '/body/0/op');
  });

  test('a path that does not resolve is 400', async () => {
    await rejectsPatch([{ op: 'replace', path: '/nested/deep', value: 'x' }], '/body/0');
  });

  test('a body that is not a list of operations is 400', async () => {
    await rejectsPatch({ description: 'x' }, '/body');
  });
});

describe('archiving a flag', () => {
  test('DELETE answers 202, records feature-archived, hides it from the list and shows it in the archive', async () => {
    const project = await createProject(ctx);
    const flag = await createFlag(project);
    const kept = await createFlag(project);
    const before = await lastEventId(ctx);
    ctx.clock.advance(60_000);
    const archivedAt = ctx.clock.now().toISOString();
    await archive(project, flag.name);

    assert.deepEqual(await listFlags(project), [kept]);
    const archivedList = await listArchived(project);
    assert.equal(archivedList.length, 1);
    const archived = archivedList[0]!;
    assert.deepEqual(archived, {
      ...flag,
      archived: true,
      archivedAt,
      lifecycle: { stage: 'archived', status: null, enteredStageAt: archivedAt },
    });
    assertEvents(await eventsSince(ctx, before), [
      {
        type: 'feature-archived',
        featureName: flag.name,
        project,
        data: { ...metadataOf(flag), archived: true, archivedAt },
        preData: metadataOf(flag),
      },
    ]);
  });

  test('the batch endpoint archives several flags, one event each', async () => {
    const project = await createProject(ctx);
    const [a, b] = [await createFlag(project), await createFlag(project)].sort(byName);
    const kept = await createFlag(project);
    const before = await lastEventId(ctx);
    const response = await ctx.admin.post(`/api/admin/projects/${project}/archive`, { features: [a!.name, b!.name] });
    expectStatus(response, 202);
    assert.deepEqual(await listFlags(project), [kept]);
    const archived = (await listArchived(project)).sort(byName);
    assert.deepEqual(
      archived.map((flag) => [flag.name, flag.archived, flag.lifecycle?.stage]),
      [
        [a!.name, true, 'archived'],
        [b!.name, true, 'archived'],
      ],
    );
    const now = ctx.clock.now().toISOString();
    const events = (await eventsSince(ctx, before)).sort((x, y) => x.featureName!.localeCompare(y.featureName!));
    assertEvents(
      events,
      [a!, b!].map((flag) => ({
        type: 'feature-archived',
        featureName: flag.name,
        project,
        data: { ...metadataOf(flag), archived: true, archivedAt: now },
        preData: metadataOf(flag),
      })),
    );
  });

  test('the batch endpoint with one unknown flag is 404 and archives none', async () => {
    const project = await createProject(ctx);
    const flag = await createFlag(project);
    const before = await lastEventId(ctx);
    const error = expectError(
      await ctx.admin.post(`/api/admin/projects/${project}/archive`, { features: [flag.name, 'no-such-flag'] }),
      404,
      'NotFoundError',
    );
    assert.match(error.message, /no-such-flag/);
    assert.deepEqual(await listFlags(project), [flag]);
    assert.deepEqual(await listArchived(project), []);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('the batch endpoint with an empty list is 400', async () => {
    const project = await createProject(ctx);
    const flag = await createFlag(project);
    const before = await lastEventId(ctx);
    const error = expectError(await ctx.admin.post(`/api/admin/projects/${project}/archive`, { features: [] }), 400, 'BadDataError');
    assertDetailAt(error, '/body/features');
    assert.deepEqual(await listFlags(project), [flag]);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('archiving an archived flag again is 400', async () => {
    const project = await createProject(ctx);
    const flag = await createFlag(project);
    await archive(project, flag.name);
    const archived = await listArchived(project);
    const before = await lastEventId(ctx);
    expectError(await ctx.admin.delete(`/api/admin/projects/${project}/features/${flag.name}`), 400, 'BadDataError');
    assert.deepEqual(await listArchived(project), archived);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('archiving an unknown flag is 404', async () => {
    const project = await createProject(ctx);
    const before = await lastEventId(ctx);
    expectError(await ctx.admin.delete(`/api/admin/projects/${project}/features/${uniqueName('nope')}`), 404, 'NotFoundError');
    assert.deepEqual(await listArchived(project), []);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test("archiving a flag under another project's path is 404", async () => {
    const owner = await createProject(ctx);
    const flag = await createFlag(owner);
    const other = await createProject(ctx);
    const before = await lastEventId(ctx);
    expectError(await ctx.admin.delete(`/api/admin/projects/${other}/features/${flag.name}`), 404, 'NotFoundError');
    assert.deepEqual(await listFlags(owner), [flag]);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('a Viewer is refused with 403 naming DELETE_FEATURE', async () => {
    const viewer = await createUserSession(ctx, 'Viewer');
    const project = await createProject(ctx);
    const flag = await createFlag(project);
    const before = await lastEventId(ctx);
    const error = expectError(
      await ctx.withCookie(viewer.cookie).delete(`/api/admin/projects/${project}/features/${flag.name}`),
      403,
      'PermissionError',
    );
    assert.deepEqual(error.permissions, ['DELETE_FEATURE']);
    assert.deepEqual(await listFlags(project), [flag]);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });
});

describe('reviving a flag', () => {
  test('brings it back to the list and records feature-revived', async () => {
    const project = await createProject(ctx);
    const flag = await createFlag(project);
    await archive(project, flag.name);
    const [archived] = await listArchived(project);
    const before = await lastEventId(ctx);
    expectStatus(await ctx.admin.post(`/api/admin/projects/${project}/revive`, { features: [flag.name] }), 200);
    assert.deepEqual(await listFlags(project), [flag]);
    assert.deepEqual(await listArchived(project), []);
    assert.equal((await getFlag(project, flag.name)).lifecycle?.stage, 'initial');
    assertEvents(await eventsSince(ctx, before), [
      { type: 'feature-revived', featureName: flag.name, project, data: metadataOf(flag), preData: metadataOf(archived!) },
    ]);
  });

  test('reviving a live flag is 400 and changes nothing', async () => {
    const project = await createProject(ctx);
    const flag = await createFlag(project);
    const before = await lastEventId(ctx);
    const error = expectError(
      await ctx.admin.post(`/api/admin/projects/${project}/revive`, { features: [flag.name] }),
      400,
      'BadDataError',
    );
    assert.match(error.message, new RegExp(flag.name));
    assert.deepEqual(await getFlag(project, flag.name), flag);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('reviving an archived and a live flag together is 400 and revives neither', async () => {
    const project = await createProject(ctx);
    const live = await createFlag(project);
    const gone = await createFlag(project);
    await archive(project, gone.name);
    const archived = await listArchived(project);
    const before = await lastEventId(ctx);
    expectError(await ctx.admin.post(`/api/admin/projects/${project}/revive`, { features: [gone.name, live.name] }), 400, 'BadDataError');
    assert.deepEqual(await listFlags(project), [live]);
    assert.deepEqual(await listArchived(project), archived);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('reviving an unknown flag is 404', async () => {
    const project = await createProject(ctx);
    const before = await lastEventId(ctx);
    expectError(await ctx.admin.post(`/api/admin/projects/${project}/revive`, { features: [uniqueName('nope')] }), 404, 'NotFoundError');
    assert.deepEqual(await listFlags(project), []);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });
});

describe("reviving a flag by its name alone (Unleash's older path)", () => {
  test('brings it back to its project and records feature-revived', async () => {
    const project = await createProject(ctx);
    const flag = await createFlag(project);
    await archive(project, flag.name);
    const before = await lastEventId(ctx);
    expectStatus(await ctx.admin.post(`/api/admin/archive/revive/${flag.name}`), 200);
    assert.deepEqual(await listFlags(project), [flag]);
    assert.deepEqual(
      (await eventsSince(ctx, before)).map((event) => [event.type, event.featureName, event.project]),
      [['feature-revived', flag.name, project]],
    );
  });

  test('a live flag is 400, an unknown one 404, and neither changes anything', async () => {
    const project = await createProject(ctx);
    const flag = await createFlag(project);
    const before = await lastEventId(ctx);
    expectError(await ctx.admin.post(`/api/admin/archive/revive/${flag.name}`), 400, 'BadDataError');
    expectError(await ctx.admin.post(`/api/admin/archive/revive/${uniqueName('nope')}`), 404, 'NotFoundError');
    assert.deepEqual(await getFlag(project, flag.name), flag);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });
});

describe('deleting an archived flag', () => {
  test('removes it for good and records feature-deleted; the name can be used again', async () => {
    const project = await createProject(ctx);
    const flag = await createFlag(project);
    await archive(project, flag.name);
    const [archived] = await listArchived(project);
    const before = await lastEventId(ctx);
    expectStatus(await ctx.admin.delete(`/api/admin/archive/${flag.name}`), 200);
    assert.deepEqual(await listArchived(project), []);
    assert.deepEqual(await listFlags(project), []);
    expectError(await ctx.admin.get(`/api/admin/projects/${project}/features/${flag.name}`), 404, 'NotFoundError');
    assertEvents(await eventsSince(ctx, before), [
      { type: 'feature-deleted', featureName: flag.name, project, data: null, preData: metadataOf(archived!) },
    ]);
    expectStatus(await ctx.admin.post(`/api/admin/projects/${project}/features`, { name: flag.name }), 201);
  });

  test('a live flag is 404 and stays', async () => {
    const project = await createProject(ctx);
    const flag = await createFlag(project);
    const before = await lastEventId(ctx);
    const error = expectError(await ctx.admin.delete(`/api/admin/archive/${flag.name}`), 404, 'NotFoundError');
    assert.match(error.message, new RegExp(flag.name));
    assert.deepEqual(await getFlag(project, flag.name), flag);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('an unknown flag is 404', async () => {
    const before = await lastEventId(ctx);
    expectError(await ctx.admin.delete(`/api/admin/archive/${uniqueName('nope')}`), 404, 'NotFoundError');
    assert.deepEqual(await eventsSince(ctx, before), []);
  });
});

describe('marking flags stale in bulk', () => {
  test('POST /stale marks each flag and records feature-stale-on for each', async () => {
    const project = await createProject(ctx);
    const [a, b] = [await createFlag(project), await createFlag(project)].sort(byName);
    const untouched = await createFlag(project);
    const before = await lastEventId(ctx);
    expectStatus(await ctx.admin.post(`/api/admin/projects/${project}/stale`, { features: [a!.name, b!.name], stale: true }), 202);
    assert.deepEqual((await listFlags(project)).sort(byName), [{ ...a!, stale: true }, { ...b!, stale: true }, untouched].sort(byName));
    const events = (await eventsSince(ctx, before)).sort((x, y) => x.featureName!.localeCompare(y.featureName!));
    assertEvents(
      events,
      [a!, b!].map((flag) => ({
        type: 'feature-stale-on',
        featureName: flag.name,
        project,
        data: { stale: true },
        preData: { stale: false },
      })),
    );

    const offBefore = await lastEventId(ctx);
    expectStatus(await ctx.admin.post(`/api/admin/projects/${project}/stale`, { features: [a!.name], stale: false }), 202);
    assert.equal((await getFlag(project, a!.name)).stale, false);
    assert.equal((await getFlag(project, b!.name)).stale, true);
    assertEvents(await eventsSince(ctx, offBefore), [
      { type: 'feature-stale-off', featureName: a!.name, project, data: { stale: false }, preData: { stale: true } },
    ]);
  });

  test('marking an already stale flag stale records nothing', async () => {
    const project = await createProject(ctx);
    const flag = await createFlag(project);
    expectStatus(await ctx.admin.post(`/api/admin/projects/${project}/stale`, { features: [flag.name], stale: true }), 202);
    const before = await lastEventId(ctx);
    expectStatus(await ctx.admin.post(`/api/admin/projects/${project}/stale`, { features: [flag.name], stale: true }), 202);
    assert.equal((await getFlag(project, flag.name)).stale, true);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('a list with an unknown flag is 404 and marks none', async () => {
    const project = await createProject(ctx);
    const flag = await createFlag(project);
    const before = await lastEventId(ctx);
    expectError(
      await ctx.admin.post(`/api/admin/projects/${project}/stale`, { features: [flag.name, 'no-such-flag'], stale: true }),
      404,
      'NotFoundError',
    );
    assert.deepEqual(await getFlag(project, flag.name), flag);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('a missing stale value is 400', async () => {
    const project = await createProject(ctx);
    const flag = await createFlag(project);
    const before = await lastEventId(ctx);
    const error = expectError(await ctx.admin.post(`/api/admin/projects/${project}/stale`, { features: [flag.name] }), 400, 'BadDataError');
    assertDetailAt(error, '/body/stale');
    assert.deepEqual(await getFlag(project, flag.name), flag);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });
});

describe('moving a flag to another project', () => {
  /** A move that is refused: the error, after checking that the flag stayed as it was and no event was recorded. */
  async function refusedMove(from: string, flagName: string, to: string, status: number, name: string) {
    const stored = await getFlag(from, flagName);
    const before = await lastEventId(ctx);
    const error = expectError(
      await ctx.admin.post(`/api/admin/projects/${from}/features/${flagName}/changeProject`, { newProjectId: to }),
      status,
      name,
    );
    assert.deepEqual(await getFlag(from, flagName), stored);
    assert.deepEqual(await eventsSince(ctx, before), []);
    return error;
  }

  test('moves it and records feature-project-change under the new project', async () => {
    const from = await createProject(ctx);
    const to = await createProject(ctx);
    const flag = await createFlag(from, { description: 'mobile' });
    const before = await lastEventId(ctx);
    expectStatus(await ctx.admin.post(`/api/admin/projects/${from}/features/${flag.name}/changeProject`, { newProjectId: to }), 200);
    assert.deepEqual(await listFlags(from), []);
    expectError(await ctx.admin.get(`/api/admin/projects/${from}/features/${flag.name}`), 404, 'NotFoundError');
    const moved = await getFlag(to, flag.name);
    assert.deepEqual(moved, { ...flag, project: to });
    assert.deepEqual(await listFlags(to), [moved]);
    assertEvents(await eventsSince(ctx, before), [
      {
        type: 'feature-project-change',
        featureName: flag.name,
        project: to,
        data: { oldProject: from, newProject: to },
        preData: null,
      },
    ]);
  });

  test('to an unknown project is 404 and the flag stays', async () => {
    const from = await createProject(ctx);
    const flag = await createFlag(from);
    const ghost = uniqueName('ghost');
    const error = await refusedMove(from, flag.name, ghost, 404, 'NotFoundError');
    assert.match(error.message, new RegExp(ghost));
    assert.deepEqual(await listFlags(from), [flag]);
  });

  test('to a project lacking an environment the flag is enabled in is 409', async () => {
    const from = await createProject(ctx, { environments: ['development', 'production'] });
    const to = await createProject(ctx, { environments: ['development'] });
    const flag = await createFlag(from);
    expectStatus(await ctx.admin.post(`/api/admin/projects/${from}/features/${flag.name}/environments/production/on`), 200);
    const error = await refusedMove(from, flag.name, to, 409, 'ConflictError');
    assert.match(error.message, /"production"/);
    assert.deepEqual(await listFlags(to), []);
  });

  test('to a project lacking an environment the flag has strategies in is 409', async () => {
    const from = await createProject(ctx, { environments: ['development', 'production'] });
    const to = await createProject(ctx, { environments: ['development'] });
    const flag = await createFlag(from);
    expectStatus(
      await ctx.admin.post(`/api/admin/projects/${from}/features/${flag.name}/environments/production/strategies`, {
        name: 'flexibleRollout',
        parameters: { rollout: '50' },
      }),
      200,
    );
    const error = await refusedMove(from, flag.name, to, 409, 'ConflictError');
    assert.match(error.message, /"production"/);
    assert.deepEqual(await listFlags(to), []);
  });

  test('an archived flag is 400', async () => {
    const from = await createProject(ctx);
    const to = await createProject(ctx);
    const flag = await createFlag(from);
    await archive(from, flag.name);
    const archived = await listArchived(from);
    const before = await lastEventId(ctx);
    expectError(
      await ctx.admin.post(`/api/admin/projects/${from}/features/${flag.name}/changeProject`, { newProjectId: to }),
      400,
      'BadDataError',
    );
    assert.deepEqual(await listArchived(from), archived);
    assert.deepEqual(await listArchived(to), []);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('an invalid project id is 400', async () => {
    const from = await createProject(ctx);
    const flag = await createFlag(from);
    assertDetailAt(await refusedMove(from, flag.name, 'a b', 400, 'BadDataError'), '/body/newProjectId');
    assert.deepEqual(await listFlags(from), [flag]);
  });
});

describe('deleting a project that has flags', () => {
  test('is 409 ConflictError and keeps the project and its flags', async () => {
    const project = await createProject(ctx);
    const flag = await createFlag(project);
    const projectBefore = (await ctx.admin.get(`/api/admin/projects/${project}`)).json();
    const before = await lastEventId(ctx);
    const error = expectError(await ctx.admin.delete(`/api/admin/projects/${project}`), 409, 'ConflictError');
    assert.match(error.message, new RegExp(project));
    const projectAfter = await ctx.admin.get(`/api/admin/projects/${project}`);
    expectStatus(projectAfter, 200);
    assert.deepEqual(projectAfter.json(), projectBefore);
    assert.deepEqual(await listFlags(project), [flag]);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('is 409 also when its only flag is archived', async () => {
    const project = await createProject(ctx);
    const flag = await createFlag(project);
    await archive(project, flag.name);
    const archived = await listArchived(project);
    const before = await lastEventId(ctx);
    expectError(await ctx.admin.delete(`/api/admin/projects/${project}`), 409, 'ConflictError');
    expectStatus(await ctx.admin.get(`/api/admin/projects/${project}`), 200);
    assert.deepEqual(await listArchived(project), archived);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });
});

describe('flag types', () => {
  test('lists the five types with the days until a flag of each is potentially stale', async () => {
    const viewer = await createUserSession(ctx, 'Viewer');
    const answer = await getOk<{
      version: number;
      types: Array<{ id: string; name: string; description: string; lifetimeDays: number | null }>;
    }>(ctx.withCookie(viewer.cookie), '/api/admin/feature-types');
    assert.equal(answer.version, 1);
    assert.deepEqual(
      answer.types.map(({ id, name, lifetimeDays }) => [id, name, lifetimeDays]),
      [
        ['release', 'Release', 40],
        ['experiment', 'Experiment', 40],
        ['operational', 'Operational', 7],
        ['kill-switch', 'Kill switch', null],
        ['permission', 'Permission', null],
        ['sunset', 'Sunset', 90],
      ],
    );
    assert.deepEqual(
      answer.types.map((type) => type.id),
      FEATURE_TYPES,
    );
    assert.ok(answer.types.every((type) => type.description.length > 0));
  });
});

describe('validating a flag name', () => {
  const validate = (body: unknown) => ctx.admin.post('/api/admin/features/validate', body);

  test('a free name is 200, in a project too, and creates nothing', async () => {
    const project = await createProject(ctx);
    const name = uniqueName('free');
    const before = await lastEventId(ctx);
    expectStatus(await validate({ name }), 200);
    expectStatus(await validate({ name, projectId: project }), 200);
    expectStatus(await validate({ name, projectId: null }), 200);
    assert.deepEqual(await listFlags(project), []);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('a name taken by a flag anywhere, archived ones included, is 409', async () => {
    const project = await createProject(ctx);
    const other = await createProject(ctx);
    const live = await createFlag(project);
    const archived = await createFlag(project);
    await archive(project, archived.name);
    for (const [name, projectId] of [
      [live.name, project],
      [live.name, other],
      [archived.name, undefined],
    ]) {
      const error = expectError(await validate({ name, projectId }), 409, 'NameExistsError');
      assert.match(error.message, new RegExp(`"${name}" already exists`));
    }
  });

  test('a name that is not URL-friendly, an unknown project and unknown properties are refused', async () => {
    assertDetailAt(expectError(await validate({ name: 'has space' }), 400, 'BadDataError'), '/body/name');
    assertDetailAt(expectError(await validate({}), 400, 'BadDataError'), '/body/name');
    assertDetailAt(expectError(await validate({ name: uniqueName('x'), colour: 'red' }), 400, 'BadDataError'), '/body/colour');
    const error = expectError(await validate({ name: uniqueName('x'), projectId: uniqueName('nowhere') }), 404, 'NotFoundError');
    assert.match(error.message, /project/);
  });
});

describe('a flag in one environment', () => {
  test('is what the flag lists for that environment, for a Viewer too', async () => {
    const viewer = await createUserSession(ctx, 'Viewer');
    const project = await createProject(ctx);
    const flag = await createFlag(project);
    expectStatus(await ctx.admin.post(`/api/admin/projects/${project}/features/${flag.name}/environments/development/on`), 200);
    const whole = await getFlag(project, flag.name);
    const one = await getOk<FeatureEnvironment>(
      ctx.withCookie(viewer.cookie),
      `/api/admin/projects/${project}/features/${flag.name}/environments/development`,
    );
    assert.deepEqual(
      one,
      whole.environments.find((environment) => environment.name === 'development'),
    );
    assert.equal(one.enabled, true);
    assert.equal(one.strategies.length, 1);
  });

  test('an environment the project does not have, an unknown flag and a flag of another project are 404', async () => {
    const project = await createProject(ctx, { environments: ['development'] });
    const other = await createProject(ctx);
    const flag = await createFlag(project);
    const path = (p: string, f: string, e: string) => `/api/admin/projects/${p}/features/${f}/environments/${e}`;
    expectError(await ctx.admin.get(path(project, flag.name, 'production')), 404, 'NotFoundError');
    expectError(await ctx.admin.get(path(project, uniqueName('nope'), 'development')), 404, 'NotFoundError');
    expectError(await ctx.admin.get(path(other, flag.name, 'development')), 404, 'NotFoundError');
  });
});

describe('turning flags on and off in bulk', () => {
  const bulk = (project: string, environment: string, action: 'on' | 'off') =>
    `/api/admin/projects/${project}/bulk_features/environments/${environment}/${action}`;
  const enabledIn = async (project: string, name: string, environment: string) =>
    (await getFlag(project, name)).environments.find((entry) => entry.name === environment)?.enabled;

  test('turns each flag on, then off, in that environment only, recording an event for each', async () => {
    const project = await createProject(ctx);
    const first = await createFlag(project);
    const second = await createFlag(project);
    const before = await lastEventId(ctx);
    expectStatus(await ctx.admin.post(bulk(project, 'development', 'on'), { features: [first.name, second.name] }), 200);
    assert.deepEqual(
      [await enabledIn(project, first.name, 'development'), await enabledIn(project, second.name, 'development')],
      [true, true],
    );
    assert.equal(await enabledIn(project, first.name, 'production'), false);
    const turnedOn = (await eventsSince(ctx, before)).filter((event) => event.type === 'feature-environment-enabled');
    assert.deepEqual(
      turnedOn.map((event) => [event.featureName, event.environment]).sort(),
      [
        [first.name, 'development'],
        [second.name, 'development'],
      ].sort(),
    );
    expectStatus(await ctx.admin.post(bulk(project, 'development', 'off'), { features: [first.name, second.name] }), 200);
    assert.deepEqual(
      [await enabledIn(project, first.name, 'development'), await enabledIn(project, second.name, 'development')],
      [false, false],
    );
  });

  test('an unknown flag in the list is 404 and turns none on', async () => {
    const project = await createProject(ctx);
    const flag = await createFlag(project);
    const before = await lastEventId(ctx);
    expectError(
      await ctx.admin.post(bulk(project, 'development', 'on'), { features: [flag.name, uniqueName('nope')] }),
      404,
      'NotFoundError',
    );
    assert.equal(await enabledIn(project, flag.name, 'development'), false);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('an empty or missing list is 400, and a Viewer is refused with 403', async () => {
    const project = await createProject(ctx);
    const flag = await createFlag(project);
    assertDetailAt(
      expectError(await ctx.admin.post(bulk(project, 'development', 'on'), { features: [] }), 400, 'BadDataError'),
      '/body/features',
    );
    assertDetailAt(expectError(await ctx.admin.post(bulk(project, 'development', 'on'), {}), 400, 'BadDataError'), '/body/features');
    const viewer = await createUserSession(ctx, 'Viewer');
    const error = expectError(
      await ctx.withCookie(viewer.cookie).post(bulk(project, 'development', 'on'), { features: [flag.name] }),
      403,
      'PermissionError',
    );
    assert.deepEqual(error.permissions, ['UPDATE_FEATURE_ENVIRONMENT']);
    assert.equal(await enabledIn(project, flag.name, 'development'), false);
  });
});

describe('cloning a flag', () => {
  const flagPath = (project: string, name: string) => `/api/admin/projects/${project}/features/${name}`;
  const clone = (project: string, source: string, body: unknown) => ctx.admin.post(`${flagPath(project, source)}/clone`, body);

  /** A flag with variants, strategies (one with a groupId, a constraint and a segment) and a parent, turned on. */
  async function richFlag(project: string) {
    const parent = await createFlag(project);
    const source = await createFlag(project, { type: 'experiment', description: 'The original', impressionData: true });
    const segment = await ctx.admin.post('/api/admin/segments', { name: uniqueName('seg'), constraints: [] });
    expectStatus(segment, 201);
    const segmentId = (segment.json() as { id: number }).id;
    const strategies = (environment: string) => `${flagPath(project, source.name)}/environments/${environment}/strategies`;
    expectStatus(
      await ctx.admin.post(strategies('development'), {
        name: 'flexibleRollout',
        title: 'Half',
        parameters: { rollout: '50', stickiness: 'default', groupId: source.name },
        constraints: [{ contextName: 'userId', operator: 'IN', values: ['a'] }],
        segments: [segmentId],
      }),
      200,
    );
    expectStatus(await ctx.admin.post(strategies('production'), { name: 'default' }), 200);
    expectStatus(
      await ctx.admin.put(`${flagPath(project, source.name)}/environments/development/variants`, [
        { name: 'blue', weight: 1000, weightType: 'variable', stickiness: 'default' },
      ]),
      200,
    );
    expectStatus(await ctx.admin.post(`${flagPath(project, source.name)}/dependencies`, { feature: parent.name }), 200);
    expectStatus(await ctx.admin.post(`${flagPath(project, source.name)}/environments/development/on`), 200);
    return { source: await getFlag(project, source.name), parent };
  }

  /** What a clone keeps of an environment: everything but ids and whether it is on. */
  const copiedOf = (environment: FeatureEnvironment, groupId?: string) => ({
    name: environment.name,
    variants: environment.variants,
    strategies: (environment.strategies as Array<Record<string, unknown> & { parameters: Record<string, string> }>).map(
      ({ id: _id, featureName: _name, ...strategy }) => ({
        ...strategy,
        parameters: groupId && 'groupId' in strategy.parameters ? { ...strategy.parameters, groupId } : strategy.parameters,
      }),
    ),
  });

  test('copies type, description, impression data, variants, strategies and parents, regrouped, and starts off', async () => {
    const project = await createProject(ctx);
    const { source, parent } = await richFlag(project);
    const name = uniqueName('copy');
    const before = await lastEventId(ctx);
    const response = await clone(project, source.name, { name });
    expectStatus(response, 200);
    const copy = response.json() as Feature;
    assert.deepEqual(copy, await getFlag(project, name));
    assert.deepEqual([copy.type, copy.description, copy.impressionData, copy.project], ['experiment', 'The original', true, project]);
    assert.deepEqual(
      copy.environments.map((environment) => copiedOf(environment)),
      source.environments.map((environment) => copiedOf(environment, name)),
    );
    assert.deepEqual(
      copy.environments.map((environment) => [environment.name, environment.enabled]),
      source.environments.map((environment) => [environment.name, false]),
    );
    assert.deepEqual(copy.dependencies, [{ feature: parent.name, enabled: true, variants: [] }]);
    assert.deepEqual(copy.tags, []);
    const events = await eventsSince(ctx, before);
    assert.equal(events[0]?.type, 'feature-created');
    assert.ok(events.every((event) => event.featureName === name));
    // The source is unchanged.
    assert.deepEqual(await getFlag(project, source.name), source);
  });

  test('replaceGroupId false keeps the groupId of the source', async () => {
    const project = await createProject(ctx);
    const { source } = await richFlag(project);
    const name = uniqueName('same-group');
    expectStatus(await clone(project, source.name, { name, replaceGroupId: false }), 200);
    assert.deepEqual(
      (await getFlag(project, name)).environments.map((environment) => copiedOf(environment)),
      source.environments.map((environment) => copiedOf(environment)),
    );
  });

  test('a taken or bad name, an unknown or archived source and a Viewer are refused, creating nothing', async () => {
    const project = await createProject(ctx);
    const source = await createFlag(project);
    const taken = await createFlag(project);
    const archived = await createFlag(project);
    await archive(project, archived.name);
    const viewer = await createUserSession(ctx, 'Viewer');
    const flagsBefore = await listFlags(project);
    const before = await lastEventId(ctx);
    expectError(await clone(project, source.name, { name: taken.name }), 409, 'NameExistsError');
    assertDetailAt(expectError(await clone(project, source.name, { name: 'has space' }), 400, 'BadDataError'), '/body/name');
    assertDetailAt(
      expectError(await clone(project, source.name, { name: uniqueName('x'), colour: 1 }), 400, 'BadDataError'),
      '/body/colour',
    );
    expectError(await clone(project, uniqueName('nope'), { name: uniqueName('x') }), 404, 'NotFoundError');
    expectError(await clone(project, archived.name, { name: uniqueName('x') }), 400, 'BadDataError');
    const refused = expectError(
      await ctx.withCookie(viewer.cookie).post(`${flagPath(project, source.name)}/clone`, { name: uniqueName('x') }),
      403,
      'PermissionError',
    );
    assert.deepEqual(refused.permissions, ['CREATE_FEATURE']);
    assert.deepEqual(await listFlags(project), flagsBefore);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });
});
