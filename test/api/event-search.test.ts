import { READER_EVENT_TYPES } from '../../src/domain/events/event-log.js';
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectError, expectStatus, getOk } from '../helpers/assertions.js';
import { createUserSession, uniqueName, sendMalformedJson } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

interface Event {
  id: number;
  createdAt: string;
  type: string;
  createdByUserId: number | null;
  project: string | null;
  featureName: string | null;
  label: string;
  summary: string;
}
interface SearchResult {
  events: Event[];
  total: number;
}

let ctx: TestApp;
let editor: { id: number; username: string; cookie: string };
/** A project whose events this file controls: times, creators and texts are known. */
let project: string;
let other: string;
const flags = { alpha: uniqueName('alpha'), beta: uniqueName('beta'), gamma: uniqueName('gamma') };

async function search(query: string): Promise<SearchResult> {
  return getOk<SearchResult>(ctx.admin, `/api/admin/search/events?${query}`);
}

const names = (result: SearchResult) => result.events.map((e) => `${e.type}:${e.featureName ?? e.project}`);

before(async () => {
  ctx = await startTestApp();
  editor = await createUserSession(ctx, 'Editor');
  project = uniqueName('search');
  other = uniqueName('other');
  const at = (instant: string) => ctx.clock.set(instant);

  at('2026-03-01T10:00:00.000Z');
  expectStatus(await ctx.admin.post('/api/admin/projects', { id: project, name: 'Search' }), 201);
  expectStatus(await ctx.admin.post('/api/admin/projects', { id: other, name: 'Other' }), 201);
  at('2026-03-02T23:59:59.999Z');
  expectStatus(
    await ctx.admin.post(`/api/admin/projects/${project}/features`, { name: flags.alpha, description: 'Rollout 50%_off for Zebra 🦓' }),
    201,
  );
  at('2026-03-03T00:00:00.000Z');
  expectStatus(
    await ctx
      .withCookie(editor.cookie)
      .post(`/api/admin/projects/${project}/features`, { name: flags.beta, description: 'Rollout 500 users' }),
    201,
  );
  at('2026-03-04T12:00:00.000Z');
  expectStatus(await ctx.admin.post(`/api/admin/projects/${other}/features`, { name: flags.gamma, description: 'zebra crossing' }), 201);
  expectStatus(
    await ctx.withCookie(editor.cookie).post(`/api/admin/projects/${project}/features/${flags.beta}/environments/development/on`),
    200,
  );
});
after(() => ctx.close());

