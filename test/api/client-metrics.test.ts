import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectError, expectStatus, getOk } from '../helpers/assertions.js';
import { createUserSession, uniqueName, sendMalformedJson } from '../helpers/fixtures.js';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../helpers/test-app.js';
import { createFlag, createProject } from '../helpers/projects.js';

interface SearchEnvironment {
  name: string;
  lastSeenAt: string | null;
  yes: number;
  no: number;
}
interface SearchFeature {
  name: string;
  lastSeenAt: string | null;
  environments: SearchEnvironment[];
}
interface SearchResult {
  features: SearchFeature[];
  total: number;
}

/** The server clock while reports arrive: half past the hour, so "the last hour" is not a whole-hour edge. */
const NOW = '2026-07-01T12:30:00.000Z';
const at = (minutesFromNow: number) => new Date(Date.parse(NOW) + minutesFromNow * 60_000).toISOString();

let ctx: TestApp;
/** Flags of this project are reported by all three client tokens. */
let project: string;
/** A project none of the scoped tokens covers. */
let outside: string;
/** Development token for `project` (and `sortProject`), production token for `project`. */
let development: string;
let production: string;
let frontend: string;

async function createToken(type: 'client' | 'frontend', environment: string, projects: string[]): Promise<{ id: number; secret: string }> {
  const created = await ctx.admin.post('/api/admin/api-tokens', { tokenName: uniqueName('sdk'), type, environment, projects });
  expectStatus(created, 201);
  return created.json() as { id: number; secret: string };
}

function send(token: string | undefined, body: unknown) {
  return ctx.as(token).post('/api/client/metrics', body);
}

/** Reports one bucket of ten minutes ending at `stop`, and expects it to be accepted. */
async function report(token: string, toggles: Record<string, { yes: number; no: number }>, stop: string, appName = 'checkout-service') {
  const start = new Date(Math.min(Date.parse(stop), Date.parse(NOW)) - 10 * 60_000).toISOString();
  const response = await send(token, { appName, bucket: { start, stop, toggles } });
  expectStatus(response, 202);
  assert.equal(response.body, '');
}

async function search(query: string): Promise<SearchResult> {
  return getOk<SearchResult>(ctx.admin, `/api/admin/search/features?${query}`);
}

async function findFlag(inProject: string, name: string): Promise<SearchFeature> {
  const result = await search(`project=IS:${inProject}&query=${name}`);
  assert.deepEqual(
    result.features.map((f) => f.name),
    [name],
  );
  return result.features[0]!;
}

/** What the search says about a flag's usage: the flag's lastSeenAt and, per environment, lastSeenAt, yes and no. */
async function usageOf(inProject: string, name: string) {
  const feature = await findFlag(inProject, name);
  return {
    lastSeenAt: feature.lastSeenAt,
    environments: Object.fromEntries(feature.environments.map((e) => [e.name, { lastSeenAt: e.lastSeenAt, yes: e.yes, no: e.no }])),
  };
}

const unseen = { lastSeenAt: null, yes: 0, no: 0 };

before(async () => {
  ctx = await startTestApp();
  ctx.clock.set(at(-24 * 60));
  project = await createProject(ctx, { prefix: 'usage' });
  outside = await createProject(ctx, { prefix: 'usage' });
  development = (await createToken('client', 'development', [project])).secret;
  production = (await createToken('client', 'production', [project])).secret;
  frontend = (await createToken('frontend', 'development', [project])).secret;
  ctx.clock.set(NOW);
});
after(() => ctx.close());

