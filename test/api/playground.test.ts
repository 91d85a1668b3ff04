import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectError, expectStatus } from '../helpers/assertions.js';
import { uniqueName } from '../helpers/fixtures.js';
import { createFlag, createSegment, createProject } from '../helpers/projects.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

let ctx: TestApp;
const project = uniqueName('play');
const name = (key: string) => `${project}-${key}`;
let segmentId: number;

before(async () => {
  ctx = await startTestApp();
  await createProject(ctx, { id: project, environments: ['development'] });
  const segment = await createSegment(ctx, {
    name: uniqueName('beta'),
    constraints: [{ contextName: 'plan', operator: 'IN', values: ['beta'] }],
  });
  segmentId = segment.id;
  await createFlag(ctx, project, {
    name: name('explained'),
    strategies: [
      { name: 'userWithId', parameters: { userIds: 'alice' }, constraints: [{ contextName: 'country', operator: 'IN', values: ['no'] }] },
      { name: 'default', segments: [segmentId] },
    ],
  });
  await createFlag(ctx, project, { name: name('off'), strategies: [{ name: 'default' }], enabled: false });
  await createFlag(ctx, project, { name: name('child'), strategies: [{ name: 'default' }] });
  expectStatus(
    await ctx.admin.post(`/api/admin/projects/${project}/features/${name('child')}/dependencies`, { feature: name('off') }),
    200,
  );
});
after(() => ctx.close());

interface PlaygroundFeature {
  name: string;
  isEnabled: boolean;
  isEnabledInCurrentEnvironment: boolean;
  hasUnsatisfiedDependency: boolean;
  strategies: {
    result: boolean | 'unknown';
    data: Array<{
      name: string;
      result: { enabled: boolean };
      constraints: Array<{ contextName: string; result: boolean }>;
      segments: Array<{ id: number; name: string; result: boolean }>;
    }>;
  };
}

async function play(context: Record<string, unknown>): Promise<Map<string, PlaygroundFeature>> {
  const response = await ctx
    .as(await viewerToken())
    .post('/api/admin/playground', { environment: 'development', projects: [project], context });
  expectStatus(response, 200);
  return new Map((response.json() as { features: PlaygroundFeature[] }).features.map((feature) => [feature.name, feature]));
}

let viewerPat: string | undefined;
/** The playground is for every signed-in role: a Viewer's personal access token calls it. */
async function viewerToken(): Promise<string> {
  if (viewerPat) return viewerPat;
  const username = uniqueName('viewer');
  const created = await ctx.admin.post('/api/admin/user-admin', { username, rootRole: 'Viewer', password: 'Correct-Horse-9-Battery' });
  expectStatus(created, 201);
  const login = await ctx.as().post('/auth/simple/login', { username, password: 'Correct-Horse-9-Battery' });
  const cookie = `vexil-session=${login.cookies.find((c) => c.name === 'vexil-session')!.value}`;
  const pat = await ctx
    .withCookie(cookie)
    .post('/api/admin/user/tokens', { description: 'playground', expiresAt: new Date(Date.now() + 86_400_000).toISOString() });
  expectStatus(pat, 201);
  viewerPat = (pat.json() as { secret: string }).secret;
  return viewerPat;
}

