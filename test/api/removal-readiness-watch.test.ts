import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { runDeliveryPass } from '../../src/workers/delivery-worker.js';
import { startRemovalReadinessWatch } from '../../src/workers/removal-readiness-watch.js';
import { expectError, expectStatus } from '../helpers/assertions.js';
import { uniqueName } from '../helpers/fixtures.js';
import { createWebhook, useAppWithReceiver } from '../helpers/integrations.js';
import { createFlag, createProject } from '../helpers/projects.js';

/*
 * The hourly watch of removal readiness, run as the server runs it: a flag that becomes ready is announced once (an
 * event, and through it a webhook), however many instances watch; search filters on the kept verdicts; and saying a
 * flag is ready does not restart its three stable weeks.
 */
const { ctx, receiver } = useAppWithReceiver();
const DAY_MS = 86_400_000;

/** One pass of the watch, as an instance's worker starts with one and stops once it is done. */
async function watchOnce(): Promise<void> {
  await startRemovalReadinessWatch({ db: ctx.db, clock: ctx.clock, log: ctx.app.log }).stop();
}

interface EventRow {
  type: string;
  featureName: string;
  environment: string;
  label: string;
  summary: string;
  data: { verdict: string; previousVerdict: string; reasons: string[] };
}

async function readyEvents(project: string): Promise<EventRow[]> {
  const response = await ctx.admin.get(`/api/admin/search/events?project=IS:${project}&type=IS:feature-ready-for-removal`);
  expectStatus(response, 200);
  return (response.json() as { events: EventRow[] }).events;
}

async function searchNames(query: string): Promise<string[]> {
  const response = await ctx.admin.get(`/api/admin/search/features?${query}`);
  expectStatus(response, 200);
  return (response.json() as { features: Array<{ name: string }> }).features.map((flag) => flag.name).sort();
}

describe('the removal readiness watch', () => {
  test('announces a flag that became ready once, to the event log and a webhook, and search finds it by verdict', async () => {
    const project = await createProject(ctx, { prefix: 'watch' });
    const settled = await createFlag(ctx, project, { environment: 'production', strategies: [{ name: 'default' }] });
    // On in development too, so flag health's "ready to remove" (on everywhere, unchanged three weeks) counts it.
    const development = `/api/admin/projects/${project}/features/${settled}/environments/development`;
    expectStatus(await ctx.admin.post(`${development}/strategies`, { name: 'default' }), 200);
    expectStatus(await ctx.admin.post(`${development}/on`), 200);
    const rollout = { name: 'flexibleRollout', parameters: { rollout: '50', stickiness: 'default', groupId: 'g' } };
    const half = await createFlag(ctx, project, { environment: 'production', strategies: [rollout] });
    const hook = `/hooks/${uniqueName('ready')}`;
    await createWebhook(ctx, `${receiver.origin}${hook}`, { projects: [project], events: ['feature-ready-for-removal'] });

    // First seen: both kept as they stand, nothing announced.
    await watchOnce();
    assert.deepEqual(await readyEvents(project), []);
    assert.deepEqual(await searchNames(`project=IS:${project}&removalReadiness=IS:keep`), [half, settled].sort());

    ctx.clock.advance(22 * DAY_MS);
    // Two instances watching at the same hour announce it once.
    await Promise.all([watchOnce(), watchOnce()]);
    await watchOnce();
    const events = await readyEvents(project);
    assert.deepEqual(
      events.map((event) => [event.featureName, event.environment, event.data.previousVerdict, event.data.verdict, event.label]),
      [[settled, 'production', 'keep', 'ready to remove (keep the on branch)', 'Flag ready to remove']],
    );
    assert.equal(
      events[0]!.summary,
      `**${settled.replaceAll('_', '\\_')}** is ready to remove (keep the on branch) in **production**: on for everyone in production for 22 days; never evaluated here; no pushed code reference known`,
    );

    await runDeliveryPass({ db: ctx.db, clock: ctx.clock, config: ctx.config, log: ctx.app.log });
    const delivered = receiver.requests.filter((request) => request.path === hook);
    assert.equal(delivered.length, 1);
    const body = JSON.parse(delivered[0]!.body) as { type: string; featureName: string; data: { verdict: string } };
    assert.deepEqual(
      [body.type, body.featureName, body.data.verdict],
      ['feature-ready-for-removal', settled, 'ready to remove (keep the on branch)'],
    );

    assert.deepEqual(await searchNames(`project=IS:${project}&removalReadiness=IS:ready-to-remove`), [settled]);
    assert.deepEqual(await searchNames(`project=IS:${project}&removalReadiness=IS:ready-to-remove-keep-on`), [settled]);
    assert.deepEqual(await searchNames(`project=IS:${project}&removalReadiness=IS:ready-to-remove-keep-off`), []);
    assert.deepEqual(await searchNames(`project=IS:${project}&removalReadiness=IS_NOT:ready-to-remove`), [half]);
    assert.deepEqual(await searchNames(`project=IS:${project}&removalReadiness=IS_ANY_OF:keep,ready-to-archive`), [half]);
    // Announcing it changed nothing about the flag: still ready, still 22 days stable, still in flag health's list.
    const readiness = await ctx.admin.get(`/api/admin/projects/${project}/features/${settled}/removal-readiness`);
    assert.deepEqual(
      (readiness.json() as { environments: Array<{ reasons: string[] }> }).environments[0]!.reasons[0],
      'on for everyone in production for 22 days',
    );
    assert.deepEqual(await searchNames(`project=IS:${project}&health=IS:ready-to-remove`), [settled]);
  });

  test('an unknown verdict in the search filter is a 400 naming the parameter', async () => {
    const refused = await ctx.admin.get('/api/admin/search/features?removalReadiness=IS:maybe');
    expectError(refused, 400, 'BadDataError');
    assert.match((refused.json() as { message: string }).message, /removalReadiness/);
    expectError(await ctx.admin.get('/api/admin/search/features?removalReadiness=INCLUDE:keep'), 400, 'BadDataError');
  });
});
