import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { expectError, expectStatus, getOk } from '../helpers/assertions.js';
import { enableChangeRequests } from '../helpers/change-requests.js';
import { eventsSince, lastEventId, type StoredEvent } from '../helpers/events.js';
import { createUserSession, uniqueName } from '../helpers/fixtures.js';
import { featurePath, projectPath } from '../helpers/projects.js';
import { type Client, useTestApp } from '../helpers/test-app.js';

// Unleash's reports on a project (overview, status, health report, insights, DORA), read from a project whose
// history the test writes on its own clock: the figures are worked out by hand below, not by the same SQL.

const ctx = useTestApp({}, writeHistory);
const DAY = 86_400_000;
/** The id of Unleash's built-in project role Member. */
const PROJECT_MEMBER = 5;
const NOW = new Date(Date.now() - 60_000);
const daysAgo = (days: number) => new Date(NOW.getTime() - days * DAY);

let project: string;
let owner: Client;
let viewer: Client;
let events: StoredEvent[];
const flag = { alpha: '', beta: '', gamma: '', delta: '' };

async function at(days: number, step: () => Promise<void>) {
  ctx.clock.set(daysAgo(days));
  await step();
}

async function writeHistory() {
  const admin = await createUserSession(ctx, 'Admin');
  owner = ctx.withCookie(admin.cookie);
  const reader = await createUserSession(ctx, 'Viewer');
  viewer = ctx.withCookie(reader.cookie);
  project = uniqueName('reports');
  for (const key of Object.keys(flag) as Array<keyof typeof flag>) flag[key] = `${key}-${project}`;
  const first = await lastEventId(ctx);
  const create = async (name: string, type: string) =>
    expectStatus(await owner.post(`${projectPath(project)}/features`, { name, type }), 201);
  const turnOn = async (name: string, environment: string) =>
    expectStatus(await owner.post(`${featurePath(project, name)}/environments/${environment}/on`), 200);
  try {
    await at(45, async () => {
      expectStatus(
        await owner.post('/api/admin/projects', { id: project, name: 'Reports', environments: ['development', 'production'] }),
        201,
      );
      await create(flag.alpha, 'release');
    });
    await at(40, () => turnOn(flag.alpha, 'production'));
    await at(5, () => create(flag.beta, 'operational'));
    await at(4, () => create(flag.gamma, 'kill-switch'));
    await at(3, async () => {
      await create(flag.delta, 'experiment');
      expectStatus(await owner.patch(featurePath(project, flag.gamma), [{ op: 'replace', path: '/stale', value: true }]), 200);
    });
    await at(2, async () => {
      await turnOn(flag.beta, 'production');
      expectStatus(await owner.delete(featurePath(project, flag.delta)), 202);
      const token = { tokenName: 'reports', type: 'client', environment: 'production', projects: [project] };
      expectStatus(await ctx.admin.post('/api/admin/api-tokens', token), 201);
      expectStatus(await ctx.admin.post('/api/admin/segments', { name: uniqueName('seg'), project, constraints: [] }), 201);
      expectStatus(await owner.post(`${projectPath(project)}/favorites`), 200);
      expectStatus(await owner.post(`${projectPath(project)}/access`, { roles: [PROJECT_MEMBER], users: [reader.id] }), 200);
    });
  } finally {
    ctx.clock.set(NOW);
  }
  await enableChangeRequests(ctx, project);
  events = (await eventsSince(ctx, first)).filter((event) => event.project === project);
}

const eventsBetween = (fromDays: number, toDays: number) =>
  events.filter((event) => event.createdAt >= daysAgo(fromDays) && event.createdAt < daysAgo(toDays)).length;

const STATS = () => ({
  avgTimeToProdCurrentWindow: 3, // beta: made 5 days ago, in production 2 days ago
  createdCurrentWindow: 3,
  createdPastWindow: 1,
  archivedCurrentWindow: 1,
  archivedPastWindow: 0,
  projectActivityCurrentWindow: eventsBetween(30, -1),
  projectActivityPastWindow: eventsBetween(60, 30),
  projectMembersAddedCurrentWindow: 1,
});

