import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { expectError, expectStatus, getOk } from '../helpers/assertions.js';
import { eventsSince, lastEventId } from '../helpers/events.js';
import { uniqueName } from '../helpers/fixtures.js';
import { createProjectWithFlag, featurePath } from '../helpers/projects.js';
import { createSdkToken } from '../helpers/sdk-fixtures.js';
import { useTestApp } from '../helpers/test-app.js';

// No key or path a request gives walks into an object's prototype: `__proto__`, `constructor` and `prototype` in a
// SCIM PATCH path or a JSON Patch path are refused with a 400, flag names used as keys stay plain names, and the
// process itself is hardened so that the next library that walks such a path changes nothing.

const ctx = useTestApp();
const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const POLLUTING_PATHS = ['__proto__.vexilPolluted', 'constructor.prototype.vexilPolluted', '__PROTO__.changeRequestId', 'name.__proto__'];

/** What shows that a request changed every object of the process: a property plain objects should not have. */
function assertPrototypeClean(): void {
  const probe: Record<string, unknown> = {};
  for (const key of ['vexilPolluted', 'changeRequestId', 'rollback', 'yes', 'no']) assert.equal(probe[key], undefined, key);
}

async function assertFlagsCanBeCreated(): Promise<void> {
  const name = uniqueName('after');
  expectStatus(await ctx.admin.post('/api/admin/projects/default/features', { name }), 201);
  const created = await getOk<{ name: string; archived: boolean }>(ctx.admin, featurePath('default', name));
  assert.deepEqual([created.name, created.archived], [name, false]);
}

describe('keys that reach a prototype', () => {
  test('a SCIM PATCH path through __proto__, constructor or prototype is a 400 invalidPath that changes nothing', async () => {
    const made = await ctx.admin.post('/api/admin/scim/token');
    expectStatus(made, 201);
    const headers = { authorization: `Bearer ${(made.json() as { token: string }).token}`, 'content-type': 'application/scim+json' };
    const scim = (method: 'GET' | 'POST' | 'PATCH', url: string, body?: unknown) =>
      ctx.app.inject({ method, url, headers, ...(body === undefined ? {} : { payload: JSON.stringify(body) }) });
    const userName = uniqueName('scim-proto');
    const user = await scim('POST', '/scim/v2/Users', { userName, active: true });
    expectStatus(user, 201);
    const group = await scim('POST', '/scim/v2/Groups', { displayName: uniqueName('scim-proto-group') });
    expectStatus(group, 201);
    const resources = [`/scim/v2/Users/${(user.json() as { id: string }).id}`, `/scim/v2/Groups/${(group.json() as { id: string }).id}`];
    const since = await lastEventId(ctx);
    for (const resource of resources) {
      const before = (await scim('GET', resource)).json();
      for (const path of POLLUTING_PATHS) {
        for (const op of ['add', 'replace']) {
          const refused = await scim('PATCH', resource, { schemas: [PATCH_OP], Operations: [{ op, path, value: 'yes' }] });
          const body = expectError(refused, 400, refused.json().name);
          assert.equal((refused.json() as { scimType: string }).scimType, 'invalidPath', `${op} ${path}`);
          assert.deepEqual(body.details, [
            { path: '/body/Operations/0/path', message: `"${/__proto__/i.exec(path)?.[0] ?? 'constructor'}" is not an attribute` },
          ]);
        }
      }
      assert.deepEqual((await scim('GET', resource)).json(), before);
    }
    assert.deepEqual(await eventsSince(ctx, since), []);
    assertPrototypeClean();
    await assertFlagsCanBeCreated();
    expectStatus(await ctx.admin.delete('/api/admin/scim/token'), 204);
  });

  test('a JSON Patch of a flag, a strategy or variants through __proto__ or constructor is a 400 that changes nothing', async () => {
    const { project, flag } = await createProjectWithFlag(ctx);
    const strategies = `${featurePath(project, flag)}/environments/development/strategies`;
    const strategy = await ctx.admin.post(strategies, { name: 'default' });
    expectStatus(strategy, 200);
    const targets = [
      featurePath(project, flag),
      `${strategies}/${(strategy.json() as { id: string }).id}`,
      `${featurePath(project, flag)}/environments/development/variants`,
    ];
    const since = await lastEventId(ctx);
    for (const target of targets) {
      for (const path of ['/__proto__/vexilPolluted', '/constructor/prototype/vexilPolluted', '/parameters/__proto__']) {
        const refused = expectError(await ctx.admin.patch(target, [{ op: 'add', path, value: 'yes' }]), 400, 'BadDataError');
        assert.equal(refused.details[0]?.path, '/body/0/path', `${target} ${path}`);
      }
      const moved = expectError(
        await ctx.admin.patch(target, [{ op: 'copy', from: '/__proto__', path: '/description' }]),
        400,
        'BadDataError',
      );
      assert.match(moved.details[0]?.message ?? '', /"__proto__" names no field/);
    }
    assert.deepEqual(await eventsSince(ctx, since), []);
    assertPrototypeClean();
  });

  test('a flag called __proto__ in an SDK metrics report is counted under that name, and no object gains a property', async () => {
    const token = await createSdkToken(ctx, 'client', 'development');
    const at = new Date().toISOString();
    const metric = {
      featureName: '__proto__',
      appName: uniqueName('proto-app'),
      environment: 'development',
      timestamp: at,
      yes: 3,
      no: 1,
      variants: {},
    };
    expectStatus(await ctx.as(token).post('/api/client/metrics/bulk', { applications: [], metrics: [metric] }), 202);
    assertPrototypeClean();
    await assertFlagsCanBeCreated();
  });

  test('the server and the edge run with __proto__ disabled and Object.prototype closed to new properties', () => {
    const script = `
      import { hardenPrototypes } from ${JSON.stringify(join(import.meta.dirname, '../../src/shared/prototype-hardening.ts'))};
      hardenPrototypes();
      const tries = {
        readProto: () => ({}).__proto__,
        writeProto: () => { ({}).__proto__ = { polluted: true }; },
        addToPrototype: () => { 'use strict'; Object.prototype.polluted = true; },
      };
      const outcome = Object.fromEntries(Object.entries(tries).map(([name, attempt]) => {
        try { attempt(); return [name, 'allowed']; } catch (error) { return [name, error.constructor.name]; }
      }));
      const own = {}; own.toString = () => 'own';
      console.log(JSON.stringify({ ...outcome, polluted: ({}).polluted ?? null, ownToString: String(own), literal: Object.getPrototypeOf({ __proto__: null }) }));
    `;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
    assert.equal(child.status, 0, child.stderr);
    assert.deepEqual(JSON.parse(child.stdout), {
      readProto: 'TypeError',
      writeProto: 'TypeError',
      addToPrototype: 'TypeError',
      polluted: null,
      // Objects still take their own properties, toString included (freezing the prototype would forbid that).
      ownToString: 'own',
      literal: null,
    });
  });
});

test('a JSON body with a __proto__ or constructor.prototype key is a 400 that says so', async () => {
  for (const payload of [
    '{"version":1,"__proto__":{"vexilPolluted":1}}',
    '{"version":1,"constructor":{"prototype":{"vexilPolluted":1}}}',
  ]) {
    const refused = expectError(
      await ctx.admin.inject({
        method: 'POST',
        url: '/api/admin/flags-file/apply',
        payload,
        headers: { 'content-type': 'application/json' },
      }),
      400,
      'BadDataError',
    );
    assert.match(refused.message, /uses "__proto__" or "constructor\.prototype" as a key/);
  }
  assertPrototypeClean();
});
