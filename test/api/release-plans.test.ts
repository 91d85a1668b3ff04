import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, test } from 'node:test';
import type { Unleash } from 'unleash-client';
import { ReleasePlanScheduler } from '../../src/workers/release-plan-scheduler.js';
import { expectError, expectRefused, expectStatus, getOk } from '../helpers/assertions.js';
import { eventsSince, lastEventId } from '../helpers/events.js';
import { eventually } from '../helpers/eventually.js';
import { uniqueName } from '../helpers/fixtures.js';
import { createFlag, featurePath } from '../helpers/projects.js';
import { createSdkToken, startNodeSdk } from '../helpers/sdk-fixtures.js';
import { approvedChangeRequest, createProtectedProject, createTeam, moveTo } from '../helpers/change-requests.js';
import { startTestApp, useTestApp } from '../helpers/test-app.js';

// Release plans driven through their milestones by hand, by the schedule with the clock moved (no sleeping) and
// by a safeguard tripped with impact metrics the real Node SDK sends; a streaming SDK sees each milestone.
const ctx = useTestApp({}, async (app) => {
  baseUrl = await app.app.listen({ port: 0, host: '127.0.0.1' });
});
let baseUrl = '';
const sdks: Unleash[] = [];
after(() => {
  for (const sdk of sdks) sdk.destroy();
});

const TEMPLATES = '/api/admin/release-plan-templates';
const HOUR = 3_600_000;

interface Plan {
  id: string;
  activeMilestoneId: string | null;
  pausedAt: string | null;
  pausedReason: string | null;
  milestones: Array<{ id: string; name: string; startedAt: string | null; progressAt: string | null }>;
  safeguards: Array<{ id: string; triggeredAt: string | null }>;
}

const rollout = (percent: number, groupId: string) => ({
  name: 'flexibleRollout',
  parameters: { rollout: String(percent), stickiness: 'userId', groupId },
});

/** Internal users, then 50 % of everyone, then everyone; each moves on after an hour. */
async function createTemplate(name = uniqueName('rollout')): Promise<{ id: string; milestones: Array<{ name: string }> }> {
  const response = await ctx.admin.post(TEMPLATES, {
    name,
    description: 'Staff, half, everyone',
    milestones: [
      {
        name: 'Staff',
        strategies: [{ name: 'userWithId', parameters: { userIds: 'alice,bob' } }],
        transitionCondition: { intervalMinutes: 60 },
      },
      { name: 'Half', strategies: [rollout(50, name)], transitionCondition: { intervalMinutes: 60 } },
      { name: 'Everyone', strategies: [rollout(100, name)] },
    ],
  });
  expectStatus(response, 201);
  return response.json() as { id: string; milestones: Array<{ name: string }> };
}

async function flagWithPlan(): Promise<{ flag: string; plansPath: string; plan: Plan }> {
  // Off until a milestone gave it strategies: turning on a flag without any would add the default one.
  const flag = await createFlag(ctx, 'default');
  const template = await createTemplate();
  const plansPath = `${featurePath('default', flag)}/environments/development/release-plans`;
  const created = await ctx.admin.post(plansPath, { templateId: template.id });
  expectStatus(created, 201);
  return { flag, plansPath, plan: created.json() as Plan };
}

async function turnOn(flag: string): Promise<void> {
  expectStatus(await ctx.admin.post(`${featurePath('default', flag)}/environments/development/on`), 200);
}

async function strategiesOf(flag: string): Promise<Array<{ name: string; parameters: Record<string, string> }>> {
  const body = await getOk<{
    environments: Array<{ name: string; strategies: Array<{ name: string; parameters: Record<string, string> }> }>;
  }>(ctx.admin, featurePath('default', flag));
  return body.environments
    .find((environment) => environment.name === 'development')!
    .strategies.map(({ name, parameters }) => ({ name, parameters }));
}

/** The plans a pass moved on, of those given: other tests' plans share the database. */
const movedOf = (pass: { progressed: string[] }, ...plans: string[]) => pass.progressed.filter((id) => plans.includes(id));

function scheduler(): ReleasePlanScheduler {
  return new ReleasePlanScheduler({ db: ctx.db, clock: ctx.clock, impactMetricsRetentionDays: 7 }, { error: () => undefined });
}

async function enabledFor(sdk: Unleash, flag: string, users: string[]): Promise<string[]> {
  return users.filter((userId) => sdk.isEnabled(flag, { userId }));
}

