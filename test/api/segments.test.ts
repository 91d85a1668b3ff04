import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { expectError, expectStatus, assertEvents, getOk, onlyEvent, expectRefused } from '../helpers/assertions.js';
import { eventsSince, lastEventId } from '../helpers/events.js';
import { createUserSession, uniqueName, sendMalformedJson } from '../helpers/fixtures.js';
import { useTestApp } from '../helpers/test-app.js';
import { createFlag, createProject, projectPath } from '../helpers/projects.js';

const ctx = useTestApp();

interface Segment {
  id: number;
  name: string;
  description: string | null;
  project: string | null;
  constraints: unknown[];
  createdAt: string;
  createdBy: string | null;
}
type AdminSegment = Segment & { usedInFeatures: number; usedInProjects: number };

const userIn = (...values: string[]) => ({ contextName: 'userId', operator: 'IN', values });
const storedUserIn = (...values: string[]) => ({ ...userIn(...values), caseInsensitive: false, inverted: false });

async function createSegment(body: Record<string, unknown> = {}): Promise<Segment> {
  const response = await ctx.admin.post('/api/admin/segments', { name: uniqueName('seg'), constraints: [userIn('u1')], ...body });
  expectStatus(response, 201);
  return response.json() as Segment;
}

async function listSegments(): Promise<AdminSegment[]> {
  const response = await ctx.admin.get('/api/admin/segments');
  expectStatus(response, 200);
  return (response.json() as { segments: AdminSegment[] }).segments;
}

async function getSegment(id: number): Promise<AdminSegment> {
  return getOk<AdminSegment>(ctx.admin, `/api/admin/segments/${id}`);
}

const strategiesUrl = (project: string, flag: string, environment: string) =>
  `/api/admin/projects/${project}/features/${flag}/environments/${environment}/strategies`;

async function addStrategy(project: string, flag: string, environment: string, segments: number[]): Promise<string> {
  const response = await ctx.admin.post(strategiesUrl(project, flag, environment), { name: 'default', segments });
  expectStatus(response, 200);
  return (response.json() as { id: string }).id;
}

describe('segments', () => {
  test('creating stores normalized constraints, lists and shows the segment, and records segment-created', async () => {
    const name = uniqueName('beta');
    const before = await lastEventId(ctx);
    const response = await ctx.admin.post('/api/admin/segments', {
      name,
      description: 'Beta testers',
      constraints: [userIn('a', 'b'), { contextName: 'appName', operator: 'NUM_GT', values: ['5'], inverted: true }],
    });
    expectStatus(response, 201);
    const created = response.json() as Segment;
    assert.ok(Number.isInteger(created.id) && created.id > 0);
    assert.deepEqual(created, {
      id: created.id,
      name,
      description: 'Beta testers',
      project: null,
      constraints: [
        storedUserIn('a', 'b'),
        { contextName: 'appName', operator: 'NUM_GT', value: '5', caseInsensitive: false, inverted: true },
      ],
      createdAt: created.createdAt,
      createdBy: 'admin-token',
    });
    assert.ok(!Number.isNaN(Date.parse(created.createdAt)));
    const shown = { ...created, usedInFeatures: 0, usedInProjects: 0 };
    assert.deepEqual(await getSegment(created.id), shown);
    assert.deepEqual(
      (await listSegments()).find((s) => s.id === created.id),
      shown,
    );

    const [event, ...rest] = await eventsSince(ctx, before);
    assert.deepEqual(rest, []);
    assertEvents([event!], [{ type: 'segment-created', featureName: null, project: null, data: created, preData: null }]);
  });

  test('a project segment records its project; an unknown project is a 404 that stores nothing', async () => {
    const project = await createProject(ctx);
    const before = await lastEventId(ctx);
    const created = await createSegment({ project });
    assert.equal(created.project, project);
    const [event] = await eventsSince(ctx, before);
    assert.equal(event!.project, project);

    const name = uniqueName('orphan');
    const after = await lastEventId(ctx);
    const error = expectError(
      await ctx.admin.post('/api/admin/segments', { name, project: uniqueName('ghost'), constraints: [] }),
      404,
      'NotFoundError',
    );
    assert.match(error.message, /project/);
    assert.ok(!(await listSegments()).some((s) => s.name === name));
    assert.deepEqual(await eventsSince(ctx, after), []);
  });

  test('updating replaces the segment (204, as Unleash) and records segment-updated; an unchanged PUT records nothing', async () => {
    const project = await createProject(ctx);
    const created = await createSegment({ description: 'old' });
    const before = await lastEventId(ctx);
    const name = uniqueName('renamed');
    const body = { name, description: 'new', project, constraints: [userIn('x')] };
    const response = await ctx.admin.put(`/api/admin/segments/${created.id}`, body);
    expectStatus(response, 204);
    assert.equal(response.body, '');
    const { usedInFeatures: _features, usedInProjects: _projects, ...updated } = await getSegment(created.id);
    assert.deepEqual(updated, { ...created, name, description: 'new', project, constraints: [storedUserIn('x')] });
    const event = onlyEvent(await eventsSince(ctx, before), 'segment-updated');
    assert.equal(event!.project, project);
    assert.deepEqual(event!.data, updated);
    assert.deepEqual(event!.preData, created);

    const same = await lastEventId(ctx);
    expectStatus(await ctx.admin.put(`/api/admin/segments/${created.id}`, body), 204);
    assert.deepEqual(await eventsSince(ctx, same), []);
  });

  test('deleting an unused segment (204, as Unleash) records segment-deleted with the segment as preData', async () => {
    const project = await createProject(ctx);
    const created = await createSegment({ project });
    const before = await lastEventId(ctx);
    expectStatus(await ctx.admin.delete(`/api/admin/segments/${created.id}`), 204);
    expectError(await ctx.admin.get(`/api/admin/segments/${created.id}`), 404, 'NotFoundError');
    assert.ok(!(await listSegments()).some((s) => s.id === created.id));
    const event = onlyEvent(await eventsSince(ctx, before), 'segment-deleted');
    assert.equal(event!.project, project);
    assert.equal(event!.data, null);
    assert.deepEqual(event!.preData, created);
  });

  test('validate answers 204 for a free name and 409 for a taken one', async () => {
    const created = await createSegment();
    expectStatus(await ctx.admin.post('/api/admin/segments/validate', { name: uniqueName('free') }), 204);
    const error = expectError(await ctx.admin.post('/api/admin/segments/validate', { name: created.name }), 409, 'NameExistsError');
    assert.match(error.message, new RegExp(created.name));
  });

  test('an Editor creates segments under their own name', async () => {
    const editor = await createUserSession(ctx, 'Editor');
    const response = await ctx.withCookie(editor.cookie).post('/api/admin/segments', { name: uniqueName('ed'), constraints: [] });
    expectStatus(response, 201);
    assert.equal((response.json() as Segment).createdBy, editor.username);
  });
});

