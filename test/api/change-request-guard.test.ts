import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import {
  addStrategyDirectly,
  createProjectWithFlags,
  useTeamTestApp,
  enableChangeRequests,
  featurePath,
  projectPath,
  strategiesPath,
} from '../helpers/change-requests.js';
import { expectError, expectStatus } from '../helpers/assertions.js';
import { eventsSince, lastEventId, eventFields } from '../helpers/events.js';
import type { Client } from '../helpers/test-app.js';

const { ctx, team } = useTeamTestApp();

interface Setting {
  project: string;
  flag: string;
  parent: string;
  strategyIds: Record<'production' | 'development', string>;
  segmentId: number;
}

/**
 * A project whose flag has a strategy (using a segment) in both environments and depends on a parent flag,
 * set up before production starts requiring change requests.
 */
async function protectedSetting(): Promise<Setting> {
  const { project, flags } = await createProjectWithFlags(ctx, 2);
  const [flag, parent] = flags as [string, string];
  const segment = await ctx.admin.post('/api/admin/segments', { name: `${project}-seg`, constraints: [] });
  expectStatus(segment, 201);
  const segmentId = (segment.json() as { id: number }).id;
  const production = await addStrategyDirectly(ctx.admin, project, flag, { name: 'default', segments: [segmentId] });
  const development = await addStrategyDirectly(ctx.admin, project, flag, { name: 'default' }, 'development');
  expectStatus(await ctx.admin.post(`${featurePath(project, flag)}/dependencies`, { feature: parent }), 200);
  await enableChangeRequests(ctx, project);
  return { project, flag, parent, strategyIds: { production: production.id, development: development.id }, segmentId };
}

/** Every direct change the guard covers, as a request against production (or the flag or segment as a whole). */
function directChanges(
  s: Setting,
  environment: 'production' | 'development' = 'production',
): Array<[string, (client: Client) => Promise<LightMyRequestResponse>]> {
  const flag = featurePath(s.project, s.flag);
  const strategies = strategiesPath(s.project, s.flag, environment);
  const strategyId = s.strategyIds[environment];
  return [
    ['turn on', (c) => c.post(`${flag}/environments/${environment}/on`)],
    ['turn on in bulk', (c) => c.post(`${projectPath(s.project)}/bulk_features/environments/${environment}/on`, { features: [s.flag] })],
    ['add a strategy', (c) => c.post(strategies, { name: 'default' })],
    ['update a strategy', (c) => c.put(`${strategies}/${strategyId}`, { name: 'default', title: 'edited' })],
    ['patch a strategy', (c) => c.patch(`${strategies}/${strategyId}`, [{ op: 'replace', path: '/title', value: 'patched' }])],
    ['reorder strategies', (c) => c.post(`${strategies}/set-sort-order`, [{ id: strategyId, sortOrder: 5 }])],
    ['delete a strategy', (c) => c.delete(`${strategies}/${strategyId}`)],
    ['set variants', (c) => c.put(`${flag}/environments/${environment}/variants`, [{ name: 'v', weight: 1000 }])],
    [
      'patch variants',
      (c) => c.patch(`${flag}/environments/${environment}/variants`, [{ op: 'add', path: '/0', value: { name: 'w', weight: 1000 } }]),
    ],
  ];
}

