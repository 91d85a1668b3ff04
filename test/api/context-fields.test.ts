import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { expectError, expectStatus, assertEvents, expectRefused, getOk, onlyEvent } from '../helpers/assertions.js';
import { eventsSince, lastEventId } from '../helpers/events.js';
import { createUserSession, uniqueName, sendMalformedJson } from '../helpers/fixtures.js';
import { useTestApp } from '../helpers/test-app.js';
import { createFlag, createSegment } from '../helpers/projects.js';

const ctx = useTestApp();

interface ContextField {
  name: string;
  description: string | null;
  legalValues: Array<{ value: string; description?: string }>;
  stickiness: boolean;
  sortOrder: number;
  createdAt: string;
}

async function listFields(): Promise<ContextField[]> {
  return getOk<ContextField[]>(ctx.admin, '/api/admin/context');
}

async function getField(name: string): Promise<ContextField> {
  return getOk<ContextField>(ctx.admin, `/api/admin/context/${name}`);
}

async function createField(body: Record<string, unknown> = {}): Promise<ContextField> {
  const response = await ctx.admin.post('/api/admin/context', { name: uniqueName('field'), ...body });
  expectStatus(response, 201);
  return response.json() as ContextField;
}

describe('context fields', () => {
  test('a fresh install has the six built-in fields, in sort order', async () => {
    const builtIn = ['environment', 'userId', 'appName', 'sessionId', 'remoteAddress', 'currentTime'];
    const fields = (await listFields()).filter((f) => builtIn.includes(f.name));
    assert.deepEqual(
      fields.map(({ createdAt: _createdAt, ...field }) => field),
      [
        { name: 'environment', description: 'Allows you to constrain on environment', legalValues: [], stickiness: false, sortOrder: 0 },
        { name: 'userId', description: 'Allows you to constrain on userId', legalValues: [], stickiness: false, sortOrder: 1 },
        { name: 'appName', description: 'Allows you to constrain on application name', legalValues: [], stickiness: false, sortOrder: 2 },
        { name: 'sessionId', description: 'Allows you to constrain on sessionId', legalValues: [], stickiness: true, sortOrder: 3 },
        {
          name: 'remoteAddress',
          description: 'Allows you to constrain on remoteAddress',
          legalValues: [],
          stickiness: false,
          sortOrder: 4,
        },
        { name: 'currentTime', description: 'Allows you to constrain on date values', legalValues: [], stickiness: false, sortOrder: 5 },
      ],
    );
  });

  test('creating returns the field, lists and shows it, and records context-field-created', async () => {
    const name = uniqueName('region');
    const before = await lastEventId(ctx);
    const response = await ctx.admin.post('/api/admin/context', {
      name,
      description: 'Where the user is',
      legalValues: [{ value: 'eu', description: 'Europe' }, { value: 'us' }],
      stickiness: true,
      sortOrder: 7,
    });
    expectStatus(response, 201);
    const created = response.json() as ContextField;
    assert.deepEqual(created, {
      name,
      description: 'Where the user is',
      legalValues: [{ value: 'eu', description: 'Europe' }, { value: 'us' }],
      stickiness: true,
      sortOrder: 7,
      createdAt: created.createdAt,
    });
    assert.ok(!Number.isNaN(Date.parse(created.createdAt)));
    assert.deepEqual(await getField(name), created);
    assert.deepEqual(
      (await listFields()).find((f) => f.name === name),
      created,
    );

    const [event, ...rest] = await eventsSince(ctx, before);
    assert.deepEqual(rest, []);
    assertEvents([event!], [{ type: 'context-field-created', featureName: null, project: null, data: created, preData: null }]);
  });

  test("a field given only a name gets Unleash's defaults", async () => {
    const created = await createField();
    assert.deepEqual(
      { ...created, createdAt: undefined },
      { name: created.name, description: null, legalValues: [], stickiness: false, sortOrder: 10, createdAt: undefined },
    );
  });

  test('updating changes what is sent, keeps what is left out, and records context-field-updated', async () => {
    const created = await createField({ description: 'old', legalValues: [{ value: 'a' }], sortOrder: 3 });
    const before = await lastEventId(ctx);
    const response = await ctx.admin.put(`/api/admin/context/${created.name}`, { description: 'new', stickiness: true });
    expectStatus(response, 200);
    const updated = response.json() as ContextField;
    assert.deepEqual(updated, { ...created, description: 'new', stickiness: true });
    assert.deepEqual(await getField(created.name), updated);
    onlyEvent(await eventsSince(ctx, before), 'context-field-updated', { data: updated, preData: created });

    const replaced = (
      await ctx.admin.put(`/api/admin/context/${created.name}`, { legalValues: [{ value: 'b', description: 'bee' }] })
    ).json();
    assert.deepEqual(replaced, { ...updated, legalValues: [{ value: 'b', description: 'bee' }] });
  });

  test('an update that changes nothing records nothing', async () => {
    const created = await createField({ description: 'same', legalValues: [{ value: 'x' }] });
    const before = await lastEventId(ctx);
    const response = await ctx.admin.put(`/api/admin/context/${created.name}`, {
      description: 'same',
      legalValues: [{ value: 'x' }],
      sortOrder: 10,
    });
    expectStatus(response, 200);
    assert.deepEqual(response.json(), created);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('deleting an unused field records context-field-deleted', async () => {
    const created = await createField();
    const before = await lastEventId(ctx);
    expectStatus(await ctx.admin.delete(`/api/admin/context/${created.name}`), 200);
    expectError(await ctx.admin.get(`/api/admin/context/${created.name}`), 404, 'NotFoundError');
    assert.ok(!(await listFields()).some((f) => f.name === created.name));
    onlyEvent(await eventsSince(ctx, before), 'context-field-deleted', { data: null, preData: created });
  });

  test('validate answers 200 for a free name, 409 for a taken one and 400 for an invalid one', async () => {
    const before = await lastEventId(ctx);
    expectStatus(await ctx.admin.post('/api/admin/context/validate', { name: uniqueName('free') }), 200);
    const taken = expectError(await ctx.admin.post('/api/admin/context/validate', { name: 'userId' }), 409, 'NameExistsError');
    assert.match(taken.message, /"userId"/);
    const invalid = expectError(await ctx.admin.post('/api/admin/context/validate', { name: 'a b' }), 400, 'BadDataError');
    assert.equal(invalid.details[0]!.path, '/body/name');
    assert.deepEqual(await eventsSince(ctx, before), []);
  });
});

describe('deleting a context field in use', () => {
  test('is refused while strategy constraints use it, naming the flag and environments', async () => {
    const field = await createField();
    const flag = await createFlag(ctx);
    const strategyIds: string[] = [];
    for (const environment of ['development', 'production']) {
      const response = await ctx.admin.post(`/api/admin/projects/default/features/${flag}/environments/${environment}/strategies`, {
        name: 'default',
        constraints: [
          { contextName: 'userId', operator: 'IN', values: ['u'] },
          { contextName: field.name, operator: 'STR_CONTAINS', values: ['x'], caseInsensitive: true },
        ],
      });
      expectStatus(response, 200);
      strategyIds.push((response.json() as { id: string }).id);
    }
    const strategies = await ctx.admin.get(`/api/admin/context/${field.name}/strategies`);
    expectStatus(strategies, 200);
    assert.deepEqual(strategies.json(), {
      strategies: ['development', 'production'].map((environment, index) => ({
        id: strategyIds[index],
        featureName: flag,
        projectId: 'default',
        environment,
        strategyName: 'default',
      })),
    });

    const before = await lastEventId(ctx);
    const error = expectError(await ctx.admin.delete(`/api/admin/context/${field.name}`), 409, 'ConflictError');
    assert.match(error.message, new RegExp(`flag "${flag}" \\(development, production\\)`));
    assert.doesNotMatch(error.message, /segment/);
    assert.deepEqual(await getField(field.name), field);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('is refused while segment constraints use it, naming the segment', async () => {
    const field = await createField();
    const segment = uniqueName('seg');
    await createSegment(ctx, { name: segment, constraints: [{ contextName: field.name, operator: 'NUM_GT', value: '3' }] });
    const before = await lastEventId(ctx);
    const error = expectError(await ctx.admin.delete(`/api/admin/context/${field.name}`), 409, 'ConflictError');
    assert.match(error.message, new RegExp(`segment "${segment}"`));
    assert.deepEqual(await getField(field.name), field);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('listing strategies of a name no field or constraint has is an empty list, as in Unleash', async () => {
    const response = await ctx.admin.get(`/api/admin/context/${uniqueName('undefined')}/strategies`);
    expectStatus(response, 200);
    assert.deepEqual(response.json(), { strategies: [] });
  });

  test('is allowed once only other fields are constrained on', async () => {
    const field = await createField();
    const segment = uniqueName('seg');
    await createSegment(ctx, { name: segment, constraints: [{ contextName: `${field.name}-other`, operator: 'IN', values: ['a'] }] });
    expectStatus(await ctx.admin.delete(`/api/admin/context/${field.name}`), 200);
  });
});

describe('bad input for context fields', () => {
  const cases: Array<[string, unknown, string]> = [
    ['a name with a space', { name: 'has space' }, '/body/name'],
    ['an empty name', { name: '' }, '/body/name'],
    ['a name of 101 characters', { name: 'n'.repeat(101) }, '/body/name'],
    ['an unknown property', { name: 'extra', type: 'string' }, '/body/type'],
    ['a fractional sortOrder', { name: 'sorted', sortOrder: 1.5 }, '/body/sortOrder'],
    ['stickiness as a string', { name: 'sticky', stickiness: 'yes' }, '/body/stickiness'],
    ['an empty legal value', { name: 'legal', legalValues: [{ value: '' }] }, '/body/legalValues/0/value'],
    ['a legal value with an unknown property', { name: 'legal', legalValues: [{ value: 'a', label: 'A' }] }, '/body/legalValues/0/label'],
    [
      'repeated legal values',
      { name: 'legal', legalValues: [{ value: 'a' }, { value: 'b' }, { value: 'a' }] },
      '/body/legalValues/2/value',
    ],
  ];
  for (const [label, body, path] of cases) {
    test(`creating with ${label} is a 400 that stores nothing`, async () => {
      await expectRefused(ctx, () => ctx.admin.post('/api/admin/context', body), { status: 400, name: 'BadDataError', path }, listFields);
    });
  }

  test('malformed JSON is a 400 at /body', async () => {
    const before = await lastEventId(ctx);
    const error = expectError(await sendMalformedJson(ctx.admin, 'POST', '/api/admin/context', '{"name": '), 400, 'BadDataError');
    assert.equal(error.details[0]!.path, '/body');
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('a duplicate name is a 409 NameExistsError that keeps the first', async () => {
    const before = await lastEventId(ctx);
    const original = await getField('userId');
    const error = expectError(await ctx.admin.post('/api/admin/context', { name: 'userId', description: 'mine' }), 409, 'NameExistsError');
    assert.match(error.message, /"userId"/);
    assert.deepEqual(await getField('userId'), original);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('an update renaming the field or repeating legal values is a 400 that changes nothing', async () => {
    const field = await createField({ legalValues: [{ value: 'kept' }] });
    const before = await lastEventId(ctx);
    const renamed = expectError(await ctx.admin.put(`/api/admin/context/${field.name}`, { name: 'other' }), 400, 'BadDataError');
    assert.equal(renamed.details[0]!.path, '/body/name');
    const repeated = expectError(
      await ctx.admin.put(`/api/admin/context/${field.name}`, { legalValues: [{ value: 'x' }, { value: 'x' }] }),
      400,
      'BadDataError',
    );
    assert.equal(repeated.details[0]!.path, '/body/legalValues/1/value');
    assert.deepEqual(await getField(field.name), field);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('an unknown field is a 404 for GET, PUT and DELETE', async () => {
    const name = uniqueName('ghost');
    const before = await lastEventId(ctx);
    for (const response of [
      await ctx.admin.get(`/api/admin/context/${name}`),
      await ctx.admin.put(`/api/admin/context/${name}`, { description: 'x' }),
      await ctx.admin.delete(`/api/admin/context/${name}`),
    ]) {
      assert.match(expectError(response, 404, 'NotFoundError').message, new RegExp(name));
    }
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('a Viewer may read context fields but not create, update or delete them', async () => {
    const field = await createField({ description: 'kept' });
    const viewer = ctx.withCookie((await createUserSession(ctx, 'Viewer')).cookie);
    const before = await lastEventId(ctx);
    expectStatus(await viewer.get('/api/admin/context'), 200);
    const cases = [
      [await viewer.post('/api/admin/context', { name: uniqueName('v') }), 'CREATE_CONTEXT_FIELD'],
      [await viewer.put(`/api/admin/context/${field.name}`, { description: 'changed' }), 'UPDATE_CONTEXT_FIELD'],
      [await viewer.delete(`/api/admin/context/${field.name}`), 'DELETE_CONTEXT_FIELD'],
    ] as const;
    for (const [response, permission] of cases) {
      assert.deepEqual(expectError(response, 403, 'PermissionError').permissions, [permission]);
    }
    assert.deepEqual(await getField(field.name), field);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });
});

describe('legal values one at a time', () => {
  const field = async () => {
    const name = uniqueName('field');
    expectStatus(await ctx.admin.post('/api/admin/context', { name, legalValues: [{ value: 'eu' }] }), 201);
    return name;
  };
  const legalValuesOf = async (name: string) =>
    (await getOk<{ legalValues: Array<{ value: string; description?: string }> }>(ctx.admin, `/api/admin/context/${name}`)).legalValues;

  test('adds a value, changes the description of one it has, and removes one, recording each change', async () => {
    const name = await field();
    const before = await lastEventId(ctx);
    expectStatus(await ctx.admin.post(`/api/admin/context/${name}/legal-values`, { value: 'us', description: 'Americas' }), 200);
    expectStatus(await ctx.admin.post(`/api/admin/context/${name}/legal-values`, { value: 'eu', description: 'Europe' }), 200);
    assert.deepEqual(await legalValuesOf(name), [
      { value: 'eu', description: 'Europe' },
      { value: 'us', description: 'Americas' },
    ]);
    expectStatus(await ctx.admin.delete(`/api/admin/context/${name}/legal-values/eu`), 200);
    assert.deepEqual(await legalValuesOf(name), [{ value: 'us', description: 'Americas' }]);
    const values = (data: unknown) => (data as { legalValues: Array<{ value: string }> }).legalValues.map((entry) => entry.value);
    assert.deepEqual(
      (await eventsSince(ctx, before)).map((event) => [
        event.type,
        (event.data as { name: string }).name,
        values(event.preData),
        values(event.data),
      ]),
      [
        ['context-field-updated', name, ['eu'], ['eu', 'us']],
        ['context-field-updated', name, ['eu', 'us'], ['eu', 'us']],
        ['context-field-updated', name, ['eu', 'us'], ['us']],
      ],
    );
    // Removing a value the field does not have changes nothing.
    const unchanged = await lastEventId(ctx);
    expectStatus(await ctx.admin.delete(`/api/admin/context/${name}/legal-values/eu`), 200);
    assert.deepEqual(await eventsSince(ctx, unchanged), []);
  });

  test('an unknown field is 404, a bad value 400, and a Viewer is refused', async () => {
    const name = await field();
    expectError(await ctx.admin.post(`/api/admin/context/${uniqueName('nope')}/legal-values`, { value: 'x' }), 404, 'NotFoundError');
    expectError(await ctx.admin.post(`/api/admin/context/${name}/legal-values`, { value: '' }), 400, 'BadDataError');
    expectError(await ctx.admin.post(`/api/admin/context/${name}/legal-values`, { value: 'x', colour: 'red' }), 400, 'BadDataError');
    expectError(await ctx.admin.post(`/api/admin/context/${name}/legal-values`, { value: 'x'.repeat(101) }), 400, 'BadDataError');
    const viewer = await createUserSession(ctx, 'Viewer');
    expectError(
      await ctx.withCookie(viewer.cookie).post(`/api/admin/context/${name}/legal-values`, { value: 'x' }),
      403,
      'PermissionError',
    );
    expectError(await ctx.withCookie(viewer.cookie).delete(`/api/admin/context/${name}/legal-values/eu`), 403, 'PermissionError');
    assert.deepEqual(await legalValuesOf(name), [{ value: 'eu' }]);
  });
});
