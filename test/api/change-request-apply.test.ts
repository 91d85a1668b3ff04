import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { openDatabase } from '../../src/db/database.js';
import { ChangeRequestScheduler } from '../../src/workers/change-request-scheduler.js';
import {
  addStrategyDirectly,
  approvedChangeRequest,
  changeRequestPath,
  createProjectWithFlags,
  useTeamTestApp,
  enableChangeRequests,
  featurePath,
  getChangeRequest,
  moveTo,
  projectPath,
  propose,
  setState,
  strategiesPath,
  createTeam,
} from '../helpers/change-requests.js';
import type { ChangeRequest } from '../helpers/change-requests.js';
import { expectError, expectStatus, getOk } from '../helpers/assertions.js';
import { uniqueName } from '../helpers/fixtures.js';
import { eventsSince, lastEventId, type StoredEvent, eventFields } from '../helpers/events.js';
import { usingPostgres } from '../helpers/test-database.js';

const { ctx, team } = useTeamTestApp();

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/** Events and views with one project's names replaced by placeholders, so two projects' histories compare. */
function normalized(value: unknown, names: Record<string, string>): unknown {
  let text = JSON.stringify(value);
  for (const [name, placeholder] of Object.entries(names)) text = text.split(name).join(placeholder);
  return JSON.parse(text.replace(UUID, '<uuid>'));
}

function eventShapes(events: StoredEvent[]) {
  return eventFields(events, 'type', 'project', 'environment', 'featureName', 'createdBy', 'createdByUserId', 'data', 'preData', 'tags');
}

async function flagView(project: string, flag: string) {
  const response = await ctx.admin.get(featurePath(project, flag));
  expectStatus(response, 200);
  const { environments, dependencies, archived, lifecycle } = response.json() as {
    environments: unknown[];
    dependencies: unknown[];
    archived: boolean;
    lifecycle: { stage: string };
  };
  return { environments, dependencies, archived, stage: lifecycle.stage };
}

/** A project with a flag, its parent flag and one strategy on the flag in production, as both sides start. */
async function startingPoint() {
  const { project, flags } = await createProjectWithFlags(ctx, 2);
  const [flag, parent] = flags as [string, string];
  const strategy = await addStrategyDirectly(ctx.admin, project, flag, {
    name: 'flexibleRollout',
    parameters: { rollout: '10', stickiness: 'default' },
    constraints: [{ contextName: 'userId', operator: 'IN', values: ['a', 'b'] }],
  });
  return { project, flag, parent, strategyId: strategy.id };
}

