import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { expectRefused, expectStatus, getOk, onlyEvent } from '../helpers/assertions.js';
import { eventsSince, lastEventId } from '../helpers/events.js';
import { createUserSession } from '../helpers/fixtures.js';
import { createFlag, createProject } from '../helpers/projects.js';
import { useTestApp } from '../helpers/test-app.js';

// How long a type of flag is expected to live is an Admin's to set (Unleash's PUT /api/admin/feature-types/:id/lifetime),
// and what is potentially stale follows it at once.

const ctx = useTestApp();
const DAY = 86_400_000;

type FeatureTypes = { types: Array<{ id: string; name: string; lifetimeDays: number | null }> };
const lifetimes = async () =>
  Object.fromEntries((await getOk<FeatureTypes>(ctx.admin, '/api/admin/feature-types')).types.map((type) => [type.id, type.lifetimeDays]));
const setLifetime = (id: string, body: unknown) => ctx.admin.put(`/api/admin/feature-types/${id}/lifetime`, body);
const potentiallyStale = async (project: string) =>
  (
    (await getOk<{ features: Array<{ name: string }> }>(
      ctx.admin,
      `/api/admin/search/features?project=IS:${project}&state=IS:potentially-stale`,
    )) as { features: Array<{ name: string }> }
  ).features.map((feature) => feature.name);

describe('feature type lifetimes', () => {
  test('an Admin sets a lifetime: the answer, the list and the event show it, and staleness follows', async () => {
    const project = await createProject(ctx);
    const operational = await createFlag(ctx, project, { name: `ops-${project}`, type: 'operational' });
    const release = await createFlag(ctx, project, { name: `release-${project}`, type: 'release' });
    try {
      ctx.clock.advance(10 * DAY);
      assert.deepEqual(await potentiallyStale(project), [operational]);

      const before = await lastEventId(ctx);
      const answer = await setLifetime('operational', { lifetimeDays: 30 });
      expectStatus(answer, 200);
      assert.deepEqual(answer.json(), {
        id: 'operational',
        name: 'Operational',
        description: 'Operational feature flags are used to control aspects of a rollout.',
        lifetimeDays: 30,
      });
      const shown = answer.json() as object;
      const event = onlyEvent(await eventsSince(ctx, before), 'feature-type-updated', {
        data: { ...shown, lifetimeDays: 30 },
        preData: { ...shown, lifetimeDays: 7 },
      });
      assert.equal(event.featureName, null);
      assert.deepEqual(await potentiallyStale(project), []);

      // Release flags now live 5 days, so the 10-day-old release flag is overdue; the operational one has 30.
      expectStatus(await setLifetime('RELEASE', { lifetimeDays: 5 }), 200);
      assert.deepEqual(await potentiallyStale(project), [release]);
      assert.equal((await lifetimes()).release, 5);

      // 0 and null both mean "never", as in Unleash.
      expectStatus(await setLifetime('release', { lifetimeDays: 0 }), 200);
      assert.equal((await lifetimes()).release, null);
      assert.deepEqual(await potentiallyStale(project), []);
      expectStatus(await setLifetime('release', { lifetimeDays: 5 }), 200);
      expectStatus(await setLifetime('release', { lifetimeDays: null }), 200);
      assert.equal((await lifetimes()).release, null);
    } finally {
      ctx.clock.set(new Date());
      expectStatus(await setLifetime('release', { lifetimeDays: 40 }), 200);
      expectStatus(await setLifetime('operational', { lifetimeDays: 7 }), 200);
    }
    assert.deepEqual(await lifetimes(), { release: 40, experiment: 40, operational: 7, 'kill-switch': null, permission: null, sunset: 90 });
  });

  test('setting the lifetime a type already has records nothing', async () => {
    const before = await lastEventId(ctx);
    expectStatus(await setLifetime('experiment', { lifetimeDays: 40 }), 200);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('bad input is a 400 at the field, and changes nothing', async () => {
    const cases: Array<[unknown, string]> = [
      [{ lifetimeDays: -1 }, '/body/lifetimeDays'],
      [{ lifetimeDays: 1.5 }, '/body/lifetimeDays'],
      [{ lifetimeDays: '7' }, '/body/lifetimeDays'],
      [{ lifetimeDays: 2 ** 31 }, '/body/lifetimeDays'],
      [{}, '/body/lifetimeDays'],
      [{ lifetimeDays: 7, extra: 1 }, '/body/extra'],
    ];
    for (const [body, path] of cases) {
      await expectRefused(ctx, () => setLifetime('release', body), { status: 400, name: 'BadDataError', path }, lifetimes);
    }
  });

  test('an unknown type is a 404, and only an Admin may set a lifetime', async () => {
    await expectRefused(ctx, () => setLifetime('no-such-type', { lifetimeDays: 3 }), { status: 404, name: 'NotFoundError' }, lifetimes);
    const editor = await createUserSession(ctx, 'Editor');
    const refusal = await expectRefused(
      ctx,
      () => ctx.withCookie(editor.cookie).put('/api/admin/feature-types/release/lifetime', { lifetimeDays: 3 }),
      { status: 403, name: 'PermissionError' },
      lifetimes,
    );
    assert.deepEqual(refusal.permissions, ['ADMIN']);
  });
});
