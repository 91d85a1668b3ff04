import assert from 'node:assert/strict';
import { createProject } from '../helpers/projects.js';
import { describe, test } from 'node:test';
import { assertDetailAt, expectError, expectStatus, assertEvents, getOk } from '../helpers/assertions.js';
import { eventsSince, lastEventId } from '../helpers/events.js';
import { uniqueName, useTestAppWithEditor, createUserSession, sendMalformedJson } from '../helpers/fixtures.js';

const { ctx, editor: signedInEditor } = useTestAppWithEditor();

interface Stage {
  stage: string;
  status?: string;
  enteredStageAt: string;
}

/** A flag in a project of the test's own; returns its URL. */
async function createFlag(): Promise<{ project: string; flag: string; url: string }> {
  const project = await createProject(ctx, { prefix: 'life' });
  const flag = uniqueName('flag');
  expectStatus(await signedInEditor.client.post(`/api/admin/projects/${project}/features`, { name: flag }), 201);
  return { project, flag, url: `/api/admin/projects/${project}/features/${flag}` };
}

async function lifecycle(url: string): Promise<Stage[]> {
  return getOk<Stage[]>(ctx.admin, `${url}/lifecycle`);
}

/** The flag's current stage as its view shows it. */
async function currentStage(url: string): Promise<{ stage: string; status: string | null; enteredStageAt: string }> {
  const response = await ctx.admin.get(url);
  expectStatus(response, 200);
  return (response.json() as { lifecycle: { stage: string; status: string | null; enteredStageAt: string } }).lifecycle;
}

/** Moves the test clock on a minute and returns the new time, so each stage gets a time of its own. */
function tick(): string {
  ctx.clock.advance(60_000);
  return ctx.clock.now().toISOString();
}

describe('a flag through its lifecycle', () => {
  test('walks initial, pre-live, live, completed, back to live, archived and out again', async () => {
    const { project, flag, url } = await createFlag();
    const [created] = await lifecycle(url);
    assert.equal(created!.stage, 'initial');
    assert.deepEqual(await lifecycle(url), [{ stage: 'initial', enteredStageAt: created!.enteredStageAt }]);
    assert.deepEqual(await currentStage(url), { stage: 'initial', status: null, enteredStageAt: created!.enteredStageAt });

    const preLiveAt = tick();
    expectStatus(await signedInEditor.client.post(`${url}/environments/development/on`), 200);
    assert.deepEqual(await lifecycle(url), [
      { stage: 'initial', enteredStageAt: created!.enteredStageAt },
      { stage: 'pre-live', enteredStageAt: preLiveAt },
    ]);
    assert.deepEqual(await currentStage(url), { stage: 'pre-live', status: null, enteredStageAt: preLiveAt });

    const liveAt = tick();
    expectStatus(await signedInEditor.client.post(`${url}/environments/production/on`), 200);
    const live = [
      { stage: 'initial', enteredStageAt: created!.enteredStageAt },
      { stage: 'pre-live', enteredStageAt: preLiveAt },
      { stage: 'live', enteredStageAt: liveAt },
    ];
    assert.deepEqual(await lifecycle(url), live);
    assert.deepEqual(await currentStage(url), { stage: 'live', status: null, enteredStageAt: liveAt });

    const completedAt = tick();
    let before = await lastEventId(ctx);
    const completed = await signedInEditor.client.post(`${url}/lifecycle/complete`, { status: 'kept', statusValue: 'variant-a' });
    expectStatus(completed, 200);
    assert.equal(completed.body, '');
    assert.deepEqual(await lifecycle(url), [...live, { stage: 'completed', status: 'kept', enteredStageAt: completedAt }]);
    assert.deepEqual(await currentStage(url), { stage: 'completed', status: 'kept', enteredStageAt: completedAt });
    assertEvents(await eventsSince(ctx, before), [
      {
        type: 'feature-completed',
        createdBy: signedInEditor.username,
        createdByUserId: signedInEditor.id,
        project,
        environment: null,
        featureName: flag,
        data: { status: 'kept', statusValue: 'variant-a', kept: true },
        preData: null,
      },
    ]);

    tick();
    before = await lastEventId(ctx);
    expectStatus(await signedInEditor.client.post(`${url}/lifecycle/uncomplete`), 200);
    assert.deepEqual(await lifecycle(url), live);
    assert.deepEqual(await currentStage(url), { stage: 'live', status: null, enteredStageAt: liveAt });
    assertEvents(await eventsSince(ctx, before), [
      {
        type: 'feature-uncompleted',
        createdBy: signedInEditor.username,
        createdByUserId: signedInEditor.id,
        project,
        environment: null,
        featureName: flag,
        data: null,
        preData: { status: 'kept', statusValue: 'variant-a', kept: true },
      },
    ]);

    const archivedAt = tick();
    expectStatus(await signedInEditor.client.delete(url), 202);
    assert.deepEqual(await lifecycle(url), [...live, { stage: 'archived', enteredStageAt: archivedAt }]);
    assert.deepEqual(await currentStage(url), { stage: 'archived', status: null, enteredStageAt: archivedAt });

    tick();
    expectStatus(await signedInEditor.client.post(`/api/admin/projects/${project}/revive`, { features: [flag] }), 200);
    assert.deepEqual(await lifecycle(url), live);
    assert.deepEqual(await currentStage(url), { stage: 'live', status: null, enteredStageAt: liveAt });
  });
});