describe('project reports', () => {
  test('the overview: settings, health, types, environments, onboarding and the last 30 days', async () => {
    const overview = await getOk<Record<string, unknown>>(owner, `${projectPath(project)}/overview`);
    const { createdAt, updatedAt, ...rest } = overview;
    assert.ok(typeof createdAt === 'string');
    assert.deepEqual(rest, {
      version: 1,
      name: 'Reports',
      description: null,
      mode: 'open',
      defaultStickiness: 'default',
      featureLimit: null,
      featureNaming: { pattern: null, example: null, description: null },
      linkTemplates: [],
      // alpha (release, 45 days) is potentially stale, gamma stale, beta healthy: 100 - 33.3 - 33.3.
      health: 33,
      technicalDebt: 67,
      members: 1,
      favorite: true,
      environments: [
        { environment: 'development', changeRequestsEnabled: false },
        { environment: 'production', changeRequestsEnabled: true },
      ],
      featureTypeCounts: [
        { type: 'kill-switch', count: 1 },
        { type: 'operational', count: 1 },
        { type: 'release', count: 1 },
      ],
      onboardingStatus: { status: 'first-flag-created', feature: flag.alpha },
      stats: STATS(),
    });
    assert.ok(STATS().projectActivityCurrentWindow >= 8 && STATS().projectActivityPastWindow >= 2, 'both windows have events');
    // Favorites are a person's own: the admin token has none.
    assert.equal((await getOk<{ favorite: boolean }>(ctx.admin, `${projectPath(project)}/overview`)).favorite, false);
  });

  test('the status: resources, activity by day, health and the lifecycle summary', async () => {
    const byDay = new Map<string, number>();
    for (const event of events) {
      const day = event.createdAt.toISOString().slice(0, 10);
      byDay.set(day, (byDay.get(day) ?? 0) + 1);
    }
    assert.deepEqual(await getOk(viewer, `${projectPath(project)}/status`), {
      resources: { members: 1, apiTokens: 1, segments: 1 },
      activityCountByDate: [...byDay].sort(([a], [b]) => a.localeCompare(b)).map(([date, count]) => ({ date, count })),
      health: { current: 33 },
      technicalDebt: { current: 67 },
      lifecycleSummary: {
        // Left initial: alpha after 5 days, beta after 3, delta (archived) after 0.
        initial: { averageDays: 3, currentFlags: 1 },
        preLive: { averageDays: null, currentFlags: 0 },
        live: { averageDays: null, currentFlags: 2 },
        completed: { averageDays: null, currentFlags: 0 },
        archived: { currentFlags: 1, last30Days: 1 },
      },
      staleFlags: { total: 2 },
    });
  });

  test('the insights and the lead time to production', async () => {
    const leadTime = {
      features: [
        { name: flag.alpha, timeToProduction: 5 },
        { name: flag.beta, timeToProduction: 3 },
      ],
      projectAverage: 4,
    };
    const counts = { activeCount: 2, potentiallyStaleCount: 1, staleCount: 1 };
    assert.deepEqual(await getOk(viewer, `${projectPath(project)}/insights`), {
      stats: STATS(),
      featureTypeCounts: [
        { type: 'kill-switch', count: 1 },
        { type: 'operational', count: 1 },
        { type: 'release', count: 1 },
      ],
      technicalDebt: { rating: 67, ...counts },
      health: { rating: 33, ...counts },
      leadTime,
      members: { currentMembers: 1, change: 1 },
    });
    assert.deepEqual(await getOk(viewer, `${projectPath(project)}/dora`), leadTime);
  });

  test('the health report lists every flag not archived, with the counts', async () => {
    const report = await getOk<{ features: Array<{ name: string; stale: boolean }>; health: number } & Record<string, unknown>>(
      viewer,
      `${projectPath(project)}/health-report`,
    );
    assert.deepEqual(report.features.map((feature) => [feature.name, feature.stale]).sort(), [
      [flag.alpha, false],
      [flag.beta, false],
      [flag.gamma, true],
    ]);
    assert.deepEqual([report.health, report.activeCount, report.potentiallyStaleCount, report.staleCount], [33, 2, 1, 1]);
  });

  test('an empty project is healthy and onboarding; an unknown one is a 404', async () => {
    const empty = uniqueName('empty');
    expectStatus(await ctx.admin.post('/api/admin/projects', { id: empty, name: empty }), 201);
    const overview = await getOk<{ health: number; onboardingStatus: unknown; featureTypeCounts: unknown[] }>(
      ctx.admin,
      `${projectPath(empty)}/overview`,
    );
    assert.deepEqual([overview.health, overview.onboardingStatus, overview.featureTypeCounts], [100, { status: 'onboarding-started' }, []]);
    assert.deepEqual(await getOk(ctx.admin, `${projectPath(empty)}/dora`), { features: [], projectAverage: 0 });
    for (const report of ['overview', 'status', 'health-report', 'insights', 'dora']) {
      expectError(await ctx.admin.get(`${projectPath('no-such-project')}/${report}`), 404, 'NotFoundError');
    }
  });
});