async function setSafeguard(plansPath: string, planId: string, metricName: string, threshold: number): Promise<void> {
  const response = await ctx.admin.put(`${plansPath}/${planId}/safeguards`, {
    impactMetric: { metricName, aggregationMode: 'count', windowMinutes: 5 },
    triggerCondition: { operator: '>', threshold },
    action: { type: 'pause' },
  });
  expectStatus(response, 200);
}

/** A usage report, as an SDK sends it, carrying `count` more errors of a counter. */
function errorReport(appName: string, metricName: string, count: number, toggles: Record<string, { yes: number; no: number }> = {}) {
  const now = ctx.clock.now().toISOString();
  return {
    appName,
    bucket: { start: now, stop: now, toggles },
    impactMetrics: [{ name: metricName, help: 'errors', type: 'counter', samples: [{ labels: {}, value: count }] }],
  };
}

async function metricTotal(appName: string, metricName: string): Promise<number> {
  const rows = await ctx.db
    .selectFrom('impact_metric_minutes as m')
    .innerJoin('impact_metric_series as s', 's.id', 'm.series_id')
    .select('m.value')
    .where('s.app_name', '=', appName)
    .where('s.name', '=', metricName)
    .execute();
  return rows.reduce((total, row) => total + row.value, 0);
}

const USERS = ['alice', 'bob', ...Array.from({ length: 40 }, (_, i) => `user-${i}`)];

describe('release plan templates', () => {
  test('a template keeps its milestones in order with their strategies and transitions; edits and archiving are recorded', async () => {
    const before = await lastEventId(ctx);
    const template = await createTemplate();
    assert.deepEqual(
      template.milestones.map((milestone) => milestone.name),
      ['Staff', 'Half', 'Everyone'],
    );
    const listed = await getOk<Array<{ id: string }>>(ctx.admin, TEMPLATES);
    assert.ok(listed.some((entry) => entry.id === template.id));
    expectStatus(
      await ctx.admin.put(`${TEMPLATES}/${template.id}`, {
        name: uniqueName('renamed'),
        milestones: [{ name: 'All', strategies: [{ name: 'default' }] }],
      }),
      200,
    );
    expectStatus(await ctx.admin.post(`${TEMPLATES}/archive/${template.id}`), 200);
    assert.ok(
      !(await getOk<Array<{ id: string }>>(ctx.admin, TEMPLATES)).some((entry) => entry.id === template.id),
      'archived ones are not listed',
    );
    // Unleash's DELETE deletes, archived or not; a plan made from it keeps its copy.
    const other = await createTemplate();
    const flag = await createFlag(ctx, 'default');
    const plansPath = `${featurePath('default', flag)}/environments/development/release_plans`;
    const plan = (await ctx.admin.post(plansPath, { templateId: other.id })).json() as Plan & { releasePlanTemplateId: string | null };
    expectStatus(await ctx.admin.delete(`${TEMPLATES}/${other.id}`), 200);
    expectStatus(await ctx.admin.get(`${TEMPLATES}/${other.id}`), 404);
    const kept = await getOk<Plan & { releasePlanTemplateId: string | null }>(ctx.admin, `${plansPath}/${plan.id}`);
    assert.deepEqual([kept.milestones.map((m) => m.name), kept.releasePlanTemplateId], [['Staff', 'Half', 'Everyone'], null]);
    const events = (await eventsSince(ctx, before)).filter((event) => event.type.startsWith('release-plan-template'));
    assert.deepEqual(
      events.map((event) => event.type),
      [
        'release-plan-template-created',
        'release-plan-template-updated',
        'release-plan-template-archived',
        'release-plan-template-created',
        'release-plan-template-deleted',
      ],
    );
    assert.equal((events[4]!.preData as { id: string }).id, other.id);
    const created = events[0]!.data as { id: string; milestones: Array<{ name: string; transitionCondition: unknown }> };
    assert.equal(created.id, template.id);
    assert.deepEqual(
      created.milestones.map((milestone) => [milestone.name, milestone.transitionCondition]),
      [
        ['Staff', { intervalMinutes: 60 }],
        ['Half', { intervalMinutes: 60 }],
        ['Everyone', null],
      ],
    );
    assert.equal(events[0]!.createdBy, 'admin-token');
    assert.equal((events[2]!.preData as { id: string }).id, template.id);
  });

  test('bad templates are refused with a 400 at the entry, and nothing is stored', async () => {
    const count = async () => (await getOk<unknown[]>(ctx.admin, TEMPLATES)).length;
    const cases: Array<[string, unknown, string]> = [
      ['no milestones', { name: uniqueName('t'), milestones: [] }, '/body/milestones'],
      [
        'an unknown strategy',
        { name: uniqueName('t'), milestones: [{ name: 'a', strategies: [{ name: 'noSuchStrategy' }] }] },
        '/body/milestones/0/strategies/0/name',
      ],
      [
        'a rollout that is not a percentage',
        { name: uniqueName('t'), milestones: [{ name: 'a', strategies: [{ name: 'flexibleRollout', parameters: { rollout: '150' } }] }] },
        '/body/milestones/0/strategies/0/parameters/rollout',
      ],
      [
        'an unknown segment',
        { name: uniqueName('t'), milestones: [{ name: 'a', strategies: [{ name: 'default', segments: [987654] }] }] },
        '/body/milestones/0/strategies/0/segments',
      ],
      ['two milestones of one name', { name: uniqueName('t'), milestones: [{ name: 'a' }, { name: 'A' }] }, '/body/milestones/1/name'],
      [
        'a transition of no time',
        { name: uniqueName('t'), milestones: [{ name: 'a', transitionCondition: { intervalMinutes: 0 } }] },
        '/body/milestones/0/transitionCondition/intervalMinutes',
      ],
      [
        '21 milestones',
        { name: uniqueName('t'), milestones: Array.from({ length: 21 }, (_, i) => ({ name: `m${i}` })) },
        '/body/milestones',
      ],
    ];
    for (const [, body, path] of cases) {
      await expectRefused(ctx, () => ctx.admin.post(TEMPLATES, body), { status: 400, name: 'BadDataError', path }, count);
    }
    const taken = await createTemplate();
    const name = (await getOk<{ name: string }>(ctx.admin, `${TEMPLATES}/${taken.id}`)).name;
    await expectRefused(
      ctx,
      () => ctx.admin.post(TEMPLATES, { name, milestones: [{ name: 'a' }] }),
      { status: 409, name: 'NameExistsError' },
      count,
    );
    expectStatus(await ctx.admin.get(`${TEMPLATES}/not-a-uuid`), 400);
    expectStatus(await ctx.admin.get(`${TEMPLATES}/00000000-0000-4000-8000-000000000000`), 404);
  });
});