describe('reports show in the feature search', () => {
  test('a report is accepted with 202 and counts for that flag and environment only', async () => {
    const reported = await createFlag(ctx, project);
    const silent = await createFlag(ctx, project);
    await report(development, { [reported]: { yes: 3, no: 1 } }, at(-1));

    assert.deepEqual(await usageOf(project, reported), {
      lastSeenAt: at(-1),
      environments: { development: { lastSeenAt: at(-1), yes: 3, no: 1 }, production: unseen },
    });
    assert.deepEqual(await usageOf(project, silent), { lastSeenAt: null, environments: { development: unseen, production: unseen } });
  });

  test('counts add up over reports in the same hour, from one application and from several', async () => {
    const name = await createFlag(ctx, project);
    await report(development, { [name]: { yes: 2, no: 1 } }, at(-20));
    await report(development, { [name]: { yes: 5, no: 0 } }, at(-10));
    await report(development, { [name]: { yes: 1, no: 4 } }, at(-5), 'billing-service');

    assert.deepEqual(await usageOf(project, name), {
      lastSeenAt: at(-5),
      environments: { development: { lastSeenAt: at(-5), yes: 8, no: 5 }, production: unseen },
    });
  });

  test('only the last hour counts, while lastSeenAt keeps the latest report', async () => {
    const name = await createFlag(ctx, project);
    await report(development, { [name]: { yes: 10, no: 10 } }, at(-120));
    assert.deepEqual((await usageOf(project, name)).environments.development, { lastSeenAt: at(-120), yes: 0, no: 0 });

    await report(development, { [name]: { yes: 1, no: 2 } }, at(-3));
    assert.deepEqual((await usageOf(project, name)).environments.development, { lastSeenAt: at(-3), yes: 1, no: 2 });

    // Reports that arrive late (an older bucket) add their counts where they belong but never move lastSeenAt back.
    await report(development, { [name]: { yes: 5, no: 5 } }, at(-180));
    await report(development, { [name]: { yes: 4, no: 0 } }, at(-15));
    assert.deepEqual(await usageOf(project, name), {
      lastSeenAt: at(-3),
      environments: { development: { lastSeenAt: at(-3), yes: 5, no: 2 }, production: unseen },
    });
  });

  test('counts leave the window as the clock moves on; lastSeenAt stays', async () => {
    const name = await createFlag(ctx, project);
    await report(development, { [name]: { yes: 3, no: 3 } }, at(-1));
    try {
      ctx.clock.advance(2 * 3_600_000);
      assert.deepEqual((await usageOf(project, name)).environments.development, { lastSeenAt: at(-1), yes: 0, no: 0 });
    } finally {
      ctx.clock.set(NOW);
    }
    assert.deepEqual((await usageOf(project, name)).environments.development, { lastSeenAt: at(-1), yes: 3, no: 3 });
  });

  test("the flag's lastSeenAt is the latest over its environments", async () => {
    const name = await createFlag(ctx, project);
    await report(development, { [name]: { yes: 1, no: 0 } }, at(-20));
    await report(production, { [name]: { yes: 0, no: 6 } }, at(-5));
    assert.deepEqual(await usageOf(project, name), {
      lastSeenAt: at(-5),
      environments: {
        development: { lastSeenAt: at(-20), yes: 1, no: 0 },
        production: { lastSeenAt: at(-5), yes: 0, no: 6 },
      },
    });

    await report(development, { [name]: { yes: 1, no: 0 } }, at(-2));
    assert.deepEqual(await usageOf(project, name), {
      lastSeenAt: at(-2),
      environments: {
        development: { lastSeenAt: at(-2), yes: 2, no: 0 },
        production: { lastSeenAt: at(-5), yes: 0, no: 6 },
      },
    });
  });

  test('sortBy=lastSeenAt orders by it, never-seen flags last in both orders', async () => {
    const sortProject = await createProject(ctx, { prefix: 'usage' });
    const token = (await createToken('client', 'development', [sortProject])).secret;
    const suffix = uniqueName('x').slice(2);
    const flag = (key: string) => `${key}-${suffix}`;
    ctx.clock.set(at(-24 * 60));
    for (const key of ['amber', 'birch', 'cedar', 'dahlia', 'elm']) await createFlag(ctx, sortProject, { name: flag(key) });
    ctx.clock.set(NOW);
    await report(token, { [flag('cedar')]: { yes: 1, no: 0 } }, at(-50));
    await report(token, { [flag('amber')]: { yes: 1, no: 0 } }, at(-30));
    await report(token, { [flag('elm')]: { yes: 1, no: 0 } }, at(-10));

    const order = async (sortOrder: string) =>
      (await search(`project=IS:${sortProject}&sortBy=lastSeenAt&sortOrder=${sortOrder}`)).features.map((f) =>
        f.name.slice(0, -suffix.length - 1),
      );
    assert.deepEqual(await order('asc'), ['cedar', 'amber', 'elm', 'birch', 'dahlia']);
    assert.deepEqual(await order('desc'), ['elm', 'amber', 'cedar', 'birch', 'dahlia']);

    // A later report moves a flag along.
    await report(token, { [flag('cedar')]: { yes: 1, no: 0 } }, at(-1));
    assert.deepEqual(await order('desc'), ['cedar', 'elm', 'amber', 'birch', 'dahlia']);
  });
});