describe('while change requests are enabled for an environment', () => {
  // Every route that changes flags is refused there: test/api/change-request-routes.test.ts goes through them all.
  test('a refused change says which environment of which project, and how to go on', async () => {
    const setting = await protectedSetting();
    const error = expectError(
      await team.author.client.post(`${featurePath(setting.project, setting.flag)}/environments/production/on`),
      403,
      'PermissionError',
    );
    assert.equal(
      error.message,
      `Change requests are enabled for environment "production" of project "${setting.project}": propose this change in a change request, or ask an Admin to bypass them`,
    );
  });

  test('the same changes in an environment without change requests go through', async () => {
    const setting = await protectedSetting();
    for (const [what, change] of directChanges(setting, 'development')) {
      const response = await change(team.author.client);
      assert.ok(response.statusCode < 300, `${what}: ${response.statusCode} ${response.body}`);
    }
  });

  test('an Admin may bypass them, and the bypass is recorded in the same transaction', async () => {
    const setting = await protectedSetting();
    const before = await lastEventId(ctx);
    expectStatus(await team.admin.client.post(`${featurePath(setting.project, setting.flag)}/environments/production/on`), 200);
    const events = await eventsSince(ctx, before);
    assert.deepEqual(eventFields(events, 'type', 'createdBy', 'project', 'environment', 'featureName', 'data'), [
      {
        type: 'review-bypassed',
        createdBy: team.admin.username,
        project: setting.project,
        environment: 'production',
        featureName: setting.flag,
        data: { protectedEnvironments: [{ project: setting.project, environment: 'production' }] },
      },
      {
        type: 'feature-environment-enabled',
        createdBy: team.admin.username,
        project: setting.project,
        environment: 'production',
        featureName: setting.flag,
        data: { enabled: true },
      },
    ]);
    const listed = await ctx.admin.get(`/api/admin/events/${setting.flag}`);
    const bypass = (listed.json() as { events: Array<{ type: string; label: string; summary: string }> }).events.find(
      (e) => e.type === 'review-bypassed',
    )!;
    assert.equal(bypass.label, 'Change request bypassed');
    assert.match(bypass.summary, /directly, bypassing its change requests/);

    // An admin token is an Admin too; a segment change records which protected environments it reaches.
    const segmentStart = await lastEventId(ctx);
    expectStatus(
      await ctx.admin.put(`/api/admin/segments/${setting.segmentId}`, {
        name: `${setting.project}-seg`,
        description: 'by admin',
        constraints: [],
      }),
      204,
    );
    const segmentEvents = await eventsSince(ctx, segmentStart);
    assert.deepEqual(
      segmentEvents.map((e) => [e.type, e.createdBy]),
      [
        ['review-bypassed', 'admin-token'],
        ['segment-updated', 'admin-token'],
      ],
    );
    assert.deepEqual(segmentEvents[0]!.data, {
      segmentId: setting.segmentId,
      protectedEnvironments: [{ project: setting.project, environment: 'production' }],
    });
  });

  test('segments used only outside protected environments, or only by archived flags, are not protected', async () => {
    const setting = await protectedSetting();
    const createSegment = async (name: string) => {
      const response = await ctx.admin.post('/api/admin/segments', { name, constraints: [] });
      expectStatus(response, 201);
      return (response.json() as { id: number }).id;
    };
    const update = (id: number, name: string) =>
      team.author.client.put(`/api/admin/segments/${id}`, { name, description: 'ok', constraints: [] });

    const developmentOnly = await createSegment(`${setting.project}-dev`);
    await addStrategyDirectly(ctx.admin, setting.project, setting.flag, { name: 'default', segments: [developmentOnly] }, 'development');
    expectStatus(await update(developmentOnly, `${setting.project}-dev`), 204);

    const archivedOnly = await createSegment(`${setting.project}-archived`);
    await addStrategyDirectly(ctx.admin, setting.project, setting.parent, { name: 'default', segments: [archivedOnly] });
    expectError(await update(archivedOnly, `${setting.project}-archived`), 403, 'PermissionError');
    expectStatus(await ctx.admin.delete(`${featurePath(setting.project, setting.flag)}/dependencies`), 200);
    expectStatus(await ctx.admin.delete(featurePath(setting.project, setting.parent)), 202);
    expectStatus(await update(archivedOnly, `${setting.project}-archived`), 204);
  });

  test('turning change requests off lets direct changes through again', async () => {
    const setting = await protectedSetting();
    expectError(
      await team.author.client.post(`${featurePath(setting.project, setting.flag)}/environments/production/on`),
      403,
      'PermissionError',
    );
    expectStatus(
      await ctx.admin.put(`${projectPath(setting.project)}/environments/production/change-requests/config`, {
        changeRequestsEnabled: false,
      }),
      204,
    );
    expectStatus(await team.author.client.post(`${featurePath(setting.project, setting.flag)}/environments/production/on`), 200);
  });
});