describe('release plans', () => {
  test('milestones move on by the schedule, one step at a time, and a streaming SDK sees each one', async () => {
    const { flag, plan } = await flagWithPlan();
    const token = await createSdkToken(ctx, 'client', 'development');
    const sdk = await startNodeSdk(baseUrl, token, { experimentalMode: { type: 'streaming' } });
    sdks.push(sdk);
    const plansPath = `${featurePath('default', flag)}/environments/development/release-plans`;
    const [staff, half, everyone] = plan.milestones;
    assert.equal(plan.activeMilestoneId, null);

    const started = await ctx.admin.post(`${plansPath}/${plan.id}/milestones/${staff!.id}/start`);
    expectStatus(started, 200);
    assert.equal((started.json() as Plan).milestones[0]!.progressAt, new Date(ctx.clock.now().getTime() + HOUR).toISOString());
    await turnOn(flag);
    await eventually(async () => (await enabledFor(sdk, flag, USERS)).join() === 'alice,bob');
    assert.deepEqual(await strategiesOf(flag), [{ name: 'userWithId', parameters: { userIds: 'alice,bob' } }]);

    const before = await lastEventId(ctx);
    assert.deepEqual(movedOf(await scheduler().runOnce(), plan.id), [], 'not due yet');
    // Three hours pass with no instance running: the next pass moves one milestone, not two.
    ctx.clock.advance(3 * HOUR);
    const [first, second] = await Promise.all([scheduler().runOnce(), scheduler().runOnce()]);
    assert.deepEqual([...movedOf(first, plan.id), ...movedOf(second, plan.id)], [plan.id], 'one step, made once');
    const afterStep = await getOk<Plan>(ctx.admin, `${plansPath}/${plan.id}`);
    assert.equal(afterStep.activeMilestoneId, half!.id);
    assert.equal(afterStep.milestones[1]!.progressAt, new Date(ctx.clock.now().getTime() + HOUR).toISOString(), 'timed from its own start');
    await eventually(async () => {
      const on = await enabledFor(sdk, flag, USERS);
      return on.length > 5 && on.length < USERS.length - 5;
    });
    const started2 = (await eventsSince(ctx, before)).filter((event) => event.type === 'release-plan-milestone-started');
    assert.deepEqual(
      started2.map((event) => [
        event.createdBy,
        (event.data as { milestoneName: string; cause: string }).milestoneName,
        (event.data as { cause: string }).cause,
      ]),
      [['system', 'Half', 'schedule']],
    );

    ctx.clock.advance(HOUR);
    assert.deepEqual(movedOf(await scheduler().runOnce(), plan.id), [plan.id]);
    await eventually(async () => (await enabledFor(sdk, flag, USERS)).length === USERS.length);
    const finished = await getOk<Plan>(ctx.admin, `${plansPath}/${plan.id}`);
    assert.equal(finished.activeMilestoneId, everyone!.id);
    assert.equal(finished.milestones[2]!.progressAt, null, 'the last milestone stays');
    ctx.clock.advance(10 * HOUR);
    assert.deepEqual(movedOf(await scheduler().runOnce(), plan.id), []);
  });

  test("removing a plan takes its strategies off the flag and leaves the flag's own", async () => {
    const { flag, plansPath, plan } = await flagWithPlan();
    expectStatus(
      await ctx.admin.post(`${featurePath('default', flag)}/environments/development/strategies`, {
        name: 'userWithId',
        parameters: { userIds: 'own' },
      }),
      200,
    );
    expectStatus(await ctx.admin.post(`${plansPath}/${plan.id}/milestones/${plan.milestones[1]!.id}/start`), 200);
    await turnOn(flag);
    assert.equal((await strategiesOf(flag)).length, 2);
    expectStatus(await ctx.admin.delete(`${plansPath}/${plan.id}`), 200);
    assert.deepEqual(await strategiesOf(flag), [{ name: 'userWithId', parameters: { userIds: 'own' } }]);
    assert.deepEqual(await getOk(ctx.admin, plansPath), []);
  });

  test('bad plan requests are refused and change nothing', async () => {
    const { flag, plansPath, plan } = await flagWithPlan();
    const read = () => getOk(ctx.admin, plansPath);
    await expectRefused(
      ctx,
      () => ctx.admin.post(plansPath, { templateId: '00000000-0000-4000-8000-000000000000' }),
      { status: 400, name: 'BadDataError', path: '/body/templateId' },
      read,
    );
    await expectRefused(
      ctx,
      () => ctx.admin.post(plansPath, { templateId: 'nope' }),
      { status: 400, name: 'BadDataError', path: '/body/templateId' },
      read,
    );
    const second = await createTemplate();
    await expectRefused(ctx, () => ctx.admin.post(plansPath, { templateId: second.id }), { status: 409, name: 'NameExistsError' }, read);
    await expectRefused(
      ctx,
      () => ctx.admin.post(`${plansPath}/${plan.id}/milestones/00000000-0000-4000-8000-000000000000/start`),
      { status: 404, name: 'NotFoundError' },
      () => strategiesOf(flag),
    );
    await expectRefused(ctx, () => ctx.admin.post(`${plansPath}/${plan.id}/resume`), { status: 409, name: 'ConflictError' }, read);
    const safeguards = `${plansPath}/${plan.id}/safeguards`;
    const good = {
      impactMetric: { metricName: 'errors', aggregationMode: 'count', windowMinutes: 5 },
      triggerCondition: { operator: '>', threshold: 1 },
    };
    for (const [body, path] of [
      [{ ...good, impactMetric: { ...good.impactMetric, aggregationMode: 'p99' } }, '/body/impactMetric/aggregationMode'],
      [{ ...good, triggerCondition: { operator: '>=', threshold: 1 } }, '/body/triggerCondition/operator'],
      [{ ...good, impactMetric: { ...good.impactMetric, windowMinutes: 0 } }, '/body/impactMetric/windowMinutes'],
      [{ ...good, action: { type: 'explode' } }, '/body/action/type'],
    ] as const) {
      await expectRefused(ctx, () => ctx.admin.put(safeguards, body), { status: 400, name: 'BadDataError', path }, read);
    }
  });
});

