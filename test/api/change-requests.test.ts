import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { before, describe, test } from 'node:test';
import {
  addStrategyDirectly,
  approvedChangeRequest,
  changeRequestPath,
  createProjectWithFlags,
  createProtectedProject,
  useTeamTestApp,
  getChangeRequest,
  moveTo,
  projectPath,
  propose,
  proposePath,
  setState,
} from '../helpers/change-requests.js';
import type { ChangeRequest } from '../helpers/change-requests.js';
import { expectError, getOk, expectStatus } from '../helpers/assertions.js';
import { eventsSince, lastEventId, eventFields } from '../helpers/events.js';
import { uniqueName } from '../helpers/fixtures.js';

const { ctx, team } = useTeamTestApp();

const enable = (flag: string, enabled = true) => ({ action: 'updateEnabled', feature: flag, payload: { enabled } });
const rollout = (flag: string, percent: string) => ({
  action: 'addStrategy',
  feature: flag,
  payload: { name: 'flexibleRollout', parameters: { rollout: percent, stickiness: 'default' } },
});

async function countChangeRequests(): Promise<number> {
  const rows = await ctx.db.selectFrom('change_requests').select('id').execute();
  return rows.length;
}

/** Asserts the request failed with the Unleash error body and that nothing was stored: no event, no request. */
async function expectRefusedWithoutChange(request: () => Promise<import('fastify').LightMyRequestResponse>, status: number, name: string) {
  const events = await lastEventId(ctx);
  const requests = await countChangeRequests();
  const error = expectError(await request(), status, name);
  assert.deepEqual(await eventsSince(ctx, events), [], 'a refused request records no event');
  assert.equal(await countChangeRequests(), requests, 'a refused request opens no change request');
  return error;
}

describe('configuration per project environment', () => {
  test('lists every environment of the project, and PUT enables one with its required approvals', async () => {
    const { project } = await createProjectWithFlags(ctx);
    const configPath = `${projectPath(project)}/change-requests/config`;
    const initial = await team.viewer.client.get(configPath);
    expectStatus(initial, 200);
    assert.deepEqual(initial.json(), [
      { environment: 'development', type: 'development', changeRequestEnabled: false, requiredApprovals: 1 },
      { environment: 'production', type: 'production', changeRequestEnabled: false, requiredApprovals: 1 },
    ]);

    const before = await lastEventId(ctx);
    const put = await team.admin.client.put(`${projectPath(project)}/environments/production/change-requests/config`, {
      changeRequestsEnabled: true,
      requiredApprovals: 2,
    });
    expectStatus(put, 204);
    assert.deepEqual((await ctx.admin.get(configPath)).json(), [
      { environment: 'development', type: 'development', changeRequestEnabled: false, requiredApprovals: 1 },
      { environment: 'production', type: 'production', changeRequestEnabled: true, requiredApprovals: 2 },
    ]);
    const events = await eventsSince(ctx, before);
    assert.deepEqual(eventFields(events, 'type', 'project', 'environment', 'data', 'preData', 'createdBy'), [
      {
        type: 'change-request-configuration-updated',
        project,
        environment: 'production',
        data: { changeRequestsEnabled: true, requiredApprovals: 2 },
        preData: { changeRequestsEnabled: false, requiredApprovals: 1 },
        createdBy: team.admin.username,
      },
    ]);

    // The same configuration again changes nothing and records nothing; leaving out requiredApprovals keeps it.
    const unchanged = await lastEventId(ctx);
    const again = { changeRequestsEnabled: true, requiredApprovals: 2 };
    expectStatus(await ctx.admin.put(`${projectPath(project)}/environments/production/change-requests/config`, again), 204);
    assert.deepEqual(await eventsSince(ctx, unchanged), []);
    expectStatus(
      await ctx.admin.put(`${projectPath(project)}/environments/production/change-requests/config`, { changeRequestsEnabled: false }),
      204,
    );
    assert.equal((await ctx.admin.get(configPath)).json<Array<{ requiredApprovals: number }>>()[1]!.requiredApprovals, 2);
  });

  test('refuses 0 or 11 approvals, unknown properties, Viewers and environments the project lacks', async () => {
    const { project } = await createProjectWithFlags(ctx);
    const path = `${projectPath(project)}/environments/production/change-requests/config`;
    for (const requiredApprovals of [0, 11, 1.5]) {
      const error = await expectRefusedWithoutChange(
        () => ctx.admin.put(path, { changeRequestsEnabled: true, requiredApprovals }),
        400,
        'BadDataError',
      );
      assert.equal(error.details[0]!.path, '/body/requiredApprovals');
    }
    const unknown = await expectRefusedWithoutChange(
      () => ctx.admin.put(path, { changeRequestsEnabled: true, approvers: 2 }),
      400,
      'BadDataError',
    );
    assert.equal(unknown.details[0]!.path, '/body/approvers');
    const denied = await expectRefusedWithoutChange(
      () => team.viewer.client.put(path, { changeRequestsEnabled: true }),
      403,
      'PermissionError',
    );
    assert.deepEqual(denied.permissions, ['UPDATE_CHANGE_REQUEST_CONFIG']);
    // An Editor cannot switch review off either: four-eyes must not depend on one Editor.
    const editorDenied = await expectRefusedWithoutChange(
      () => team.reviewer.client.put(path, { changeRequestsEnabled: false }),
      403,
      'PermissionError',
    );
    assert.deepEqual(editorDenied.permissions, ['UPDATE_CHANGE_REQUEST_CONFIG']);
    expectStatus(await ctx.admin.post('/api/admin/environments', { name: uniqueName('staging'), type: 'test' }), 201);
    await expectRefusedWithoutChange(
      () => ctx.admin.put(`${projectPath(project)}/environments/nowhere/change-requests/config`, { changeRequestsEnabled: true }),
      404,
      'NotFoundError',
    );
    await expectRefusedWithoutChange(() => ctx.admin.get(`${projectPath('no-such-project')}/change-requests/config`), 404, 'NotFoundError');
  });
});

