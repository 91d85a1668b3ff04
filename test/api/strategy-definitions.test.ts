import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { expectError, expectStatus, getVersionedList } from '../helpers/assertions.js';
import { eventsSince, lastEventId } from '../helpers/events.js';
import { createUserSession, uniqueName } from '../helpers/fixtures.js';
import { useTestApp } from '../helpers/test-app.js';
import { createFlag } from '../helpers/projects.js';

const ctx = useTestApp();

interface Definition {
  name: string;
  title: string | null;
  displayName: string;
  description: string;
  editable: boolean;
  deprecated: boolean;
  parameters: Array<{ name: string; type: string; description: string; required: boolean }>;
}

const STRATEGIES = '/api/admin/strategies';

async function listDefinitions(): Promise<Definition[]> {
  return getVersionedList<Definition>(ctx.admin, STRATEGIES, 'strategies');
}

async function defineTenantStrategy(extra: Record<string, unknown> = {}): Promise<Definition> {
  const response = await ctx.admin.post(STRATEGIES, {
    name: uniqueName('tenant'),
    title: 'Tenants',
    description: 'On for the listed tenants',
    parameters: [
      { name: 'tenants', type: 'list', description: 'Tenant ids', required: true },
      { name: 'weight', type: 'number' },
      { name: 'strict', type: 'boolean' },
      { name: 'share', type: 'percentage' },
    ],
    ...extra,
  });
  expectStatus(response, 201);
  return response.json() as Definition;
}

const flagStrategies = (flag: string) => `/api/admin/projects/default/features/${flag}/environments/development/strategies`;

