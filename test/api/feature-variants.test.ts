import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { expectError, expectStatus, assertDetailAt, assertEvents, getOk, getVersionedList } from '../helpers/assertions.js';
import { eventsSince, lastEventId, type StoredEvent } from '../helpers/events.js';
import { createUserSession } from '../helpers/fixtures.js';
import { useTestApp } from '../helpers/test-app.js';
import { createProjectWithFlag, featurePath } from '../helpers/projects.js';

const ctx = useTestApp();

interface Variant {
  name: string;
  weight: number;
  weightType?: string;
  stickiness?: string;
  payload?: { type: string; value: string };
  overrides?: Array<{ contextName: string; values: string[] }>;
}

interface Feature {
  name: string;
  environments: Array<{ name: string; enabled: boolean; variantCount: number; variants: Variant[] }>;
}

const variantsPath = (project: string, flag: string, environment = 'development') =>
  `${featurePath(project, flag)}/environments/${environment}/variants`;

async function getFlag(project: string, flag: string): Promise<Feature> {
  return getOk<Feature>(ctx.admin, featurePath(project, flag));
}

async function getVariants(project: string, flag: string, environment = 'development'): Promise<Variant[]> {
  return getVersionedList<Variant>(ctx.admin, variantsPath(project, flag, environment), 'variants');
}

async function putVariants(project: string, flag: string, variants: unknown[], environment = 'development'): Promise<Variant[]> {
  const response = await ctx.admin.put(variantsPath(project, flag, environment), variants);
  expectStatus(response, 200);
  return (response.json() as { variants: Variant[] }).variants;
}

/** A new flag holding variants of these names (weights shared), and the newest event id once they are stored. */
async function flagWithVariants(...names: string[]) {
  const { project, flag } = await createProjectWithFlag(ctx);
  const stored = await putVariants(
    project,
    flag,
    names.map((name) => ({ name, weight: 0 })),
  );
  return { project, flag, stored, before: await lastEventId(ctx) };
}

function variableVariant(name: string, weight: number, extra: Partial<Variant> = {}): Variant {
  return { name, weight, weightType: 'variable', stickiness: 'default', overrides: [], ...extra };
}

function assertVariantsEvent(
  events: StoredEvent[],
  expected: {
    flag: string;
    project: string;
    environment: string;
    before: Variant[];
    after: Variant[];
    createdBy?: string;
    createdByUserId?: number;
  },
): void {
  assertEvents(events, [
    {
      type: 'feature-environment-variants-updated',
      featureName: expected.flag,
      project: expected.project,
      environment: expected.environment,
      ...(expected.createdBy ? { createdBy: expected.createdBy } : {}),
      ...(expected.createdByUserId !== undefined ? { createdByUserId: expected.createdByUserId } : {}),
      data: { variants: expected.after },
      preData: { variants: expected.before },
    },
  ]);
}