describe('applying runs the direct routes’ commands', () => {
  test('an applied request changes the flag exactly as the direct routes would, with the same events', async () => {
    const direct = await startingPoint();
    const reviewed = await startingPoint();
    await enableChangeRequests(ctx, reviewed.project);

    const updated = { name: 'flexibleRollout', parameters: { rollout: '60', stickiness: 'default' }, constraints: [] };
    const added = { name: 'userWithId', parameters: { userIds: 'alice,bob' }, title: 'Staff' };
    const variants = [
      { name: 'blue', weight: 300, weightType: 'fix', stickiness: 'default' },
      { name: 'red', weight: 0, weightType: 'variable' },
    ];

    const directStart = await lastEventId(ctx);
    const as = team.reviewer.client;
    const d = direct;
    expectStatus(await as.put(`${strategiesPath(d.project, d.flag)}/${d.strategyId}`, updated), 200);
    expectStatus(await as.post(strategiesPath(d.project, d.flag), added), 200);
    expectStatus(await as.put(`${featurePath(d.project, d.flag)}/environments/production/variants`, variants), 200);
    expectStatus(await as.post(`${featurePath(d.project, d.flag)}/dependencies`, { feature: d.parent }), 200);
    expectStatus(await as.post(`${featurePath(d.project, d.flag)}/environments/production/on`), 200);
    const directEvents = await eventsSince(ctx, directStart);

    const r = reviewed;
    const request = await approvedChangeRequest(team, r.project, [
      { action: 'updateStrategy', feature: r.flag, payload: { ...updated, id: r.strategyId } },
      { action: 'addStrategy', feature: r.flag, payload: added },
      { action: 'patchVariant', feature: r.flag, payload: { variants } },
      { action: 'addDependency', feature: r.flag, payload: { feature: r.parent } },
      { action: 'updateEnabled', feature: r.flag, payload: { enabled: true } },
    ]);
    const applyStart = await lastEventId(ctx);
    const applied = await moveTo(team.reviewer.client, r.project, request.id, { state: 'Applied' });
    assert.equal(applied.state, 'Applied');
    const appliedEvents = await eventsSince(ctx, applyStart);

    const last = appliedEvents.at(-1)!;
    assert.equal(last.type, 'change-request-applied');
    assert.deepEqual(last.data, { changeRequestId: request.id, state: 'Applied', changes: 5 });
    const namesOf = (side: typeof direct) => ({ [side.project]: '<project>', [side.parent]: '<parent>', [side.flag]: '<flag>' });
    assert.deepEqual(
      normalized(eventShapes(appliedEvents.slice(0, -1)), namesOf(reviewed)),
      normalized(eventShapes(directEvents), namesOf(direct)),
    );
    assert.deepEqual(
      directEvents.map((e) => e.type),
      [
        'feature-strategy-update',
        'feature-strategy-add',
        'feature-environment-variants-updated',
        'feature-dependency-added',
        'feature-environment-enabled',
      ],
    );
    assert.deepEqual(
      normalized(await flagView(r.project, r.flag), namesOf(reviewed)),
      normalized(await flagView(d.project, d.flag), namesOf(direct)),
    );

    // The events the request caused are grouped under it; the direct ones are not.
    const history = async (flag: string) => {
      const response = await ctx.admin.get(`/api/admin/events/${flag}`);
      return (response.json() as { events: Array<{ type: string; changeRequestId?: number }> }).events.filter((e) =>
        ['feature-strategy-update', 'feature-environment-enabled'].includes(e.type),
      );
    };
    assert.deepEqual(
      (await history(r.flag)).map((e) => e.changeRequestId),
      [request.id, request.id],
    );
    assert.deepEqual(
      (await history(d.flag)).map((e) => e.changeRequestId),
      [undefined, undefined],
    );
  });

  test('turning a flag on without strategies adds the default strategy, as the direct route does', async () => {
    const direct = await createProjectWithFlags(ctx);
    const reviewed = await createProjectWithFlags(ctx);
    await enableChangeRequests(ctx, reviewed.project);
    const directStart = await lastEventId(ctx);
    expectStatus(await team.reviewer.client.post(`${featurePath(direct.project, direct.flags[0]!)}/environments/production/on`), 200);
    const directEvents = await eventsSince(ctx, directStart);

    const request = await approvedChangeRequest(team, reviewed.project, {
      action: 'updateEnabled',
      feature: reviewed.flags[0]!,
      payload: { enabled: true },
    });
    assert.equal(request.features[0]!.defaultChange?.action, 'addStrategy');
    const applyStart = await lastEventId(ctx);
    await moveTo(team.reviewer.client, reviewed.project, request.id, { state: 'Applied' });
    const appliedEvents = (await eventsSince(ctx, applyStart)).slice(0, -1);
    const names = (side: { project: string; flags: string[] }) => ({ [side.project]: '<project>', [side.flags[0]!]: '<flag>' });
    assert.deepEqual(
      appliedEvents.map((e) => e.type),
      ['feature-strategy-add', 'feature-environment-enabled'],
    );
    assert.deepEqual(normalized(eventShapes(appliedEvents), names(reviewed)), normalized(eventShapes(directEvents), names(direct)));

    // The applied request answers what it changed, from those events; an open one answers nothing of the kind.
    const applied = (await getChangeRequest(team.reviewer.client, reviewed.project, request.id)) as ChangeRequest & {
      appliedChanges?: Array<{ eventId: number; type: string; featureName: string | null; preData: unknown; data: unknown }>;
    };
    assert.deepEqual(
      applied.appliedChanges,
      appliedEvents.map((event) => ({
        eventId: event.id,
        type: event.type,
        featureName: event.featureName,
        preData: event.preData,
        data: event.data,
      })),
    );
    assert.equal((request as { appliedChanges?: unknown }).appliedChanges, undefined);
  });

  test('a failure inside apply changes nothing: no strategy, no archive, no event, still Approved', async () => {
    const { project, flags } = await createProjectWithFlags(ctx, 2);
    const [parent, child] = flags as [string, string];
    expectStatus(await ctx.admin.post(`${featurePath(project, child)}/dependencies`, { feature: parent }), 200);
    await enableChangeRequests(ctx, project);
    // The strategy is added first; archiving the parent of an active child then fails, rolling both back.
    const request = await approvedChangeRequest(team, project, [
      { action: 'archiveFeature', feature: parent },
      { action: 'addStrategy', feature: parent, payload: { name: 'default' } },
    ]);
    const before = await lastEventId(ctx);
    const error = expectError(await setState(team.reviewer.client, project, request.id, { state: 'Applied' }), 409, 'ConflictError');
    assert.match(
      error.message,
      new RegExp(`change ${request.features[0]!.changes[0]!.id} \\(archiveFeature on flag "${parent}"\\) failed: .*depend`),
    );
    assert.deepEqual(await eventsSince(ctx, before), []);
    const view = await flagView(project, parent);
    assert.equal(view.archived, false);
    const strategies = await ctx.admin.get(strategiesPath(project, parent));
    assert.deepEqual(strategies.json(), []);
    const after = await getChangeRequest(ctx.admin, project, request.id);
    assert.equal(after.state, 'Approved');
    assert.equal(after.appliedBy, undefined);
  });

  test('segment changes apply through the segment commands', async () => {
    const { project, flags } = await createProjectWithFlags(ctx);
    const segment = await ctx.admin.post('/api/admin/segments', { name: `${project}-beta`, project, constraints: [] });
    expectStatus(segment, 201);
    const { id } = segment.json() as { id: number };
    await addStrategyDirectly(ctx.admin, project, flags[0]!, { name: 'default', segments: [id] });
    await enableChangeRequests(ctx, project);
    const newContent = {
      id,
      name: `${project}-beta-testers`,
      project,
      constraints: [{ contextName: 'userId', operator: 'IN', values: ['x'] }],
    };
    const request = await approvedChangeRequest(team, project, { action: 'updateSegment', payload: newContent });
    assert.deepEqual(
      request.segments.map((s) => ({ action: s.action, name: s.name, conflict: s.conflict })),
      [{ action: 'updateSegment', name: `${project}-beta`, conflict: undefined }],
    );
    const before = await lastEventId(ctx);
    await moveTo(team.reviewer.client, project, request.id, { state: 'Applied' });
    const [event] = await eventsSince(ctx, before);
    assert.equal(event!.type, 'segment-updated');
    assert.equal((event!.data as { name: string }).name, newContent.name);
    const stored = await ctx.admin.get(`/api/admin/segments/${id}`);
    assert.equal((stored.json() as { name: string }).name, newContent.name);
  });
});