describe('POST /api/admin/playground', () => {
  test('explains each strategy, constraint and segment', async () => {
    const alice = (await play({ userId: 'alice', properties: { country: 'no' } })).get(name('explained'))!;
    assert.equal(alice.isEnabled, true);
    assert.equal(alice.strategies.result, true);
    assert.deepEqual(
      alice.strategies.data.map((s) => [s.name, s.result.enabled]),
      [
        ['userWithId', true],
        ['default', false],
      ],
    );
    assert.deepEqual(
      alice.strategies.data[0]!.constraints.map((c) => [c.contextName, c.result]),
      [['country', true]],
    );
    assert.deepEqual(alice.strategies.data[1]!.segments, [
      {
        id: segmentId,
        name: alice.strategies.data[1]!.segments[0]!.name,
        result: false,
        constraints: [{ contextName: 'plan', operator: 'IN', values: ['beta'], caseInsensitive: false, inverted: false, result: false }],
      },
    ]);

    const bob = (await play({ userId: 'bob', properties: { country: 'no', plan: 'beta' } })).get(name('explained'))!;
    assert.equal(bob.isEnabled, true);
    assert.deepEqual(
      bob.strategies.data.map((s) => s.result.enabled),
      [false, true],
    );

    const nobody = (await play({ userId: 'carol' })).get(name('explained'))!;
    assert.equal(nobody.isEnabled, false);
    assert.equal(nobody.strategies.result, false);
  });

  test('shows flags off in the environment and unsatisfied dependencies', async () => {
    const features = await play({ userId: 'alice' });
    assert.deepEqual([...features.keys()].sort(), [name('child'), name('explained'), name('off')].sort());
    const off = features.get(name('off'))!;
    assert.equal(off.isEnabledInCurrentEnvironment, false);
    assert.equal(off.isEnabled, false);
    const child = features.get(name('child'))!;
    assert.equal(child.isEnabled, false);
    assert.equal(child.hasUnsatisfiedDependency, true);
    assert.equal(child.strategies.result, true);
  });

  test("a custom strategy is 'unknown': only the application's own implementation can evaluate it", async () => {
    const customProject = uniqueName('play-custom');
    expectStatus(
      await ctx.admin.post('/api/admin/projects', { id: customProject, name: customProject, environments: ['development'] }),
      201,
    );
    const strategy = uniqueName('tenant');
    expectStatus(await ctx.admin.post('/api/admin/strategies', { name: strategy, parameters: [{ name: 'tenants', type: 'list' }] }), 201);
    await createFlag(ctx, customProject, {
      name: `${customProject}-custom`,
      strategies: [{ name: strategy, parameters: { tenants: 'acme' } }],
    });
    const response = await ctx.admin.post('/api/admin/playground', { environment: 'development', projects: [customProject], context: {} });
    expectStatus(response, 200);
    const [feature] = (response.json() as { features: Array<PlaygroundFeature & { strategies: { data: Array<{ result: unknown }> } }> })
      .features;
    assert.equal(feature!.name, `${customProject}-custom`);
    assert.equal(feature!.isEnabled, false);
    assert.equal(feature!.strategies.result, 'unknown');
    assert.deepEqual(
      feature!.strategies.data.map((data) => [data.name, data.result]),
      [[strategy, { enabled: 'unknown', evaluationStatus: 'incomplete' }]],
    );
  });

  test('bad input is a 400 and an unknown environment a 404', async () => {
    const token = await viewerToken();
    const send = (payload: unknown) => ctx.as(token).inject({ method: 'POST', url: '/api/admin/playground', payload: payload as object });
    expectError(await send({ projects: '*', context: {} }), 400, 'BadDataError');
    expectError(await send({ environment: 'development', context: { userId: { nested: 1 } } }), 400, 'BadDataError');
    expectError(await send({ environment: 'development', context: {}, extra: true }), 400, 'BadDataError');
    expectError(await send({ environment: 'development', projects: 'all', context: {} }), 400, 'BadDataError');
    expectError(await send({ environment: 'nowhere', context: {} }), 404, 'NotFoundError');
    expectError(
      await ctx.as().inject({ method: 'POST', url: '/api/admin/playground', payload: { environment: 'development', context: {} } }),
      401,
      'AuthenticationRequired',
    );
  });
});

describe('advanced playground', () => {
  interface AdvancedEntry {
    environment: string;
    context: Record<string, unknown>;
    isEnabled: boolean;
    isEnabledInCurrentEnvironment: boolean;
  }
  const advanced = (body: unknown) => ctx.admin.post('/api/admin/playground/advanced', body);

  test('every environment and every combination of comma-separated values, grouped by flag', async () => {
    const other = uniqueName('play-two');
    await createProject(ctx, { id: other, environments: ['development', 'production'] });
    const flag = await createFlag(ctx, other, {
      strategies: [
        { name: 'userWithId', parameters: { userIds: 'alice' }, constraints: [{ contextName: 'country', operator: 'IN', values: ['no'] }] },
      ],
    });
    const body = {
      environments: ['development', 'production'],
      projects: [other],
      context: { userId: 'alice,bob', properties: { country: 'no,se' } },
    };
    const response = await advanced(body);
    expectStatus(response, 200);
    const answer = response.json() as {
      input: unknown;
      features: Array<{ name: string; projectId: string; environments: Record<string, AdvancedEntry[]> }>;
    };
    assert.deepEqual(answer.input, body);
    assert.deepEqual(
      answer.features.map((feature) => [feature.name, feature.projectId, Object.keys(feature.environments)]),
      [[flag, other, ['development', 'production']]],
    );
    const outcomes = (environment: string) =>
      answer.features[0]!.environments[environment]!.map((entry) => [
        entry.environment,
        entry.context.userId,
        (entry.context.properties as Record<string, string>).country,
        entry.isEnabled,
      ]);
    // Only alice in Norway is let in, and only where the flag is on (development).
    assert.deepEqual(outcomes('development'), [
      ['development', 'alice', 'no', true],
      ['development', 'alice', 'se', false],
      ['development', 'bob', 'no', false],
      ['development', 'bob', 'se', false],
    ]);
    assert.deepEqual(outcomes('production'), [
      ['production', 'alice', 'no', false],
      ['production', 'alice', 'se', false],
      ['production', 'bob', 'no', false],
      ['production', 'bob', 'se', false],
    ]);
    assert.equal(answer.features[0]!.environments.development![0]!.context.environment, 'development');
  });

  test('more than 10,000 evaluations is refused before any is made, however the lists multiply', async () => {
    const values = Array.from({ length: 100 }, (_, index) => `v${index}`).join(',');
    const error = expectError(
      await advanced({
        environments: ['development'],
        context: { userId: values, sessionId: values, properties: { a: values, b: values, c: values } },
      }),
      400,
      'BadDataError',
    );
    assert.match(error.message, /more than 10000/);
  });

  test('bad input is a 400; an unknown environment a 404', async () => {
    for (const body of [
      { environments: [], context: {} },
      { environments: ['development', 'development'], context: {} },
      { environments: ['development'] },
      { environments: ['development'], context: {}, extra: 1 },
      { environments: ['development'], projects: 'all', context: {} },
    ]) {
      expectError(await advanced(body), 400, 'BadDataError');
    }
    expectError(await advanced({ environments: ['development', 'no-such-environment'], context: {} }), 404, 'NotFoundError');
  });
});
