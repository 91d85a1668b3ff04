import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { expectError, expectStatus } from '../helpers/assertions.js';
import { eventually } from '../helpers/eventually.js';
import { eventsSince, lastEventId } from '../helpers/events.js';
import { createExperiment, unitsExposed } from '../helpers/experiments.js';
import { createUserSession, uniqueName } from '../helpers/fixtures.js';
import { enableChangeRequests } from '../helpers/change-requests.js';
import { createFlag, createProject, featurePath, projectPath } from '../helpers/projects.js';
import { seededRandom } from '../helpers/seeded-random.js';
import { type TestApp, useTestApp } from '../helpers/test-app.js';

/*
 * Experiments through the API: metrics of an environment, an experiment on a strategy's variants, exposures and
 * tracked events from SDK tokens, results whose figures are checked against the traffic the test generated, and
 * what bad input gets.
 */

interface Results {
  phase: number;
  exposures: Array<{ variant: string; units: number; weight: number }>;
  variantMismatches: number;
  sampleRatio: { pValue: number; alarm: boolean };
  warnings: string[];
  summary: string;
  metrics: Array<{
    name: string;
    role: string;
    variants: Array<{
      variant: string;
      units: number;
      value: number;
      problem?: string;
      comparison?: { estimate: number; chanceToWin?: number; pValue?: number; interval: number[] };
    }>;
  }>;
}

async function sdkToken(ctx: TestApp, type: 'client' | 'frontend', environment = 'development'): Promise<string> {
  const response = await ctx.admin.post('/api/admin/api-tokens', { tokenName: uniqueName(type), type, environment, projects: ['*'] });
  expectStatus(response, 201);
  return (response.json() as { secret: string }).secret;
}

const variantStrategy = (flag: string, stickiness = 'userId') => ({
  name: 'flexibleRollout',
  parameters: { rollout: '100', stickiness, groupId: flag },
  variants: [
    { name: 'control', weight: 500, weightType: 'variable', stickiness },
    { name: 'treatment', weight: 500, weightType: 'variable', stickiness },
  ],
});

async function strategyIdOf(ctx: TestApp, flag: string, environment = 'development'): Promise<string> {
  const response = await ctx.admin.get(`${featurePath('default', flag)}/environments/${environment}/strategies`);
  expectStatus(response, 200);
  return (response.json() as Array<{ id: string }>)[0]!.id;
}