describe('a global segment used by several protected projects', () => {
  test("a change request of one project cannot change it where another project's approvers never saw it", async () => {
    const own = await createProjectWithFlags(ctx);
    const other = await createProjectWithFlags(ctx);
    const segment = await ctx.admin.post('/api/admin/segments', { name: uniqueName('global'), constraints: [] });
    expectStatus(segment, 201);
    const { id, name } = segment.json() as { id: number; name: string };
    await addStrategyDirectly(ctx.admin, own.project, own.flags[0]!, { name: 'default', segments: [id] });
    await addStrategyDirectly(ctx.admin, other.project, other.flags[0]!, { name: 'default', segments: [id] });
    await enableChangeRequests(ctx, own.project);
    await enableChangeRequests(ctx, other.project);
    const request = await approvedChangeRequest(team, own.project, {
      action: 'updateSegment',
      payload: { id, name, constraints: [{ contextName: 'userId', operator: 'IN', values: ['someone'] }] },
    });
    const before = await lastEventId(ctx);
    const refused = expectError(await setState(team.reviewer.client, own.project, request.id, { state: 'Applied' }), 409, 'ConflictError');
    assert.match(
      refused.message,
      new RegExp(
        `Segment ${id} is used by strategies in environments with change requests \\("production" of project "${other.project}"\\)`,
      ),
    );
    assert.deepEqual(await eventsSince(ctx, before), []);
    assert.deepEqual((await getOk<{ constraints: unknown[] }>(ctx.admin, `/api/admin/segments/${id}`)).constraints, []);
  });
});

