import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { expectError, expectStatus, getOk } from '../helpers/assertions.js';
import { eventsSince, lastEventId } from '../helpers/events.js';
import { createUserSession, uniqueName } from '../helpers/fixtures.js';
import { createFlag, createProject, featurePath, projectPath } from '../helpers/projects.js';
import { useTestApp } from '../helpers/test-app.js';

// Unleash's personal dashboard: a person's projects, the flags they made or favourited, whom to ask.

const ctx = useTestApp();

interface Dashboard {
  admins: Array<{ id: number; name: string; email?: string }>;
  projectOwners: Array<{ ownerType: string; name: string; email: string | null }>;
  projects: unknown[];
  flags: Array<{ name: string; project: string; type: string }>;
}

describe('personal dashboard', () => {
  test("a person's projects, flags, owners and the Admins; details of one project", async () => {
    const boss = await createUserSession(ctx, 'Admin');
    const eve = await createUserSession(ctx, 'Editor');
    const asEve = ctx.withCookie(eve.cookie);
    const project = uniqueName('mine');
    const first = await lastEventId(ctx);
    expectStatus(await asEve.post('/api/admin/projects', { id: project, name: 'Mine' }), 201);
    const made = uniqueName('made');
    expectStatus(await asEve.post(`${projectPath(project)}/features`, { name: made, type: 'experiment' }), 201);
    const followed = await createFlag(ctx, 'default', { name: uniqueName('followed') });
    expectStatus(await asEve.post(`${featurePath('default', followed)}/favorites`), 200);
    await createFlag(ctx, 'default');

    const dashboard = await getOk<Dashboard>(asEve, '/api/admin/personal-dashboard');
    assert.deepEqual(dashboard.projects, [{ id: project, name: 'Mine', health: 100, technicalDebt: 0, memberCount: 1, featureCount: 1 }]);
    assert.deepEqual(
      dashboard.flags,
      [
        { name: followed, project: 'default', type: 'release' },
        { name: made, project, type: 'experiment' },
      ].sort((a, b) => a.name.localeCompare(b.name)),
    );
    assert.deepEqual(dashboard.projectOwners, [{ ownerType: 'user', name: eve.username, imageUrl: null, email: null }]);
    assert.ok(dashboard.admins.some((admin) => admin.id === boss.id && admin.name === boss.username));
    assert.ok(!dashboard.admins.some((admin) => admin.id === eve.id), 'an Editor is no Admin');

    const details = await getOk<{ latestEvents: Array<{ id: number; summary: string; createdBy: string }> } & Record<string, unknown>>(
      asEve,
      `/api/admin/personal-dashboard/${project}`,
    );
    const events = (await eventsSince(ctx, first)).filter((event) => event.project === project).reverse();
    assert.deepEqual(
      details.latestEvents.map((event) => [event.id, event.createdBy]),
      events.map((event) => [event.id, eve.username]),
    );
    assert.ok(
      details.latestEvents.some((event) => event.summary.includes(made)),
      'a summary names the flag',
    );
    assert.deepEqual(details.insights, {
      avgHealthCurrentWindow: null,
      avgHealthPastWindow: null,
      totalFlags: 1,
      activeFlags: 1,
      staleFlags: 0,
      potentiallyStaleFlags: 0,
      health: 100,
      technicalDebt: 0,
    });
    assert.deepEqual(details.onboardingStatus, { status: 'first-flag-created', feature: made });
    assert.deepEqual(details.owners, [{ ownerType: 'user', name: eve.username, imageUrl: null, email: null }]);
    assert.deepEqual(details.roles, [{ id: 4, name: 'Owner', type: 'project' }]);
  });

  test('a project with no owner names the system; a token has no dashboard; an unknown project is a 404', async () => {
    const viewer = ctx.withCookie((await createUserSession(ctx, 'Viewer')).cookie);
    const project = await createProject(ctx);
    const details = await getOk<{ owners: unknown; roles: unknown }>(viewer, `/api/admin/personal-dashboard/${project}`);
    assert.deepEqual([details.owners, details.roles], [[{ ownerType: 'system' }], []]);
    assert.deepEqual((await getOk<Dashboard>(viewer, '/api/admin/personal-dashboard')).projects, []);
    expectError(await ctx.admin.get('/api/admin/personal-dashboard'), 400, 'BadDataError');
    expectError(await viewer.get('/api/admin/personal-dashboard/no-such-project'), 404, 'NotFoundError');
  });
});