describe('release plans in an environment that requires change requests', () => {
  test('adding a plan and starting a milestone go through a change request, reviewed by someone else', async () => {
    const team = await createTeam(ctx);
    const { project, flags } = await createProtectedProject(ctx);
    const flag = flags[0]!;
    const template = await createTemplate();
    const plansPath = `${featurePath(project, flag)}/environments/production/release-plans`;
    await expectRefused(
      ctx,
      () => team.author.client.post(plansPath, { templateId: template.id }),
      { status: 403, name: 'PermissionError' },
      () => getOk(ctx.admin, plansPath),
    );

    const adding = await approvedChangeRequest(team, project, {
      feature: flag,
      action: 'addReleasePlan',
      payload: { templateId: template.id },
    });
    await moveTo(team.reviewer.client, project, adding.id, { state: 'Applied' });
    const [plan] = await getOk<Plan[]>(ctx.admin, plansPath);
    assert.ok(plan, 'the plan exists once the request is applied');

    const starting = await approvedChangeRequest(team, project, {
      feature: flag,
      action: 'startMilestone',
      payload: { planId: plan.id, milestoneId: plan.milestones[0]!.id },
    });
    await moveTo(team.reviewer.client, project, starting.id, { state: 'Applied' });
    assert.equal((await getOk<Plan>(ctx.admin, `${plansPath}/${plan.id}`)).activeMilestoneId, plan.milestones[0]!.id);
    const strategies = await getOk<{ environments: Array<{ name: string; strategies: Array<{ name: string }> }> }>(
      ctx.admin,
      featurePath(project, flag),
    );
    assert.deepEqual(
      strategies.environments.find((environment) => environment.name === 'production')!.strategies.map((strategy) => strategy.name),
      ['userWithId'],
    );

    const unknownMilestone = await team.author.client.post(`/api/admin/projects/${project}/environments/production/change-requests`, {
      feature: flag,
      action: 'startMilestone',
      payload: { planId: plan.id, milestoneId: '00000000-0000-4000-8000-000000000000' },
    });
    assert.equal(unknownMilestone.statusCode, 404);
  });
});