describe('completing a flag', () => {
  test('again with another status updates it and records the change; the same status records nothing', async () => {
    const { project, flag, url } = await createFlag();
    const completedAt = tick();
    expectStatus(await signedInEditor.client.post(`${url}/lifecycle/complete`, { status: 'kept' }), 200);

    tick();
    let before = await lastEventId(ctx);
    expectStatus(await signedInEditor.client.post(`${url}/lifecycle/complete`, { status: 'kept' }), 200);
    assert.deepEqual(await eventsSince(ctx, before), []);

    expectStatus(await signedInEditor.client.post(`${url}/lifecycle/complete`, { status: 'discarded', statusValue: 'cleaned up' }), 200);
    const stages = await lifecycle(url);
    assert.deepEqual(stages.at(-1), { stage: 'completed', status: 'discarded', enteredStageAt: completedAt });
    assert.deepEqual(await currentStage(url), { stage: 'completed', status: 'discarded', enteredStageAt: completedAt });
    assertEvents(await eventsSince(ctx, before), [
      {
        type: 'feature-completed',
        featureName: flag,
        project: project,
        createdBy: signedInEditor.username,
        createdByUserId: signedInEditor.id,
        data: { status: 'discarded', statusValue: 'cleaned up', kept: false },
        preData: { status: 'kept', statusValue: null, kept: true },
      },
    ]);

    before = await lastEventId(ctx);
    expectStatus(await signedInEditor.client.post(`${url}/lifecycle/complete`, { status: 'discarded', statusValue: 'cleaned up' }), 200);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('straight from initial, then uncompleting returns to initial', async () => {
    const { url } = await createFlag();
    const [initial] = await lifecycle(url);
    expectStatus(await signedInEditor.client.post(`${url}/lifecycle/complete`, { status: 'discarded' }), 200);
    assert.equal((await currentStage(url)).stage, 'completed');
    expectStatus(await signedInEditor.client.post(`${url}/lifecycle/uncomplete`), 200);
    assert.deepEqual(await lifecycle(url), [initial]);
  });

  test('uncompleting a flag that is not completed answers 200 and records nothing', async () => {
    const { url } = await createFlag();
    const stages = await lifecycle(url);
    const before = await lastEventId(ctx);
    expectStatus(await signedInEditor.client.post(`${url}/lifecycle/uncomplete`), 200);
    assert.deepEqual(await lifecycle(url), stages);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test("copies the flag's tags into the events", async () => {
    const { flag, url } = await createFlag();
    expectStatus(await ctx.admin.post(`/api/admin/features/${flag}/tags`, { type: 'simple', value: 'cleanup' }), 201);
    const before = await lastEventId(ctx);
    expectStatus(await signedInEditor.client.post(`${url}/lifecycle/complete`, { status: 'kept' }), 200);
    expectStatus(await signedInEditor.client.post(`${url}/lifecycle/uncomplete`), 200);
    assert.deepEqual(
      (await eventsSince(ctx, before)).map((event) => [event.type, event.tags]),
      [
        ['feature-completed', [{ type: 'simple', value: 'cleanup' }]],
        ['feature-uncompleted', [{ type: 'simple', value: 'cleanup' }]],
      ],
    );
  });

  test('is open to admin tokens, recorded as admin-token', async () => {
    const { url } = await createFlag();
    const before = await lastEventId(ctx);
    expectStatus(await ctx.admin.post(`${url}/lifecycle/complete`, { status: 'kept' }), 200);
    const [event] = await eventsSince(ctx, before);
    assert.equal(event!.createdBy, 'admin-token');
    assert.equal(event!.createdByUserId, -42);
  });
});

describe('bad lifecycle requests change nothing and record nothing', () => {
  /** Runs `attempt` on a fresh flag (set up with `prepare`) and checks its stages and the event log stayed put. */
  async function expectUnchanged(
    attempt: (url: string, project: string) => Promise<void>,
    prepare: (url: string, project: string, flag: string) => Promise<void> = async () => {},
  ) {
    const { project, flag, url } = await createFlag();
    await prepare(url, project, flag);
    const stages = await lifecycle(url);
    const before = await lastEventId(ctx);
    await attempt(url, project);
    assert.deepEqual(await lifecycle(url), stages);
    assert.deepEqual(await eventsSince(ctx, before), []);
  }

  const badBodies: Array<[string, unknown, string]> = [
    ['a status other than kept or discarded', { status: 'done' }, '/body/status'],
    ['a missing status', { statusValue: 'x' }, '/body/status'],
    ['an unknown property', { status: 'kept', reason: 'why not' }, '/body/reason'],
    ['a statusValue that is not a string', { status: 'kept', statusValue: 5 }, '/body/statusValue'],
    ['a statusValue of 256 characters', { status: 'kept', statusValue: 's'.repeat(256) }, '/body/statusValue'],
  ];
  for (const [label, body, path] of badBodies) {
    test(`${label} is a 400 naming ${path}`, () =>
      expectUnchanged(async (url) => {
        const error = expectError(await signedInEditor.client.post(`${url}/lifecycle/complete`, body), 400, 'BadDataError');
        assertDetailAt(error, path);
      }));
  }

  test('the status error says which values are allowed', () =>
    expectUnchanged(async (url) => {
      const error = expectError(await signedInEditor.client.post(`${url}/lifecycle/complete`, { status: 'done' }), 400, 'BadDataError');
      assert.match(error.message, /status must be kept or discarded \(got "done"\)/);
    }));

  test('malformed JSON is a 400', () =>
    expectUnchanged(async (url) => {
      const error = expectError(
        await sendMalformedJson(signedInEditor.client, 'POST', `${url}/lifecycle/complete`, '{"status": "kept"'),
        400,
        'BadDataError',
      );
      assert.match(error.message, /not valid JSON/);
    }));

  test('completing an archived flag is a 400', () =>
    expectUnchanged(
      async (url) => {
        const error = expectError(await signedInEditor.client.post(`${url}/lifecycle/complete`, { status: 'kept' }), 400, 'BadDataError');
        assert.match(error.message, /archived; revive it first/);
      },
      async (url) => expectStatus(await signedInEditor.client.delete(url), 202),
    ));

  test('uncompleting an archived flag is a 400', () =>
    expectUnchanged(
      async (url) => {
        expectError(await signedInEditor.client.post(`${url}/lifecycle/uncomplete`), 400, 'BadDataError');
        assert.equal((await currentStage(url)).stage, 'archived');
      },
      async (url) => {
        expectStatus(await signedInEditor.client.post(`${url}/lifecycle/complete`, { status: 'kept' }), 200);
        expectStatus(await signedInEditor.client.delete(url), 202);
      },
    ));

  test('an unknown flag, or one named under another project, is a 404', () =>
    expectUnchanged(async (url, project) => {
      const missing = `/api/admin/projects/${project}/features/no-such-flag`;
      expectError(await ctx.admin.get(`${missing}/lifecycle`), 404, 'NotFoundError');
      expectError(await signedInEditor.client.post(`${missing}/lifecycle/complete`, { status: 'kept' }), 404, 'NotFoundError');
      expectError(await signedInEditor.client.post(`${missing}/lifecycle/uncomplete`), 404, 'NotFoundError');
      const flag = url.split('/').at(-1)!;
      const error = expectError(
        await signedInEditor.client.post(`/api/admin/projects/default/features/${flag}/lifecycle/complete`, { status: 'kept' }),
        404,
        'NotFoundError',
      );
      assert.match(error.message, new RegExp(`"${flag}" in project "default"`));
    }));

  test('a Viewer may read the lifecycle but neither complete nor uncomplete: 403 naming UPDATE_FEATURE', async () => {
    const viewer = ctx.withCookie((await createUserSession(ctx, 'Viewer')).cookie);
    await expectUnchanged(
      async (url) => {
        expectStatus(await viewer.get(`${url}/lifecycle`), 200);
        for (const response of [
          await viewer.post(`${url}/lifecycle/complete`, { status: 'discarded' }),
          await viewer.post(`${url}/lifecycle/uncomplete`),
        ]) {
          const error = expectError(response, 403, 'PermissionError');
          assert.deepEqual(error.permissions, ['UPDATE_FEATURE']);
        }
        assert.equal((await currentStage(url)).status, 'kept');
      },
      async (url) => expectStatus(await signedInEditor.client.post(`${url}/lifecycle/complete`, { status: 'kept' }), 200),
    );
  });
});