describe('conflicts', () => {
  test('a strategy edited since the change was made: the change and its flag say so, and applying is a 409', async () => {
    const { project, flag, strategyId } = await startingPoint();
    await enableChangeRequests(ctx, project);
    const change = {
      action: 'updateStrategy',
      feature: flag,
      payload: { id: strategyId, name: 'flexibleRollout', parameters: { rollout: '50' } },
    };
    const request = await approvedChangeRequest(team, project, change);
    assert.equal(request.features[0]!.conflict, undefined);

    // An Admin changes the strategy directly, around the request.
    expectStatus(
      await ctx.admin.put(`${strategiesPath(project, flag)}/${strategyId}`, { name: 'flexibleRollout', parameters: { rollout: '20' } }),
      200,
    );
    const conflicted = await getChangeRequest(ctx.admin, project, request.id);
    const [group] = conflicted.features;
    assert.equal(
      group!.changes[0]!.conflict,
      `Strategy "flexibleRollout" (${strategyId}) has been changed since this change was made; edit this change to build on its current configuration`,
    );
    assert.equal(group!.conflict, `1 change to flag "${flag}" conflicts with its current state`);

    const before = await lastEventId(ctx);
    const error = expectError(await setState(team.reviewer.client, project, request.id, { state: 'Applied' }), 409, 'ConflictError');
    assert.match(error.message, /conflicts with the current state \(1 change\)/);
    assert.deepEqual(
      error.details.map((d) => d.message),
      [`Change ${group!.changes[0]!.id} (updateStrategy on flag "${flag}"): ${group!.changes[0]!.conflict}`],
    );
    assert.deepEqual(await eventsSince(ctx, before), []);

    // Editing the change makes it against the current state; after a new review it applies.
    const edit = await team.author.client.put(`${changeRequestPath(project, request.id)}/changes/${group!.changes[0]!.id}`, change);
    expectStatus(edit, 200);
    const resolved = edit.json() as ChangeRequest;
    assert.equal(resolved.state, 'In review');
    assert.equal(resolved.features[0]!.conflict, undefined);
    await moveTo(team.reviewer.client, project, request.id, { state: 'Approved' });
    await moveTo(team.reviewer.client, project, request.id, { state: 'Applied' });
    const strategy = await ctx.admin.get(`${strategiesPath(project, flag)}/${strategyId}`);
    assert.equal((strategy.json() as { parameters: { rollout: string } }).parameters.rollout, '50');
  });

  test('a strategy deleted, variants changed, a flag archived, a segment changed since', async () => {
    const { project, flag, strategyId } = await startingPoint();
    const archivedFlag = await createFlag(project);
    const segment = await ctx.admin.post('/api/admin/segments', { name: `${project}-seg`, constraints: [] });
    const segmentId = (segment.json() as { id: number }).id;
    await enableChangeRequests(ctx, project);
    const request = await propose(team.author.client, project, [
      { action: 'deleteStrategy', feature: flag, payload: { id: strategyId } },
      { action: 'patchVariant', feature: flag, payload: { variants: [{ name: 'a', weight: 1000 }] } },
      { action: 'updateEnabled', feature: archivedFlag, payload: { enabled: true } },
      { action: 'updateSegment', payload: { id: segmentId, name: `${project}-seg`, constraints: [] } },
    ]);
    assert.ok(request.features.every((f) => f.conflict === undefined && f.changes.every((c) => c.conflict === undefined)));

    expectStatus(await ctx.admin.delete(`${strategiesPath(project, flag)}/${strategyId}`), 200);
    expectStatus(await ctx.admin.put(`${featurePath(project, flag)}/environments/production/variants`, [{ name: 'z', weight: 1000 }]), 200);
    expectStatus(await ctx.admin.delete(featurePath(project, archivedFlag)), 202);
    expectStatus(
      await ctx.admin.put(`/api/admin/segments/${segmentId}`, { name: `${project}-seg`, description: 'edited', constraints: [] }),
      204,
    );

    const conflicted = await getChangeRequest(ctx.admin, project, request.id);
    const byName = Object.fromEntries(conflicted.features.map((f) => [f.name, f]));
    assert.deepEqual(
      byName[flag]!.changes.map((c) => c.conflict),
      [
        `Strategy "flexibleRollout" (${strategyId}) has been deleted since this change was made`,
        `The variants of flag "${flag}" in "production" have changed since this change was made`,
      ],
    );
    assert.equal(byName[flag]!.conflict, `2 changes to flag "${flag}" conflict with its current state`);
    assert.equal(byName[archivedFlag]!.conflict, `Flag "${archivedFlag}" has been archived since this change was made`);
    assert.equal(byName[archivedFlag]!.changes[0]!.conflict, byName[archivedFlag]!.conflict);
    assert.equal(
      conflicted.segments[0]!.conflict,
      `Segment "${project}-seg" has been changed since this change was made; edit this change to build on its current content`,
    );
  });
});