describe('segments used by strategies', () => {
  test('show their usage, list their strategies, and cannot be deleted while used', async () => {
    const project = await createProject(ctx);
    const segment = await createSegment();
    const flag = await createFlag(ctx, project);
    const other = await createFlag(ctx);
    const devStrategy = await addStrategy(project, flag, 'development', [segment.id]);
    const prodStrategy = await addStrategy(project, flag, 'production', [segment.id]);
    const otherStrategy = await addStrategy('default', other, 'production', [segment.id]);

    const shown = await getSegment(segment.id);
    assert.equal(shown.usedInFeatures, 2);
    assert.equal(shown.usedInProjects, 2);

    const strategies = await ctx.admin.get(`/api/admin/segments/${segment.id}/strategies`);
    expectStatus(strategies, 200);
    const expected = [
      { id: devStrategy, featureName: flag, projectId: project, environment: 'development', strategyName: 'default' },
      { id: prodStrategy, featureName: flag, projectId: project, environment: 'production', strategyName: 'default' },
      { id: otherStrategy, featureName: other, projectId: 'default', environment: 'production', strategyName: 'default' },
    ].sort((a, b) => a.featureName.localeCompare(b.featureName) || a.environment.localeCompare(b.environment));
    assert.deepEqual(strategies.json(), { strategies: expected });

    const before = await lastEventId(ctx);
    const error = expectError(await ctx.admin.delete(`/api/admin/segments/${segment.id}`), 409, 'ConflictError');
    assert.match(error.message, new RegExp(`flag "${flag}" \\(development, production\\)`));
    assert.match(error.message, new RegExp(`flag "${other}" \\(production\\)`));
    assert.deepEqual(await getSegment(segment.id), shown);
    assert.deepEqual(await eventsSince(ctx, before), []);

    for (const [p, f, environment, id] of [
      [project, flag, 'development', devStrategy],
      [project, flag, 'production', prodStrategy],
      ['default', other, 'production', otherStrategy],
    ] as const) {
      expectStatus(await ctx.admin.delete(`${strategiesUrl(p, f, environment)}/${id}`), 200);
    }
    expectStatus(await ctx.admin.delete(`/api/admin/segments/${segment.id}`), 204);
  });

  test('an archived flag still holds its segment, and the message says it is archived', async () => {
    const segment = await createSegment();
    const flag = await createFlag(ctx);
    await addStrategy('default', flag, 'development', [segment.id]);
    expectStatus(await ctx.admin.delete(`/api/admin/projects/default/features/${flag}`), 202);
    const error = expectError(await ctx.admin.delete(`/api/admin/segments/${segment.id}`), 409, 'ConflictError');
    assert.match(error.message, new RegExp(`flag "${flag}" \\(development, archived\\)`));
  });

  test('cannot move into a project while flags of other projects use it', async () => {
    const project = await createProject(ctx);
    const segment = await createSegment();
    const flag = await createFlag(ctx);
    await addStrategy('default', flag, 'development', [segment.id]);
    const before = await lastEventId(ctx);
    const error = expectError(
      await ctx.admin.put(`/api/admin/segments/${segment.id}`, { name: segment.name, project, constraints: segment.constraints }),
      409,
      'ConflictError',
    );
    assert.match(error.message, new RegExp(`flag "${flag}"`));
    assert.equal((await getSegment(segment.id)).project, null);
    assert.deepEqual(await eventsSince(ctx, before), []);
    // Its own project's flags are fine.
    expectStatus(
      await ctx.admin.put(`/api/admin/segments/${segment.id}`, { name: segment.name, project: 'default', constraints: [] }),
      204,
    );
  });

  test('a strategy naming an unknown segment is a 404 and adds no strategy', async () => {
    const flag = await createFlag(ctx);
    const before = await lastEventId(ctx);
    const error = expectError(
      await ctx.admin.post(strategiesUrl('default', flag, 'development'), { name: 'default', segments: [999_999] }),
      404,
      'NotFoundError',
    );
    assert.match(error.message, /999999/);
    const strategies = await ctx.admin.get(strategiesUrl('default', flag, 'development'));
    assert.deepEqual(strategies.json(), []);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });
});