describe('impact metrics and safeguards', () => {
  test('a counter sent by the Node SDK trips the safeguard: the plan pauses, rolls back a milestone, and the log says why', async () => {
    const { flag, plansPath, plan } = await flagWithPlan();
    const metricName = `checkout_errors_${uniqueName('m').replace(/-/g, '_')}`;
    expectStatus(
      await ctx.admin.put(`${plansPath}/${plan.id}/safeguards`, {
        impactMetric: { metricName, aggregationMode: 'count', windowMinutes: 5 },
        triggerCondition: { operator: '>', threshold: 10 },
        action: { type: 'pauseAndRollback' },
      }),
      200,
    );
    expectStatus(await ctx.admin.post(`${plansPath}/${plan.id}/milestones/${plan.milestones[0]!.id}/start`), 200);
    await turnOn(flag);
    expectStatus(await ctx.admin.post(`${plansPath}/${plan.id}/milestones/${plan.milestones[1]!.id}/start`), 200);

    const token = await createSdkToken(ctx, 'client', 'development');
    const sdk = await startNodeSdk(baseUrl, token, { disableMetrics: false, metricsInterval: 3_600_000 });
    sdks.push(sdk);
    sdk.impactMetrics.defineCounter(metricName, 'Failed checkouts');
    sdk.impactMetrics.incrementCounter(metricName, 4);
    const before = await lastEventId(ctx);
    await sdk.flushMetrics();
    const calm = await getOk<Plan>(ctx.admin, `${plansPath}/${plan.id}`);
    assert.equal(calm.pausedAt, null, '4 errors do not trip a threshold of 10');

    sdk.impactMetrics.incrementCounter(metricName, 9);
    await sdk.flushMetrics();
    const paused = await getOk<Plan>(ctx.admin, `${plansPath}/${plan.id}`);
    assert.ok(paused.pausedAt, 'paused');
    assert.equal(paused.activeMilestoneId, plan.milestones[0]!.id, 'back to the last safe milestone');
    assert.match(paused.pausedReason ?? '', new RegExp(`${metricName} count over 5 min was 13 \\(> 10\\)`));
    assert.deepEqual(await strategiesOf(flag), [{ name: 'userWithId', parameters: { userIds: 'alice,bob' } }]);
    const events = (await eventsSince(ctx, before)).map((event) => [event.type, event.createdBy]);
    assert.deepEqual(
      events.filter(
        ([type]) =>
          type === 'safeguard-triggered' || type === 'release-plan-progressions-paused' || type === 'release-plan-milestone-started',
      ),
      [
        ['safeguard-triggered', 'system'],
        ['release-plan-milestone-started', 'system'],
        ['release-plan-progressions-paused', 'system'],
      ],
    );
    ctx.clock.advance(3 * HOUR);
    assert.deepEqual(movedOf(await scheduler().runOnce(), plan.id), [], 'a paused plan does not move on');

    const series = await getOk<{ points: Array<{ value: number }> }>(
      ctx.admin,
      `/api/admin/impact-metrics/${metricName}?environment=development&hoursBack=6`,
    );
    assert.equal(
      series.points.reduce((total, point) => total + point.value, 0),
      13,
    );
    const resumed = await ctx.admin.post(`${plansPath}/${plan.id}/resume`);
    expectStatus(resumed, 200);
    assert.equal((resumed.json() as Plan).pausedAt, null);
  });

  test('archiving a flag pauses its plan (recorded); a report carrying its safeguard metric is stored once and answered 202', async () => {
    const { flag, plansPath, plan } = await flagWithPlan();
    const metricName = uniqueName('doomed_errors').replace(/-/g, '_');
    await setSafeguard(plansPath, plan.id, metricName, 3);
    expectStatus(await ctx.admin.post(`${plansPath}/${plan.id}/milestones/${plan.milestones[0]!.id}/start`), 200);
    const before = await lastEventId(ctx);
    expectStatus(await ctx.admin.delete(featurePath('default', flag)), 202);
    const paused = (await eventsSince(ctx, before)).filter((event) => event.type === 'release-plan-progressions-paused');
    assert.deepEqual(
      paused.map((event) => [event.featureName, event.data]),
      [[flag, { planId: plan.id, reason: 'The flag was archived', rolledBack: false }]],
    );

    const token = await createSdkToken(ctx, 'client', 'development');
    const appName = uniqueName('doomed-app');
    const response = await ctx.as(token).post('/api/client/metrics', errorReport(appName, metricName, 5, { [flag]: { yes: 3, no: 1 } }));
    expectStatus(response, 202);
    assert.equal(await metricTotal(appName, metricName), 5, 'the impact metric counted once');
    const usage = await ctx.db.selectFrom('feature_usage_hourly').select(['yes', 'no']).where('app_name', '=', appName).execute();
    assert.deepEqual(usage, [{ yes: 3, no: 1 }], 'the usage counted once');

    // The scheduler passes over the archived flag's plan, and moves the others on.
    const other = await flagWithPlan();
    expectStatus(await ctx.admin.post(`${other.plansPath}/${other.plan.id}/milestones/${other.plan.milestones[0]!.id}/start`), 200);
    ctx.clock.advance(2 * HOUR);
    const errors: unknown[] = [];
    const pass = await new ReleasePlanScheduler(
      { db: ctx.db, clock: ctx.clock, impactMetricsRetentionDays: 7 },
      { error: (details) => errors.push(details) },
    ).runOnce();
    assert.deepEqual(movedOf(pass, plan.id, other.plan.id), [other.plan.id]);
    assert.deepEqual(errors, []);
  });

  test("resuming a plan starts its safeguard's window afresh: the values that tripped it do not trip it again", async () => {
    const { flag, plansPath, plan } = await flagWithPlan();
    const metricName = uniqueName('resume_errors').replace(/-/g, '_');
    await setSafeguard(plansPath, plan.id, metricName, 10);
    expectStatus(await ctx.admin.post(`${plansPath}/${plan.id}/milestones/${plan.milestones[0]!.id}/start`), 200);
    await turnOn(flag);
    const token = await createSdkToken(ctx, 'client', 'development');
    const appName = uniqueName('resume-app');
    expectStatus(await ctx.as(token).post('/api/client/metrics', errorReport(appName, metricName, 13)), 202);
    assert.ok((await getOk<Plan>(ctx.admin, `${plansPath}/${plan.id}`)).pausedAt, '13 errors trip a threshold of 10');

    ctx.clock.advance(60_000);
    expectStatus(await ctx.admin.post(`${plansPath}/${plan.id}/resume`), 200);
    ctx.clock.advance(60_000);
    expectStatus(await ctx.as(token).post('/api/client/metrics', errorReport(appName, metricName, 2)), 202);
    assert.equal((await getOk<Plan>(ctx.admin, `${plansPath}/${plan.id}`)).pausedAt, null, '2 errors since the resume are not over 10');

    ctx.clock.advance(60_000);
    expectStatus(await ctx.as(token).post('/api/client/metrics', errorReport(appName, metricName, 9)), 202);
    const again = await getOk<Plan>(ctx.admin, `${plansPath}/${plan.id}`);
    assert.match(again.pausedReason ?? '', new RegExp(`${metricName} count over 5 min was 11 \\(> 10\\)`));
  });

  test("Unleash's paths: release_plans, its safeguards, and milestone progressions set, removed and resumed", async () => {
    const flag = await createFlag(ctx, 'default');
    const template = await createTemplate();
    const environmentPath = `${featurePath('default', flag)}/environments/development`;
    const plansPath = `${environmentPath}/release_plans`;
    const created = await ctx.admin.post(plansPath, { templateId: template.id });
    expectStatus(created, 201);
    const plan = created.json() as Plan;
    assert.deepEqual(
      (await getOk<Plan[]>(ctx.admin, plansPath)).map((entry) => entry.id),
      [plan.id],
    );
    const [staff, half, everyone] = plan.milestones as [Plan['milestones'][0], Plan['milestones'][0], Plan['milestones'][0]];
    expectStatus(await ctx.admin.post(`${plansPath}/${plan.id}/milestones/${staff.id}/start`), 200);

    const before = await lastEventId(ctx);
    const progression = (milestone: string, body: unknown) => ctx.admin.put(`${environmentPath}/progressions/${milestone}`, body);
    const changed = await progression(staff.id, { targetMilestone: half.id, transitionCondition: { intervalMinutes: 15 } });
    expectStatus(changed, 200);
    const started = Date.parse((changed.json() as Plan).milestones[0]!.startedAt!);
    assert.equal(Date.parse((changed.json() as Plan).milestones[0]!.progressAt!), started + 15 * 60_000, 'counted from its start');
    const read = () => getOk(ctx.admin, `${plansPath}/${plan.id}`);
    await expectRefused(
      ctx,
      () => progression(staff.id, { targetMilestone: everyone.id, transitionCondition: { intervalMinutes: 5 } }),
      { status: 400, name: 'BadDataError', path: '/body/targetMilestone' },
      read,
    );
    await expectRefused(
      ctx,
      () => progression(staff.id, { targetMilestone: half.id, transitionCondition: { intervalMinutes: 0 } }),
      { status: 400, name: 'BadDataError', path: '/body/transitionCondition/intervalMinutes' },
      read,
    );
    await expectRefused(
      ctx,
      () => progression(randomUUID(), { targetMilestone: half.id, transitionCondition: { intervalMinutes: 5 } }),
      { status: 404, name: 'NotFoundError' },
      read,
    );
    const removed = await ctx.admin.delete(`${environmentPath}/progressions/${staff.id}`);
    expectStatus(removed, 200);
    assert.deepEqual(
      [
        (removed.json() as Plan & { milestones: Array<{ transitionCondition: unknown }> }).milestones[0]!.transitionCondition,
        (removed.json() as Plan).milestones[0]!.progressAt,
      ],
      [null, null],
    );
    const events = (await eventsSince(ctx, before)).map((event) => [event.type, event.featureName, event.data, event.preData]);
    const change = (intervalMinutes: number | null) => ({
      planId: plan.id,
      milestoneId: staff.id,
      milestoneName: 'Staff',
      targetMilestone: half.id,
      transitionCondition: intervalMinutes === null ? null : { intervalMinutes },
    });
    assert.deepEqual(events, [
      ['release-plan-progression-changed', flag, change(15), change(60)],
      [
        'release-plan-progression-deleted',
        flag,
        null,
        { planId: plan.id, milestoneId: staff.id, milestoneName: 'Staff', transitionCondition: { intervalMinutes: 15 } },
      ],
    ]);

    const metricName = uniqueName('unleash_path').replace(/-/g, '_');
    const safeguard = (aggregationMode: string) =>
      ctx.admin.put(`${plansPath}/${plan.id}/safeguards`, {
        impactMetric: { metricName, aggregationMode, windowMinutes: 5 },
        triggerCondition: { operator: '>', threshold: 1 },
        action: { type: 'pause' },
      });
    const p95 = await expectRefused(
      ctx,
      () => safeguard('p95'),
      { status: 400, name: 'BadDataError', path: '/body/impactMetric/aggregationMode' },
      read,
    );
    assert.match(JSON.stringify(p95.details), /p50, p95 and p99 need histogram buckets/);
    expectStatus(await safeguard('count'), 200);
    expectError(await ctx.admin.post(`${environmentPath}/progressions/${plan.id}/resume`), 409, 'ConflictError');
    const token = await createSdkToken(ctx, 'client', 'development');
    expectStatus(await ctx.as(token).post('/api/client/metrics', errorReport(uniqueName('app'), metricName, 5)), 202);
    assert.ok((await getOk<Plan>(ctx.admin, `${plansPath}/${plan.id}`)).pausedAt, 'the safeguard paused it');
    const resumed = await ctx.admin.post(`${environmentPath}/progressions/${plan.id}/resume`);
    expectStatus(resumed, 200);
    assert.equal((resumed.json() as Plan).pausedAt, null);
  });

  test('bad or oversized impact metrics are refused with a 400 and nothing of the report is stored', async () => {
    const token = await createSdkToken(ctx, 'client', 'development');
    const appName = uniqueName('metrics-app');
    const report = (impactMetrics: unknown) => ({
      appName,
      bucket: { start: ctx.clock.now().toISOString(), stop: ctx.clock.now().toISOString(), toggles: { 'some-flag': { yes: 1, no: 0 } } },
      impactMetrics,
    });
    const stored = async () => ({
      series: (await ctx.db.selectFrom('impact_metric_series').select('id').where('app_name', '=', appName).execute()).length,
      usage: (await ctx.db.selectFrom('feature_usage_hourly').select('feature_name').where('app_name', '=', appName).execute()).length,
    });
    const counter = (name: string, labels: Record<string, string> = {}) => ({
      name,
      help: 'h',
      type: 'counter',
      samples: [{ labels, value: 1 }],
    });
    const cases: Array<[unknown, string]> = [
      [[{ ...counter('bad name!') }], '/body/impactMetrics/0/name'],
      [[{ ...counter('ok'), type: 'summary' }], '/body/impactMetrics/0/type'],
      [[{ ...counter('ok'), samples: [{ value: 'many' }] }], '/body/impactMetrics/0/samples/0/value'],
      [Array.from({ length: 101 }, (_, i) => counter(`m${i}`)), '/body/impactMetrics'],
      [[counter('ok', Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`l${i}`, 'v'])))], '/body/impactMetrics/0/samples/0/labels'],
    ];
    for (const [impactMetrics, path] of cases) {
      const response = await ctx.as(token).post('/api/client/metrics', report(impactMetrics));
      const error = response.json() as { name: string; details: Array<{ path: string }> };
      assert.equal(response.statusCode, 400, JSON.stringify(error));
      assert.ok(
        error.details.some((detail) => detail.path === path),
        `${path} in ${JSON.stringify(error.details)}`,
      );
    }
    assert.deepEqual(await stored(), { series: 0, usage: 0 });

    // 100 series per application: the report that would make the 101st is refused whole.
    const many = Array.from({ length: 100 }, (_, i) => counter('requests', { route: `/r${i}` }));
    expectStatus(await ctx.as(token).post('/api/client/metrics', report(many)), 202);
    assert.equal((await stored()).series, 100);
    const usageBefore = (await stored()).usage;
    const refused = await ctx.as(token).post('/api/client/metrics', report([counter('requests', { route: '/one-more' })]));
    assert.equal(refused.statusCode, 400);
    assert.match((refused.json() as { message: string }).message, /already has 100 impact metric series/);
    assert.deepEqual(await stored(), { series: 100, usage: usageBefore });
    const sameType = await ctx.as(token).post('/api/client/metrics', report([{ ...counter('requests', { route: '/r1' }), type: 'gauge' }]));
    assert.equal(sameType.statusCode, 400);
  });
});