async function createFlag(project: string): Promise<string> {
  const name = `${project}-extra`;
  expectStatus(await ctx.admin.post(`${projectPath(project)}/features`, { name }), 201);
  return name;
}

function scheduler(): { scheduler: ChangeRequestScheduler; errors: string[] } {
  const errors: string[] = [];
  return {
    scheduler: new ChangeRequestScheduler({ db: ctx.db, clock: ctx.clock }, { error: (_details, message) => errors.push(message) }),
    errors,
  };
}

const inAnHour = () => new Date(ctx.clock.now().getTime() + 3_600_000).toISOString();

describe('scheduling', () => {
  test('while maintenance mode is on the scheduler applies nothing, even when due; the first pass after it does', async () => {
    const { project, flags } = await createProjectWithFlags(ctx);
    await enableChangeRequests(ctx, project);
    const request = await approvedChangeRequest(team, project, { action: 'addStrategy', feature: flags[0]!, payload: { name: 'default' } });
    await moveTo(team.reviewer.client, project, request.id, { state: 'Scheduled', scheduledAt: inAnHour() });
    ctx.clock.advance(3_600_000);
    const { scheduler: instance, errors } = scheduler();
    expectStatus(await ctx.admin.post('/api/admin/maintenance', { enabled: true }), 204);
    try {
      assert.deepEqual(await instance.runOnce(), { applied: [], failed: [] });
      const waiting = await getChangeRequest(ctx.admin, project, request.id);
      assert.deepEqual([waiting.state, waiting.schedule?.status], ['Scheduled', 'pending']);
    } finally {
      expectStatus(await ctx.admin.post('/api/admin/maintenance', { enabled: false }), 204);
    }
    assert.deepEqual(await instance.runOnce(), { applied: [request.id], failed: [] });
    assert.deepEqual(errors, []);
  });

  test('a scheduled request is applied by the scheduler once it is due, by the system, once', async () => {
    const { project, flags } = await createProjectWithFlags(ctx);
    await enableChangeRequests(ctx, project);
    const request = await approvedChangeRequest(team, project, { action: 'addStrategy', feature: flags[0]!, payload: { name: 'default' } });
    const scheduledAt = inAnHour();
    const scheduled = await moveTo(team.reviewer.client, project, request.id, { state: 'Scheduled', scheduledAt });
    assert.equal(scheduled.state, 'Scheduled');
    assert.deepEqual(scheduled.schedule, { scheduledAt, status: 'pending' });

    const { scheduler: instance, errors } = scheduler();
    assert.deepEqual(await instance.runOnce(), { applied: [], failed: [] }, 'not due yet');
    ctx.clock.advance(3_600_000);
    const before = await lastEventId(ctx);
    assert.deepEqual(await instance.runOnce(), { applied: [request.id], failed: [] });
    assert.deepEqual(await instance.runOnce(), { applied: [], failed: [] }, 'applied once');
    assert.deepEqual(errors, []);

    const applied = await getChangeRequest(ctx.admin, project, request.id);
    assert.equal(applied.state, 'Applied');
    assert.deepEqual(applied.appliedBy, { id: -1337, username: 'system', imageUrl: null });
    assert.equal(applied.schedule, undefined);
    const events = await eventsSince(ctx, before);
    assert.deepEqual(
      events.map((e) => [e.type, e.createdBy]),
      [
        ['feature-strategy-add', 'system'],
        ['change-request-applied', 'system'],
        ['change-request-scheduled-application-success', 'system'],
      ],
    );
    assert.deepEqual(events[2]!.data, { changeRequestId: request.id, scheduledAt, scheduledBy: team.reviewer.username });
  });

  test('a request that cannot be applied when due stays Scheduled, marked failed with the reason, and is not retried', async () => {
    const { project, flag, strategyId } = await startingPoint();
    await enableChangeRequests(ctx, project);
    const request = await approvedChangeRequest(team, project, { action: 'deleteStrategy', feature: flag, payload: { id: strategyId } });
    await moveTo(team.reviewer.client, project, request.id, { state: 'Scheduled', scheduledAt: inAnHour() });
    expectStatus(await ctx.admin.delete(`${strategiesPath(project, flag)}/${strategyId}`), 200);
    ctx.clock.advance(3_600_000);

    const { scheduler: instance, errors } = scheduler();
    const before = await lastEventId(ctx);
    assert.deepEqual(await instance.runOnce(), { applied: [], failed: [request.id] });
    assert.deepEqual(await instance.runOnce(), { applied: [], failed: [] });
    assert.deepEqual(errors, []);
    const failed = await getChangeRequest(ctx.admin, project, request.id);
    assert.equal(failed.state, 'Scheduled');
    assert.equal(failed.schedule!.status, 'failed');
    assert.match(failed.schedule!.failureReason!, /conflicts with the current state/);
    const events = await eventsSince(ctx, before);
    assert.deepEqual(
      events.map((e) => e.type),
      ['change-request-scheduled-application-failure'],
    );
    assert.equal((events[0]!.data as { reason: string }).reason, failed.schedule!.failureReason);

    // It can be rescheduled, or cancelled.
    const rescheduled = await moveTo(team.reviewer.client, project, request.id, { state: 'Scheduled', scheduledAt: inAnHour() });
    assert.equal(rescheduled.schedule!.status, 'pending');
    assert.equal((await moveTo(team.author.client, project, request.id, { state: 'Cancelled' })).state, 'Cancelled');
  });

  test('scheduling needs a time in the future, an approved request and the apply permission; an edit drops the schedule', async () => {
    const { project, flags } = await createProjectWithFlags(ctx, 2);
    await enableChangeRequests(ctx, project);
    const request = await approvedChangeRequest(team, project, { action: 'updateEnabled', feature: flags[0]!, payload: { enabled: true } });
    const past = new Date(ctx.clock.now().getTime() - 60_000).toISOString();
    const before = await lastEventId(ctx);
    const error = expectError(
      await setState(team.reviewer.client, project, request.id, { state: 'Scheduled', scheduledAt: past }),
      400,
      'BadDataError',
    );
    assert.equal(error.details[0]!.path, '/body/scheduledAt');
    expectError(await setState(team.reviewer.client, project, request.id, { state: 'Scheduled' }), 400, 'BadDataError');
    expectError(
      await setState(team.reviewer.client, project, request.id, { state: 'Scheduled', scheduledAt: 'tomorrow' }),
      400,
      'BadDataError',
    );
    const viewer = expectError(
      await setState(team.viewer.client, project, request.id, { state: 'Scheduled', scheduledAt: inAnHour() }),
      403,
      'PermissionError',
    );
    assert.deepEqual(viewer.permissions, ['APPLY_CHANGE_REQUEST']);
    assert.deepEqual(await eventsSince(ctx, before), []);

    await moveTo(team.reviewer.client, project, request.id, { state: 'Scheduled', scheduledAt: inAnHour() });
    const edited = await propose(team.author.client, project, { action: 'updateEnabled', feature: flags[1]!, payload: { enabled: true } });
    assert.equal(edited.id, request.id);
    assert.equal(edited.state, 'In review');
    assert.equal(edited.schedule, undefined);
    assert.deepEqual(edited.approvals, []);
  });

  test('with two instances on one PostgreSQL, every due request is applied exactly once', {
    skip: !usingPostgres() && 'needs TEST_DATABASE_URL (PostgreSQL): PGlite has one connection, so it cannot show two instances competing',
  }, async () => {
    const { project, flags } = await createProjectWithFlags(ctx, 6);
    await enableChangeRequests(ctx, project);
    const ids: number[] = [];
    for (const flag of flags) {
      // Each request is its own author's: one open request per user, project and environment.
      const author = (await createTeam(ctx)).author;
      const draft = await propose(author.client, project, { action: 'addStrategy', feature: flag, payload: { name: 'default' } });
      await moveTo(author.client, project, draft.id, { state: 'In review' });
      await moveTo(team.reviewer.client, project, draft.id, { state: 'Approved' });
      await moveTo(team.reviewer.client, project, draft.id, { state: 'Scheduled', scheduledAt: inAnHour() });
      ids.push(draft.id);
    }
    ctx.clock.advance(3_600_000);

    const second = await openDatabase(ctx.databaseConfig);
    try {
      const errors: string[] = [];
      const log = { error: (_details: object, message: string) => errors.push(message) };
      const one = new ChangeRequestScheduler({ db: ctx.db, clock: ctx.clock }, log);
      const two = new ChangeRequestScheduler({ db: second.db, clock: ctx.clock }, log);
      const [a, b] = await Promise.all([one.runOnce(), two.runOnce()]);
      assert.deepEqual(errors, []);
      assert.deepEqual(
        [...a.applied, ...b.applied].sort((x, y) => x - y),
        [...ids].sort((x, y) => x - y),
      );
      assert.deepEqual([...a.failed, ...b.failed], []);
    } finally {
      await second.close();
    }
    const applications = await ctx.db
      .selectFrom('events')
      .select(['type', 'data'])
      .where('type', 'in', ['change-request-applied', 'change-request-scheduled-application-success'])
      .where('project', '=', project)
      .execute();
    assert.equal(applications.length, ids.length * 2);
    for (const flag of flags) {
      const strategies = await ctx.admin.get(strategiesPath(project, flag));
      assert.equal((strategies.json() as unknown[]).length, 1, `${flag} got exactly one strategy`);
    }
  });
});