describe('proposing changes', () => {
  test('the first change opens a Draft of the caller; later ones join it', async () => {
    const { project, flags } = await createProtectedProject(ctx, { flags: 2 });
    const [first, second] = flags as [string, string];
    const before = await lastEventId(ctx);
    const draft = await propose(team.author.client, project, enable(first));

    assert.equal(draft.state, 'Draft');
    assert.equal(draft.title, `Change request #${draft.id}`);
    assert.equal(draft.environment, 'production');
    assert.equal(draft.project, project);
    assert.equal(draft.minApprovals, 1);
    assert.deepEqual(draft.createdBy, { id: team.author.id, username: team.author.username, imageUrl: null });
    assert.deepEqual([draft.approvals, draft.rejections, draft.comments, draft.segments], [[], [], [], []]);
    assert.equal(draft.features.length, 1);
    const [group] = draft.features;
    assert.equal(group!.name, first);
    assert.equal(group!.conflict, undefined);
    assert.deepEqual(
      group!.changes.map((c) => ({ action: c.action, payload: c.payload, by: c.createdBy.username })),
      [{ action: 'updateEnabled', payload: { enabled: true }, by: team.author.username }],
    );

    const events = await eventsSince(ctx, before);
    assert.deepEqual(eventFields(events, 'type', 'project', 'environment', 'featureName', 'data'), [
      {
        type: 'change-request-created',
        project,
        environment: 'production',
        featureName: null,
        data: { changeRequestId: draft.id, state: 'Draft' },
      },
      {
        type: 'change-added',
        project,
        environment: 'production',
        featureName: first,
        data: { changeRequestId: draft.id, change: { id: group!.changes[0]!.id, ...enable(first) } },
      },
    ]);

    // An array adds several at once, to the same request.
    const joined = await propose(team.author.client, project, [rollout(second, '25'), enable(second)]);
    assert.equal(joined.id, draft.id);
    assert.deepEqual(
      joined.features.map((f) => ({ name: f.name, actions: f.changes.map((c) => c.action) })),
      [
        { name: first, actions: ['updateEnabled'] },
        { name: second, actions: ['addStrategy', 'updateEnabled'] },
      ],
    );

    // Another user gets a request of their own.
    const other = await propose(team.reviewer.client, project, enable(first, false));
    assert.notEqual(other.id, draft.id);
  });

  test('a later change of the same thing replaces the earlier one (change-edited)', async () => {
    const { project, flags } = await createProtectedProject(ctx);
    const flag = flags[0]!;
    const draft = await propose(team.author.client, project, enable(flag, true));
    const changeId = draft.features[0]!.changes[0]!.id;
    const before = await lastEventId(ctx);
    const replaced = await propose(team.author.client, project, enable(flag, false));
    assert.deepEqual(
      replaced.features[0]!.changes.map((c) => ({ id: c.id, payload: c.payload })),
      [{ id: changeId, payload: { enabled: false } }],
    );
    const [event] = await eventsSince(ctx, before);
    assert.equal(event!.type, 'change-edited');
    assert.deepEqual(event!.data, { changeRequestId: draft.id, change: { id: changeId, ...enable(flag, false) } });
    assert.deepEqual(event!.preData, { changeRequestId: draft.id, change: { id: changeId, ...enable(flag, true) } });
  });

  test('pending lists only the caller’s own open requests; the project list pages newest first', async () => {
    const { project, flags } = await createProtectedProject(ctx);
    const flag = flags[0]!;
    const mine = await propose(team.author.client, project, enable(flag));
    const theirs = await propose(team.reviewer.client, project, enable(flag, false));

    const pending = async (person: { client: typeof ctx.admin }) => {
      const response = await person.client.get(`${projectPath(project)}/change-requests/pending`);
      expectStatus(response, 200);
      return (response.json() as ChangeRequest[]).map((cr) => cr.id);
    };
    assert.deepEqual(await pending(team.author), [mine.id]);
    assert.deepEqual(await pending(team.reviewer), [theirs.id]);
    assert.deepEqual(await pending(team.viewer), []);

    const forFlag = await ctx.admin.get(`${projectPath(project)}/change-requests/pending/${flag}`);
    assert.deepEqual(
      (forFlag.json() as ChangeRequest[]).map((cr) => cr.id),
      [theirs.id, mine.id],
    );

    const all = await team.viewer.client.get(`${projectPath(project)}/change-requests`);
    assert.deepEqual(
      (all.json() as ChangeRequest[]).map((cr) => cr.id),
      [theirs.id, mine.id],
    );
    const page = await team.viewer.client.get(`${projectPath(project)}/change-requests?limit=1&offset=1`);
    assert.deepEqual(
      (page.json() as ChangeRequest[]).map((cr) => cr.id),
      [mine.id],
    );
    expectError(await ctx.admin.get(`${projectPath(project)}/change-requests?limit=0`), 400, 'BadDataError');
    expectError(await ctx.admin.get(`${projectPath(project)}/change-requests?offset=x`), 400, 'BadDataError');

    // Once applied, a request is no longer pending.
    await moveTo(team.reviewer.client, project, theirs.id, { state: 'In review' });
    await moveTo(team.author.client, project, theirs.id, { state: 'Approved' });
    await moveTo(team.author.client, project, theirs.id, { state: 'Applied' });
    assert.deepEqual(await pending(team.reviewer), []);
  });

  test('open across projects: what waits for my review, and what I opened, each listed apart', async () => {
    const { project, flags } = await createProtectedProject(ctx, { requiredApprovals: 2 });
    const flag = flags[0]!;
    const inReview = await propose(team.author.client, project, enable(flag, false));
    await moveTo(team.author.client, project, inReview.id, { state: 'In review' });
    const other = await createProtectedProject(ctx);
    const draft = await propose(team.author.client, other.project, enable(other.flags[0]!));
    const open = async (person: { client: typeof ctx.admin }) => {
      const body = await getOk<{ toReview: ChangeRequest[]; mine: ChangeRequest[] }>(person.client, '/api/admin/change-requests/open');
      const ours = [project, other.project];
      const inProject = (list: ChangeRequest[]) => list.filter((cr) => ours.includes(cr.project)).map((cr) => [cr.id, cr.state]);
      return { toReview: inProject(body.toReview), mine: inProject(body.mine) };
    };
    assert.deepEqual(await open(team.author), {
      toReview: [],
      mine: [
        [inReview.id, 'In review'],
        [draft.id, 'Draft'],
      ],
    });
    assert.deepEqual(await open(team.reviewer), { toReview: [[inReview.id, 'In review']], mine: [] });
    assert.deepEqual(await open(team.viewer), { toReview: [], mine: [] }, 'a Viewer may not approve');
    // Once she has approved, it waits for the second reviewer, not for her.
    await moveTo(team.reviewer.client, project, inReview.id, { state: 'Approved' });
    assert.deepEqual(await open(team.reviewer), { toReview: [], mine: [] });
    assert.deepEqual(await open(team.secondReviewer), { toReview: [[inReview.id, 'In review']], mine: [] });
  });

  test('feature search shows the open requests changing a flag in each environment', async () => {
    const { project, flags } = await createProtectedProject(ctx, { flags: 2 });
    const [touched, untouched] = flags as [string, string];
    const first = await propose(team.author.client, project, enable(touched));
    const second = await propose(team.reviewer.client, project, rollout(touched, '10'));
    const response = await team.viewer.client.get(`/api/admin/search/features?project=IS:${project}`);
    expectStatus(response, 200);
    const ids = (name: string) =>
      Object.fromEntries(
        (
          response.json() as { features: Array<{ name: string; environments: Array<{ name: string; changeRequestIds: number[] }> }> }
        ).features
          .find((f) => f.name === name)!
          .environments.map((env) => [env.name, env.changeRequestIds]),
      );
    assert.deepEqual(ids(touched), { development: [], production: [first.id, second.id] });
    assert.deepEqual(ids(untouched), { development: [], production: [] });

    await moveTo(team.author.client, project, first.id, { state: 'Cancelled' });
    const after = await team.viewer.client.get(`/api/admin/search/features?project=IS:${project}&query=${touched}`);
    const environments = (after.json() as { features: Array<{ environments: Array<{ name: string; changeRequestIds: number[] }> }> })
      .features[0]!.environments;
    assert.deepEqual(environments.find((env) => env.name === 'production')!.changeRequestIds, [second.id]);
  });

  test('enabling a flag without strategies shows the default strategy that will be added', async () => {
    const { project, flags } = await createProtectedProject(ctx, { flags: 3 });
    const [bare, withStrategy, addsOne] = flags as [string, string, string];
    await addStrategyDirectly(ctx.admin, project, withStrategy, { name: 'default' });
    const cr = await propose(team.author.client, project, [enable(bare), enable(withStrategy), rollout(addsOne, '5'), enable(addsOne)]);
    const defaults = Object.fromEntries(cr.features.map((f) => [f.name, f.defaultChange]));
    assert.deepEqual(defaults[bare], {
      action: 'addStrategy',
      payload: {
        name: 'flexibleRollout',
        title: null,
        disabled: false,
        constraints: [],
        variants: [],
        parameters: { rollout: '100', stickiness: 'default', groupId: bare },
        segments: [],
      },
    });
    assert.equal(defaults[withStrategy], undefined);
    assert.equal(defaults[addsOne], undefined);
  });
});