describe('bad input for segments', () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['an empty name', { name: '' }, '/body/name'],
    ['a name of only spaces', { name: '   ' }, '/body/name'],
    ['a name of 256 characters', { name: 'n'.repeat(256) }, '/body/name'],
    ['a missing constraints list', { constraints: undefined }, '/body/constraints'],
    ['an unknown property', { owner: 'me' }, '/body/owner'],
    ['an invalid project id', { project: 'has space' }, '/body/project'],
    [
      'a constraint with an unknown operator',
      { constraints: [{ contextName: 'userId', operator: 'LIKE', values: ['a'] }] },
      '/body/constraints/0/operator',
    ],
    ['a constraint with an unknown property', { constraints: [{ ...userIn('a'), negate: true }] }, '/body/constraints/0/negate'],
    [
      'NUM_GT with a non-number',
      { constraints: [userIn('a'), { contextName: 'age', operator: 'NUM_GT', value: 'ten' }] },
      '/body/constraints/1/value',
    ],
    [
      'DATE_AFTER with a non-date',
      { constraints: [{ contextName: 'currentTime', operator: 'DATE_AFTER', value: '2024-13-45' }] },
      '/body/constraints/0/value',
    ],
    [
      'SEMVER_GT with a non-semver',
      { constraints: [{ contextName: 'version', operator: 'SEMVER_GT', value: '1.2' }] },
      '/body/constraints/0/value',
    ],
    ['IN without values', { constraints: [{ contextName: 'userId', operator: 'IN', values: [] }] }, '/body/constraints/0/values'],
  ];
  for (const [label, overrides, path] of cases) {
    test(`creating with ${label} is a 400 that stores nothing`, async () => {
      const name = uniqueName('bad');
      const body = { name, constraints: [userIn('u')], ...overrides };
      await expectRefused(
        ctx,
        () => ctx.admin.post('/api/admin/segments', body),
        { status: 400, name: 'BadDataError', path },
        listSegments,
      );
    });
  }

  test('updating with a non-semver SEMVER_EQ is a 400 that keeps the segment as it was', async () => {
    const segment = await createSegment();
    const before = await lastEventId(ctx);
    const error = expectError(
      await ctx.admin.put(`/api/admin/segments/${segment.id}`, {
        name: segment.name,
        constraints: [{ contextName: 'version', operator: 'SEMVER_EQ', value: 'latest' }],
      }),
      400,
      'BadDataError',
    );
    assert.equal(error.details[0]!.path, '/body/constraints/0/value');
    assert.match(error.details[0]!.message, /"latest"/);
    assert.deepEqual(await getSegment(segment.id), { ...segment, usedInFeatures: 0, usedInProjects: 0 });
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('malformed JSON is a 400 at /body', async () => {
    const before = await lastEventId(ctx);
    const error = expectError(
      await sendMalformedJson(ctx.admin, 'POST', '/api/admin/segments', '{"name": "x", "constraints": ['),
      400,
      'BadDataError',
    );
    assert.equal(error.details[0]!.path, '/body');
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('a duplicate name is a 409 NameExistsError, on create and on rename', async () => {
    const first = await createSegment({ description: 'first' });
    const second = await createSegment();
    const before = await lastEventId(ctx);
    const error = expectError(await ctx.admin.post('/api/admin/segments', { name: first.name, constraints: [] }), 409, 'NameExistsError');
    assert.match(error.message, new RegExp(first.name));
    expectError(await ctx.admin.put(`/api/admin/segments/${second.id}`, { name: first.name, constraints: [] }), 409, 'NameExistsError');
    assert.equal((await getSegment(second.id)).name, second.name);
    assert.equal((await listSegments()).filter((s) => s.name === first.name).length, 1);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('a non-numeric id is a 400 on every segment route', async () => {
    const before = await lastEventId(ctx);
    for (const response of [
      await ctx.admin.get('/api/admin/segments/abc'),
      await ctx.admin.put('/api/admin/segments/abc', { name: 'x', constraints: [] }),
      await ctx.admin.delete('/api/admin/segments/1.5'),
      await ctx.admin.get('/api/admin/segments/-1/strategies'),
    ]) {
      const error = expectError(response, 400, 'BadDataError');
      assert.equal(error.details[0]!.path, '/params/id');
    }
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('an unknown id is a 404 on every segment route', async () => {
    const before = await lastEventId(ctx);
    for (const response of [
      await ctx.admin.get('/api/admin/segments/987654321'),
      await ctx.admin.put('/api/admin/segments/987654321', { name: uniqueName('x'), constraints: [] }),
      await ctx.admin.delete('/api/admin/segments/987654321'),
      await ctx.admin.get('/api/admin/segments/987654321/strategies'),
    ]) {
      assert.match(expectError(response, 404, 'NotFoundError').message, /segment 987654321/);
    }
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('a Viewer may read segments but not create, update or delete them', async () => {
    const segment = await createSegment();
    const viewer = ctx.withCookie((await createUserSession(ctx, 'Viewer')).cookie);
    const before = await lastEventId(ctx);
    expectStatus(await viewer.get('/api/admin/segments'), 200);
    expectStatus(await viewer.get(`/api/admin/segments/${segment.id}`), 200);
    const cases = [
      [await viewer.post('/api/admin/segments', { name: uniqueName('v'), constraints: [] }), 'CREATE_SEGMENT'],
      [await viewer.put(`/api/admin/segments/${segment.id}`, { name: 'changed', constraints: [] }), 'UPDATE_SEGMENT'],
      [await viewer.delete(`/api/admin/segments/${segment.id}`), 'DELETE_SEGMENT'],
    ] as const;
    for (const [response, permission] of cases) {
      assert.deepEqual(expectError(response, 403, 'PermissionError').permissions, [permission]);
    }
    assert.deepEqual(await getSegment(segment.id), { ...segment, usedInFeatures: 0, usedInProjects: 0 });
    assert.deepEqual(await eventsSince(ctx, before), []);
  });
});

describe("a strategy's segments", () => {
  test('lists the segments a strategy uses, by name; an unknown strategy is a 404, an id that is no UUID a 400', async () => {
    const flag = await createFlag(ctx);
    const made = await Promise.all(
      ['zeta', 'alpha'].map(async (prefix) => {
        const response = await ctx.admin.post('/api/admin/segments', { name: uniqueName(prefix), constraints: [] });
        expectStatus(response, 201);
        return response.json() as { id: number; name: string };
      }),
    );
    const strategy = await ctx.admin.post(strategiesUrl('default', flag, 'development'), {
      name: 'default',
      segments: made.map((s) => s.id),
    });
    expectStatus(strategy, 200);
    const { id } = strategy.json() as { id: string };
    const { segments } = await getOk<{ segments: Array<{ id: number; name: string }> }>(ctx.admin, `/api/admin/segments/strategies/${id}`);
    assert.deepEqual(
      segments.map((segment) => segment.name),
      made.map((segment) => segment.name).sort(),
    );
    expectError(await ctx.admin.get('/api/admin/segments/strategies/00000000-0000-4000-8000-000000000000'), 404, 'NotFoundError');
    expectError(await ctx.admin.get('/api/admin/segments/strategies/no-such-strategy'), 400, 'BadDataError');
  });
});

describe("setting a strategy's segments (POST /api/admin/segments/strategies)", () => {
  const SET = '/api/admin/segments/strategies';
  const strategySegments = async (id: string) =>
    (await getOk<{ segments: Array<{ id: number }> }>(ctx.admin, `${SET}/${id}`)).segments.map((segment) => segment.id).sort();

  test('replaces the segments and nothing else, recorded as an update of the strategy', async () => {
    const project = await createProject(ctx, { environments: ['development', 'production'] });
    const flag = await createFlag(ctx, project);
    const [first, second, third] = [await createSegment(), await createSegment(), await createSegment()];
    const id = await addStrategy(project, flag, 'development', [first!.id]);
    const before = await lastEventId(ctx);
    const body = { projectId: project, environmentId: 'development', strategyId: id, segmentIds: [third!.id, second!.id] };
    const response = await ctx.admin.post(SET, body);
    expectStatus(response, 201);
    assert.deepEqual(response.json(), { ...body, segmentIds: [second!.id, third!.id].sort((a, b) => a - b) });
    assert.deepEqual(
      await strategySegments(id),
      [second!.id, third!.id].sort((a, b) => a - b),
    );
    const event = onlyEvent(await eventsSince(ctx, before), 'feature-strategy-update');
    assert.deepEqual(
      [(event.preData as { segments: number[] }).segments, event.environment, event.featureName],
      [[first!.id], 'development', flag],
    );
    expectStatus(await ctx.admin.post(SET, { ...body, segmentIds: [] }), 201);
    assert.deepEqual(await strategySegments(id), []);
  });

  test("the project and environment named must be the strategy's own; bad input is a 400; nothing changes", async () => {
    const project = await createProject(ctx, { environments: ['development', 'production'] });
    const other = await createProject(ctx);
    const flag = await createFlag(ctx, project);
    const segment = await createSegment();
    const id = await addStrategy(project, flag, 'development', [segment.id]);
    const read = () => strategySegments(id);
    const body = { projectId: project, environmentId: 'development', strategyId: id, segmentIds: [] as number[] };
    for (const wrong of [
      { projectId: other },
      { environmentId: 'production' },
      { strategyId: '00000000-0000-4000-8000-000000000000' },
      { segmentIds: [999_999] },
    ]) {
      await expectRefused(ctx, () => ctx.admin.post(SET, { ...body, ...wrong }), { status: 404, name: 'NotFoundError' }, read);
    }
    const cases: Array<[unknown, string]> = [
      [{ ...body, segmentIds: ['one'] }, '/body/segmentIds/0'],
      [{ ...body, strategyId: 'not-a-uuid' }, '/body/strategyId'],
      [{ ...body, extra: true }, '/body/extra'],
      [{ projectId: project, environmentId: 'development', strategyId: id }, '/body/segmentIds'],
    ];
    for (const [sent, path] of cases)
      await expectRefused(ctx, () => ctx.admin.post(SET, sent), { status: 400, name: 'BadDataError', path }, read);
  });

  test('a Viewer is refused; so is a role that may change strategies in development only, in production', async () => {
    const project = await createProject(ctx, { environments: ['development', 'production'] });
    const flag = await createFlag(ctx, project);
    const segment = await createSegment();
    const development = await addStrategy(project, flag, 'development', []);
    const production = await addStrategy(project, flag, 'production', []);
    const viewer = ctx.withCookie((await createUserSession(ctx, 'Viewer')).cookie);
    const send = (client: typeof viewer, environmentId: string, strategyId: string) =>
      client.post(SET, { projectId: project, environmentId, strategyId, segmentIds: [segment.id] });
    await expectRefused(
      ctx,
      () => send(viewer, 'development', development),
      { status: 403, name: 'PermissionError' },
      () => strategySegments(development),
    );

    const role = await ctx.admin.post('/api/admin/roles', {
      name: uniqueName('dev-strategies'),
      type: 'custom',
      permissions: [{ name: 'UPDATE_FEATURE_STRATEGY', environment: 'development' }],
    });
    expectStatus(role, 201);
    const developer = await createUserSession(ctx, 'Viewer');
    expectStatus(
      await ctx.admin.put(`${projectPath(project)}/users/${developer.id}/roles`, { roles: [(role.json() as { id: number }).id] }),
      200,
    );
    const asDeveloper = ctx.withCookie(developer.cookie);
    expectStatus(await send(asDeveloper, 'development', development), 201);
    assert.deepEqual(await strategySegments(development), [segment.id]);
    const refusal = await expectRefused(
      ctx,
      () => send(asDeveloper, 'production', production),
      { status: 403, name: 'PermissionError' },
      () => strategySegments(production),
    );
    assert.match(refusal.message, /in production/);
  });
});
