import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { expectError, expectRefused, expectStatus, getOk } from '../helpers/assertions.js';
import { eventsSince, lastEventId } from '../helpers/events.js';
import { uniqueName } from '../helpers/fixtures.js';
import { createFlag, createProject, featurePath, projectPath } from '../helpers/projects.js';
import { useTestApp } from '../helpers/test-app.js';

// A monitoring tool calls a signal endpoint with its token; an action set whose rule matches turns a kill
// switch off as its service account.
const ctx = useTestApp();

interface Setup {
  project: string;
  flag: string;
  endpoint: { id: number; name: string };
  token: string;
  account: { id: number; username: string };
  actionSetId: number;
}

async function serviceAccount(rootRole: number): Promise<{ id: number; username: string }> {
  const response = await ctx.admin.post('/api/admin/service-account', { username: uniqueName('pager'), rootRole });
  expectStatus(response, 201);
  return response.json() as { id: number; username: string };
}

async function setUp(rootRole = 2): Promise<Setup> {
  const project = await createProject(ctx);
  const flag = await createFlag(ctx, project, { type: 'kill-switch', environment: 'production', enabled: true });
  const created = await ctx.admin.post('/api/admin/signal-endpoints', { name: uniqueName('pagerduty'), description: 'Incidents' });
  expectStatus(created, 201);
  const endpoint = created.json() as { id: number; name: string };
  const tokenResponse = await ctx.admin.post(`/api/admin/signal-endpoints/${endpoint.id}/tokens`, { name: 'pagerduty-webhook' });
  expectStatus(tokenResponse, 201);
  const token = (tokenResponse.json() as { token: string }).token;
  const account = await serviceAccount(rootRole);
  const actionSet = await ctx.admin.post(`${projectPath(project)}/actions`, {
    name: 'Kill checkout on incident',
    actorId: account.id,
    match: { source: 'signal-endpoint', sourceId: endpoint.id, payload: { event: 'incident.triggered', service: 'checkout' } },
    actions: [{ action: 'TOGGLE_FEATURE_OFF', sortOrder: 1, executionParams: { project, environment: 'production', featureName: flag } }],
  });
  expectStatus(actionSet, 201);
  return { project, flag, endpoint, token, account, actionSetId: (actionSet.json() as { id: number }).id };
}

async function isOn(project: string, flag: string): Promise<boolean> {
  const body = await getOk<{ environments: Array<{ name: string; enabled: boolean }> }>(ctx.admin, featurePath(project, flag));
  return body.environments.find((environment) => environment.name === 'production')!.enabled;
}

const signal = (name: string, token: string | undefined, payload: unknown) => ctx.as(token).post(`/api/signal-endpoint/${name}`, payload);

