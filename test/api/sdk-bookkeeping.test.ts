import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { pruneClientBookkeeping } from '../../src/domain/client-features/client-registration.js';
import { expectError, expectRefused, expectStatus, getOk } from '../helpers/assertions.js';
import { eventsSince, lastEventId } from '../helpers/events.js';
import { uniqueName } from '../helpers/fixtures.js';
import { createFlag, createProject } from '../helpers/projects.js';
import { createSdkToken } from '../helpers/sdk-fixtures.js';
import { useTestApp } from '../helpers/test-app.js';

/**
 * What any holder of an SDK token can make Vexil keep is bounded: new applications per token and minute, the
 * dates of usage reports, the size of the applications list, and how long unseen applications are kept.
 */
const NEW_APPLICATIONS_PER_MINUTE = 3;
const ctx = useTestApp({ env: { CLIENT_NEW_APPLICATIONS_PER_MINUTE: String(NEW_APPLICATIONS_PER_MINUTE) } });

interface Application {
  appName: string;
  environments: string[];
}

const register = (token: string, appName: string, instanceId = 'i-1') =>
  ctx.as(token).post('/api/client/register', { appName, instanceId, sdkVersion: 'unleash-client-node:6.12.1', strategies: [] });

const applications = (query = '') =>
  getOk<{ applications: Application[]; total: number }>(ctx.admin, `/api/admin/metrics/applications${query}`);

describe('new applications per token and minute', () => {
  test('past the limit a new application is a 429 with Retry-After; known applications, other tokens and the next minute go through', async () => {
    ctx.clock.set('2026-05-01T10:00:00.000Z');
    const token = await createSdkToken(ctx, 'client', 'development');
    const other = await createSdkToken(ctx, 'client', 'development');
    const prefix = uniqueName('limited');
    for (let i = 0; i < NEW_APPLICATIONS_PER_MINUTE; i += 1) expectStatus(await register(token, `${prefix}-${i}`), 202);

    ctx.clock.advance(20_000);
    const refused = await expectRefused(ctx, () => register(token, `${prefix}-too-many`), { status: 429, name: 'TooManyRequestsError' });
    assert.match(refused.message, /registered 3 new applications in the last minute/);
    const again = await register(token, `${prefix}-too-many`);
    assert.equal(again.statusCode, 429);
    assert.equal(again.headers['retry-after'], '40');

    expectStatus(await register(token, `${prefix}-0`, 'i-2'), 202);
    expectStatus(await register(other, `${prefix}-other`), 202);
    const listed = (await applications(`?query=${prefix}`)).applications.map((application) => application.appName);
    assert.deepEqual(listed, [`${prefix}-0`, `${prefix}-1`, `${prefix}-2`, `${prefix}-other`]);

    ctx.clock.advance(40_000);
    expectStatus(await register(token, `${prefix}-too-many`), 202);
  });

  test('a bulk report that would pass the limit stores none of its applications', async () => {
    ctx.clock.set('2026-05-02T10:00:00.000Z');
    const token = await createSdkToken(ctx, 'client', 'development');
    const prefix = uniqueName('bulk');
    const application = (appName: string) => ({ appName, instanceId: 'edge-1', environment: 'development', strategies: [] });
    expectStatus(await ctx.as(token).post('/api/client/metrics/bulk', { applications: [application(`${prefix}-a`)], metrics: [] }), 202);
    const body = { applications: [`${prefix}-b`, `${prefix}-c`, `${prefix}-d`].map(application), metrics: [] };
    await expectRefused(ctx, () => ctx.as(token).post('/api/client/metrics/bulk', body), { status: 429, name: 'TooManyRequestsError' });
    assert.deepEqual(
      (await applications(`?query=${prefix}`)).applications.map((entry) => entry.appName),
      [`${prefix}-a`],
    );
  });
});