describe('setting the variants of an environment', () => {
  test('PUT of two variable variants gives 500/500 and records feature-environment-variants-updated', async () => {
    const { project, flag } = await createProjectWithFlag(ctx);
    const before = await lastEventId(ctx);
    const response = await ctx.admin.put(variantsPath(project, flag), [
      { name: 'blue', weight: 0, weightType: 'variable', payload: { type: 'string', value: 'blue' } },
      { name: 'green', weight: 1, overrides: [{ contextName: 'userId', values: ['alice'] }] },
    ]);
    expectStatus(response, 200);
    const expected = [
      variableVariant('blue', 500, { payload: { type: 'string', value: 'blue' } }),
      variableVariant('green', 500, { overrides: [{ contextName: 'userId', values: ['alice'] }] }),
    ];
    assert.deepEqual(response.json(), { version: 1, variants: expected });
    assert.deepEqual(await getVariants(project, flag), expected);
    assert.deepEqual(await getVariants(project, flag, 'production'), []);
    assertVariantsEvent(await eventsSince(ctx, before), { flag, project, environment: 'development', before: [], after: expected });
  });

  test('one fixed variant of 200 and two variable ones give 200/400/400', async () => {
    const { project, flag } = await createProjectWithFlag(ctx);
    const variants = await putVariants(project, flag, [
      { name: 'a', weight: 200, weightType: 'fix', stickiness: 'userId' },
      { name: 'b', weight: 0, weightType: 'variable' },
      { name: 'c', weight: 0 },
    ]);
    const expected = [
      { name: 'a', weight: 200, weightType: 'fix', stickiness: 'userId', overrides: [] },
      variableVariant('b', 400),
      variableVariant('c', 400),
    ];
    assert.deepEqual(variants, expected);
    assert.deepEqual(await getVariants(project, flag), expected);
  });

  test('only fixed variants totalling 1000 are accepted as given', async () => {
    const { project, flag } = await createProjectWithFlag(ctx);
    const variants = await putVariants(project, flag, [
      { name: 'a', weight: 700, weightType: 'fix' },
      { name: 'b', weight: 300, weightType: 'fix' },
    ]);
    assert.deepEqual(
      variants.map((v) => [v.name, v.weight, v.weightType]),
      [
        ['a', 700, 'fix'],
        ['b', 300, 'fix'],
      ],
    );
  });

  test('PUT replaces earlier variants, recording both lists', async () => {
    const { project, flag } = await createProjectWithFlag(ctx);
    const first = await putVariants(project, flag, [{ name: 'old', weight: 0 }]);
    assert.deepEqual(first, [variableVariant('old', 1000)]);
    const before = await lastEventId(ctx);
    const second = await putVariants(project, flag, [
      { name: 'new-a', weight: 0 },
      { name: 'new-b', weight: 0 },
      { name: 'new-c', weight: 0 },
    ]);
    assert.deepEqual(second, [variableVariant('new-a', 334), variableVariant('new-b', 333), variableVariant('new-c', 333)]);
    assert.deepEqual(await getVariants(project, flag), second);
    assertVariantsEvent(await eventsSince(ctx, before), { flag, project, environment: 'development', before: first, after: second });
  });

  test('PUT of the same variants changes nothing and records nothing', async () => {
    const { project, flag, stored, before } = await flagWithVariants('a', 'b');
    assert.deepEqual(
      await putVariants(project, flag, [
        { name: 'a', weight: 0 },
        { name: 'b', weight: 0 },
      ]),
      stored,
    );
    assert.deepEqual(await getVariants(project, flag), stored);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('PUT of an empty list removes the variants', async () => {
    const { project, flag, stored, before } = await flagWithVariants('a');
    assert.deepEqual(await putVariants(project, flag, []), []);
    assert.deepEqual(await getVariants(project, flag), []);
    assertVariantsEvent(await eventsSince(ctx, before), { flag, project, environment: 'development', before: stored, after: [] });
  });

  test('the flag shows the variants and their count per environment, and the enabled state is untouched', async () => {
    const { project, flag } = await createProjectWithFlag(ctx);
    expectStatus(await ctx.admin.post(`${featurePath(project, flag)}/environments/production/on`), 200);
    const development = await putVariants(project, flag, [
      { name: 'a', weight: 0 },
      { name: 'b', weight: 0 },
    ]);
    const production = await putVariants(project, flag, [{ name: 'x', weight: 0 }], 'production');
    const stored = await getFlag(project, flag);
    assert.deepEqual(
      stored.environments.map((env) => [env.name, env.enabled, env.variantCount, env.variants]),
      [
        ['development', false, 2, development],
        ['production', true, 1, production],
      ],
    );
  });

  test('an Editor session is recorded as the actor', async () => {
    const editor = await createUserSession(ctx, 'Editor');
    const { project, flag } = await createProjectWithFlag(ctx);
    const before = await lastEventId(ctx);
    const response = await ctx.withCookie(editor.cookie).put(variantsPath(project, flag), [{ name: 'a', weight: 0 }]);
    expectStatus(response, 200);
    assertVariantsEvent(await eventsSince(ctx, before), {
      flag,
      project,
      environment: 'development',
      before: [],
      after: [variableVariant('a', 1000)],
      createdBy: editor.username,
      createdByUserId: editor.id,
    });
  });
});

describe('patching the variants of an environment', () => {
  test('add /- appends a variant and redistributes the weights', async () => {
    const { project, flag, stored, before } = await flagWithVariants('a', 'b');
    const response = await ctx.admin.patch(variantsPath(project, flag), [
      { op: 'add', path: '/-', value: { name: 'c', weightType: 'variable', weight: 0 } },
    ]);
    expectStatus(response, 200);
    const expected = [variableVariant('a', 334), variableVariant('b', 333), variableVariant('c', 333)];
    assert.deepEqual(response.json(), { version: 1, variants: expected });
    assert.deepEqual(await getVariants(project, flag), expected);
    assertVariantsEvent(await eventsSince(ctx, before), { flag, project, environment: 'development', before: stored, after: expected });
  });

  test('replace of a weight type to fix keeps that weight and spreads the rest', async () => {
    const { project, flag } = await createProjectWithFlag(ctx);
    await putVariants(project, flag, [
      { name: 'a', weight: 0 },
      { name: 'b', weight: 0 },
      { name: 'c', weight: 0 },
    ]);
    const response = await ctx.admin.patch(variantsPath(project, flag), [
      { op: 'replace', path: '/0/weightType', value: 'fix' },
      { op: 'replace', path: '/0/weight', value: 100 },
    ]);
    expectStatus(response, 200);
    assert.deepEqual(
      (await getVariants(project, flag)).map((v) => [v.name, v.weight, v.weightType]),
      [
        ['a', 100, 'fix'],
        ['b', 450, 'variable'],
        ['c', 450, 'variable'],
      ],
    );
  });

  async function rejectsPatch(operations: unknown, path: string) {
    const { project, flag, stored, before } = await flagWithVariants('a', 'b');
    const error = expectError(await ctx.admin.patch(variantsPath(project, flag), operations), 400, 'BadDataError');
    assertDetailAt(error, path);
    assert.deepEqual(await getVariants(project, flag), stored);
    assert.deepEqual(await eventsSince(ctx, before), []);
  }

  test('a patch producing a weight over 1000 is 400 and changes nothing', async () => {
    await rejectsPatch(
      [
        { op: 'replace', path: '/0/weightType', value: 'fix' },
        { op: 'replace', path: '/0/weight', value: 2000 },
      ],
      '/body/0/weight',
    );
  });

  test('a patch adding an unknown field to a variant is 400', async () => {
    await rejectsPatch([{ op: 'add', path: '/1/colour', value: 'red' }], '/body/1/colour');
  });

  test('a patch producing a duplicate name is 400', async () => {
    await rejectsPatch([{ op: 'add', path: '/-', value: { name: 'a', weight: 0 } }], '/body/2/name');
  });

  test('a patch adding a variant without a name is 400', async () => {
    await rejectsPatch([{ op: 'add', path: '/-', value: { weight: 10 } }], '/body/2/name');
  });

  test('a patch with a failing test operation is 400', async () => {
    await rejectsPatch(
      [
        { op: 'test', path: '/0/name', value: 'z' },
        { op: 'remove', path: '/0' },
      ],
      '/body/0',
    );
  });
});

describe('bad input when setting variants', () => {
  async function rejectsPut(body: unknown, status: number, name: string, path?: string) {
    const { project, flag, stored, before } = await flagWithVariants('kept');
    const error = expectError(await ctx.admin.put(variantsPath(project, flag), body), status, name);
    if (path) assertDetailAt(error, path);
    assert.deepEqual(await getVariants(project, flag), stored);
    assert.deepEqual(await eventsSince(ctx, before), []);
    return error;
  }

  // Each is a 400 naming where the input is wrong, and the variants stored before stay as they were.
  const badBodies: Array<[string, unknown, string]> = [
    [
      'a weight over 1000 is 400',
      [
        { name: 'a', weight: 1001, weightType: 'fix' },
        { name: 'b', weight: 0 },
      ],
      '/body/0/weight',
    ],
    [
      'fixed weights totalling over 1000 are 400',
      [
        { name: 'a', weight: 600, weightType: 'fix' },
        { name: 'b', weight: 600, weightType: 'fix' },
        { name: 'c', weight: 0 },
      ],
      '/body',
    ],
    // "fix" means exactly the weight given; without one there is nothing to keep (spec 2.5: weight is required).
    [
      'a fixed variant without a weight is 400',
      [
        { name: 'a', weightType: 'fix' },
        { name: 'b', weight: 0 },
      ],
      '/body/0/weight',
    ],
    [
      'duplicate names are 400',
      [
        { name: 'same', weight: 0 },
        { name: 'same', weight: 0 },
      ],
      '/body/1/name',
    ],
    ['an unknown payload type is 400', [{ name: 'a', weight: 0, payload: { type: 'xml', value: '<a/>' } }], '/body/0/payload/type'],
    ['an unknown weight type is 400', [{ name: 'a', weight: 0, weightType: 'heavy' }], '/body/0/weightType'],
    ['an unknown property of a variant is 400', [{ name: 'a', weight: 0, colour: 'red' }], '/body/0/colour'],
    ['a body that is not a list is 400', { variants: [{ name: 'a', weight: 0 }] }, '/body'],
  ];
  for (const [title, body, path] of badBodies) {
    test(title, async () => {
      await rejectsPut(body, 400, 'BadDataError', path);
    });
  }

  test('only fixed weights not totalling 1000 are 400, saying what they must total', async () => {
    const error = await rejectsPut(
      [
        { name: 'a', weight: 200, weightType: 'fix' },
        { name: 'b', weight: 300, weightType: 'fix' },
      ],
      400,
      'BadDataError',
      '/body',
    );
    assert.match(error.details.map((d) => d.message).join(' '), /500/);
  });

  test('an unknown environment is 404', async () => {
    const { project, flag } = await createProjectWithFlag(ctx);
    const before = await lastEventId(ctx);
    const error = expectError(await ctx.admin.put(variantsPath(project, flag, 'moon'), [{ name: 'a', weight: 0 }]), 404, 'NotFoundError');
    assert.match(error.message, /"moon"/);
    expectError(await ctx.admin.get(variantsPath(project, flag, 'moon')), 404, 'NotFoundError');
    assert.deepEqual(
      (await getFlag(project, flag)).environments.map((env) => [env.name, env.variantCount]),
      [
        ['development', 0],
        ['production', 0],
      ],
    );
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('an environment not enabled in the project is 404', async () => {
    const { project, flag } = await createProjectWithFlag(ctx, ['development']);
    const before = await lastEventId(ctx);
    expectError(await ctx.admin.put(variantsPath(project, flag, 'production'), [{ name: 'a', weight: 0 }]), 404, 'NotFoundError');
    assert.deepEqual(await getVariants(project, flag), []);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('an unknown flag is 404', async () => {
    const { project } = await createProjectWithFlag(ctx);
    const before = await lastEventId(ctx);
    expectError(await ctx.admin.put(variantsPath(project, 'no-such-flag'), [{ name: 'a', weight: 0 }]), 404, 'NotFoundError');
    expectError(await ctx.admin.get(variantsPath(project, 'no-such-flag')), 404, 'NotFoundError');
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('an archived flag is 400', async () => {
    const { project, flag } = await createProjectWithFlag(ctx);
    expectStatus(await ctx.admin.delete(featurePath(project, flag)), 202);
    const before = await lastEventId(ctx);
    expectError(await ctx.admin.put(variantsPath(project, flag), [{ name: 'a', weight: 0 }]), 400, 'BadDataError');
    assert.deepEqual(await getVariants(project, flag), []);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('a Viewer is refused with 403 naming UPDATE_FEATURE_ENVIRONMENT_VARIANTS', async () => {
    const viewer = await createUserSession(ctx, 'Viewer');
    const { project, flag } = await createProjectWithFlag(ctx);
    const before = await lastEventId(ctx);
    const error = expectError(
      await ctx.withCookie(viewer.cookie).put(variantsPath(project, flag), [{ name: 'a', weight: 0 }]),
      403,
      'PermissionError',
    );
    assert.deepEqual(error.permissions, ['UPDATE_FEATURE_ENVIRONMENT_VARIANTS']);
    assert.deepEqual(await getVariants(project, flag), []);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });
});

describe('setting the same variants in several environments', () => {
  const batchPath = (project: string, flag: string) => `${featurePath(project, flag)}/variants-batch`;

  test('writes them to each environment named, recording each, and leaves the others', async () => {
    const { project, flag } = await createProjectWithFlag(ctx);
    const before = await lastEventId(ctx);
    const response = await ctx.admin.put(batchPath(project, flag), {
      variants: [
        { name: 'red', weight: 0 },
        { name: 'blue', weight: 0 },
      ],
      environments: ['development', 'production'],
    });
    expectStatus(response, 200);
    const expected = [variableVariant('red', 500), variableVariant('blue', 500)];
    assert.deepEqual(response.json(), { version: 1, variants: expected });
    assert.deepEqual(await getVariants(project, flag, 'development'), expected);
    assert.deepEqual(await getVariants(project, flag, 'production'), expected);
    assert.deepEqual(
      (await eventsSince(ctx, before)).map((event) => [event.type, event.environment]),
      [
        ['feature-environment-variants-updated', 'development'],
        ['feature-environment-variants-updated', 'production'],
      ],
    );
  });

  test('an environment the project lacks is 404 and writes to none; bad variants or lists are 400', async () => {
    const { project, flag } = await createProjectWithFlag(ctx);
    const before = await lastEventId(ctx);
    const variants = [{ name: 'red', weight: 1000 }];
    expectError(
      await ctx.admin.put(batchPath(project, flag), { variants, environments: ['development', 'nowhere'] }),
      404,
      'NotFoundError',
    );
    assertDetailAt(
      expectError(await ctx.admin.put(batchPath(project, flag), { variants, environments: [] }), 400, 'BadDataError'),
      '/body/environments',
    );
    assertDetailAt(
      expectError(
        await ctx.admin.put(batchPath(project, flag), { variants: [{ weight: 5 }], environments: ['development'] }),
        400,
        'BadDataError',
      ),
      '/body/variants/0/name',
    );
    expectError(await ctx.admin.put(batchPath(project, flag), { environments: ['development'] }), 400, 'BadDataError');
    const viewer = await createUserSession(ctx, 'Viewer');
    expectError(
      await ctx.withCookie(viewer.cookie).put(batchPath(project, flag), { variants, environments: ['development'] }),
      403,
      'PermissionError',
    );
    assert.deepEqual(await getVariants(project, flag, 'development'), []);
    assert.deepEqual(
      (await eventsSince(ctx, before)).filter((event) => event.featureName === flag),
      [],
    );
  });
});