describe('strategy definitions', () => {
  test('a fresh install lists the five built-in strategies, not editable, in order', async () => {
    const builtIn = (await listDefinitions()).filter((definition) => !definition.editable);
    assert.deepEqual(
      builtIn.map(({ name, displayName, deprecated, parameters }) => ({
        name,
        displayName,
        deprecated,
        parameters: parameters.map((p) => `${p.name}:${p.type}:${p.required}`),
      })),
      [
        { name: 'default', displayName: 'Standard', deprecated: false, parameters: [] },
        {
          name: 'flexibleRollout',
          displayName: 'Gradual rollout',
          deprecated: false,
          parameters: ['rollout:percentage:false', 'stickiness:string:false', 'groupId:string:false'],
        },
        { name: 'userWithId', displayName: 'UserIDs', deprecated: false, parameters: ['userIds:list:true'] },
        { name: 'remoteAddress', displayName: 'IPs', deprecated: false, parameters: ['IPs:list:true'] },
        { name: 'applicationHostname', displayName: 'Hosts', deprecated: false, parameters: ['hostNames:list:true'] },
      ],
    );
  });

  test('creating a custom strategy returns it with its location, lists it and records strategy-created', async () => {
    const since = await lastEventId(ctx);
    const name = uniqueName('tenant');
    const response = await ctx.admin.post(STRATEGIES, {
      name,
      description: 'On for the listed tenants',
      parameters: [
        { name: 'tenants', type: 'list', required: true },
        { name: 'weight', type: 'number', description: 'How much' },
      ],
    });
    expectStatus(response, 201);
    assert.equal(response.headers.location, `${STRATEGIES}/${name}`);
    const expected: Definition = {
      name,
      title: null,
      displayName: name,
      description: 'On for the listed tenants',
      editable: true,
      deprecated: false,
      parameters: [
        { name: 'tenants', type: 'list', description: '', required: true },
        { name: 'weight', type: 'number', description: 'How much', required: false },
      ],
    };
    assert.deepEqual(response.json(), expected);
    assert.deepEqual((await ctx.admin.get(`${STRATEGIES}/${name}`)).json(), expected);
    assert.deepEqual(
      (await listDefinitions()).find((definition) => definition.name === name),
      expected,
    );
    const events = await eventsSince(ctx, since);
    assert.deepEqual(
      events.map((event) => [event.type, event.data]),
      [['strategy-created', expected]],
    );
  });

  test('a name already taken, by a built-in or a custom strategy, is a 409', async () => {
    expectError(await ctx.admin.post(STRATEGIES, { name: 'flexibleRollout' }), 409, 'NameExistsError');
    const custom = await defineTenantStrategy();
    const again = expectError(await ctx.admin.post(STRATEGIES, { name: custom.name }), 409, 'NameExistsError');
    assert.equal(again.message, `A strategy named "${custom.name}" already exists`);
  });

  test('bad definitions are a 400 naming the problem, and nothing is stored', async () => {
    const name = uniqueName('bad');
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ name: 'has space' }, '/body/name'],
      [{ name, parameters: [{ name: 'x', type: 'date' }] }, '/body/parameters/0/type'],
      [{ name, parameters: [{ name: '', type: 'string' }] }, '/body/parameters/0/name'],
      [
        {
          name,
          parameters: [
            { name: 'x', type: 'string' },
            { name: 'x', type: 'list' },
          ],
        },
        '/body/parameters/1/name',
      ],
      [{ name, parameters: [{ name: 'x', type: 'string', default: 1 }] }, '/body/parameters/0'],
      [{ name, editable: false }, '/body/editable'],
      [{ name, parameters: Array.from({ length: 51 }, (_, i) => ({ name: `p${i}`, type: 'string' })) }, '/body/parameters'],
    ];
    for (const [body, path] of cases) {
      const error = expectError(await ctx.admin.post(STRATEGIES, body), 400, 'BadDataError');
      assert.ok(
        error.details.some((detail) => detail.path?.startsWith(path)),
        `${JSON.stringify(body).slice(0, 80)}: expected a problem at ${path}, got ${JSON.stringify(error.details)}`,
      );
    }
    expectError(await ctx.admin.get(`${STRATEGIES}/${name}`), 404, 'NotFoundError');
  });

  test("a flag's strategy may use a custom strategy; its parameters are checked against their types", async () => {
    const definition = await defineTenantStrategy();
    const flag = await createFlag(ctx);
    const missing = expectError(await ctx.admin.post(flagStrategies(flag), { name: definition.name, parameters: {} }), 400, 'BadDataError');
    assert.deepEqual(
      missing.details.map((detail) => detail.path),
      ['/body/parameters/tenants'],
    );
    const badTypes = expectError(
      await ctx.admin.post(flagStrategies(flag), {
        name: definition.name,
        parameters: { tenants: 'a,b', weight: 'heavy', strict: 'yes', share: '101' },
      }),
      400,
      'BadDataError',
    );
    assert.deepEqual(
      badTypes.details.map((detail) => [detail.path, detail.message]),
      [
        ['/body/parameters/weight', 'weight must be a number (got "heavy")'],
        ['/body/parameters/strict', 'strict must be true or false (got "yes")'],
        ['/body/parameters/share', 'share must be a whole percentage from 0 to 100 (got "101")'],
      ],
    );
    const added = await ctx.admin.post(flagStrategies(flag), {
      name: definition.name,
      parameters: { tenants: 'acme,globex', weight: '2.5', strict: 'true', share: '40' },
    });
    expectStatus(added, 200);
    assert.deepEqual((added.json() as { parameters: unknown }).parameters, {
      tenants: 'acme,globex',
      weight: '2.5',
      strict: 'true',
      share: '40',
    });
    const unknown = expectError(await ctx.admin.post(flagStrategies(flag), { name: uniqueName('nothing') }), 400, 'BadDataError');
    assert.equal(unknown.details[0]!.path, '/body/name');
  });

  test('updating changes what was sent, records strategy-updated once, and never renames', async () => {
    const definition = await defineTenantStrategy();
    const since = await lastEventId(ctx);
    const update = {
      description: 'On for some tenants',
      parameters: [{ name: 'tenants', type: 'list', required: true }],
    };
    const response = await ctx.admin.put(`${STRATEGIES}/${definition.name}`, update);
    expectStatus(response, 200);
    const expected = {
      ...definition,
      description: 'On for some tenants',
      parameters: [{ name: 'tenants', type: 'list', description: '', required: true }],
    };
    assert.deepEqual(response.json(), expected);
    expectStatus(await ctx.admin.put(`${STRATEGIES}/${definition.name}`, { ...update, name: definition.name }), 200);
    const events = await eventsSince(ctx, since);
    assert.deepEqual(
      events.map((event) => [event.type, event.data, event.preData]),
      [['strategy-updated', expected, definition]],
    );

    const rename = expectError(await ctx.admin.put(`${STRATEGIES}/${definition.name}`, { name: 'other' }), 400, 'BadDataError');
    assert.equal(rename.details[0]!.path, '/body/name');
    expectError(
      await ctx.admin.put(`${STRATEGIES}/${definition.name}`, { parameters: [{ name: 'x', type: 'json' }] }),
      400,
      'BadDataError',
    );
    const builtIn = expectError(await ctx.admin.put(`${STRATEGIES}/userWithId`, { description: 'mine' }), 400, 'BadDataError');
    assert.equal(builtIn.message, 'Strategy "userWithId" is built in and cannot be changed');
    expectError(await ctx.admin.put(`${STRATEGIES}/${uniqueName('none')}`, { description: 'x' }), 404, 'NotFoundError');
    assert.deepEqual((await ctx.admin.get(`${STRATEGIES}/${definition.name}`)).json(), expected);
  });

  test('a deprecated strategy keeps working where it is used but cannot be added anew until reactivated', async () => {
    const definition = await defineTenantStrategy();
    const flag = await createFlag(ctx);
    const added = await ctx.admin.post(flagStrategies(flag), { name: definition.name, parameters: { tenants: 'acme' } });
    expectStatus(added, 200);
    const strategyId = (added.json() as { id: string }).id;

    const since = await lastEventId(ctx);
    expectStatus(await ctx.admin.post(`${STRATEGIES}/${definition.name}/deprecate`), 200);
    expectStatus(await ctx.admin.post(`${STRATEGIES}/${definition.name}/deprecate`), 200);
    assert.equal(((await ctx.admin.get(`${STRATEGIES}/${definition.name}`)).json() as Definition).deprecated, true);

    const refused = expectError(
      await ctx.admin.post(flagStrategies(flag), { name: definition.name, parameters: { tenants: 'x' } }),
      400,
      'BadDataError',
    );
    assert.match(refused.message, /is deprecated/);
    const edited = await ctx.admin.put(`${flagStrategies(flag)}/${strategyId}`, {
      name: definition.name,
      parameters: { tenants: 'acme,initech' },
    });
    expectStatus(edited, 200);

    expectStatus(await ctx.admin.post(`${STRATEGIES}/${definition.name}/reactivate`), 200);
    expectStatus(await ctx.admin.post(flagStrategies(flag), { name: definition.name, parameters: { tenants: 'x' } }), 200);
    const events = await eventsSince(ctx, since);
    assert.deepEqual(
      events.map((event) => event.type),
      ['strategy-deprecated', 'feature-strategy-update', 'strategy-reactivated', 'feature-strategy-add'],
    );
    const deprecated = { ...definition, deprecated: true };
    assert.deepEqual([events[0]!.data, events[0]!.preData], [deprecated, definition]);
    assert.deepEqual([events[2]!.data, events[2]!.preData], [definition, deprecated]);

    for (const name of ['default', 'flexibleRollout']) {
      expectError(await ctx.admin.post(`${STRATEGIES}/${name}/deprecate`), 400, 'BadDataError');
    }
    expectStatus(await ctx.admin.post(`${STRATEGIES}/userWithId/deprecate`), 200);
    expectStatus(await ctx.admin.post(`${STRATEGIES}/userWithId/reactivate`), 200);
    expectError(await ctx.admin.post(`${STRATEGIES}/${uniqueName('none')}/deprecate`), 404, 'NotFoundError');
  });

  test('a strategy in use cannot be deleted; once unused it is, with strategy-deleted', async () => {
    const definition = await defineTenantStrategy();
    const flag = await createFlag(ctx);
    const added = await ctx.admin.post(flagStrategies(flag), { name: definition.name, parameters: { tenants: 'acme' } });
    expectStatus(added, 200);
    const inUse = expectError(await ctx.admin.delete(`${STRATEGIES}/${definition.name}`), 409, 'ConflictError');
    assert.equal(inUse.message, `Strategy "${definition.name}" is used by flag "${flag}" (development); remove it from those flags first`);

    expectStatus(await ctx.admin.delete(`${flagStrategies(flag)}/${(added.json() as { id: string }).id}`), 200);
    const since = await lastEventId(ctx);
    expectStatus(await ctx.admin.delete(`${STRATEGIES}/${definition.name}`), 200);
    const events = await eventsSince(ctx, since);
    assert.deepEqual(
      events.map((event) => [event.type, event.preData]),
      [['strategy-deleted', definition]],
    );
    expectError(await ctx.admin.get(`${STRATEGIES}/${definition.name}`), 404, 'NotFoundError');
    expectError(await ctx.admin.delete(`${STRATEGIES}/default`), 400, 'BadDataError');
  });

  test('viewers read strategies; editors define them', async () => {
    const viewer = await createUserSession(ctx, 'Viewer');
    const editor = await createUserSession(ctx, 'Editor');
    expectStatus(await ctx.withCookie(viewer.cookie).get(STRATEGIES), 200);
    const denied = expectError(await ctx.withCookie(viewer.cookie).post(STRATEGIES, { name: uniqueName('v') }), 403, 'PermissionError');
    assert.deepEqual(denied.permissions, ['CREATE_STRATEGY']);
    expectStatus(await ctx.withCookie(editor.cookie).post(STRATEGIES, { name: uniqueName('e') }), 201);
  });
});
