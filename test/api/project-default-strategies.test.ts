import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { expectError, expectRefused, expectStatus, getOk, onlyEvent } from '../helpers/assertions.js';
import { eventsSince, lastEventId } from '../helpers/events.js';
import { createUserSession } from '../helpers/fixtures.js';
import { createFlag, createProject, createSegment, featurePath, projectPath } from '../helpers/projects.js';
import { createSdkToken } from '../helpers/sdk-fixtures.js';
import { useTestApp } from '../helpers/test-app.js';

// A project's default strategy per environment (Unleash's `POST …/environments/:env/default-strategy`): what turning a
// flag on there without strategies adds, and how `GET /api/admin/environments/project/:projectId` (read by Unleash's
// Terraform provider) shows each environment to the project.

interface ProjectEnvironment {
  name: string;
  type: string;
  enabled: boolean;
  protected: boolean;
  sortOrder: number;
  projectApiTokenCount: number;
  projectEnabledToggleCount: number;
  defaultStrategy?: { name: string; parameters: Record<string, string>; constraints: unknown[]; segments: number[] };
  visible: boolean;
}

const projectEnvironments = (ctx: ReturnType<typeof useTestApp>, project: string) =>
  getOk<{ version: number; environments: ProjectEnvironment[] }>(ctx.admin, `/api/admin/environments/project/${project}`);

const defaultStrategyPath = (project: string, environment: string) =>
  `${projectPath(project)}/environments/${environment}/default-strategy`;

describe("a project's environments and default strategies", () => {
  const ctx = useTestApp();

  test('each environment as the project sees it: on it or not, its tokens and flags turned on', async () => {
    const project = await createProject(ctx, { environments: ['production'] });
    await createFlag(ctx, project, { environment: 'production', enabled: true });
    await createFlag(ctx, project, { environment: 'production' });
    await createSdkToken(ctx, 'client', 'production', [project]);
    await createSdkToken(ctx, 'client', 'development', ['default']);
    const { version, environments } = await projectEnvironments(ctx, project);
    assert.equal(version, 1);
    assert.deepEqual(
      environments
        .filter((environment) => ['development', 'production'].includes(environment.name))
        .map(({ name, visible, projectEnabledToggleCount, projectApiTokenCount, defaultStrategy }) => ({
          name,
          visible,
          projectEnabledToggleCount,
          projectApiTokenCount,
          defaultStrategy,
        })),
      [
        { name: 'development', visible: false, projectEnabledToggleCount: 0, projectApiTokenCount: 0, defaultStrategy: undefined },
        { name: 'production', visible: true, projectEnabledToggleCount: 1, projectApiTokenCount: 1, defaultStrategy: undefined },
      ],
    );
    expectError(await ctx.admin.get('/api/admin/environments/project/no-such-project'), 404, 'NotFoundError');
  });

  test('a flag turned on without strategies gets the default of its project and environment, with its own name as groupId', async () => {
    const project = await createProject(ctx);
    const { id: segment } = await createSegment(ctx, { name: `beta-${project}` });
    const before = await lastEventId(ctx);
    const set = await ctx.admin.post(defaultStrategyPath(project, 'production'), {
      name: 'flexibleRollout',
      parameters: { rollout: '25', stickiness: 'userId' },
      constraints: [{ contextName: 'region', operator: 'IN', values: ['eu'] }],
      segments: [segment],
    });
    expectStatus(set, 200);
    const stored = set.json() as ProjectEnvironment['defaultStrategy'];
    assert.deepEqual(stored?.parameters, { groupId: '', rollout: '25', stickiness: 'userId' });
    const event = onlyEvent(await eventsSince(ctx, before), 'default-strategy-updated', { data: stored, preData: null });
    assert.deepEqual([event.project, event.environment], [project, 'production']);
    const production = (await projectEnvironments(ctx, project)).environments.find((environment) => environment.name === 'production');
    assert.deepEqual(production?.defaultStrategy, stored);

    const flag = await createFlag(ctx, project);
    expectStatus(await ctx.admin.post(`${featurePath(project, flag)}/environments/production/on`), 200);
    expectStatus(await ctx.admin.post(`${featurePath(project, flag)}/environments/development/on`), 200);
    const strategies = (environment: string) =>
      getOk<Array<{ name: string; parameters: Record<string, string>; constraints: Array<{ contextName: string }>; segments: number[] }>>(
        ctx.admin,
        `${featurePath(project, flag)}/environments/${environment}/strategies`,
      );
    const [inProduction] = await strategies('production');
    assert.deepEqual(
      [inProduction?.name, inProduction?.parameters, inProduction?.constraints.map((c) => c.contextName), inProduction?.segments],
      ['flexibleRollout', { groupId: flag, rollout: '25', stickiness: 'userId' }, ['region'], [segment]],
    );
    // Where the project sets none, Vexil's: on for everyone.
    const [inDevelopment] = await strategies('development');
    assert.deepEqual(
      [inDevelopment?.name, inDevelopment?.parameters],
      ['flexibleRollout', { groupId: flag, rollout: '100', stickiness: 'default' }],
    );
  });

  test('bad input is a 400 naming it, and nothing is stored', async () => {
    const project = await createProject(ctx);
    const read = async () => (await projectEnvironments(ctx, project)).environments;
    for (const [body, path] of [
      [{ name: 'default' }, '/body/name'],
      [{ name: 'flexibleRollout', parameters: { rollout: '150' } }, '/body/parameters/rollout'],
      [{ name: 'flexibleRollout', segments: [999_999] }, '/body/segments'],
      [
        { name: 'flexibleRollout', constraints: [{ contextName: 'region', operator: 'NOPE', values: ['eu'] }] },
        '/body/constraints/0/operator',
      ],
      [{ name: 'flexibleRollout', surprise: true }, '/body/surprise'],
    ] as const) {
      await expectRefused(
        ctx,
        () => ctx.admin.post(defaultStrategyPath(project, 'production'), body),
        { status: 400, name: 'BadDataError', path },
        read,
      );
    }
    await expectRefused(
      ctx,
      () => ctx.admin.post(defaultStrategyPath(project, 'no-such-environment'), { name: 'flexibleRollout' }),
      { status: 404, name: 'NotFoundError' },
      read,
    );
    await expectRefused(ctx, () => ctx.admin.post(defaultStrategyPath('no-such-project', 'production'), { name: 'flexibleRollout' }), {
      status: 404,
      name: 'NotFoundError',
    });
  });

  test('a Viewer may read the environments but not set a default', async () => {
    const project = await createProject(ctx);
    const viewer = await createUserSession(ctx, 'Viewer');
    expectStatus(await ctx.withCookie(viewer.cookie).get(`/api/admin/environments/project/${project}`), 200);
    await expectRefused(
      ctx,
      () => ctx.withCookie(viewer.cookie).post(defaultStrategyPath(project, 'production'), { name: 'flexibleRollout' }),
      {
        status: 403,
        name: 'PermissionError',
      },
    );
  });
});
