import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { expectError, expectStatus, getOk } from '../helpers/assertions.js';
import { eventsSince, lastEventId } from '../helpers/events.js';
import { uniqueName } from '../helpers/fixtures.js';
import { createProjectWithFlag, featurePath } from '../helpers/projects.js';
import { createSdkToken } from '../helpers/sdk-fixtures.js';
import { seededRandom } from '../helpers/seeded-random.js';
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

// The built-ins as they were when this file loaded: a request that replaced one would show here.
const BUILT_INS = Object.fromEntries(
  ['hasOwnProperty', 'toString', 'valueOf', 'isPrototypeOf', 'propertyIsEnumerable', 'constructor'].map((name) => [
    name,
    (Object.prototype as unknown as Record<string, unknown>)[name],
  ]),
);

function assertBuiltInsIntact(): void {
  for (const [name, original] of Object.entries(BUILT_INS)) {
    assert.equal((Object.prototype as unknown as Record<string, unknown>)[name], original, name);
  }
  assertPrototypeClean();
}

/** A SCIM token's client and a provisioned user and group to PATCH. */
async function scimResources() {
  const made = await ctx.admin.post('/api/admin/scim/token');
  expectStatus(made, 201);
  const headers = { authorization: `Bearer ${(made.json() as { token: string }).token}`, 'content-type': 'application/scim+json' };
  const scim = (method: 'GET' | 'POST' | 'PATCH', url: string, body?: unknown) =>
    ctx.app.inject({ method, url, headers, ...(body === undefined ? {} : { payload: JSON.stringify(body) }) });
  const user = await scim('POST', '/scim/v2/Users', { userName: uniqueName('scim-proto'), active: true });
  expectStatus(user, 201);
  const group = await scim('POST', '/scim/v2/Groups', { displayName: uniqueName('scim-proto-group') });
  expectStatus(group, 201);
  const resources = [`/scim/v2/Users/${(user.json() as { id: string }).id}`, `/scim/v2/Groups/${(group.json() as { id: string }).id}`];
  return { scim, resources };
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

  test('every Vexil process runs with __proto__ disabled and the built-in prototypes frozen, their objects still free', () => {
    const script = `
      import { hardenPrototypes } from ${JSON.stringify(join(import.meta.dirname, '../../src/shared/prototype-hardening.ts'))};
      hardenPrototypes();
      const tries = {
        readProto: () => ({}).__proto__,
        writeProto: () => { ({}).__proto__ = { polluted: true }; },
        addToPrototype: () => { 'use strict'; Object.prototype.polluted = true; },
        replaceHasOwnProperty: () => { Object.prototype.hasOwnProperty = 'pwned'; },
        replaceToString: () => { ({}).constructor.prototype.toString = 'pwned'; },
        replaceArrayMap: () => { [].constructor.prototype.map = 'pwned'; },
        replaceErrorMessage: () => { Error.prototype.message = 'pwned'; },
        replaceFunctionCall: () => { 'use strict'; Function.prototype.call = 'pwned'; },
      };
      const outcome = Object.fromEntries(Object.entries(tries).map(([name, attempt]) => {
        try { attempt(); return [name, 'allowed']; } catch (error) { return [name, error.constructor.name]; }
      }));
      const own = {}; own.toString = () => 'own';
      const error = new Error('first'); error.message = 'second'; error.name = 'Renamed';
      function Legacy() {} Legacy.prototype = Object.create(Error.prototype); Legacy.prototype.constructor = Legacy;
      console.log(JSON.stringify({
        ...outcome,
        polluted: ({}).polluted ?? null,
        hasOwnProperty: typeof ({}).hasOwnProperty,
        ownToString: String(own),
        error: [error.name, error.message],
        legacyConstructor: Legacy.prototype.constructor === Legacy,
        literal: Object.getPrototypeOf({ __proto__: null }),
      }));
    `;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
    assert.equal(child.status, 0, child.stderr);
    assert.deepEqual(JSON.parse(child.stdout), {
      readProto: 'TypeError',
      writeProto: 'TypeError',
      addToPrototype: 'TypeError',
      replaceHasOwnProperty: 'TypeError',
      replaceToString: 'TypeError',
      replaceArrayMap: 'TypeError',
      replaceErrorMessage: 'TypeError',
      replaceFunctionCall: 'TypeError',
      polluted: null,
      hasOwnProperty: 'function',
      // Objects still take their own properties (a frozen prototype alone would forbid that: the override mistake).
      ownToString: 'own',
      error: ['Renamed', 'second'],
      legacyConstructor: true,
      literal: null,
    });
  });

  test('every entry point hardens its process: the server, the edge, the vexil command and the admin command', async () => {
    const root = join(import.meta.dirname, '../..');
    const read = (path: string) => readFileSync(join(root, path), 'utf8');
    for (const entry of ['src/server-process.ts', 'src/edge/edge-process.ts', 'src/cli/vexil.ts', 'src/cli/admin.ts']) {
      assert.match(read(entry), /^\s*hardenPrototypes\(\);/m, entry);
    }
    const { scripts, bin } = JSON.parse(read('package.json')) as { scripts: Record<string, string>; bin: Record<string, string> };
    // Other Node options may follow (the edge's young generation), never come first.
    for (const script of ['start', 'edge', 'admin'])
      assert.match(scripts[script]!, /node --disable-proto=throw (?:--[\w-]+=\S+ )*dist\//, script);
    assert.equal(bin.vexil, 'dist/cli/vexil.js');
    assert.equal(read('src/cli/vexil.ts').split('\n')[0], '#!/usr/bin/env -S node --disable-proto=throw');
    assert.match(read('Dockerfile'), /^CMD \["node", "--disable-proto=throw", "dist\/main\.js"\]$/m);
  });

  test('a SCIM PATCH value whose keys walk into a prototype is a 400, and hasOwnProperty and toString stay what they were', async () => {
    const { scim, resources } = await scimResources();
    const since = await lastEventId(ctx);
    const forms = [
      { op: 'add', value: { '__proto__.vexilPolluted': 'yes' } },
      { op: 'replace', value: { 'constructor.prototype.vexilPolluted': 'yes' } },
      { op: 'replace', value: { 'constructor.prototype.toString': 'pwned' } },
      { op: 'replace', value: { 'constructor.prototype.hasOwnProperty': 'pwned' } },
      { op: 'add', value: { name: { 'constructor.prototype.valueOf': 'pwned' } } },
      { op: 'add', value: { emails: [{ 'prototype.x': 'pwned', value: 'a@example.com' }] } },
      { op: 'replace', path: 'name', value: { 'Constructor.Prototype.isPrototypeOf': 'pwned' } },
    ];
    for (const resource of resources) {
      const before = (await scim('GET', resource)).json();
      for (const operation of forms) {
        const refused = await scim('PATCH', resource, { schemas: [PATCH_OP], Operations: [operation] });
        expectError(refused, 400, refused.json().name);
        assert.match((refused.json() as { message: string }).message, /reaches an object's prototype/, JSON.stringify(operation));
      }
      assert.deepEqual((await scim('GET', resource)).json(), before);
    }
    assert.deepEqual(await eventsSince(ctx, since), []);
    assertBuiltInsIntact();
    await assertFlagsCanBeCreated();
    expectStatus(await ctx.admin.delete('/api/admin/scim/token'), 204);
  });

  test('prototype keys planted at random places of SCIM, flags-file, import and JSON Patch bodies are each a 400 (seeded fuzz)', async () => {
    const { scim, resources } = await scimResources();
    const { project, flag } = await createProjectWithFlag(ctx);
    const exported = (await ctx.admin.post('/api/admin/features-batch/export', { environment: 'development', project })).json();
    const flagsFile = (await ctx.admin.get(`/api/admin/flags-file?project=${project}`)).json();
    const bodies: Array<{ send: (body: unknown) => Promise<{ statusCode: number; body: string }>; body: unknown }> = [
      {
        send: (body) => scim('PATCH', resources[0]!, body),
        body: { schemas: [PATCH_OP], Operations: [{ op: 'add', value: { name: { givenName: 'A' } } }] },
      },
      { send: (body) => ctx.admin.post('/api/admin/flags-file/apply?dryRun=true', body), body: flagsFile },
      {
        send: (body) => ctx.admin.post('/api/admin/features-batch/import', body),
        body: { project, environment: 'development', data: exported },
      },
      {
        send: (body) => ctx.admin.patch(featurePath(project, flag), body),
        body: [{ op: 'replace', path: '/description', value: 'fuzzed' }],
      },
    ];
    // Each body is taken as it is, so that a 400 below is the planted key's doing.
    for (const { send, body } of bodies) {
      const accepted = await send(body);
      assert.ok(accepted.statusCode < 300, accepted.body);
    }
    const random = seededRandom(20261129);
    const since = await lastEventId(ctx);
    for (let round = 0; round < 40; round++) {
      for (const { send, body } of bodies) {
        const key = PROTOTYPE_KEY_FORMS[Math.floor(random() * PROTOTYPE_KEY_FORMS.length)]!;
        const planted = plantKey(structuredClone(body), key, random);
        const answer = await send(planted);
        assert.equal(answer.statusCode, 400, `${key} in ${JSON.stringify(planted).slice(0, 300)}: ${answer.body}`);
      }
    }
    assert.deepEqual(await eventsSince(ctx, since), []);
    assertBuiltInsIntact();
    await assertFlagsCanBeCreated();
    expectStatus(await ctx.admin.delete('/api/admin/scim/token'), 204);
  });
});

/** Key forms that reach a prototype, as a key and as a segment of a dotted or bracketed key path. */
const PROTOTYPE_KEY_FORMS = [
  'constructor.prototype.toString',
  'constructor.prototype.hasOwnProperty',
  '__proto__.polluted',
  'a.__proto__.b',
  'prototype',
  'Constructor.prototype.valueOf',
  'x[constructor][prototype][polluted]',
  'emails[type eq "work"].__proto__',
];

/** `body` with `key` added to one of its objects, chosen at random at any depth (the top one when it has none). */
function plantKey(body: unknown, key: string, random: () => number): unknown {
  const objects: Array<Record<string, unknown>> = [];
  const collect = (value: unknown) => {
    if (value === null || typeof value !== 'object') return;
    if (!Array.isArray(value)) objects.push(value as Record<string, unknown>);
    for (const child of Object.values(value)) collect(child);
  };
  collect(body);
  const target = objects[Math.floor(random() * objects.length)];
  if (target) target[key] = random() < 0.5 ? 'pwned' : { polluted: true };
  else if (Array.isArray(body)) body.push({ [key]: 'pwned' });
  return body;
}

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
    assert.match(refused.message, /uses "__proto__" or "constructor" as a key, which reaches an object's prototype/);
  }
  assertPrototypeClean();
});