describe('what usage reports make Vexil keep', () => {
  test('a report from an application Vexil does not know makes it, under the limit of a registration; a refused one keeps nothing', async () => {
    ctx.clock.set('2026-05-03T10:00:00.000Z');
    const project = await createProject(ctx);
    const flag = await createFlag(ctx, project);
    // A frontend token ships in public pages: anyone can send what it may send.
    const token = await createSdkToken(ctx, 'frontend', 'development');
    const prefix = uniqueName('browser');
    const now = ctx.clock.now().toISOString();
    const report = (appName: string) => ({
      appName,
      bucket: { start: now, stop: now, toggles: { [flag]: { yes: 1, no: 0 }, [`${prefix}-no-such-flag`]: { yes: 1, no: 0 } } },
    });
    const send = (appName: string) => ctx.as(token).post('/api/frontend/client/metrics', report(appName));
    const kept = async () => ({
      usage: (
        await ctx.db.selectFrom('feature_usage_hourly').select('app_name').where('feature_name', '=', flag).orderBy('app_name').execute()
      ).map((row) => row.app_name),
      missing: (
        await ctx.db
          .selectFrom('client_application_missing_flags')
          .select('app_name')
          .where('feature_name', '=', `${prefix}-no-such-flag`)
          .orderBy('app_name')
          .execute()
      ).map((row) => row.app_name),
    });
    const admitted = [0, 1, 2].map((i) => `${prefix}-${i}`);
    const before = await lastEventId(ctx);
    for (const appName of admitted) expectStatus(await send(appName), 200);
    const refused = await expectRefused(ctx, () => send(`${prefix}-made-up`), { status: 429, name: 'TooManyRequestsError' });
    assert.match(refused.message, /registered 3 new applications in the last minute/);
    assert.deepEqual(await kept(), { usage: admitted, missing: admitted });
    assert.deepEqual(
      (await eventsSince(ctx, before)).map((event) => [event.type, (event.data as { appName: string }).appName]),
      admitted.map((appName) => ['application-created', appName]),
    );
    // A known application reports as often as it likes.
    expectStatus(await send(admitted[0]!), 200);
    assert.equal(
      (await ctx.db.selectFrom('feature_usage_hourly').select('yes').where('app_name', '=', admitted[0]!).executeTakeFirstOrThrow()).yes,
      2,
    );
  });
});

describe('applications in all', () => {
  const small = useTestApp({ env: { CLIENT_APPLICATIONS_MAX: '2' } });

  test('past CLIENT_APPLICATIONS_MAX a new application is a 429 whichever token sends it; known ones go on', async () => {
    const first = await createSdkToken(small, 'client', 'development');
    const second = await createSdkToken(small, 'frontend', 'development');
    const now = small.clock.now().toISOString();
    const report = (appName: string) => ({ appName, bucket: { start: now, stop: now, toggles: {} } });
    expectStatus(await small.as(first).post('/api/client/register', { appName: 'shop', instanceId: 'pod', strategies: [] }), 202);
    expectStatus(await small.as(second).post('/api/frontend/client/metrics', report('web')), 200);
    const refused = await expectRefused(small, () => small.as(second).post('/api/frontend/client/metrics', report('made-up')), {
      status: 429,
      name: 'TooManyRequestsError',
    });
    assert.match(refused.message, /already keeps 2 applications, the most it keeps \(CLIENT_APPLICATIONS_MAX\)/);
    expectError(
      await small.as(first).post('/api/client/register', { appName: 'another', instanceId: 'pod', strategies: [] }),
      429,
      'TooManyRequestsError',
    );
    expectStatus(await small.as(second).post('/api/frontend/client/metrics', report('web')), 200);
    const names = await small.db.selectFrom('client_applications').select('app_name').orderBy('app_name').execute();
    assert.deepEqual(names, [{ app_name: 'shop' }, { app_name: 'web' }]);
  });
});