describe('what a report may contain', () => {
  test("unknown flag names and flags outside the token's projects are ignored", async () => {
    const inside = await createFlag(ctx, project);
    const foreign = await createFlag(ctx, outside);
    await report(
      development,
      {
        [inside]: { yes: 1, no: 1 },
        [foreign]: { yes: 5, no: 5 },
        [uniqueName('never-created')]: { yes: 2, no: 2 },
      },
      at(-4),
    );

    assert.deepEqual((await usageOf(project, inside)).environments.development, { lastSeenAt: at(-4), yes: 1, no: 1 });
    assert.deepEqual(await usageOf(outside, foreign), { lastSeenAt: null, environments: { development: unseen, production: unseen } });

    // A token for every project does count it: the flag was left out because of the token's scope.
    const everyProject = (await createToken('client', 'development', ['*'])).secret;
    await report(everyProject, { [foreign]: { yes: 7, no: 0 } }, at(-2));
    assert.deepEqual((await usageOf(outside, foreign)).environments.development, { lastSeenAt: at(-2), yes: 7, no: 0 });
  });

  test('extra fields Unleash SDKs send are accepted', async () => {
    const name = await createFlag(ctx, project);
    const response = await send(development, {
      appName: 'node-sdk-app',
      instanceId: 'instance-1',
      environment: 'whatever-the-sdk-thinks',
      platformName: 'node',
      platformVersion: '20.11.0',
      yggdrasilVersion: null,
      specVersion: '5.1.9',
      connectionId: '1d9f9c1e-6a0a-4a0e-9f5c-2f6f0c1d2e3f',
      bucket: {
        start: at(-10),
        stop: at(-1),
        toggles: { [name]: { yes: 2, no: 1, variants: { red: 1, blue: 1 } } },
      },
    });
    expectStatus(response, 202);
    assert.deepEqual((await usageOf(project, name)).environments.development, { lastSeenAt: at(-1), yes: 2, no: 1 });
  });

  test('a bucket that ends a few minutes in the future (a drifting clock) is taken as ending now', async () => {
    const name = await createFlag(ctx, project);
    await report(development, { [name]: { yes: 1, no: 0 } }, at(4));
    assert.deepEqual(await usageOf(project, name), {
      lastSeenAt: NOW,
      environments: { development: { lastSeenAt: NOW, yes: 1, no: 0 }, production: unseen },
    });
  });

  test('the Bearer prefix is accepted', async () => {
    const name = await createFlag(ctx, project);
    const response = await send(`Bearer ${development}`, {
      appName: 'app',
      bucket: { start: at(-10), stop: at(-1), toggles: { [name]: { yes: 1, no: 0 } } },
    });
    expectStatus(response, 202);
    assert.equal((await usageOf(project, name)).environments.development!.yes, 1);
  });
});