describe('signals and actions', () => {
  test('a matching signal turns the kill switch off as the service account; the log names it', async () => {
    const s = await setUp();
    const before = await lastEventId(ctx);
    const response = await signal(s.endpoint.name, `Bearer ${s.token}`, {
      event: 'incident.triggered',
      service: 'checkout',
      severity: 'critical',
    });
    expectStatus(response, 202);
    assert.deepEqual((response.json() as { actionSets: unknown[] }).actionSets, [
      { actionSetId: s.actionSetId, name: 'Kill checkout on incident', state: 'success' },
    ]);
    assert.equal(await isOn(s.project, s.flag), false);
    const events = await eventsSince(ctx, before);
    assert.deepEqual(
      events.map((event) => [event.type, event.createdBy, event.featureName, event.environment]),
      [['feature-environment-disabled', s.account.username, s.flag, 'production']],
    );
    const signals = await getOk<{ signals: Array<{ payload: unknown }> }>(
      ctx.admin,
      `/api/admin/signal-endpoints/${s.endpoint.id}/signals`,
    );
    assert.deepEqual(
      signals.signals.map((entry) => entry.payload),
      [{ event: 'incident.triggered', service: 'checkout', severity: 'critical' }],
    );
  });

  test('a signal that does not match its rule changes nothing', async () => {
    const s = await setUp();
    const before = await lastEventId(ctx);
    const response = await signal(s.endpoint.name, s.token, { event: 'incident.resolved', service: 'checkout' });
    expectStatus(response, 202);
    assert.deepEqual((response.json() as { actionSets: unknown[] }).actionSets, []);
    assert.equal(await isOn(s.project, s.flag), true);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('a wrong token, an API token, no token or an unknown endpoint are refused, and nothing changes', async () => {
    const s = await setUp();
    const payload = { event: 'incident.triggered', service: 'checkout' };
    const read = () => isOn(s.project, s.flag);
    await expectRefused(ctx, () => signal(s.endpoint.name, 'not-the-token', payload), { status: 401, name: 'UnauthorizedError' }, read);
    await expectRefused(
      ctx,
      () => signal(s.endpoint.name, '*:*.test-admin-token-0123456789abcdef', payload),
      { status: 401, name: 'UnauthorizedError' },
      read,
    );
    await expectRefused(ctx, () => signal(s.endpoint.name, undefined, payload), { status: 401, name: 'AuthenticationRequired' }, read);
    // An unknown name and a known one with a wrong token answer alike, so names cannot be listed without a token.
    const unknownName = expectError(await signal('no-such-endpoint', s.token, payload), 401, 'UnauthorizedError');
    const other = await setUp();
    const wrongToken = expectError(await signal(s.endpoint.name, other.token, payload), 401, 'UnauthorizedError');
    assert.equal(unknownName.message, wrongToken.message);
    assert.equal(await read(), true);
    const big = { ...payload, blob: 'x'.repeat(70_000) };
    const tooBig = await signal(s.endpoint.name, s.token, big);
    assert.equal(tooBig.statusCode, 413);
    assert.equal(await read(), true);
  });

  test('an action set whose account may not change the flag fails alone and changes nothing', async () => {
    const s = await setUp(3);
    const response = await signal(s.endpoint.name, s.token, { event: 'incident.triggered', service: 'checkout' });
    expectStatus(response, 202);
    const [outcome] = (response.json() as { actionSets: Array<{ state: string; message: string }> }).actionSets;
    assert.equal(outcome?.state, 'failed');
    assert.match(outcome?.message ?? '', /UPDATE_FEATURE_ENVIRONMENT/);
    assert.equal(await isOn(s.project, s.flag), true);
  });

  test('signal token secrets are shown once and never recorded; endpoints, tokens and action sets are each recorded', async () => {
    const before = await lastEventId(ctx);
    const s = await setUp();
    const recorded = (await eventsSince(ctx, before)).filter(
      (event) => event.type.startsWith('signal-') || event.type.startsWith('actions-'),
    );
    assert.deepEqual(
      recorded.map((event) => ({
        type: event.type,
        createdBy: event.createdBy,
        project: event.project,
        name: (event.data as { name: string }).name,
      })),
      [
        { type: 'signal-endpoint-created', createdBy: 'admin-token', project: null, name: s.endpoint.name },
        { type: 'signal-endpoint-token-created', createdBy: 'admin-token', project: null, name: 'pagerduty-webhook' },
        { type: 'actions-created', createdBy: 'admin-token', project: s.project, name: 'Kill checkout on incident' },
      ],
    );
    assert.equal((recorded[2]!.data as { actorId: number }).actorId, s.account.id);
    const endpoint = await getOk<{ tokens: Array<Record<string, unknown>> }>(ctx.admin, `/api/admin/signal-endpoints/${s.endpoint.id}`);
    assert.deepEqual(
      endpoint.tokens.map((token) => token.name),
      ['pagerduty-webhook'],
    );
    assert.ok(!JSON.stringify(endpoint).includes(s.token));
    for (const event of await eventsSince(ctx, before))
      assert.ok(!JSON.stringify(event).includes(s.token), `${event.type} leaks the token`);
  });

  test("endpoints and action sets are switched off and on at Unleash's paths; each run is in the set's log with its signal", async () => {
    const s = await setUp();
    const incident = { event: 'incident.triggered', service: 'checkout' };
    const before = await lastEventId(ctx);
    const endpointOff = await ctx.admin.post(`/api/admin/signal-endpoints/${s.endpoint.id}/off`);
    expectStatus(endpointOff, 200);
    assert.equal((endpointOff.json() as { enabled: boolean }).enabled, false);
    expectError(await signal(s.endpoint.name, s.token, incident), 401, 'UnauthorizedError');
    assert.equal(await isOn(s.project, s.flag), true, 'an endpoint that is off sets nothing off');
    expectStatus(await ctx.admin.post(`/api/admin/signal-endpoints/${s.endpoint.id}/on`), 200);

    const actionsPath = `${projectPath(s.project)}/actions/${s.actionSetId}`;
    const setOff = await ctx.admin.post(`${actionsPath}/off`);
    expectStatus(setOff, 200);
    assert.equal((setOff.json() as { enabled: boolean }).enabled, false);
    const skipped = await signal(s.endpoint.name, s.token, incident);
    expectStatus(skipped, 202);
    assert.deepEqual((skipped.json() as { actionSets: unknown[] }).actionSets, [], 'a set that is off does not run');
    expectStatus(await ctx.admin.post(`${actionsPath}/on`), 200);
    expectStatus(await ctx.admin.post(`${actionsPath}/on`), 200);
    const ran = await signal(s.endpoint.name, s.token, incident);
    const signalId = (ran.json() as { signalId: number }).signalId;
    assert.equal(await isOn(s.project, s.flag), false);

    const log = await getOk<{
      actionSetEvents: Array<{ actionSetId: number; observableEventId: number; state: string; observableEvent: { payload: unknown } }>;
    }>(ctx.admin, `${actionsPath}/events`);
    assert.deepEqual(
      log.actionSetEvents.map((event) => [event.actionSetId, event.observableEventId, event.state, event.observableEvent.payload]),
      [[s.actionSetId, signalId, 'success', incident]],
    );
    assert.deepEqual(
      (await eventsSince(ctx, before)).map((event) => [event.type, (event.data as { enabled: boolean } | null)?.enabled]),
      [
        ['signal-endpoint-updated', false],
        ['signal-endpoint-updated', true],
        ['actions-updated', false],
        ['actions-updated', true],
        ['feature-environment-disabled', false],
      ],
      'switching to the state it is in records nothing',
    );
    expectError(await ctx.admin.get(`${projectPath(s.project)}/actions/987654/events`), 404, 'NotFoundError');
    expectError(await ctx.admin.get(`${actionsPath}/events?limit=0`), 400, 'BadDataError');
  });

  test('an endpoint keeps its last 1,000 signals, and an action set its last 1,000 runs', async () => {
    const s = await setUp();
    // A rule that matches, acting on a flag already off: each signal is a successful run that changes nothing.
    expectStatus(await ctx.admin.post(`${featurePath(s.project, s.flag)}/environments/production/off`), 200);
    const incident = { event: 'incident.triggered', service: 'checkout' };
    for (let i = 0; i < 1_005; i += 1) expectStatus(await signal(s.endpoint.name, s.token, { ...incident, n: i }), 202);
    const signals = await ctx.db
      .selectFrom('signals')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .where('signal_endpoint_id', '=', s.endpoint.id)
      .executeTakeFirstOrThrow();
    assert.equal(Number(signals.count), 1_000);
    const oldest = await ctx.db
      .selectFrom('signals')
      .select('payload')
      .where('signal_endpoint_id', '=', s.endpoint.id)
      .orderBy('id')
      .limit(1)
      .executeTakeFirstOrThrow();
    assert.equal((oldest.payload as { n: number }).n, 5, 'the oldest five went');
    const runs = await ctx.db
      .selectFrom('action_set_events')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .where('action_set_id', '=', s.actionSetId)
      .executeTakeFirstOrThrow();
    assert.equal(Number(runs.count), 1_000);
  });

  test('a service account or signal endpoint that action sets use cannot be deleted; the refusal names them', async () => {
    const s = await setUp();
    // The service account the action sets act as, and the signal endpoint that sets them off.
    for (const path of [`/api/admin/service-account/${s.account.id}`, `/api/admin/signal-endpoints/${s.endpoint.id}`]) {
      const refused = await expectRefused(
        ctx,
        () => ctx.admin.delete(path),
        { status: 409, name: 'ConflictError' },
        () => getOk(ctx.admin, `${projectPath(s.project)}/actions`),
      );
      assert.match(refused.message, new RegExp(`"Kill checkout on incident" \\(project "${s.project}", id ${s.actionSetId}\\)`), path);
    }
    expectStatus(await ctx.admin.get(`/api/admin/service-account/${s.account.id}`), 200);
    expectStatus(await ctx.admin.delete(`${projectPath(s.project)}/actions/${s.actionSetId}`), 200);
    expectStatus(await ctx.admin.delete(`/api/admin/signal-endpoints/${s.endpoint.id}`), 200);
    expectStatus(await ctx.admin.delete(`/api/admin/service-account/${s.account.id}`), 200);
  });

  test('bad action sets and endpoints are refused with a 400 at the entry', async () => {
    const s = await setUp();
    const person = await ctx.admin.post('/api/admin/user-admin', { username: uniqueName('human'), rootRole: 'Editor' });
    const personId = (person.json() as { id: number }).id;
    const good = {
      name: 'rule',
      actorId: s.account.id,
      match: { source: 'signal-endpoint', sourceId: s.endpoint.id, payload: {} },
      actions: [
        {
          action: 'TOGGLE_FEATURE_OFF',
          sortOrder: 1,
          executionParams: { project: s.project, environment: 'production', featureName: s.flag },
        },
      ],
    };
    const action = good.actions[0]!;
    const read = () => getOk(ctx.admin, `${projectPath(s.project)}/actions`);
    const cases: Array<[unknown, string]> = [
      [{ ...good, actorId: personId }, '/body/actorId'],
      [{ ...good, match: { ...good.match, sourceId: 987654 } }, '/body/match/sourceId'],
      [
        { ...good, actions: [{ ...action, executionParams: { ...action.executionParams, featureName: 'no-such-flag' } }] },
        '/body/actions/0/executionParams/featureName',
      ],
      [
        { ...good, actions: [{ ...action, executionParams: { ...action.executionParams, environment: 'nowhere' } }] },
        '/body/actions/0/executionParams/environment',
      ],
      [
        { ...good, actions: [{ ...action, executionParams: { ...action.executionParams, project: 'default' } }] },
        '/body/actions/0/executionParams/project',
      ],
      [{ ...good, actions: [{ ...action, action: 'DELETE_EVERYTHING' }] }, '/body/actions/0/action'],
      [{ ...good, actions: [] }, '/body/actions'],
    ];
    for (const [body, path] of cases) {
      await expectRefused(
        ctx,
        () => ctx.admin.post(`${projectPath(s.project)}/actions`, body),
        { status: 400, name: 'BadDataError', path },
        read,
      );
    }
    await expectRefused(ctx, () => ctx.admin.post('/api/admin/signal-endpoints', { name: 'Has Spaces' }), {
      status: 400,
      name: 'BadDataError',
      path: '/body/name',
    });
    await expectRefused(ctx, () => ctx.admin.post('/api/admin/signal-endpoints', { name: s.endpoint.name }), {
      status: 409,
      name: 'NameExistsError',
    });
  });
});
