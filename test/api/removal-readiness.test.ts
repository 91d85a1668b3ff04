import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { RemovalReadiness } from '../../src/domain/code-references/removal-readiness.js';
import { expectError, expectStatus } from '../helpers/assertions.js';
import { createUserSession, uniqueName } from '../helpers/fixtures.js';
import { createFlag, createProject } from '../helpers/projects.js';
import { useTestApp } from '../helpers/test-app.js';

/*
 * Whether a flag can leave the code, per production environment, as the API answers it: flags set up in each state
 * a team meets, then read 22 days on (the test's own clock), beside one changed 5 days before.
 */
const ctx = useTestApp();
const DAY_MS = 86_400_000;
const EVERYONE = { name: 'default' };

async function readinessOf(project: string, flag: string): Promise<RemovalReadiness['environments']> {
  const response = await ctx.admin.get(`/api/admin/projects/${project}/features/${flag}/removal-readiness`);
  expectStatus(response, 200);
  return (response.json() as RemovalReadiness).environments;
}

const inProduction = (extra: Record<string, unknown> = {}) => ({ environment: 'production', ...extra });

describe('removal readiness', () => {
  test('each state a flag can be in gets its verdict and the reasons for it', async () => {
    const project = await createProject(ctx, { prefix: 'ready' });
    const settled = await createFlag(ctx, project, inProduction({ strategies: [EVERYONE] }));
    const half = await createFlag(
      ctx,
      project,
      inProduction({ strategies: [{ name: 'flexibleRollout', parameters: { rollout: '50', stickiness: 'default', groupId: 'g' } }] }),
    );
    const off = await createFlag(ctx, project, inProduction());
    const killSwitch = await createFlag(ctx, project, inProduction({ type: 'kill-switch', strategies: [EVERYONE] }));
    const parent = await createFlag(ctx, project, inProduction({ strategies: [EVERYONE] }));
    const child = await createFlag(ctx, project);
    expectStatus(await ctx.admin.post(`/api/admin/projects/${project}/features/${child}/dependencies`, { feature: parent }), 200);
    const gone = await createFlag(ctx, project, inProduction({ strategies: [EVERYONE] }));
    const repository = uniqueName('acme/ready');
    const push = (commit: string, flags: string[]) =>
      ctx.admin.post('/api/admin/code-references', {
        repository,
        branch: 'main',
        commit,
        references: flags.map((flag, index) => ({
          flag,
          file: 'src/app.ts',
          line: index + 1,
          language: 'TypeScript',
          call: 'isEnabled',
          expression: `'${flag}'`,
        })),
      });
    expectStatus(await push('aaaaaaa', [settled, gone]), 200);
    expectStatus(await push('bbbbbbb', [settled]), 200);
    ctx.clock.advance(17 * DAY_MS);
    const recent = await createFlag(ctx, project, inProduction({ strategies: [EVERYONE] }));
    ctx.clock.advance(5 * DAY_MS);

    assert.deepEqual(await readinessOf(project, settled), [
      {
        environment: 'production',
        verdict: 'ready to remove (keep the on branch)',
        reasons: ['on for everyone in production for 22 days', 'never evaluated here', '1 reference in pushed code to change'],
      },
    ]);
    assert.deepEqual(await readinessOf(project, off), [
      {
        environment: 'production',
        verdict: 'ready to remove (keep the off branch)',
        reasons: ['off for everyone in production for 22 days', 'never evaluated here', 'no pushed code reference known'],
      },
    ]);
    assert.deepEqual(await readinessOf(project, recent), [
      { environment: 'production', verdict: 'keep', reasons: ['on for everyone for 5 days: ready after 21 unchanged'] },
    ]);
    // The branch a cleanup keeps, where production agrees on one.
    const settledBranchOf = async (flag: string) =>
      ((await ctx.admin.get(`/api/admin/projects/${project}/features/${flag}/removal-readiness`)).json() as RemovalReadiness).settledBranch;
    assert.deepEqual(
      [await settledBranchOf(settled), await settledBranchOf(off), await settledBranchOf(recent), await settledBranchOf(half)],
      ['on', 'off', null, null],
    );
    assert.deepEqual(await readinessOf(project, half), [
      { environment: 'production', verdict: 'keep', reasons: ['it serves some users one way and some the other'] },
    ]);
    assert.deepEqual(await readinessOf(project, killSwitch), [
      { environment: 'production', verdict: 'keep', reasons: ['a kill-switch flag is meant to stay'] },
    ]);
    assert.deepEqual(await readinessOf(project, parent), [
      { environment: 'production', verdict: 'keep', reasons: [`flags depend on it: ${child}`] },
    ]);
    assert.deepEqual(await readinessOf(project, gone), [
      {
        environment: 'production',
        verdict: 'ready to archive',
        reasons: [`no pushed code reads it since commit bbbbbbb of ${repository}`, 'never evaluated here'],
      },
    ]);
  });

  test("a private project's flag is not found by whoever may not see it, and an unknown flag is a 404", async () => {
    const secret = uniqueName('ready-private');
    expectStatus(await ctx.admin.post('/api/admin/projects', { id: secret, name: secret, mode: 'private' }), 201);
    const flag = await createFlag(ctx, secret);
    const viewer = ctx.withCookie((await createUserSession(ctx, 'Viewer')).cookie);
    expectError(await viewer.get(`/api/admin/projects/${secret}/features/${flag}/removal-readiness`), 404, 'NotFoundError');
    expectError(await ctx.admin.get(`/api/admin/projects/${secret}/features/no-such-flag/removal-readiness`), 404, 'NotFoundError');
  });
});