describe('bad input is a 4xx with the Unleash error body, and nothing changes', () => {
  let project: string;
  let flag: string;
  before(async () => {
    const created = await createProtectedProject(ctx);
    project = created.project;
    flag = created.flags[0]!;
    await propose(team.author.client, project, enable(flag));
  });

  /** The paths a proposal refused with a 400 names, nothing having changed. */
  const refusedPaths = async (body: unknown) =>
    (await expectRefusedWithoutChange(() => team.author.client.post(proposePath(project), body), 400, 'BadDataError')).details.map(
      (d) => d.path,
    );

  test('an unknown action, or no action', async () => {
    const unknown = await expectRefusedWithoutChange(
      () => team.author.client.post(proposePath(project), { action: 'renameFeature', feature: flag, payload: {} }),
      400,
      'BadDataError',
    );
    assert.match(unknown.message, /"action" \(one of updateEnabled, addStrategy/);
    assert.equal(unknown.details[0]!.path, '/body');
    assert.deepEqual(await refusedPaths([enable(flag), { feature: flag, payload: {} }]), ['/body/1']);
  });

  test('a payload its direct route would refuse, named by its path', async () => {
    const cases: Array<[unknown, string]> = [
      [{ action: 'updateEnabled', feature: flag, payload: { enabled: 'yes' } }, '/body/payload/enabled'],
      [{ action: 'addStrategy', feature: flag, payload: { name: 'default', bogus: 1 } }, '/body/payload/bogus'],
      [{ ...rollout(flag, '150') }, '/body/payload/parameters/rollout'],
      [{ action: 'addStrategy', feature: flag, payload: { name: 'nope' } }, '/body/payload/name'],
      [
        {
          action: 'addStrategy',
          feature: flag,
          payload: { name: 'default', constraints: [{ contextName: 'n', operator: 'NUM_GT', value: 'ten' }] },
        },
        '/body/payload/constraints/0/value',
      ],
      [{ action: 'patchVariant', feature: flag, payload: { variants: [{ name: 'a', weight: 2000 }] } }, '/body/payload/variants/0/weight'],
      [
        {
          action: 'patchVariant',
          feature: flag,
          payload: {
            variants: [
              { name: 'a', weight: 600, weightType: 'fix' },
              { name: 'a', weight: 1 },
            ],
          },
        },
        '/body/payload/variants/1/name',
      ],
      [{ action: 'deleteStrategy', feature: flag, payload: { id: 'not-a-uuid' } }, '/body/payload/id'],
      [{ action: 'addDependency', feature: flag, payload: { feature: flag } }, '/body/payload/feature'],
      [{ action: 'archiveFeature', feature: flag, payload: { now: true } }, '/body/payload/now'],
      [{ action: 'updateSegment', payload: { id: 1, name: 'x' } }, '/body/payload/constraints'],
      [{ ...enable(flag), extra: 1 }, '/body/extra'],
    ];
    for (const [body, path] of cases) {
      const error = await expectRefusedWithoutChange(() => team.author.client.post(proposePath(project), body), 400, 'BadDataError');
      assert.ok(
        error.details.some((d) => d.path === path),
        `${JSON.stringify(body)}: expected ${path} in ${JSON.stringify(error.details)}`,
      );
    }
    assert.deepEqual(await refusedPaths([enable(flag), rollout(flag, '101')]), ['/body/1/payload/parameters/rollout']);
  });

  test('an unknown flag, strategy or segment is a 404', async () => {
    await expectRefusedWithoutChange(() => team.author.client.post(proposePath(project), enable('no-such-flag')), 404, 'NotFoundError');
    await expectRefusedWithoutChange(
      () => team.author.client.post(proposePath(project), { action: 'deleteStrategy', feature: flag, payload: { id: randomUUID() } }),
      404,
      'NotFoundError',
    );
    await expectRefusedWithoutChange(
      () => team.author.client.post(proposePath(project), { action: 'deleteSegment', payload: { id: 999_999 } }),
      404,
      'NotFoundError',
    );
    await expectRefusedWithoutChange(
      () =>
        team.author.client.post(proposePath(project), {
          action: 'addStrategy',
          feature: flag,
          payload: { name: 'default', segments: [999_999] },
        }),
      404,
      'NotFoundError',
    );
    await expectRefusedWithoutChange(
      () => team.author.client.post(proposePath(project), { action: 'deleteDependency', feature: flag, payload: { feature: 'nobody' } }),
      404,
      'NotFoundError',
    );
  });

  test('an environment without change requests, or one the project lacks', async () => {
    const error = await expectRefusedWithoutChange(
      () => team.author.client.post(proposePath(project, 'development'), enable(flag)),
      400,
      'BadDataError',
    );
    assert.match(error.message, /not enabled for environment "development"/);
    await expectRefusedWithoutChange(() => team.author.client.post(proposePath(project, 'nowhere'), enable(flag)), 404, 'NotFoundError');
  });

  test('a Viewer cannot propose changes', async () => {
    const error = await expectRefusedWithoutChange(
      () => team.viewer.client.post(proposePath(project), enable(flag)),
      403,
      'PermissionError',
    );
    assert.deepEqual(error.permissions, ['UPDATE_FEATURE']);
  });

  test('a comment over 1,000 characters, or an empty one', async () => {
    const { id } = (await team.author.client.get(`${projectPath(project)}/change-requests/pending`)).json<ChangeRequest[]>()[0]!;
    const comments = `${changeRequestPath(project, id)}/comments`;
    const long = await expectRefusedWithoutChange(
      () => team.reviewer.client.post(comments, { text: 'x'.repeat(1001) }),
      400,
      'BadDataError',
    );
    assert.equal(long.details[0]!.path, '/body/text');
    await expectRefusedWithoutChange(() => team.reviewer.client.post(comments, { text: '   ' }), 400, 'BadDataError');
    const onState = await expectRefusedWithoutChange(
      () => setState(team.author.client, project, id, { state: 'Cancelled', comment: 'y'.repeat(1001) }),
      400,
      'BadDataError',
    );
    assert.equal(onState.details[0]!.path, '/body/comment');
    assert.equal((await getChangeRequest(ctx.admin, project, id)).state, 'Draft');
  });

  test('illegal transitions: back to Draft, approving a Draft, anything after Applied', async () => {
    const { project: own, flags } = await createProtectedProject(ctx);
    const applied = await approvedChangeRequest(team, own, enable(flags[0]!));
    await moveTo(team.reviewer.client, own, applied.id, { state: 'Applied' });
    for (const state of ['Draft', 'In review', 'Approved', 'Cancelled', 'Rejected', 'Applied']) {
      const error = await expectRefusedWithoutChange(() => setState(ctx.admin, own, applied.id, { state }), 409, 'ConflictError');
      assert.match(error.message, /Applied, which is final/);
    }
    const draft = await propose(team.author.client, own, enable(flags[0]!, false));
    const error = await expectRefusedWithoutChange(
      () => setState(team.reviewer.client, own, draft.id, { state: 'Approved' }),
      409,
      'ConflictError',
    );
    assert.equal(
      error.message,
      `Change request ${draft.id} is Draft and cannot move to Approved; from Draft it can move to In review, Cancelled, Rejected`,
    );
    await expectRefusedWithoutChange(() => setState(team.author.client, own, draft.id, { state: 'Draft' }), 409, 'ConflictError');
    await expectRefusedWithoutChange(() => setState(team.author.client, own, draft.id, { state: 'Done' }), 400, 'BadDataError');
    await expectRefusedWithoutChange(
      () => setState(team.author.client, own, draft.id, { state: 'In review', scheduledAt: new Date().toISOString() }),
      400,
      'BadDataError',
    );
    await expectRefusedWithoutChange(() => setState(team.author.client, own, 999_999, { state: 'In review' }), 404, 'NotFoundError');
  });

  test('self-approval by a non-admin, approving twice, a Viewer approving', async () => {
    const { project: own, flags } = await createProtectedProject(ctx, { requiredApprovals: 2 });
    const draft = await propose(team.author.client, own, enable(flags[0]!));
    await moveTo(team.author.client, own, draft.id, { state: 'In review' });

    const self = await expectRefusedWithoutChange(
      () => setState(team.author.client, own, draft.id, { state: 'Approved' }),
      403,
      'PermissionError',
    );
    assert.match(self.message, /cannot approve your own change request/);
    const viewer = await expectRefusedWithoutChange(
      () => setState(team.viewer.client, own, draft.id, { state: 'Approved' }),
      403,
      'PermissionError',
    );
    assert.deepEqual(viewer.permissions, ['APPROVE_CHANGE_REQUEST']);
    await expectRefusedWithoutChange(() => setState(team.viewer.client, own, draft.id, { state: 'Rejected' }), 403, 'PermissionError');
    const apply = await expectRefusedWithoutChange(
      () => setState(team.viewer.client, own, draft.id, { state: 'Applied' }),
      403,
      'PermissionError',
    );
    assert.deepEqual(apply.permissions, ['APPLY_CHANGE_REQUEST']);

    await moveTo(team.reviewer.client, own, draft.id, { state: 'Approved' });
    const twice = await expectRefusedWithoutChange(
      () => setState(team.reviewer.client, own, draft.id, { state: 'Approved' }),
      409,
      'ConflictError',
    );
    assert.match(twice.message, /already approved/);
    const current = await getChangeRequest(ctx.admin, own, draft.id);
    assert.equal(current.state, 'In review');
    assert.deepEqual(
      current.approvals.map((a) => a.createdBy.username),
      [team.reviewer.username],
    );
  });

  test('changes of someone else’s request, and discarding a request under review', async () => {
    const { project: own, flags } = await createProtectedProject(ctx);
    const draft = await propose(team.author.client, own, enable(flags[0]!));
    const changeId = draft.features[0]!.changes[0]!.id;
    const change = `${changeRequestPath(own, draft.id)}/changes/${changeId}`;
    await expectRefusedWithoutChange(() => team.reviewer.client.put(change, enable(flags[0]!, false)), 403, 'PermissionError');
    await expectRefusedWithoutChange(() => team.reviewer.client.delete(change), 403, 'PermissionError');
    await expectRefusedWithoutChange(
      () => team.reviewer.client.put(`${changeRequestPath(own, draft.id)}/title`, { title: 'Mine now' }),
      403,
      'PermissionError',
    );
    await expectRefusedWithoutChange(() => setState(team.reviewer.client, own, draft.id, { state: 'In review' }), 403, 'PermissionError');
    await expectRefusedWithoutChange(() => setState(team.reviewer.client, own, draft.id, { state: 'Cancelled' }), 403, 'PermissionError');
    await expectRefusedWithoutChange(
      () => team.author.client.put(change, { ...enable(flags[0]!), action: 'archiveFeature', payload: {} }),
      400,
      'BadDataError',
    );
    await expectRefusedWithoutChange(
      () => team.author.client.put(`${changeRequestPath(own, draft.id)}/changes/999999`, enable(flags[0]!)),
      404,
      'NotFoundError',
    );

    await moveTo(team.author.client, own, draft.id, { state: 'In review' });
    const error = await expectRefusedWithoutChange(() => team.author.client.delete(changeRequestPath(own, draft.id)), 409, 'ConflictError');
    assert.match(error.message, /cancel it instead/);
  });
});

describe('every transition', () => {
  const STATES = ['Draft', 'In review', 'Approved', 'Scheduled', 'Applied', 'Cancelled', 'Rejected'] as const;
  type State = (typeof STATES)[number];
  const ALLOWED: Record<State, State[]> = {
    Draft: ['In review', 'Cancelled', 'Rejected'],
    'In review': ['Approved', 'Cancelled', 'Rejected'],
    Approved: ['Approved', 'Applied', 'Scheduled', 'Cancelled', 'Rejected'],
    Scheduled: ['Applied', 'Scheduled', 'Cancelled', 'Rejected'],
    Applied: [],
    Cancelled: [],
    Rejected: [],
  };
  const inAnHour = () => new Date(ctx.clock.now().getTime() + 3_600_000).toISOString();
  // Rescheduling to the very same time changes nothing and records nothing; moving a schedule takes another.
  const inTwoHours = () => new Date(ctx.clock.now().getTime() + 7_200_000).toISOString();

  /** A request of its own project brought to `state` by the usual people. */
  async function requestIn(state: State): Promise<{ project: string; id: number }> {
    const { project, flags } = await createProtectedProject(ctx);
    const { id } = await propose(team.author.client, project, enable(flags[0]!));
    const steps: Array<[State, typeof team.author, object]> = {
      Draft: [],
      'In review': [['In review', team.author, {}]],
      Approved: [
        ['In review', team.author, {}],
        ['Approved', team.reviewer, {}],
      ],
      Scheduled: [
        ['In review', team.author, {}],
        ['Approved', team.reviewer, {}],
        ['Scheduled', team.reviewer, { scheduledAt: inAnHour() }],
      ],
      Applied: [
        ['In review', team.author, {}],
        ['Approved', team.reviewer, {}],
        ['Applied', team.reviewer, {}],
      ],
      Cancelled: [['Cancelled', team.author, {}]],
      Rejected: [
        ['In review', team.author, {}],
        ['Rejected', team.reviewer, {}],
      ],
    }[state] as Array<[State, typeof team.author, object]>;
    for (const [to, who, extra] of steps) await moveTo(who.client, project, id, { state: to, ...extra });
    return { project, id };
  }

  /** Who moves a request to each state, and what they record. */
  const MOVES: Record<Exclude<State, 'Draft'>, { who: () => typeof team.author; extra: () => object; event: string; result?: State }> = {
    'In review': { who: () => team.author, extra: () => ({}), event: 'change-request-sent-to-review' },
    Approved: { who: () => team.secondReviewer, extra: () => ({}), event: 'change-request-approval-added' },
    Applied: { who: () => team.secondReviewer, extra: () => ({}), event: 'change-request-applied' },
    Scheduled: { who: () => team.secondReviewer, extra: () => ({ scheduledAt: inTwoHours() }), event: 'change-request-scheduled' },
    Cancelled: { who: () => team.author, extra: () => ({}), event: 'change-request-cancelled' },
    Rejected: { who: () => team.reviewer, extra: () => ({}), event: 'change-request-rejected' },
  };

  for (const from of STATES) {
    test(`from ${from}`, async () => {
      for (const to of STATES) {
        const { project, id } = await requestIn(from);
        const before = await lastEventId(ctx);
        if (!ALLOWED[from].includes(to) || to === 'Draft') {
          const error = expectError(
            await setState(team.admin.client, project, id, { state: to, ...(to === 'Scheduled' ? { scheduledAt: inAnHour() } : {}) }),
            409,
            'ConflictError',
          );
          assert.match(error.message, new RegExp(`is ${from}`), `${from} → ${to}`);
          assert.deepEqual(await eventsSince(ctx, before), [], `${from} → ${to} records nothing`);
          assert.equal((await getChangeRequest(ctx.admin, project, id)).state, from);
          continue;
        }
        const move = MOVES[to as Exclude<State, 'Draft'>];
        const moved = await moveTo(move.who().client, project, id, { state: to, ...move.extra() });
        assert.equal(moved.state, to, `${from} → ${to}`);
        const types = (await eventsSince(ctx, before)).map((e) => e.type);
        assert.ok(types.includes(move.event), `${from} → ${to} records ${move.event} (got ${types.join(', ')})`);
      }
    });
  }
});

describe('the lifecycle, walked by several users', () => {
  test('Draft → In review → approvals → Approved; an edit withdraws the approvals; Applied records who applied it', async () => {
    const { project, flags } = await createProtectedProject(ctx, { flags: 2, requiredApprovals: 2 });
    const [flag, other] = flags as [string, string];
    const start = await lastEventId(ctx);
    const draft = await propose(team.author.client, project, enable(flag));
    assert.equal(draft.minApprovals, 2);

    const inReview = await moveTo(team.author.client, project, draft.id, { state: 'In review' });
    assert.equal(inReview.state, 'In review');
    const oneApproval = await moveTo(team.reviewer.client, project, draft.id, { state: 'Approved' });
    assert.equal(oneApproval.state, 'In review', 'one of two approvals is not enough');
    const approved = await moveTo(team.secondReviewer.client, project, draft.id, { state: 'Approved' });
    assert.equal(approved.state, 'Approved');
    assert.deepEqual(
      approved.approvals.map((a) => a.createdBy.username),
      [team.reviewer.username, team.secondReviewer.username],
    );

    // Any edit of an approved request withdraws its approvals and returns it to review.
    const edited = await propose(team.author.client, project, rollout(other, '30'));
    assert.equal(edited.id, draft.id);
    assert.equal(edited.state, 'In review');
    assert.deepEqual(edited.approvals, []);

    await moveTo(team.reviewer.client, project, draft.id, { state: 'Approved' });
    // An Admin may approve their own request, and anyone's.
    await moveTo(team.admin.client, project, draft.id, { state: 'Approved' });
    const applied = await moveTo(team.secondReviewer.client, project, draft.id, { state: 'Applied', comment: 'Shipping it' });
    assert.equal(applied.state, 'Applied');
    assert.deepEqual(applied.appliedBy, { id: team.secondReviewer.id, username: team.secondReviewer.username, imageUrl: null });
    assert.equal(typeof applied.appliedAt, 'string');
    assert.deepEqual(
      applied.comments.map((c) => ({ text: c.text, by: c.createdBy.username })),
      [{ text: 'Shipping it', by: team.secondReviewer.username }],
    );

    const events = await eventsSince(ctx, start);
    const lifecycle = events.filter((e) => e.type.startsWith('change'));
    for (const event of lifecycle) assert.equal((event.data as { changeRequestId: number }).changeRequestId, draft.id, event.type);
    assert.deepEqual(
      lifecycle.map((e) => [e.type, e.createdBy]),
      [
        ['change-request-created', team.author.username],
        ['change-added', team.author.username],
        ['change-request-sent-to-review', team.author.username],
        ['change-request-approval-added', team.reviewer.username],
        ['change-request-approval-added', team.secondReviewer.username],
        ['change-request-approved', team.secondReviewer.username],
        ['change-added', team.author.username],
        ['change-request-sent-to-review', team.author.username],
        ['change-request-approval-added', team.reviewer.username],
        ['change-request-approval-added', team.admin.username],
        ['change-request-approved', team.admin.username],
        ['change-request-applied', team.secondReviewer.username],
        ['change-request-comment-added', team.secondReviewer.username],
      ],
    );
    const withdrawn = lifecycle[7]!;
    assert.deepEqual(withdrawn.data, { changeRequestId: draft.id, state: 'In review', approvalsCleared: 2 });
    assert.deepEqual(withdrawn.preData, { changeRequestId: draft.id, state: 'Approved' });

    // Events are labelled and summarised like every other.
    const listed = await ctx.admin.get(`/api/admin/events?project=${project}`);
    const summaries = (listed.json() as { events: Array<{ type: string; label: string; summary: string }> }).events;
    const approvedEvent = summaries.find((e) => e.type === 'change-request-approval-added')!;
    assert.equal(approvedEvent.label, 'Change request approval added');
    assert.match(approvedEvent.summary, new RegExp(`approved change request \\*\\*#${draft.id}\\*\\* \\(2 of 2 required approvals\\)`));
  });

  test('Cancelled by its author, Rejected by a reviewer with a comment; both are final', async () => {
    const { project, flags } = await createProtectedProject(ctx);
    const cancelled = await propose(team.author.client, project, enable(flags[0]!));
    assert.equal((await moveTo(team.author.client, project, cancelled.id, { state: 'Cancelled' })).state, 'Cancelled');

    const rejected = await propose(team.author.client, project, enable(flags[0]!));
    assert.notEqual(rejected.id, cancelled.id, 'a final request no longer takes changes: a new one opens');
    await moveTo(team.author.client, project, rejected.id, { state: 'In review' });
    const own = expectError(await setState(team.author.client, project, rejected.id, { state: 'Rejected' }), 403, 'PermissionError');
    assert.match(own.message, /cancel it instead/);
    const before = await lastEventId(ctx);
    const result = await moveTo(team.reviewer.client, project, rejected.id, { state: 'Rejected', comment: 'Not during the sale' });
    assert.equal(result.state, 'Rejected');
    assert.deepEqual(
      result.rejections.map((r) => r.createdBy.username),
      [team.reviewer.username],
    );
    assert.deepEqual(
      result.comments.map((c) => c.text),
      ['Not during the sale'],
    );
    const [event] = await eventsSince(ctx, before);
    assert.deepEqual(event!.data, { changeRequestId: rejected.id, state: 'Rejected', comment: 'Not during the sale' });

    // A final request can still be discussed.
    expectStatus(await team.author.client.post(`${changeRequestPath(project, rejected.id)}/comments`, { text: 'Fair' }), 200);
  });

  test('editing and discarding single changes, the title, comments and discarding a Draft', async () => {
    const { project, flags } = await createProtectedProject(ctx, { flags: 2 });
    const [flag, other] = flags as [string, string];
    const draft = await propose(team.author.client, project, [enable(flag), rollout(other, '10')]);
    const [enableChange] = draft.features[0]!.changes;
    const [rolloutChange] = draft.features[1]!.changes;

    const editPath = `${changeRequestPath(project, draft.id)}/changes/${rolloutChange!.id}`;
    const edited = await team.author.client.put(editPath, rollout(other, '20'));
    expectStatus(edited, 200);
    assert.deepEqual((edited.json() as ChangeRequest).features[1]!.changes[0]!.payload, rollout(other, '20').payload);
    expectError(await team.author.client.put(editPath, rollout(other, '200')), 400, 'BadDataError');

    const before = await lastEventId(ctx);
    expectStatus(await team.author.client.delete(`${changeRequestPath(project, draft.id)}/changes/${enableChange!.id}`), 200);
    const afterDiscard = await getChangeRequest(ctx.admin, project, draft.id);
    assert.deepEqual(
      afterDiscard.features.map((f) => f.name),
      [other],
    );
    const [discarded] = await eventsSince(ctx, before);
    assert.equal(discarded!.type, 'change-discarded');
    assert.equal(discarded!.featureName, flag);
    assert.deepEqual(discarded!.data, { changeRequestId: draft.id, changeId: enableChange!.id });

    expectStatus(await team.author.client.put(`${changeRequestPath(project, draft.id)}/title`, { title: 'Checkout, gently' }), 204);
    expectStatus(await team.viewer.client.post(`${changeRequestPath(project, draft.id)}/comments`, { text: 'Looks good to me' }), 200);
    const titled = await getChangeRequest(team.viewer.client, project, draft.id);
    assert.equal(titled.title, 'Checkout, gently');
    assert.deepEqual(
      titled.comments.map((c) => ({ text: c.text, by: c.createdBy.username })),
      [{ text: 'Looks good to me', by: team.viewer.username }],
    );

    const discardStart = await lastEventId(ctx);
    expectStatus(await team.author.client.delete(changeRequestPath(project, draft.id)), 200);
    expectError(await ctx.admin.get(changeRequestPath(project, draft.id)), 404, 'NotFoundError');
    const [gone] = await eventsSince(ctx, discardStart);
    assert.deepEqual(
      { type: gone!.type, data: gone!.data },
      {
        type: 'change-request-discarded',
        data: { changeRequestId: draft.id, state: 'Draft', changes: 1 },
      },
    );
  });

  test('an empty request cannot go to review; a request of another project is not found', async () => {
    const { project, flags } = await createProtectedProject(ctx);
    const draft = await propose(team.author.client, project, enable(flags[0]!));
    expectStatus(
      await team.author.client.delete(`${changeRequestPath(project, draft.id)}/changes/${draft.features[0]!.changes[0]!.id}`),
      200,
    );
    const empty = expectError(await setState(team.author.client, project, draft.id, { state: 'In review' }), 409, 'ConflictError');
    assert.match(empty.message, /no changes/);
    const { project: elsewhere } = await createProjectWithFlags(ctx);
    expectError(await ctx.admin.get(changeRequestPath(elsewhere, draft.id)), 404, 'NotFoundError');
  });
});