describe('impact metrics across applications', () => {
  test('all applications together keep at most IMPACT_METRICS_SERIES_TOTAL series', async () => {
    const small = await startTestApp({ env: { IMPACT_METRICS_SERIES_TOTAL: '3' } });
    try {
      const response = await small.admin.post('/api/admin/api-tokens', {
        tokenName: 'sdk',
        type: 'client',
        environment: 'development',
        projects: ['*'],
      });
      const token = (response.json() as { secret: string }).secret;
      const now = small.clock.now().toISOString();
      const send = (appName: string, routes: string[]) =>
        small.as(token).post('/api/client/metrics', {
          appName,
          bucket: { start: now, stop: now, toggles: {} },
          impactMetrics: [
            { name: 'requests', help: 'h', type: 'counter', samples: routes.map((route) => ({ labels: { route }, value: 1 })) },
          ],
        });
      for (const appName of ['shop', 'search']) {
        expectStatus(
          await small.as(token).post('/api/client/register', { appName, instanceId: 'pod', strategies: [], started: now, interval: 15000 }),
          202,
        );
      }
      expectStatus(await send('shop', ['/a', '/b']), 202);
      const refused = await send('search', ['/c', '/d']);
      assert.equal(refused.statusCode, 400);
      assert.match((refused.json() as { message: string }).message, /already keeps 3 impact metric series/);
      const kept = await small.db.selectFrom('impact_metric_series').select(['app_name', 'labels']).orderBy('id').execute();
      assert.deepEqual(
        kept.map((row) => row.app_name),
        ['shop', 'shop'],
        'nothing of the refused report is kept',
      );
    } finally {
      await small.close();
    }
  });
});