describe('event search filters', () => {
  test('project IS lists that project newest first, with the total', async () => {
    const result = await search(`project=IS:${project}`);
    assert.deepEqual(names(result), [
      `feature-environment-enabled:${flags.beta}`,
      `feature-strategy-add:${flags.beta}`,
      `feature-created:${flags.beta}`,
      `feature-created:${flags.alpha}`,
      `project-created:${project}`,
    ]);
    assert.equal(result.total, 5);
    assert.ok(result.events.every((e) => typeof e.label === 'string' && e.summary.includes('**')));
  });

  test('project IS_ANY_OF spans several projects', async () => {
    const result = await search(`project=IS_ANY_OF:${project},${other}&type=IS:feature-created`);
    assert.deepEqual(names(result), [`feature-created:${flags.gamma}`, `feature-created:${flags.beta}`, `feature-created:${flags.alpha}`]);
    assert.equal(result.total, 3);
  });

  test('feature IS and IS_ANY_OF', async () => {
    assert.deepEqual(names(await search(`feature=IS:${flags.alpha}`)), [`feature-created:${flags.alpha}`]);
    const both = await search(`feature=IS_ANY_OF:${flags.alpha}, ${flags.gamma}`);
    assert.deepEqual(names(both), [`feature-created:${flags.gamma}`, `feature-created:${flags.alpha}`]);
    assert.equal(both.total, 2);
  });

  test('type IS and IS_ANY_OF', async () => {
    const result = await search(`project=IS:${project}&type=IS_ANY_OF:feature-strategy-add,project-created`);
    assert.deepEqual(names(result), [`feature-strategy-add:${flags.beta}`, `project-created:${project}`]);
  });

  test('createdBy matches the numeric user id', async () => {
    const result = await search(`createdBy=IS:${editor.id}`);
    assert.deepEqual(
      names(result).filter((n) => !n.startsWith('user-')),
      [`feature-environment-enabled:${flags.beta}`, `feature-strategy-add:${flags.beta}`, `feature-created:${flags.beta}`],
    );
    assert.ok(result.events.every((e) => e.createdByUserId === editor.id));
  });

  test('from and to are whole UTC days, both inclusive', async () => {
    const scoped = `project=IS:${project}&type=IS:feature-created`;
    assert.deepEqual(names(await search(`${scoped}&to=IS:2026-03-02`)), [`feature-created:${flags.alpha}`]);
    assert.deepEqual(names(await search(`${scoped}&from=IS:2026-03-03`)), [`feature-created:${flags.beta}`]);
    assert.deepEqual(names(await search(`${scoped}&from=IS:2026-03-02&to=IS:2026-03-02`)), [`feature-created:${flags.alpha}`]);
    assert.deepEqual(names(await search(`${scoped}&from=IS:2026-03-05`)), []);
  });

  test('query is a case-insensitive substring of data, preData and tags', async () => {
    const result = await search('query=ZEBRA');
    assert.deepEqual(names(result), [`feature-created:${flags.gamma}`, `feature-created:${flags.alpha}`]);
    assert.equal(result.total, 2);
    assert.deepEqual(names(await search(`query=${encodeURIComponent('🦓')}`)), [`feature-created:${flags.alpha}`]);
  });

  test('% and _ in query are literal characters', async () => {
    assert.deepEqual(names(await search(`query=${encodeURIComponent('50%_off')}`)), [`feature-created:${flags.alpha}`]);
    // As wildcards, "50%" would also match "500 users".
    assert.deepEqual(names(await search(`query=${encodeURIComponent('rollout 50%')}`)), [`feature-created:${flags.alpha}`]);
    assert.deepEqual(names(await search(`query=${encodeURIComponent('rollout_5')}`)), []);
  });

  test('SQL-looking text is searched as text; a query of 100 characters is searched, a longer one is a 400', async () => {
    assert.deepEqual(names(await search(`query=${encodeURIComponent("'; DROP TABLE events; --")}`)), []);
    assert.deepEqual(await search(`query=${'x'.repeat(100)}`), { events: [], total: 0 });
    // A long pattern of what would be wildcards costs its length times every event it reads: bounded.
    for (const query of ['x'.repeat(101), '%_'.repeat(3000)]) {
      const error = expectError(await ctx.admin.get(`/api/admin/search/events?query=${encodeURIComponent(query)}`), 400, 'BadDataError');
      assert.deepEqual(error.details, [{ path: '/query/query', message: `a search term is at most 100 characters (got ${query.length})` }]);
    }
    const deprecated = expectError(await ctx.admin.post('/api/admin/events/search', { query: '%_'.repeat(3000) }), 400, 'BadDataError');
    assert.equal(deprecated.details[0]!.path, '/body/query');
    assert.ok((await search(`project=IS:${project}`)).total > 0, 'the log is still there');
  });

  test('filters combine with AND', async () => {
    const result = await search(`project=IS:${project}&query=rollout&createdBy=IS:${editor.id}&from=IS:2026-03-03&type=IS:feature-created`);
    assert.deepEqual(names(result), [`feature-created:${flags.beta}`]);
    assert.equal(result.total, 1);
  });

  test('the total of a single type, creator or project filter is exact (from the counters)', async () => {
    const countWhere = async (column: 'type' | 'created_by_user_id' | 'project', values: Array<string | number>) => {
      const row = await ctx.db
        .selectFrom('events')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where(column, 'in', values as string[])
        .executeTakeFirstOrThrow();
      return Number(row.n);
    };
    assert.equal((await search('type=IS:feature-created')).total, await countWhere('type', ['feature-created']));
    assert.equal(
      (await search('type=IS_ANY_OF:feature-created,project-created')).total,
      await countWhere('type', ['feature-created', 'project-created']),
    );
    assert.equal((await search(`createdBy=IS:${editor.id}`)).total, await countWhere('created_by_user_id', [editor.id]));
    assert.equal((await search(`project=IS_ANY_OF:${project},${other}`)).total, await countWhere('project', [project, other]));
    assert.equal(
      (await search('')).total,
      Number(
        (
          await ctx.db
            .selectFrom('events')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      ),
    );
  });

  test('paging walks every match once, newest first, with a stable total', async () => {
    const all = await search(`project=IS:${project}`);
    const seen: Event[] = [];
    for (let offset = 0; offset < all.total; offset += 2) {
      const page = await search(`project=IS:${project}&limit=2&offset=${offset}`);
      assert.equal(page.total, all.total);
      seen.push(...page.events);
    }
    assert.deepEqual(
      seen.map((e) => e.id),
      all.events.map((e) => e.id),
    );
    assert.deepEqual((await search(`project=IS:${project}&offset=${all.total}`)).events, []);
  });

  test('the default page is 50 events', async () => {
    const result = await search('');
    assert.equal(result.events.length, Math.min(50, result.total));
  });
});

describe('bad search input is a 400 naming the parameter', () => {
  const cases: Array<[string, string]> = [
    ['limit=abc', '/query/limit'],
    ['limit=-1', '/query/limit'],
    ['limit=0', '/query/limit'],
    ['limit=1001', '/query/limit'],
    ['limit=1.5', '/query/limit'],
    ['offset=-1', '/query/offset'],
    ['project=BOGUS:x', '/query/project'],
    ['project=IS_NOT:x', '/query/project'],
    ['feature=IS:', '/query/feature'],
    ['type=IS:a,,b', '/query/type'],
    ['type=IS:feature-exploded', '/query/type'],
    ['createdBy=IS:bob', '/query/createdBy'],
    ['from=2026-03-01', '/query/from'],
    ['from=IS:2024-13-45', '/query/from'],
    ['to=IS:2024-02-30', '/query/to'],
    ['to=IS:yesterday', '/query/to'],
    ['from=IS:2026-03-01,2026-03-02', '/query/from'],
  ];
  for (const [query, path] of cases) {
    test(query, async () => {
      const error = expectError(await ctx.admin.get(`/api/admin/search/events?${query}`), 400, 'BadDataError');
      assert.equal(error.details[0]!.path, path);
      assert.match(error.details[0]!.message, /got "/);
    });
  }

  test('a repeated parameter', async () => {
    expectError(await ctx.admin.get('/api/admin/search/events?limit=1&limit=2'), 400, 'BadDataError');
  });

  test("anyone signed in searches the events of flags and projects they can see; people's and tokens' events stay the Admins'", async () => {
    // Unleash answers event search to anyone signed in, and a flag's history page reads it.
    const viewer = await createUserSession(ctx, 'Viewer');
    const hidden = uniqueName('hidden');
    expectStatus(await ctx.admin.post('/api/admin/projects', { id: hidden, name: hidden, mode: 'private' }), 201);
    const hiddenFlag = uniqueName('hidden-flag');
    expectStatus(await ctx.admin.post(`/api/admin/projects/${hidden}/features`, { name: hiddenFlag }), 201);
    expectError(
      await ctx.as().post('/auth/simple/login', { username: 'nobody-here', password: 'wrong-password' }),
      401,
      'PasswordMismatch',
    );
    for (const cookie of [editor.cookie, viewer.cookie]) {
      const client = ctx.withCookie(cookie);
      const flagEvents = await client.get(`/api/admin/search/events?project=IS:${project}&type=IS:feature-created`);
      expectStatus(flagEvents, 200);
      assert.deepEqual(
        (flagEvents.json() as SearchResult).events.map((e) => e.featureName),
        [flags.beta, flags.alpha],
      );
      assert.equal((flagEvents.json() as SearchResult).total, 2);
      for (const url of [
        '/api/admin/search/events?type=IS:user-sign-in-refused',
        '/api/admin/search/events?type=IS:user-created',
        '/api/admin/search/events?type=IS:api-token-created',
        `/api/admin/search/events?project=IS:${hidden}`,
        `/api/admin/search/events?feature=IS:${hiddenFlag}`,
      ]) {
        const answer = await client.get(url);
        expectStatus(answer, 200);
        assert.deepEqual((answer.json() as SearchResult).events, [], url);
        assert.equal((answer.json() as SearchResult).total, 0, url);
      }
      const everything = await client.get('/api/admin/search/events?limit=1000');
      const types = new Set((everything.json() as SearchResult).events.map((event) => event.type));
      for (const type of types) assert.ok(READER_EVENT_TYPES.includes(type as never), type);
      assert.equal(JSON.stringify(everything.json()).includes(hidden), false);
      const refused = expectError(await client.get('/api/admin/events'), 403, 'PermissionError');
      assert.deepEqual(refused.permissions, ['ADMIN']);
    }
    const admin = await createUserSession(ctx, 'Admin');
    const refusals = await ctx.withCookie(admin.cookie).get('/api/admin/search/events?type=IS:user-sign-in-refused');
    assert.ok((refusals.json() as SearchResult).total >= 1);
    const hiddenForAdmin = await ctx.withCookie(admin.cookie).get(`/api/admin/search/events?feature=IS:${hiddenFlag}`);
    assert.deepEqual(
      (hiddenForAdmin.json() as SearchResult).events.map((e) => e.type),
      ['feature-created'],
    );
    expectError(await ctx.as().get('/api/admin/search/events'), 401, 'AuthenticationRequired');
  });
});

describe('the deprecated POST /api/admin/events/search', () => {
  async function deprecatedSearch(body: unknown) {
    const response = await ctx.admin.post('/api/admin/events/search', body);
    expectStatus(response, 200);
    assert.equal(response.headers.deprecation, 'true');
    return response.json() as { version: number; events: Event[]; totalEvents: number };
  }

  test('filters by exact, case-sensitive fields', async () => {
    const result = await deprecatedSearch({ project, type: 'feature-created' });
    assert.equal(result.version, 1);
    assert.deepEqual(
      result.events.map((e) => e.featureName),
      [flags.beta, flags.alpha],
    );
    assert.equal(result.totalEvents, 2);
    assert.deepEqual((await deprecatedSearch({ project: project.toUpperCase() })).events, []);
    assert.deepEqual(
      (await deprecatedSearch({ feature: flags.gamma })).events.map((e) => e.type),
      ['feature-created'],
    );
  });

  test('query also matches the type and the creator, and totalEvents counts with it', async () => {
    const byType = await deprecatedSearch({ project, query: 'strategy-add' });
    assert.deepEqual(
      byType.events.map((e) => e.type),
      ['feature-strategy-add'],
    );
    const byCreator = await deprecatedSearch({ project, query: editor.username });
    assert.deepEqual(
      byCreator.events.map((e) => e.type),
      ['feature-environment-enabled', 'feature-strategy-add', 'feature-created'],
    );
    assert.equal(byCreator.totalEvents, 3);
  });

  test('limit and offset page through the matches', async () => {
    const page = await deprecatedSearch({ project, limit: 2, offset: 1 });
    const all = await deprecatedSearch({ project });
    assert.deepEqual(
      page.events.map((e) => e.id),
      all.events.slice(1, 3).map((e) => e.id),
    );
    assert.equal(page.totalEvents, all.totalEvents);
  });

  const bad: Array<[string, unknown, string]> = [
    ['an unknown type', { type: 'feature-exploded' }, '/body/type'],
    ['limit 0', { limit: 0 }, '/body/limit'],
    ['limit 101', { limit: 101 }, '/body/limit'],
    ['a negative offset', { offset: -1 }, '/body/offset'],
    ['a string limit', { limit: '10' }, '/body/limit'],
    ['an unknown property', { since: '2026-01-01' }, '/body/since'],
  ];
  for (const [label, body, path] of bad) {
    test(`refuses ${label}`, async () => {
      const error = expectError(await ctx.admin.post('/api/admin/events/search', body), 400, 'BadDataError');
      assert.equal(error.details[0]!.path, path);
    });
  }

  test('refuses malformed JSON', async () => {
    const response = await sendMalformedJson(ctx.admin, 'POST', '/api/admin/events/search', '{"type": ');
    expectError(response, 400, 'BadDataError');
  });
});