describe('bad reports are a 400 and record nothing', () => {
  let flagName: string;
  before(async () => {
    flagName = await createFlag(ctx, project);
  });

  const valid = () => ({ appName: 'app', bucket: { start: at(-10), stop: at(-1), toggles: { [flagName]: { yes: 1, no: 1 } } } });
  const cases: Array<[string, () => unknown, () => string]> = [
    ['a missing appName', () => ({ bucket: valid().bucket }), () => '/body/appName'],
    ['an empty appName', () => ({ ...valid(), appName: '' }), () => '/body/appName'],
    ['a missing bucket', () => ({ appName: 'app' }), () => '/body/bucket'],
    [
      'a negative yes',
      () => ({ ...valid(), bucket: { ...valid().bucket, toggles: { [flagName]: { yes: 1, no: 1 }, other: { yes: -1, no: 0 } } } }),
      () => '/body/bucket/toggles/other/yes',
    ],
    [
      'a fractional no',
      () => ({ ...valid(), bucket: { ...valid().bucket, toggles: { [flagName]: { yes: 1, no: 0.5 } } } }),
      () => `/body/bucket/toggles/${flagName}/no`,
    ],
    ['a start that is not a date', () => ({ ...valid(), bucket: { ...valid().bucket, start: 'yesterday' } }), () => '/body/bucket/start'],
    [
      'a stop that is not a date',
      () => ({ ...valid(), bucket: { ...valid().bucket, stop: '2026-13-45T00:00:00Z' } }),
      () => '/body/bucket/stop',
    ],
    [
      'a stop before the start',
      () => ({ ...valid(), bucket: { ...valid().bucket, start: at(-1), stop: at(-10) } }),
      () => '/body/bucket/stop',
    ],
  ];
  for (const [label, body, path] of cases) {
    test(`refuses ${label}`, async () => {
      const error = expectError(await send(development, body()), 400, 'BadDataError');
      assert.equal(error.details[0]!.path, path());
      assert.deepEqual(await usageOf(project, flagName), { lastSeenAt: null, environments: { development: unseen, production: unseen } });
    });
  }

  test('refuses malformed JSON', async () => {
    const response = await sendMalformedJson(ctx.as(development), 'POST', '/api/client/metrics', '{"appName": ');
    expectError(response, 400, 'BadDataError');
  });
});

describe('only client tokens may report', () => {
  let flagName: string;
  before(async () => {
    flagName = await createFlag(ctx, project);
  });
  const body = () => ({ appName: 'app', bucket: { start: at(-10), stop: at(-1), toggles: { [flagName]: { yes: 1, no: 0 } } } });
  const expectUnrecorded = async () =>
    assert.deepEqual(await usageOf(project, flagName), { lastSeenAt: null, environments: { development: unseen, production: unseen } });

  test('no token: 401 AuthenticationRequired', async () => {
    expectError(await send(undefined, body()), 401, 'AuthenticationRequired');
    await expectUnrecorded();
  });

  test('no token is a 401 even with a bad body: authentication comes first', async () => {
    expectError(await send(undefined, { appName: '' }), 401, 'AuthenticationRequired');
  });

  test('an unknown token: 401 UnauthorizedError', async () => {
    expectError(await send(`${project}:development.not-a-real-secret-0123456789`, body()), 401, 'UnauthorizedError');
    await expectUnrecorded();
  });

  test('a deleted client token: 401 UnauthorizedError', async () => {
    const token = await createToken('client', 'development', [project]);
    expectStatus(await ctx.admin.delete(`/api/admin/api-tokens/${token.id}`), 200);
    expectError(await send(token.secret, body()), 401, 'UnauthorizedError');
    await expectUnrecorded();
  });

  // A known credential that may not do this is a 403 PermissionError (DECISIONS.md, Common rules).
  test('an admin token is refused', async () => {
    expectError(await send(ADMIN_TOKEN, body()), 403, 'PermissionError');
    await expectUnrecorded();
  });

  test('a frontend token is refused', async () => {
    expectError(await send(frontend, body()), 403, 'PermissionError');
    await expectUnrecorded();
  });

  test('a login session is not a credential on the client API', async () => {
    const admin = await createUserSession(ctx, 'Admin');
    const response = await ctx.withCookie(admin.cookie).post('/api/client/metrics', body());
    expectError(response, 401, 'AuthenticationRequired');
    await expectUnrecorded();
  });
});