describe('the dates of usage reports', () => {
  const project = uniqueName('dated');
  let token: string;
  let flag: string;
  /** When the flag was last evaluated in development, as the feature search shows it. */
  const lastSeen = async () => {
    const found = await getOk<{ features: Array<{ environments: Array<{ name: string; lastSeenAt: string | null }> }> }>(
      ctx.admin,
      `/api/admin/search/features?query=${flag}&project=IS:${project}`,
    );
    return found.features[0]!.environments.find((environment) => environment.name === 'development')!.lastSeenAt;
  };

  test('a bucket ending days ago or in 2099 is a 400 that records nothing; a few minutes ahead is taken as now', async () => {
    ctx.clock.set('2026-05-03T12:00:00.000Z');
    await createProject(ctx, { id: project, environments: ['development'] });
    flag = await createFlag(ctx, project);
    token = await createSdkToken(ctx, 'client', 'development', [project]);
    const report = (start: string, stop: string) =>
      ctx.as(token).post('/api/client/metrics', { appName: 'dated-app', bucket: { start, stop, toggles: { [flag]: { yes: 1, no: 0 } } } });

    const future = await expectRefused(ctx, () => report('2099-01-01T00:00:00.000Z', '2099-01-01T00:10:00.000Z'), {
      status: 400,
      name: 'BadDataError',
      path: '/body/bucket/stop',
    });
    assert.match(future.details[0]!.message, /at most 5 minutes after the server's time 2026-05-03T12:00:00.000Z/);
    await expectRefused(ctx, () => report('2026-04-30T11:00:00.000Z', '2026-04-30T11:10:00.000Z'), {
      status: 400,
      name: 'BadDataError',
      path: '/body/bucket/stop',
    });
    assert.equal(await lastSeen(), null);

    expectStatus(await report('2026-05-03T11:55:00.000Z', '2026-05-03T12:03:00.000Z'), 202);
    assert.equal(await lastSeen(), '2026-05-03T12:00:00.000Z');
  });

  test('bulk metrics dated outside the window are a 400 naming the entry', async () => {
    const metric = { featureName: flag, appName: 'dated-app', environment: 'development', yes: 1, no: 0 };
    const body = {
      metrics: [
        { ...metric, timestamp: '2026-05-03T11:59:00.000Z' },
        { ...metric, timestamp: '2099-05-03T11:59:00.000Z' },
      ],
    };
    await expectRefused(ctx, () => ctx.as(token).post('/api/client/metrics/bulk', body), {
      status: 400,
      name: 'BadDataError',
      path: '/body/metrics/1/timestamp',
    });
  });
});

describe('the applications list', () => {
  test('is paged with the total, and searched by a part of the name in any case', async () => {
    ctx.clock.set('2026-05-04T10:00:00.000Z');
    const token = await createSdkToken(ctx, 'client', 'development');
    const prefix = uniqueName('list');
    for (const name of ['alpha-one', 'beta', 'alpha-two']) expectStatus(await register(token, `${prefix}-${name}`), 202);

    const found = await applications(`?query=${prefix.toUpperCase()}-ALPHA`);
    assert.deepEqual(
      found.applications.map((application) => [application.appName, application.environments]),
      [
        [`${prefix}-alpha-one`, ['development']],
        [`${prefix}-alpha-two`, ['development']],
      ],
    );
    assert.equal(found.total, 2);
    const page = await applications(`?query=${prefix}&offset=1&limit=1`);
    assert.deepEqual(
      page.applications.map((application) => application.appName),
      [`${prefix}-alpha-two`],
    );
    assert.equal(page.total, 3);
    assert.deepEqual((await applications('?query=%25')).applications, [], 'a % in the text is a character, not a wildcard');

    for (const [query, path] of [
      ['?limit=0', '/query/limit'],
      ['?limit=1001', '/query/limit'],
      ['?offset=-1', '/query/offset'],
      [`?query=${'x'.repeat(101)}`, '/query/query'],
    ] as const) {
      const error = expectError(await ctx.admin.get(`/api/admin/metrics/applications${query}`), 400, 'BadDataError');
      assert.equal(error.details[0]!.path, path, query);
    }
  });
});

describe('forgetting what SDKs no longer report', () => {
  test('instances unseen for their retention go first, then applications with whatever instances they had left', async () => {
    ctx.clock.set('2026-06-01T00:00:00.000Z');
    const token = await createSdkToken(ctx, 'client', 'development');
    const app = uniqueName('forgotten');
    const kept = uniqueName('kept');
    expectStatus(await register(token, app, 'old-instance'), 202);
    ctx.clock.advance(47 * 3_600_000);
    expectStatus(await register(token, app, 'new-instance'), 202);
    ctx.clock.advance(2 * 3_600_000);
    expectStatus(await register(token, kept), 202);

    const retention = { instanceRetentionHours: 48, applicationRetentionDays: 30 };
    const pruned = await pruneClientBookkeeping(ctx.db, ctx.clock.now(), retention);
    assert.ok(pruned.instances >= 1);
    const instances = await getOk<{ instances: Array<{ instanceId: string }> }>(ctx.admin, `/api/admin/metrics/applications/${app}`);
    assert.deepEqual(
      instances.instances.map((instance) => instance.instanceId),
      ['new-instance'],
    );

    ctx.clock.advance(30 * 24 * 3_600_000 - 60 * 60_000);
    await pruneClientBookkeeping(ctx.db, ctx.clock.now(), retention);
    expectError(await ctx.admin.get(`/api/admin/metrics/applications/${app}`), 404, 'NotFoundError');
    await getOk(ctx.admin, `/api/admin/metrics/applications/${kept}`);
  });
});

describe('metrics labels', () => {
  test('no series is labelled with an application or flag name an SDK sent', async () => {
    ctx.clock.set(new Date());
    const token = await createSdkToken(ctx, 'client', 'development');
    const appName = uniqueName('label-app');
    const flagName = uniqueName('label-flag');
    expectStatus(await register(token, appName), 202);
    const now = new Date().toISOString();
    expectStatus(
      await ctx
        .as(token)
        .post('/api/client/metrics', { appName, bucket: { start: now, stop: now, toggles: { [flagName]: { yes: 1, no: 0 } } } }),
      202,
    );
    const scrape = await ctx.as().get('/internal-backstage/prometheus');
    expectStatus(scrape, 200);
    assert.ok(scrape.body.includes('vexil_client_api_requests_total'));
    assert.ok(!scrape.body.includes(appName) && !scrape.body.includes(flagName));
  });
});