describe('experiments', () => {
  const ctx = useTestApp();
  const EXPERIMENTS = `${projectPath('default')}/experiments`;
  const METRICS = '/api/admin/environments/development/experiment-metrics';

  test('an A/B test from metrics to shipped variant: exposures and events from SDKs, results that recover the lift', async () => {
    const flag = await createFlag(ctx, 'default', { strategies: [variantStrategy('checkout-button')] });
    const strategyId = await strategyIdOf(ctx, flag);
    const checkout = uniqueName('checkout');
    const revenue = uniqueName('revenue');
    expectStatus(
      await ctx.admin.post(METRICS, { name: checkout, kind: 'proportion', event: 'checkout', description: 'bought anything' }),
      201,
    );
    expectStatus(await ctx.admin.post(METRICS, { name: revenue, kind: 'mean', event: 'purchase', aggregation: 'sum', cap: 500 }), 201);
    const name = uniqueName('exp');
    const before = await lastEventId(ctx);
    const created = await ctx.admin.post(EXPERIMENTS, {
      name,
      hypothesis: 'A bigger button sells more',
      featureName: flag,
      environment: 'development',
      strategyId,
      metrics: [
        { metric: checkout, role: 'goal' },
        { metric: revenue, role: 'secondary' },
      ],
    });
    expectStatus(created, 201);
    assert.deepEqual(
      (created.json() as { status: string; engine: string; metrics: Array<{ name: string; role: string }> }).metrics.map((m) => [
        m.name,
        m.role,
      ]),
      [
        [checkout, 'goal'],
        [revenue, 'secondary'],
      ],
    );
    const started = await ctx.admin.post(`${EXPERIMENTS}/${name}/start`);
    expectStatus(started, 200);
    const phases = (started.json() as { phases: Array<{ phase: number; stickiness: string; variants: unknown[] }> }).phases;
    assert.deepEqual(
      phases.map((p) => [p.phase, p.stickiness, p.variants]),
      [
        [
          1,
          'userId',
          [
            { name: 'control', weight: 500 },
            { name: 'treatment', weight: 500 },
          ],
        ],
      ],
    );
    expectError(await ctx.admin.post(`${EXPERIMENTS}/${name}/start`), 409, 'ConflictError');

    // Which variant each user gets, as a frontend SDK is told; then their exposures and what they did.
    const frontend = await sdkToken(ctx, 'frontend');
    const client = await sdkToken(ctx, 'client');
    const random = seededRandom(62);
    const users = Array.from({ length: 1200 }, (_, i) => `user-${i}`);
    const variantOf = new Map<string, string>();
    for (const userId of users) {
      const answer = await ctx.as(frontend).post('/api/frontend', { context: { userId } });
      const toggle = (answer.json() as { toggles: Array<{ name: string; variant: { name: string } }> }).toggles.find(
        (t) => t.name === flag,
      )!;
      variantOf.set(userId, toggle.variant.name);
    }
    const exposures = users.map((userId, i) => ({
      featureName: flag,
      // The first five report the other variant: Vexil keeps its own and counts the mismatch.
      variant: i < 5 ? (variantOf.get(userId) === 'control' ? 'treatment' : 'control') : variantOf.get(userId),
      context: { userId, appName: 'shop' },
    }));
    for (let i = 0; i < exposures.length; i += 500) {
      const sent = await ctx.as(client).post('/api/client/exposures', { exposures: exposures.slice(i, i + 500) });
      expectStatus(sent, 202);
    }
    const repeated = await ctx.as(client).post('/api/client/exposures', { exposures: exposures.slice(5, 8) });
    assert.deepEqual(repeated.json(), { accepted: 3, dropped: {} }, 'a repeat is taken and changes nothing');

    ctx.clock.advance(60_000);
    const converted = new Map<string, boolean>();
    const spent = new Map<string, number>();
    const events: Array<{ event: string; context?: object; targetingKey?: string; value?: number }> = [];
    for (const userId of users) {
      const rate = variantOf.get(userId) === 'treatment' ? 0.5 : 0.3;
      if (random() < rate) {
        converted.set(userId, true);
        const value = Math.round(random() * 800);
        spent.set(userId, Math.min(500, value));
        // OpenFeature's shape (a targeting key) and the Unleash context's shape, half each.
        events.push(userId.endsWith('0') ? { event: 'checkout', targetingKey: userId } : { event: 'checkout', context: { userId } });
        events.push({ event: 'purchase', context: { userId }, value });
      }
    }
    events.push({ event: 'not-a-metric', context: { userId: 'user-1' } });
    let accepted = 0;
    for (let i = 0; i < events.length; i += 400) {
      const sent = await ctx.as(frontend).post('/api/frontend/track', { events: events.slice(i, i + 400) });
      expectStatus(sent, 202);
      accepted += (sent.json() as { accepted: number }).accepted;
    }
    assert.equal(accepted, events.length - 1, 'every event of a metric is kept, the unknown one dropped');
    const metrics = (await ctx.admin.get(METRICS)).json() as { unknownEvents: Array<{ event: string; dropped: number }> };
    assert.deepEqual(
      metrics.unknownEvents.filter((e) => e.event === 'not-a-metric').map((e) => e.dropped),
      [1],
    );

    ctx.clock.advance(60_000);
    const refreshed = await ctx.admin.post(`${EXPERIMENTS}/${name}/results`);
    expectStatus(refreshed, 200);
    const results = refreshed.json() as Results;
    const unitsIn = (variant: string) => users.filter((u) => variantOf.get(u) === variant);
    assert.deepEqual(
      results.exposures.map((e) => [e.variant, e.units]),
      [
        ['control', unitsIn('control').length],
        ['treatment', unitsIn('treatment').length],
      ],
    );
    assert.equal(results.variantMismatches, 5);
    assert.equal(results.sampleRatio.alarm, false);
    const goal = results.metrics.find((m) => m.name === checkout)!;
    const rateOf = (variant: string) => unitsIn(variant).filter((u) => converted.get(u)).length / unitsIn(variant).length;
    assert.deepEqual(
      goal.variants.map((v) => [v.variant, v.units, Number(v.value.toFixed(12))]),
      [
        ['control', unitsIn('control').length, Number(rateOf('control').toFixed(12))],
        ['treatment', unitsIn('treatment').length, Number(rateOf('treatment').toFixed(12))],
      ],
    );
    const comparison = goal.variants[1]!.comparison!;
    assert.ok(Math.abs(comparison.estimate - (rateOf('treatment') - rateOf('control')) / rateOf('control')) < 1e-12, 'the relative lift');
    assert.ok(comparison.chanceToWin! > 0.99, `treatment wins: ${comparison.chanceToWin}`);
    assert.ok(
      comparison.interval[0]! < 0.667 && 0.667 < comparison.interval[1]!,
      `the interval holds the true lift of 2/3: ${comparison.interval}`,
    );
    assert.match(results.summary, /^treatment wins on .+ with (\d+%|over 99%) chance to beat control/);
    const revenueResult = results.metrics.find((m) => m.name === revenue)!;
    const meanSpent = (variant: string) => unitsIn(variant).reduce((sum, u) => sum + (spent.get(u) ?? 0), 0) / unitsIn(variant).length;
    assert.deepEqual(
      revenueResult.variants.map((v) => Number(v.value.toFixed(9))),
      [Number(meanSpent('control').toFixed(9)), Number(meanSpent('treatment').toFixed(9))],
      'the mean of capped spend per unit, units without a purchase counted as 0',
    );

    // The snapshot is what results read, and the history its chart.
    const read = (await ctx.admin.get(`${EXPERIMENTS}/${name}/results`)).json() as Results;
    assert.deepEqual(read, results);
    const history = (await ctx.admin.get(`${EXPERIMENTS}/${name}/results/history`)).json() as { snapshots: Array<{ results: Results }> };
    assert.equal(history.snapshots.length, 1);

    // Shipping goes through the strategy command: the strategy gives the winner to everyone.
    expectError(await ctx.admin.post(`${EXPERIMENTS}/${name}/ship`, { variant: 'nope' }), 400, 'BadDataError');
    const shipped = await ctx.admin.post(`${EXPERIMENTS}/${name}/ship`, { variant: 'treatment' });
    expectStatus(shipped, 200);
    assert.deepEqual(
      [(shipped.json() as { status: string }).status, (shipped.json() as { shippedVariant: string }).shippedVariant],
      ['shipped', 'treatment'],
    );
    const strategy = (await ctx.admin.get(`${featurePath('default', flag)}/environments/development/strategies/${strategyId}`)).json() as {
      variants: Array<{ name: string; weight: number }>;
    };
    assert.deepEqual(
      strategy.variants.map((v) => [v.name, v.weight]),
      [['treatment', 1000]],
    );
    const logged = await eventsSince(ctx, before);
    const types = logged.map((event) => event.type);
    for (const type of ['experiment-created', 'experiment-started', 'feature-strategy-update', 'experiment-shipped']) {
      assert.ok(types.includes(type), `${type} is in the event log: ${types.join(', ')}`);
    }
    // Each experiment event names where it acts, who acted, and the experiment.
    for (const event of logged.filter((entry) => entry.type.startsWith('experiment-'))) {
      assert.deepEqual(
        [event.project, event.environment, event.featureName, event.createdBy, (event.data as { name?: string } | null)?.name],
        ['default', 'development', flag, 'admin-token', name],
        event.type,
      );
    }
  });

  test("Vexil's own evaluations (frontend API, OFREP) record each unit's assignment once, with no code in the application", async () => {
    const flag = await createFlag(ctx, 'default', { strategies: [variantStrategy('own')] });
    const { name, path } = await createExperiment(ctx, flag, { goal: { kind: 'proportion', event: 'own-goal' } });
    const frontend = await sdkToken(ctx, 'frontend');
    const client = await sdkToken(ctx, 'client');
    const variantOf = new Map<string, string>();
    // The first requests after the start load what runs (and the key units are hashed with); from then on every
    // evaluation of a new unit is an assignment, written within a second.
    const serverAssigned = () => unitsExposed(ctx, name, 2);
    let probes = 0;
    await eventually(async () => {
      await ctx.as(frontend).get(`/api/frontend?userId=probe-${probes++}`);
      return (await serverAssigned()) > 0;
    }, 10_000);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const before = await serverAssigned();
    for (let i = 0; i < 200; i++) {
      const answer = (await ctx.as(frontend).get(`/api/frontend?userId=own-${i}`)).json() as {
        toggles: Array<{ name: string; variant: { name: string } }>;
      };
      variantOf.set(`own-${i}`, answer.toggles.find((toggle) => toggle.name === flag)!.variant.name);
      // Asked again, the same unit is not counted twice.
      await ctx.as(frontend).get(`/api/frontend?userId=own-${i}`);
    }
    for (let i = 200; i < 250; i++) {
      const answer = (await ctx.as(client).post(`/ofrep/v1/evaluate/flags/${flag}`, { context: { targetingKey: `own-${i}` } })).json() as {
        variant: string;
      };
      variantOf.set(`own-${i}`, answer.variant);
    }
    // Without the stickiness field there is no unit to count.
    await ctx.as(frontend).get('/api/frontend?sessionId=no-user');
    await eventually(async () => (await serverAssigned()) === before + 250, 10_000);
    ctx.clock.advance(60_000);
    const results = (await ctx.admin.post(`${path}/results`)).json() as Results;
    const count = (variant: string) => [...variantOf.values()].filter((v) => v === variant).length;
    assert.equal(
      results.exposures.reduce((sum, arm) => sum + arm.units, 0),
      before + 250,
    );
    // The probes' own assignments aside, each variant has the units the SDKs were told it.
    assert.ok(results.exposures[0]!.units - count('control') >= 0 && results.exposures[1]!.units - count('treatment') >= 0);
    assert.equal(results.exposures[0]!.units - count('control') + results.exposures[1]!.units - count('treatment'), before);
  });

  test('a weight change starts a new phase; exposures after it count there', async () => {
    const flag = await createFlag(ctx, 'default', { strategies: [variantStrategy('x')] });
    const { path, strategyId } = await createExperiment(ctx, flag, { goal: { kind: 'proportion', event: 'signup' } });
    const client = await sdkToken(ctx, 'client');
    const expose = async (from: number) =>
      expectStatus(
        await ctx.as(client).post('/api/client/exposures', {
          exposures: Array.from({ length: 50 }, (_, i) => ({ featureName: flag, context: { userId: `p-${from + i}` } })),
        }),
        202,
      );
    await expose(0);
    const weighted = variantStrategy('x');
    weighted.variants[0]!.weight = 200;
    weighted.variants[1]!.weight = 800;
    for (const variant of weighted.variants) variant.weightType = 'fix';
    const before = await lastEventId(ctx);
    expectStatus(await ctx.admin.put(`${featurePath('default', flag)}/environments/development/strategies/${strategyId}`, weighted), 200);
    ctx.clock.advance(1000);
    await expose(100);
    const experiment = (await ctx.admin.get(path)).json() as {
      phases: Array<{ phase: number; endedAt: string | null; variants: unknown }>;
    };
    assert.deepEqual(
      experiment.phases.map((p) => [p.phase, p.endedAt !== null, p.variants]),
      [
        [
          1,
          true,
          [
            { name: 'control', weight: 500 },
            { name: 'treatment', weight: 500 },
          ],
        ],
        [
          2,
          false,
          [
            { name: 'control', weight: 200 },
            { name: 'treatment', weight: 800 },
          ],
        ],
      ],
    );
    assert.ok((await eventsSince(ctx, before)).some((event) => event.type === 'experiment-phase-started'));
    ctx.clock.advance(1000);
    for (const [phase, units] of [
      [1, 50],
      [2, 50],
    ] as const) {
      const results = (await ctx.admin.get(`${path}/results?phase=${phase}`)).json() as Results;
      assert.equal(
        results.exposures.reduce((sum, e) => sum + e.units, 0),
        units,
        `phase ${phase}`,
      );
    }
  });

  test('shipping in an environment that requires change requests proposes the change: the strategy waits for review', async () => {
    const project = await createProject(ctx, { environments: ['production'] });
    const flag = await createFlag(ctx, project, { environment: 'production', strategies: [variantStrategy('protected')] });
    const { path, strategyId } = await createExperiment(ctx, flag, {
      project,
      environment: 'production',
      goal: { kind: 'proportion', event: 'p-goal' },
    });
    await enableChangeRequests(ctx, project);
    const owner = await createUserSession(ctx, 'Admin');
    const shipped = await ctx.withCookie(owner.cookie).post(`${path}/ship`, { variant: 'treatment' });
    expectStatus(shipped, 200);
    const answer = shipped.json() as { status: string; changeRequestId?: number };
    assert.equal(answer.status, 'shipped');
    assert.ok(typeof answer.changeRequestId === 'number', 'the answer names the change request');
    const strategy = (await ctx.admin.get(`${featurePath(project, flag)}/environments/production/strategies/${strategyId}`)).json() as {
      variants: Array<{ name: string; weight: number }>;
    };
    assert.deepEqual(
      strategy.variants.map((variant) => [variant.name, variant.weight]),
      [
        ['control', 500],
        ['treatment', 500],
      ],
      'nothing changed live',
    );
    const request = (
      await ctx.withCookie(owner.cookie).get(`${projectPath(project)}/change-requests/${answer.changeRequestId}`)
    ).json() as {
      features: Array<{ name: string; changes: Array<{ action: string }> }>;
    };
    assert.deepEqual(
      request.features.map((feature) => [feature.name, feature.changes.map((change) => change.action)]),
      [[flag, ['updateStrategy']]],
    );
  });

  test('bad input is a 400 or 409 in Unleash’s error format, and nothing is kept', async () => {
    const flag = await createFlag(ctx, 'default', { strategies: [variantStrategy('y')] });
    const strategyId = await strategyIdOf(ctx, flag);
    const goal = uniqueName('goal');
    expectStatus(await ctx.admin.post(METRICS, { name: goal, kind: 'proportion', event: 'paid' }), 201);
    expectError(await ctx.admin.post(METRICS, { name: goal, kind: 'proportion', event: 'paid' }), 409, 'NameExistsError');
    expectError(await ctx.admin.post(METRICS, { name: uniqueName('r'), kind: 'ratio', event: 'paid' }), 400, 'BadDataError');
    expectError(await ctx.admin.post(METRICS, { name: uniqueName('p'), kind: 'proportion', event: 'paid', cap: 3 }), 400, 'BadDataError');
    expectError(await ctx.admin.post(METRICS, { name: uniqueName('k'), kind: 'median', event: 'paid' }), 400, 'BadDataError');
    expectError(
      await ctx.admin.post('/api/admin/environments/nowhere/experiment-metrics', { name: 'm', kind: 'mean', event: 'e' }),
      404,
      'NotFoundError',
    );

    const base = { featureName: flag, environment: 'development', strategyId, metrics: [{ metric: goal, role: 'goal' }] };
    expectError(await ctx.admin.post(EXPERIMENTS, { ...base, name: uniqueName('e'), featureName: 'no-such-flag' }), 404, 'NotFoundError');
    expectError(
      await ctx.admin.post(EXPERIMENTS, { ...base, name: uniqueName('e'), strategyId: '00000000-0000-4000-8000-000000000000' }),
      400,
      'BadDataError',
    );
    expectError(
      await ctx.admin.post(EXPERIMENTS, { ...base, name: uniqueName('e'), metrics: [{ metric: 'unknown', role: 'goal' }] }),
      400,
      'BadDataError',
    );
    expectError(await ctx.admin.post(EXPERIMENTS, { ...base, name: uniqueName('e'), engine: 'psychic' }), 400, 'BadDataError');
    expectError(await ctx.admin.post(EXPERIMENTS, { ...base, name: uniqueName('e'), alpha: 0.9 }), 400, 'BadDataError');
    const listed = (await ctx.admin.get(EXPERIMENTS)).json() as { experiments: Array<{ featureName: string }> };
    assert.deepEqual(
      listed.experiments.filter((e) => e.featureName === flag),
      [],
      'no refused experiment was kept',
    );

    // A strategy whose variants stick to "default" can fall back to a random value: no unit to count.
    const randomFlag = await createFlag(ctx, 'default', { strategies: [variantStrategy('z', 'default')] });
    const randomName = uniqueName('random');
    expectStatus(
      await ctx.admin.post(EXPERIMENTS, {
        ...base,
        name: randomName,
        featureName: randomFlag,
        strategyId: await strategyIdOf(ctx, randomFlag),
      }),
      201,
    );
    const refused = await ctx.admin.post(`${EXPERIMENTS}/${randomName}/start`);
    expectError(refused, 409, 'ConflictError');
    assert.match((refused.json() as { message: string }).message, /random value/);

    const name = uniqueName('e');
    expectStatus(await ctx.admin.post(EXPERIMENTS, { ...base, name }), 201);
    expectStatus(await ctx.admin.post(`${EXPERIMENTS}/${name}/start`), 200);
    expectError(await ctx.admin.put(`${EXPERIMENTS}/${name}`, { ...base, name, environment: 'production' }), 409, 'ConflictError');
    expectError(await ctx.admin.delete(`${EXPERIMENTS}/${name}`), 409, 'ConflictError');
    expectError(await ctx.admin.delete(`${METRICS}/${goal}`), 409, 'ConflictError');

    const client = await sdkToken(ctx, 'client');
    const future = new Date(ctx.clock.now().getTime() + 3_600_000).toISOString();
    const track = (events: unknown[]) => ctx.as(client).post('/api/client/track', { events });
    const refusedBatches = [
      [{ event: 'paid', context: { userId: 'a' }, value: 'twelve' }],
      [{ event: 'paid', context: { userId: 'a' }, timestamp: future }],
      [{ event: 'paid', context: { userId: 'a' }, timestamp: 'yesterday' }],
      [{ event: 'paid', context: { userId: 'a' }, surprise: true }],
      Array.from({ length: 1001 }, () => ({ event: 'paid', context: { userId: 'a' } })),
      [
        { event: 'paid', context: { userId: 'a' } },
        { event: 'paid', context: { userId: 'b' }, timestamp: future },
      ],
    ];
    for (const events of refusedBatches) expectError(await track(events), 400, 'BadDataError');
    expectError(
      await ctx
        .as(client)
        .post('/api/client/exposures', { exposures: [{ featureName: flag, context: { userId: 'a' }, timestamp: future }] }),
      400,
      'BadDataError',
    );
    ctx.clock.advance(1000);
    const results = (await ctx.admin.post(`${EXPERIMENTS}/${name}/results`)).json() as Results;
    assert.deepEqual(
      results.exposures.map((e) => e.units),
      [0, 0],
      'no refused exposure was kept',
    );
    const stored = await ctx.db
      .selectFrom('tracked_events')
      .select('event')
      .where('environment', '=', 'development')
      .where('event', '=', 'paid')
      .execute();
    assert.deepEqual(stored, [], 'no event of a refused batch was kept');
    assert.match(results.summary, /Too few units yet/);
  });
});
