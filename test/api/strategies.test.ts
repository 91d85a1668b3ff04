import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { expectError, expectStatus, assertDetailAt, assertEvents, getOk } from '../helpers/assertions.js';
import { eventsSince, lastEventId } from '../helpers/events.js';
import { createUserSession } from '../helpers/fixtures.js';
import { useTestApp } from '../helpers/test-app.js';
import { createProjectWithFlag, featurePath } from '../helpers/projects.js';

const ctx = useTestApp();

interface Strategy {
  id: string;
  name: string;
  title: string | null;
  disabled: boolean;
  featureName: string;
  sortOrder: number;
  segments: number[];
  constraints: Array<Record<string, unknown>>;
  variants: Array<Record<string, unknown>>;
  parameters: Record<string, string>;
}

interface Feature {
  name: string;
  archived: boolean;
  environments: Array<{ name: string; enabled: boolean; strategies: Strategy[]; hasStrategies: boolean; hasEnabledStrategies: boolean }>;
  lifecycle: { stage: string; status: string | null; enteredStageAt: string } | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const strategiesPath = (project: string, flag: string, environment = 'development') =>
  `${featurePath(project, flag)}/environments/${environment}/strategies`;

async function getFlag(project: string, flag: string): Promise<Feature> {
  return getOk<Feature>(ctx.admin, featurePath(project, flag));
}

async function listStrategies(project: string, flag: string, environment = 'development'): Promise<Strategy[]> {
  return getOk<Strategy[]>(ctx.admin, strategiesPath(project, flag, environment));
}

async function addStrategy(project: string, flag: string, body: unknown, environment = 'development'): Promise<Strategy> {
  const response = await ctx.admin.post(strategiesPath(project, flag, environment), body);
  expectStatus(response, 200);
  return response.json() as Strategy;
}

function flexibleRollout(flag: string, overrides: Partial<Strategy> & { id: string }): Strategy {
  return {
    name: 'flexibleRollout',
    title: null,
    disabled: false,
    featureName: flag,
    sortOrder: 0,
    segments: [],
    constraints: [],
    variants: [],
    parameters: { rollout: '100', stickiness: 'default', groupId: flag },
    ...overrides,
  };
}

/** The event of switching a flag on or off in an environment. */
const switched = (project: string, flag: string, environment: string, enabled: boolean) => ({
  type: enabled ? 'feature-environment-enabled' : 'feature-environment-disabled',
  featureName: flag,
  project,
  environment,
  data: { enabled },
  preData: { enabled: !enabled },
});

describe('turning a flag on and off in an environment', () => {
  test('on without strategies adds the default strategy, then records the enabling', async () => {
    const { project, flag } = await createProjectWithFlag(ctx);
    const before = await lastEventId(ctx);
    expectStatus(await ctx.admin.post(`${featurePath(project, flag)}/environments/development/on`), 200);

    const strategies = await listStrategies(project, flag);
    assert.equal(strategies.length, 1);
    const added = strategies[0]!;
    assert.match(added.id, UUID);
    assert.deepEqual(added, flexibleRollout(flag, { id: added.id }));

    const stored = await getFlag(project, flag);
    const development = stored.environments.find((env) => env.name === 'development')!;
    const production = stored.environments.find((env) => env.name === 'production')!;
    assert.equal(development.enabled, true);
    assert.deepEqual(development.strategies, [added]);
    assert.equal(development.hasStrategies, true);
    assert.equal(development.hasEnabledStrategies, true);
    assert.equal(production.enabled, false);
    assert.deepEqual(production.strategies, []);

    assertEvents(await eventsSince(ctx, before), [
      { type: 'feature-strategy-add', featureName: flag, project, environment: 'development', data: added, preData: null },
      switched(project, flag, 'development', true),
    ]);
  });

  test('on with strategies keeps them and adds none', async () => {
    const { project, flag } = await createProjectWithFlag(ctx);
    const existing = await addStrategy(project, flag, { name: 'userWithId', parameters: { userIds: 'alice' } });
    const before = await lastEventId(ctx);
    expectStatus(await ctx.admin.post(`${featurePath(project, flag)}/environments/development/on`), 200);
    assert.deepEqual(await listStrategies(project, flag), [existing]);
    assertEvents(await eventsSince(ctx, before), [switched(project, flag, 'development', true)]);
  });

  test('on again changes nothing and records nothing', async () => {
    const { project, flag } = await createProjectWithFlag(ctx);
    expectStatus(await ctx.admin.post(`${featurePath(project, flag)}/environments/development/on`), 200);
    const stored = await getFlag(project, flag);
    const before = await lastEventId(ctx);
    expectStatus(await ctx.admin.post(`${featurePath(project, flag)}/environments/development/on`), 200);
    assert.deepEqual(await getFlag(project, flag), stored);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('off records feature-environment-disabled and keeps the strategies', async () => {
    const { project, flag } = await createProjectWithFlag(ctx);
    expectStatus(await ctx.admin.post(`${featurePath(project, flag)}/environments/production/on`), 200);
    const strategies = await listStrategies(project, flag, 'production');
    const before = await lastEventId(ctx);
    expectStatus(await ctx.admin.post(`${featurePath(project, flag)}/environments/production/off`), 200);
    const production = (await getFlag(project, flag)).environments.find((env) => env.name === 'production')!;
    assert.equal(production.enabled, false);
    assert.deepEqual(production.strategies, strategies);
    assertEvents(await eventsSince(ctx, before), [switched(project, flag, 'production', false)]);
  });

  test('off when already off records nothing', async () => {
    const { project, flag } = await createProjectWithFlag(ctx);
    const stored = await getFlag(project, flag);
    const before = await lastEventId(ctx);
    expectStatus(await ctx.admin.post(`${featurePath(project, flag)}/environments/development/off`), 200);
    assert.deepEqual(await getFlag(project, flag), stored);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('moves the lifecycle to pre-live on development, then live on production', async () => {
    const { project, flag } = await createProjectWithFlag(ctx);
    assert.equal((await getFlag(project, flag)).lifecycle?.stage, 'initial');

    ctx.clock.advance(60_000);
    const preLiveAt = ctx.clock.now().toISOString();
    expectStatus(await ctx.admin.post(`${featurePath(project, flag)}/environments/development/on`), 200);
    assert.deepEqual((await getFlag(project, flag)).lifecycle, { stage: 'pre-live', status: null, enteredStageAt: preLiveAt });

    ctx.clock.advance(60_000);
    const liveAt = ctx.clock.now().toISOString();
    expectStatus(await ctx.admin.post(`${featurePath(project, flag)}/environments/production/on`), 200);
    assert.deepEqual((await getFlag(project, flag)).lifecycle, { stage: 'live', status: null, enteredStageAt: liveAt });
  });

  test('an Editor session is recorded as the actor', async () => {
    const editor = await createUserSession(ctx, 'Editor');
    const { project, flag } = await createProjectWithFlag(ctx);
    const before = await lastEventId(ctx);
    expectStatus(await ctx.withCookie(editor.cookie).post(`${featurePath(project, flag)}/environments/development/on`), 200);
    const events = await eventsSince(ctx, before);
    assert.deepEqual(
      events.map((event) => [event.type, event.createdBy, event.createdByUserId]),
      [
        ['feature-strategy-add', editor.username, editor.id],
        ['feature-environment-enabled', editor.username, editor.id],
      ],
    );
  });

  async function rejectsOn(path: (project: string, flag: string) => string, status: number, name: string) {
    const { project, flag } = await createProjectWithFlag(ctx, ['development']);
    const stored = await getFlag(project, flag);
    const before = await lastEventId(ctx);
    const error = expectError(await ctx.admin.post(path(project, flag)), status, name);
    assert.deepEqual(await getFlag(project, flag), stored);
    assert.deepEqual(await eventsSince(ctx, before), []);
    return error;
  }

  test('an unknown environment is 404', async () => {
    const error = await rejectsOn((p, f) => `${featurePath(p, f)}/environments/moon/on`, 404, 'NotFoundError');
    assert.match(error.message, /"moon"/);
  });

  test('an environment not enabled in the project is 404', async () => {
    const error = await rejectsOn((p, f) => `${featurePath(p, f)}/environments/production/on`, 404, 'NotFoundError');
    assert.match(error.message, /"production"/);
  });

  test('an unknown flag is 404', async () => {
    await rejectsOn((p) => `${featurePath(p, 'no-such-flag')}/environments/development/on`, 404, 'NotFoundError');
  });

  test('an archived flag is 400', async () => {
    const { project, flag } = await createProjectWithFlag(ctx);
    expectStatus(await ctx.admin.delete(featurePath(project, flag)), 202);
    const before = await lastEventId(ctx);
    expectError(await ctx.admin.post(`${featurePath(project, flag)}/environments/development/on`), 400, 'BadDataError');
    const archived = (await ctx.admin.get(`/api/admin/archive/features/${project}`)).json() as { features: Feature[] };
    assert.deepEqual(
      archived.features.map((f) => [f.name, f.environments.map((env) => env.enabled)]),
      [[flag, [false, false]]],
    );
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('a Viewer is refused with 403 naming UPDATE_FEATURE_ENVIRONMENT', async () => {
    const viewer = await createUserSession(ctx, 'Viewer');
    const { project, flag } = await createProjectWithFlag(ctx);
    const stored = await getFlag(project, flag);
    const before = await lastEventId(ctx);
    const error = expectError(
      await ctx.withCookie(viewer.cookie).post(`${featurePath(project, flag)}/environments/development/on`),
      403,
      'PermissionError',
    );
    assert.deepEqual(error.permissions, ['UPDATE_FEATURE_ENVIRONMENT']);
    assert.deepEqual(await getFlag(project, flag), stored);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });
});

describe('strategies of a flag', () => {
  test('adding one normalizes parameters to strings, fills defaults and records feature-strategy-add', async () => {
    const { project, flag } = await createProjectWithFlag(ctx);
    const before = await lastEventId(ctx);
    const response = await ctx.admin.post(strategiesPath(project, flag), {
      name: 'flexibleRollout',
      title: 'Half',
      parameters: { rollout: 50 },
    });
    expectStatus(response, 200);
    const added = response.json() as Strategy;
    assert.match(added.id, UUID);
    assert.deepEqual(
      added,
      flexibleRollout(flag, { id: added.id, title: 'Half', parameters: { rollout: '50', stickiness: 'default', groupId: flag } }),
    );
    assert.deepEqual(await listStrategies(project, flag), [added]);
    assert.deepEqual(await listStrategies(project, flag, 'production'), []);
    assertEvents(await eventsSince(ctx, before), [
      { type: 'feature-strategy-add', featureName: flag, project, environment: 'development', data: added, preData: null },
    ]);
  });

  test('new strategies are appended in sort order; the list and the flag show them in that order', async () => {
    const { project, flag } = await createProjectWithFlag(ctx);
    const first = await addStrategy(project, flag, { name: 'default' });
    const second = await addStrategy(project, flag, { name: 'userWithId', parameters: { userIds: 'alice,bob' } });
    const third = await addStrategy(project, flag, { name: 'remoteAddress', parameters: { IPs: '10.0.0.1' }, disabled: true });
    assert.deepEqual([first.sortOrder, second.sortOrder, third.sortOrder], [0, 1, 2]);
    assert.deepEqual(second.parameters, { userIds: 'alice,bob' });
    assert.equal(third.disabled, true);
    const firstInOrder = await addStrategy(project, flag, { name: 'default', sortOrder: -1 });

    const expected = [firstInOrder, first, second, third];
    assert.deepEqual(await listStrategies(project, flag), expected);
    const development = (await getFlag(project, flag)).environments.find((env) => env.name === 'development')!;
    assert.deepEqual(development.strategies, expected);
  });

  test('GET of one strategy returns it', async () => {
    const { project, flag } = await createProjectWithFlag(ctx);
    const added = await addStrategy(project, flag, { name: 'applicationHostname', parameters: { hostNames: 'web-1' } });
    await addStrategy(project, flag, { name: 'default' });
    const response = await ctx.admin.get(`${strategiesPath(project, flag)}/${added.id}`);
    expectStatus(response, 200);
    assert.deepEqual(response.json(), added);
  });

  test('PUT replaces it and records feature-strategy-update with the old and new strategy', async () => {
    const { project, flag } = await createProjectWithFlag(ctx);
    const original = await addStrategy(project, flag, { name: 'flexibleRollout', parameters: { rollout: '10' } });
    const other = await addStrategy(project, flag, { name: 'default' });
    const before = await lastEventId(ctx);
    const response = await ctx.admin.put(`${strategiesPath(project, flag)}/${original.id}`, {
      name: 'flexibleRollout',
      title: 'Beta users',
      parameters: { rollout: '25', stickiness: 'userId', groupId: 'beta' },
      constraints: [{ contextName: 'appName', operator: 'IN', values: ['web'] }],
    });
    expectStatus(response, 200);
    const updated = response.json() as Strategy;
    assert.deepEqual(updated, {
      ...original,
      title: 'Beta users',
      parameters: { rollout: '25', stickiness: 'userId', groupId: 'beta' },
      constraints: [{ contextName: 'appName', operator: 'IN', values: ['web'], caseInsensitive: false, inverted: false }],
    });
    assert.deepEqual(await listStrategies(project, flag), [updated, other]);
    assertEvents(await eventsSince(ctx, before), [
      { type: 'feature-strategy-update', featureName: flag, project, environment: 'development', data: updated, preData: original },
    ]);
  });

  test('PUT with the same strategy changes nothing and records nothing', async () => {
    const { project, flag } = await createProjectWithFlag(ctx);
    const original = await addStrategy(project, flag, { name: 'flexibleRollout', parameters: { rollout: '10' } });
    const before = await lastEventId(ctx);
    const { id: _id, featureName: _featureName, ...body } = original;
    const response = await ctx.admin.put(`${strategiesPath(project, flag)}/${original.id}`, body);
    expectStatus(response, 200);
    assert.deepEqual(response.json(), original);
    assert.deepEqual(await listStrategies(project, flag), [original]);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('PATCH applies a JSON Patch to the strategy and records feature-strategy-update', async () => {
    const { project, flag } = await createProjectWithFlag(ctx);
    const original = await addStrategy(project, flag, { name: 'flexibleRollout', parameters: { rollout: '10' } });
    const before = await lastEventId(ctx);
    const response = await ctx.admin.patch(`${strategiesPath(project, flag)}/${original.id}`, [
      { op: 'replace', path: '/parameters/rollout', value: '30' },
      { op: 'replace', path: '/title', value: 'Thirty' },
    ]);
    expectStatus(response, 200);
    const patched = response.json() as Strategy;
    assert.deepEqual(patched, { ...original, title: 'Thirty', parameters: { ...original.parameters, rollout: '30' } });
    assert.deepEqual(await listStrategies(project, flag), [patched]);
    assertEvents(await eventsSince(ctx, before), [
      { type: 'feature-strategy-update', featureName: flag, project, environment: 'development', data: patched, preData: original },
    ]);
  });

  test('DELETE removes it and records feature-strategy-remove with the strategy as preData', async () => {
    const { project, flag } = await createProjectWithFlag(ctx);
    const doomed = await addStrategy(project, flag, { name: 'userWithId', parameters: { userIds: 'alice' } });
    const kept = await addStrategy(project, flag, { name: 'default' });
    const before = await lastEventId(ctx);
    expectStatus(await ctx.admin.delete(`${strategiesPath(project, flag)}/${doomed.id}`), 200);
    assert.deepEqual(await listStrategies(project, flag), [kept]);
    expectError(await ctx.admin.get(`${strategiesPath(project, flag)}/${doomed.id}`), 404, 'NotFoundError');
    assertEvents(await eventsSince(ctx, before), [
      { type: 'feature-strategy-remove', featureName: flag, project, environment: 'development', data: null, preData: doomed },
    ]);
  });

  test('set-sort-order reorders them and records strategy-order-changed', async () => {
    const { project, flag } = await createProjectWithFlag(ctx);
    const a = await addStrategy(project, flag, { name: 'default' });
    const b = await addStrategy(project, flag, { name: 'userWithId', parameters: { userIds: 'bob' } });
    const before = await lastEventId(ctx);
    expectStatus(
      await ctx.admin.post(`${strategiesPath(project, flag)}/set-sort-order`, [
        { id: b.id, sortOrder: 0 },
        { id: a.id, sortOrder: 1 },
      ]),
      200,
    );
    assert.deepEqual(await listStrategies(project, flag), [
      { ...b, sortOrder: 0 },
      { ...a, sortOrder: 1 },
    ]);
    assertEvents(await eventsSince(ctx, before), [
      {
        type: 'strategy-order-changed',
        featureName: flag,
        project,
        environment: 'development',
        data: [
          { id: b.id, sortOrder: 0 },
          { id: a.id, sortOrder: 1 },
        ],
        preData: [
          { id: a.id, sortOrder: 0 },
          { id: b.id, sortOrder: 1 },
        ],
      },
    ]);
  });

  test('set-sort-order with an unknown id is 404 and reorders nothing', async () => {
    const { project, flag } = await createProjectWithFlag(ctx);
    const a = await addStrategy(project, flag, { name: 'default' });
    const b = await addStrategy(project, flag, { name: 'userWithId', parameters: { userIds: 'bob' } });
    const unknown = '00000000-0000-4000-8000-000000000000';
    const before = await lastEventId(ctx);
    const error = expectError(
      await ctx.admin.post(`${strategiesPath(project, flag)}/set-sort-order`, [
        { id: b.id, sortOrder: 0 },
        { id: unknown, sortOrder: 1 },
      ]),
      404,
      'NotFoundError',
    );
    assert.match(error.message, new RegExp(unknown));
    assert.deepEqual(await listStrategies(project, flag), [a, b]);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('set-sort-order with the id of a strategy in another environment is 404', async () => {
    const { project, flag } = await createProjectWithFlag(ctx);
    const a = await addStrategy(project, flag, { name: 'default' });
    const elsewhere = await addStrategy(project, flag, { name: 'default' }, 'production');
    const before = await lastEventId(ctx);
    expectError(
      await ctx.admin.post(`${strategiesPath(project, flag)}/set-sort-order`, [{ id: elsewhere.id, sortOrder: 5 }]),
      404,
      'NotFoundError',
    );
    assert.deepEqual(await listStrategies(project, flag), [a]);
    assert.deepEqual(await listStrategies(project, flag, 'production'), [elsewhere]);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });
});

describe('bad input when changing a strategy', () => {
  async function rejectsPatch(operations: unknown, path: string) {
    const { project, flag } = await createProjectWithFlag(ctx);
    const original = await addStrategy(project, flag, { name: 'flexibleRollout', parameters: { rollout: '10' } });
    const before = await lastEventId(ctx);
    const error = expectError(await ctx.admin.patch(`${strategiesPath(project, flag)}/${original.id}`, operations), 400, 'BadDataError');
    assertDetailAt(error, path);
    assert.deepEqual(await listStrategies(project, flag), [original]);
    assert.deepEqual(await eventsSince(ctx, before), []);
  }

  test('a patch setting rollout to 101 is 400', async () => {
    await rejectsPatch([{ op: 'replace', path: '/parameters/rollout', value: '101' }], '/body/parameters/rollout');
  });

  test('a patch adding an unknown field is 400', async () => {
    await rejectsPatch([{ op: 'add', path: '/owner', value: 'me' }], '/body/owner');
  });

  test('a patch setting an unknown strategy name is 400', async () => {
    await rejectsPatch([{ op: 'replace', path: '/name', value: 'gradualRolloutBogus' }], '/body/name');
  });

  test('a patch with a failing test operation is 400', async () => {
    await rejectsPatch(
      [
        { op: 'test', path: '/parameters/rollout', value: '99' },
        { op: 'replace', path: '/parameters/rollout', value: '20' },
      ],
      '/body/0',
    );
  });

  test('a patch adding an invalid constraint is 400', async () => {
    await rejectsPatch(
      [{ op: 'add', path: '/constraints/-', value: { contextName: 'userId', operator: 'NUM_GT', value: 'ten' } }],
      '/body/constraints/0/value',
    );
  });

  async function rejectsPut(body: unknown, status: number, name: string, path?: string) {
    const { project, flag } = await createProjectWithFlag(ctx);
    const original = await addStrategy(project, flag, { name: 'flexibleRollout', parameters: { rollout: '10' } });
    const before = await lastEventId(ctx);
    const error = expectError(await ctx.admin.put(`${strategiesPath(project, flag)}/${original.id}`, body), status, name);
    if (path) assertDetailAt(error, path);
    assert.deepEqual(await listStrategies(project, flag), [original]);
    assert.deepEqual(await eventsSince(ctx, before), []);
  }

  test('PUT with rollout "abc" is 400', async () => {
    await rejectsPut({ name: 'flexibleRollout', parameters: { rollout: 'abc' } }, 400, 'BadDataError', '/body/parameters/rollout');
  });

  test('PUT with an unknown property is 400', async () => {
    await rejectsPut({ name: 'default', owner: 'me' }, 400, 'BadDataError', '/body/owner');
  });

  test('PUT of an unknown strategy id is 404', async () => {
    const { project, flag } = await createProjectWithFlag(ctx);
    const original = await addStrategy(project, flag, { name: 'default' });
    const before = await lastEventId(ctx);
    expectError(
      await ctx.admin.put(`${strategiesPath(project, flag)}/00000000-0000-4000-8000-000000000000`, { name: 'default' }),
      404,
      'NotFoundError',
    );
    assert.deepEqual(await listStrategies(project, flag), [original]);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test("PUT of a strategy through another environment's path is 404", async () => {
    const { project, flag } = await createProjectWithFlag(ctx);
    const original = await addStrategy(project, flag, { name: 'default' });
    const before = await lastEventId(ctx);
    expectError(
      await ctx.admin.put(`${strategiesPath(project, flag, 'production')}/${original.id}`, {
        name: 'userWithId',
        parameters: { userIds: 'x' },
      }),
      404,
      'NotFoundError',
    );
    assert.deepEqual(await listStrategies(project, flag), [original]);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('DELETE of an unknown strategy id is 404', async () => {
    const { project, flag } = await createProjectWithFlag(ctx);
    const original = await addStrategy(project, flag, { name: 'default' });
    const before = await lastEventId(ctx);
    expectError(await ctx.admin.delete(`${strategiesPath(project, flag)}/00000000-0000-4000-8000-000000000000`), 404, 'NotFoundError');
    assert.deepEqual(await listStrategies(project, flag), [original]);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('GET of an unknown strategy id is 404', async () => {
    const { project, flag } = await createProjectWithFlag(ctx);
    expectError(await ctx.admin.get(`${strategiesPath(project, flag)}/00000000-0000-4000-8000-000000000000`), 404, 'NotFoundError');
  });

  test('a strategy id that is not a UUID is 400', async () => {
    const { project, flag } = await createProjectWithFlag(ctx);
    const original = await addStrategy(project, flag, { name: 'default' });
    const before = await lastEventId(ctx);
    const error = expectError(await ctx.admin.delete(`${strategiesPath(project, flag)}/not-a-uuid`), 400, 'BadDataError');
    assertDetailAt(error, '/params/strategyId');
    assert.deepEqual(await listStrategies(project, flag), [original]);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('a Viewer is refused DELETE with 403 naming DELETE_FEATURE_STRATEGY', async () => {
    const viewer = await createUserSession(ctx, 'Viewer');
    const { project, flag } = await createProjectWithFlag(ctx);
    const original = await addStrategy(project, flag, { name: 'default' });
    const before = await lastEventId(ctx);
    const error = expectError(
      await ctx.withCookie(viewer.cookie).delete(`${strategiesPath(project, flag)}/${original.id}`),
      403,
      'PermissionError',
    );
    assert.deepEqual(error.permissions, ['DELETE_FEATURE_STRATEGY']);
    assert.deepEqual(await listStrategies(project, flag), [original]);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });
});

describe('constraints', () => {
  test('every operator family is accepted with valid values and stored with defaults made explicit', async () => {
    const { project, flag } = await createProjectWithFlag(ctx);
    const multi = (operator: string, values: string[], extra: Record<string, boolean> = {}) => ({
      contextName: 'userId',
      operator,
      values,
      ...extra,
    });
    const single = (operator: string, value: string) => ({ contextName: 'currentTime', operator, value });
    const constraints = [
      multi('IN', ['alice', 'bob']),
      multi('NOT_IN', ['carol']),
      multi('STR_STARTS_WITH', ['adm'], { caseInsensitive: true }),
      multi('STR_ENDS_WITH', ['@example.com']),
      multi('STR_CONTAINS', ['test'], { inverted: true }),
      single('NUM_EQ', '5'),
      single('NUM_GT', '10.5'),
      single('NUM_GTE', '-3'),
      single('NUM_LT', '100'),
      single('NUM_LTE', '0'),
      single('DATE_AFTER', '2026-01-31T12:00:00Z'),
      single('DATE_BEFORE', '2026-12-31T23:59:59.999+02:00'),
      single('SEMVER_EQ', '1.2.3'),
      single('SEMVER_GT', '2.0.0-beta.1'),
      single('SEMVER_LT', '10.0.0'),
    ];
    const before = await lastEventId(ctx);
    const added = await addStrategy(project, flag, { name: 'default', constraints });
    const expected = constraints.map((c) => ({ caseInsensitive: false, inverted: false, ...c }));
    assert.deepEqual(added.constraints, expected);
    assert.deepEqual(await listStrategies(project, flag), [added]);
    const events = await eventsSince(ctx, before);
    assert.deepEqual((events[0]!.data as Strategy).constraints, expected);
  });

  async function rejectsConstraint(constraint: Record<string, unknown>, path: string) {
    const { project, flag } = await createProjectWithFlag(ctx);
    const existing = await addStrategy(project, flag, { name: 'default' });
    const before = await lastEventId(ctx);
    const error = expectError(
      await ctx.admin.post(strategiesPath(project, flag), { name: 'default', constraints: [constraint] }),
      400,
      'BadDataError',
    );
    assertDetailAt(error, path);
    assert.deepEqual(await listStrategies(project, flag), [existing]);
    assert.deepEqual(await eventsSince(ctx, before), []);
    return error;
  }

  test('an unknown operator is 400', async () => {
    await rejectsConstraint({ contextName: 'userId', operator: 'LIKE', values: ['a'] }, '/body/constraints/0/operator');
  });

  test('NUM_GT with "ten" is 400', async () => {
    const error = await rejectsConstraint({ contextName: 'age', operator: 'NUM_GT', value: 'ten' }, '/body/constraints/0/value');
    assert.match(error.details.map((d) => d.message).join(' '), /"ten"/);
  });

  test('DATE_AFTER with "2024-13-45" is 400', async () => {
    await rejectsConstraint({ contextName: 'currentTime', operator: 'DATE_AFTER', value: '2024-13-45' }, '/body/constraints/0/value');
  });

  test('DATE_AFTER with "yesterday" is 400', async () => {
    await rejectsConstraint({ contextName: 'currentTime', operator: 'DATE_AFTER', value: 'yesterday' }, '/body/constraints/0/value');
  });

  test('DATE_BEFORE with a day the month does not have (2024-02-30) is 400', async () => {
    await rejectsConstraint(
      { contextName: 'currentTime', operator: 'DATE_BEFORE', value: '2024-02-30T10:00:00Z' },
      '/body/constraints/0/value',
    );
  });

  test('SEMVER_EQ with "1.2" is 400', async () => {
    await rejectsConstraint({ contextName: 'version', operator: 'SEMVER_EQ', value: '1.2' }, '/body/constraints/0/value');
  });

  test('IN with no values is 400', async () => {
    await rejectsConstraint({ contextName: 'userId', operator: 'IN' }, '/body/constraints/0/values');
  });

  test('IN with an empty values list is 400', async () => {
    await rejectsConstraint({ contextName: 'userId', operator: 'IN', values: [] }, '/body/constraints/0/values');
  });

  test('NUM_EQ with no value is 400', async () => {
    await rejectsConstraint({ contextName: 'age', operator: 'NUM_EQ' }, '/body/constraints/0/value');
  });

  test('a constraint without contextName is 400', async () => {
    await rejectsConstraint({ operator: 'IN', values: ['a'] }, '/body/constraints/0/contextName');
  });
});

describe('strategy variants', () => {
  test('fixed variants keep their weight and variable ones share the rest of 1000', async () => {
    const { project, flag } = await createProjectWithFlag(ctx);
    const added = await addStrategy(project, flag, {
      name: 'flexibleRollout',
      variants: [
        { name: 'a', weight: 0, weightType: 'variable' },
        { name: 'b', weight: 100, weightType: 'fix', stickiness: 'userId' },
        { name: 'c', weight: 0, payload: { type: 'json', value: '{"x":1}' } },
        { name: 'd', weight: 0, weightType: 'variable' },
      ],
    });
    assert.deepEqual(added.variants, [
      { name: 'a', weight: 300, weightType: 'variable', stickiness: 'default' },
      { name: 'b', weight: 100, weightType: 'fix', stickiness: 'userId' },
      { name: 'c', weight: 300, weightType: 'variable', stickiness: 'default', payload: { type: 'json', value: '{"x":1}' } },
      { name: 'd', weight: 300, weightType: 'variable', stickiness: 'default' },
    ]);
    assert.deepEqual(await listStrategies(project, flag), [added]);
  });

  test('an uneven split gives the remainder to the first variants', async () => {
    const { project, flag } = await createProjectWithFlag(ctx);
    const added = await addStrategy(project, flag, {
      name: 'default',
      variants: [
        { name: 'a', weight: 0 },
        { name: 'b', weight: 0 },
        { name: 'c', weight: 0 },
      ],
    });
    assert.deepEqual(
      added.variants.map((v) => [v.name, v.weight]),
      [
        ['a', 334],
        ['b', 333],
        ['c', 333],
      ],
    );
  });

  async function rejectsVariants(variants: unknown[], path: string) {
    const { project, flag } = await createProjectWithFlag(ctx);
    const existing = await addStrategy(project, flag, { name: 'default' });
    const before = await lastEventId(ctx);
    const error = expectError(
      await ctx.admin.post(strategiesPath(project, flag), { name: 'flexibleRollout', variants }),
      400,
      'BadDataError',
    );
    assertDetailAt(error, path);
    assert.deepEqual(await listStrategies(project, flag), [existing]);
    assert.deepEqual(await eventsSince(ctx, before), []);
  }

  test('a weight of 1001 is 400', async () => {
    await rejectsVariants([{ name: 'a', weight: 1001, weightType: 'fix' }], '/body/variants/0/weight');
  });

  test('fixed weights over 1000 are 400', async () => {
    await rejectsVariants(
      [
        { name: 'a', weight: 600, weightType: 'fix' },
        { name: 'b', weight: 500, weightType: 'fix' },
        { name: 'c', weight: 0 },
      ],
      '/body/variants',
    );
  });

  test('only fixed weights not totalling 1000 are 400', async () => {
    await rejectsVariants(
      [
        { name: 'a', weight: 300, weightType: 'fix' },
        { name: 'b', weight: 300, weightType: 'fix' },
      ],
      '/body/variants',
    );
  });

  test('duplicate variant names are 400', async () => {
    await rejectsVariants(
      [
        { name: 'same', weight: 0 },
        { name: 'same', weight: 0 },
      ],
      '/body/variants/1/name',
    );
  });

  test('an unknown payload type is 400', async () => {
    await rejectsVariants([{ name: 'a', weight: 0, payload: { type: 'xml', value: '<a/>' } }], '/body/variants/0/payload/type');
  });
});

describe('bad input when adding a strategy', () => {
  async function rejectsAdd(body: unknown, status: number, name: string, path?: string) {
    const { project, flag } = await createProjectWithFlag(ctx);
    const existing = await addStrategy(project, flag, { name: 'default' });
    const before = await lastEventId(ctx);
    const error = expectError(await ctx.admin.post(strategiesPath(project, flag), body), status, name);
    if (path) assertDetailAt(error, path);
    assert.deepEqual(await listStrategies(project, flag), [existing]);
    assert.deepEqual(await eventsSince(ctx, before), []);
    return error;
  }

  test('an unknown strategy name is 400', async () => {
    await rejectsAdd({ name: 'gradualRolloutBogus' }, 400, 'BadDataError', '/body/name');
  });

  test('rollout 101 is 400', async () => {
    await rejectsAdd({ name: 'flexibleRollout', parameters: { rollout: 101 } }, 400, 'BadDataError', '/body/parameters/rollout');
  });

  test('rollout "abc" is 400', async () => {
    await rejectsAdd({ name: 'flexibleRollout', parameters: { rollout: 'abc' } }, 400, 'BadDataError', '/body/parameters/rollout');
  });

  test('userWithId without userIds is 400', async () => {
    await rejectsAdd({ name: 'userWithId', parameters: {} }, 400, 'BadDataError', '/body/parameters/userIds');
  });

  test('a parameter that is neither string nor number is 400', async () => {
    await rejectsAdd({ name: 'flexibleRollout', parameters: { rollout: true } }, 400, 'BadDataError', '/body/parameters/rollout');
  });

  test('an unknown body property is 400', async () => {
    await rejectsAdd({ name: 'default', owner: 'me' }, 400, 'BadDataError', '/body/owner');
  });

  test('an unknown segment id is 404', async () => {
    const error = await rejectsAdd({ name: 'default', segments: [987654] }, 404, 'NotFoundError');
    assert.match(error.message, /987654/);
  });

  test('an unknown environment is 404', async () => {
    const { project, flag } = await createProjectWithFlag(ctx);
    const before = await lastEventId(ctx);
    const error = expectError(await ctx.admin.post(strategiesPath(project, flag, 'moon'), { name: 'default' }), 404, 'NotFoundError');
    assert.match(error.message, /"moon"/);
    assert.deepEqual(
      (await getFlag(project, flag)).environments.map((env) => [env.name, env.strategies]),
      [
        ['development', []],
        ['production', []],
      ],
    );
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('an environment not enabled in the project is 404', async () => {
    const { project, flag } = await createProjectWithFlag(ctx, ['development']);
    const before = await lastEventId(ctx);
    expectError(await ctx.admin.post(strategiesPath(project, flag, 'production'), { name: 'default' }), 404, 'NotFoundError');
    expectError(await ctx.admin.get(strategiesPath(project, flag, 'production')), 404, 'NotFoundError');
    assert.deepEqual(await listStrategies(project, flag), []);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('an unknown flag is 404', async () => {
    const { project } = await createProjectWithFlag(ctx);
    const before = await lastEventId(ctx);
    expectError(await ctx.admin.post(strategiesPath(project, 'no-such-flag'), { name: 'default' }), 404, 'NotFoundError');
    expectError(await ctx.admin.get(strategiesPath(project, 'no-such-flag')), 404, 'NotFoundError');
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('an archived flag is 400', async () => {
    const { project, flag } = await createProjectWithFlag(ctx);
    expectStatus(await ctx.admin.delete(featurePath(project, flag)), 202);
    const before = await lastEventId(ctx);
    expectError(await ctx.admin.post(strategiesPath(project, flag), { name: 'default' }), 400, 'BadDataError');
    assert.deepEqual(await listStrategies(project, flag), []);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('a Viewer is refused with 403 naming CREATE_FEATURE_STRATEGY', async () => {
    const viewer = await createUserSession(ctx, 'Viewer');
    const { project, flag } = await createProjectWithFlag(ctx);
    const before = await lastEventId(ctx);
    const error = expectError(
      await ctx.withCookie(viewer.cookie).post(strategiesPath(project, flag), { name: 'default' }),
      403,
      'PermissionError',
    );
    assert.deepEqual(error.permissions, ['CREATE_FEATURE_STRATEGY']);
    assert.deepEqual(await listStrategies(project, flag), []);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });
});

describe('validating a constraint before saving it', () => {
  const validate = (body: unknown) => ctx.admin.post('/api/admin/constraints/validate', body);

  test('a constraint a strategy would take is 204, for a Viewer too', async () => {
    const viewer = await createUserSession(ctx, 'Viewer');
    for (const constraint of [
      { contextName: 'userId', operator: 'IN', values: ['a', 'b'] },
      { contextName: 'appVersion', operator: 'SEMVER_GT', value: '1.2.3' },
      { contextName: 'currentTime', operator: 'DATE_AFTER', value: '2026-01-31T12:00:00Z', inverted: true },
    ]) {
      expectStatus(await ctx.withCookie(viewer.cookie).post('/api/admin/constraints/validate', constraint), 204);
    }
  });

  test('what a strategy would refuse is a 400 naming the field', async () => {
    assertDetailAt(expectError(await validate({ contextName: 'userId', operator: 'IN', values: [] }), 400, 'BadDataError'), '/body/values');
    assertDetailAt(expectError(await validate({ contextName: 'n', operator: 'NUM_GT', value: 'ten' }), 400, 'BadDataError'), '/body/value');
    assertDetailAt(
      expectError(await validate({ contextName: 'ip', operator: 'IN_CIDR', values: ['10.0.0.0/8', 'nowhere'] }), 400, 'BadDataError'),
      '/body/values/1',
    );
    assertDetailAt(
      expectError(await validate({ contextName: 'userId', operator: 'LIKE', value: 'x' }), 400, 'BadDataError'),
      '/body/operator',
    );
    assertDetailAt(expectError(await validate({ operator: 'IN', values: ['a'] }), 400, 'BadDataError'), '/body/contextName');
  });
});
