import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectError, expectStatus } from '../helpers/assertions.js';
import { createUserSession, uniqueName } from '../helpers/fixtures.js';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';

interface SearchEnvironment {
  name: string;
  environment: string;
  type: string;
  enabled: boolean;
  sortOrder: number;
  variantCount: number;
  hasStrategies: boolean;
  hasEnabledStrategies: boolean;
  lastSeenAt: string | null;
  yes: number;
  no: number;
}

interface SearchFeature {
  name: string;
  type: string;
  description: string | null;
  dependencyType: 'parent' | 'child' | null;
  archived: boolean;
  project: string;
  stale: boolean;
  favorite: boolean;
  impressionData: boolean;
  createdAt: string;
  archivedAt: string | null;
  lastSeenAt: string | null;
  environments: SearchEnvironment[];
  segments: string[];
  tags: Array<{ type: string; value: string }>;
  lifecycle: { stage: string; status: string | null; enteredStageAt: string } | null;
  createdBy: { id: number; name: string; imageUrl: string };
}

interface SearchResult {
  features: SearchFeature[];
  total: number;
}

/**
 * The fixed data set, built in `before` at known times ("now" is NOW):
 *
 * | flag       | project | type        | creator | created          | tags                     | segments | enabled     | other |
 * |------------|---------|-------------|---------|------------------|--------------------------|----------|-------------|-------|
 * | kiwi       | P3      | kill-switch | admin   | 02-01 09:00      |                          |          |             | never potentially stale |
 * | hazel      | P1      | release     | admin   | 03-01 09:00      |                          |          |             | potentially stale (80 days); viewer's favorite |
 * | juniper    | P2      | experiment  | admin   | 04-01 09:00      |                          |          |             | stale (so not potentially stale) |
 * | lemon      | P2      | operational | alice   | 05-10 09:00      |                          |          |             | potentially stale (10 days > 7) |
 * | apple      | P1      | release     | admin   | 05-14 09:00      | simple:alpha             | A        | development | 2 variants; pre-live; alice's favorite; seen 11:50 |
 * | banana     | P1      | experiment  | alice   | 05-15 09:00      | simple:bravo             | B        | production  | parent; live; bob's favorite; seen 10:00 |
 * | cherry     | P1      | release     | bob     | 05-16 00:00      | alpha, bravo, kind:va:lue| A, B     |             | child; disabled strategy; alice's favorite |
 * | damson     | P1      | operational | admin   | 05-17 09:00      |                          |          |             | stale |
 * | elderberry | P1      | kill-switch | alice   | 05-18 09:00      |                          |          | production  | completed (kept); impression data |
 * | fig        | P2      | permission  | admin   | 05-18 09:00      | kind:va:lue              |          | development | pre-live; bob's favorite; seen 11:30 |
 * | grape      | P2      | release     | bob     | 05-19 09:00      | simple:alpha             |          |             | archived 05-19 15:00 |
 * | iris       | P3      | experiment  | bob     | 05-19 10:00      |                          |          |             | |
 *
 * P1 has environments development (100), qa (test, 150) and production (200); P2 development and production;
 * P3 development only. PB holds 55 release flags created at the same instant, for paging.
 */
const NOW = '2026-05-20T12:00:00.000Z';
const suffix = uniqueName('s').slice(2);
const KEYS = ['apple', 'banana', 'cherry', 'damson', 'elderberry', 'fig', 'grape', 'hazel', 'iris', 'juniper', 'kiwi', 'lemon'] as const;
type Key = (typeof KEYS)[number];
const flag = Object.fromEntries(KEYS.map((key) => [key, `${key}-${suffix}`])) as Record<Key, string>;
const keyOf = (name: string) => (name.endsWith(`-${suffix}`) ? name.slice(0, -suffix.length - 1) : name);

const P1 = `search1-${suffix}`;
const P2 = `search2-${suffix}`;
const P3 = `search3-${suffix}`;
const PB = `searchbulk-${suffix}`;
const QA = `qa-${suffix}`;
const SEGMENT_A = `north-${suffix}`;
const SEGMENT_B = `south-${suffix}`;
/** Bulk flags do not carry `suffix`, so `query=<suffix>` selects exactly the twelve flags above. */
const bulkSuffix = uniqueName('b').slice(2);
const bulkName = (index: number) => `bulk-${bulkSuffix}-${String(index).padStart(3, '0')}`;
const SCOPE = `project=IS_ANY_OF:${P1},${P2},${P3}`;

/** Every active flag of P1-P3 in the default order: createdAt ascending, name breaking the tie. */
const ALL: Key[] = ['kiwi', 'hazel', 'juniper', 'lemon', 'apple', 'banana', 'cherry', 'damson', 'elderberry', 'fig', 'iris'];
/** The active flags of P1 in the default order. */
const P1_FLAGS: Key[] = ['hazel', 'apple', 'banana', 'cherry', 'damson', 'elderberry'];

let ctx: TestApp;
let alice: { id: number; username: string; cookie: string };
let bob: { id: number; username: string; cookie: string };
let viewer: { id: number; username: string; cookie: string };

async function search(query: string, client: Client = ctx.admin): Promise<SearchResult> {
  const response = await client.get(`/api/admin/search/features?${query}`);
  expectStatus(response, 200);
  return response.json() as SearchResult;
}

const keys = (result: SearchResult) => result.features.map((feature) => keyOf(feature.name));

/** Asserts the exact flags, in order, and that `total` counts them. */
async function expectFlags(query: string, expected: Key[], client?: Client): Promise<SearchResult> {
  const result = await search(query, client);
  assert.deepEqual(keys(result), expected, `search ?${query}`);
  assert.equal(result.total, expected.length, `total of ?${query}`);
  return result;
}

function featureIn(result: SearchResult, key: Key): SearchFeature {
  const feature = result.features.find((f) => f.name === flag[key]);
  assert.ok(feature, `${key} must be in the result`);
  return feature;
}

before(async () => {
  ctx = await startTestApp();
  const at = (instant: string) => ctx.clock.set(instant);
  at(NOW);
  alice = await createUserSession(ctx, 'Editor');
  bob = await createUserSession(ctx, 'Editor');
  viewer = await createUserSession(ctx, 'Viewer');
  const clients = { admin: ctx.admin, alice: ctx.withCookie(alice.cookie), bob: ctx.withCookie(bob.cookie) };

  expectStatus(await ctx.admin.post('/api/admin/environments', { name: QA, type: 'test', sortOrder: 150 }), 201);
  for (const [id, environments] of [
    [P1, ['development', QA, 'production']],
    [P2, ['development', 'production']],
    [P3, ['development']],
    [PB, ['development', 'production']],
  ] as const) {
    expectStatus(await ctx.admin.post('/api/admin/projects', { id, name: id, environments }), 201);
  }
  expectStatus(await ctx.admin.post('/api/admin/tag-types', { name: 'kind' }), 201);
  const segmentIds: number[] = [];
  for (const name of [SEGMENT_A, SEGMENT_B]) {
    const created = await ctx.admin.post('/api/admin/segments', { name, constraints: [] });
    expectStatus(created, 201);
    segmentIds.push((created.json() as { id: number }).id);
  }
  const [segmentA, segmentB] = segmentIds as [number, number];

  const projectOf: Partial<Record<Key, string>> = {};
  const create = async (
    key: Key,
    project: string,
    type: string,
    creator: keyof typeof clients,
    createdAt: string,
    extra: Record<string, unknown> = {},
  ) => {
    at(createdAt);
    projectOf[key] = project;
    const response = await clients[creator].post(`/api/admin/projects/${project}/features`, { name: flag[key], type, ...extra });
    expectStatus(response, 201);
  };
  const featurePath = (key: Key) => `/api/admin/projects/${projectOf[key]}/features/${flag[key]}`;
  const tag = async (key: Key, type: string, value: string) =>
    expectStatus(await ctx.admin.post(`/api/admin/features/${flag[key]}/tags`, { type, value }), 201);
  const addStrategy = async (key: Key, environment: string, body: Record<string, unknown>) =>
    expectStatus(await ctx.admin.post(`${featurePath(key)}/environments/${environment}/strategies`, body), 200);
  const enable = async (key: Key, environment: string, instant: string) => {
    at(instant);
    expectStatus(await ctx.admin.post(`${featurePath(key)}/environments/${environment}/on`), 200);
  };

  await create('kiwi', P3, 'kill-switch', 'admin', '2026-02-01T09:00:00.000Z', { description: 'Emergency brake' });
  // Created 80 days before NOW: a release flag is expected to live 40 days.
  await create('hazel', P1, 'release', 'admin', '2026-03-01T09:00:00.000Z', { description: 'Legacy onboarding' });
  await create('juniper', P2, 'experiment', 'admin', '2026-04-01T09:00:00.000Z', { description: 'Old pricing test' });
  at('2026-05-19T08:00:00.000Z');
  expectStatus(await ctx.admin.post(`/api/admin/projects/${P2}/stale`, { features: [flag.juniper], stale: true }), 202);
  await create('lemon', P2, 'operational', 'alice', '2026-05-10T09:00:00.000Z', { description: 'Ops toggle for queues' });

  await create('apple', P1, 'release', 'admin', '2026-05-14T09:00:00.000Z', { description: 'Checkout redesign, 50%_off campaign' });
  await tag('apple', 'simple', 'alpha');
  await addStrategy('apple', 'development', {
    name: 'flexibleRollout',
    parameters: { rollout: '50', stickiness: 'default', groupId: flag.apple },
    segments: [segmentA],
  });
  expectStatus(
    await ctx.admin.put(`${featurePath('apple')}/environments/development/variants`, [
      { name: 'on', weight: 500, weightType: 'variable' },
      { name: 'off', weight: 500, weightType: 'variable' },
    ]),
    200,
  );
  await enable('apple', 'development', '2026-05-14T10:00:00.000Z');

  await create('banana', P1, 'experiment', 'alice', '2026-05-15T09:00:00.000Z', { description: 'Search ranking experiment' });
  await tag('banana', 'simple', 'bravo');
  await addStrategy('banana', 'production', { name: 'default', segments: [segmentB] });
  await enable('banana', 'production', '2026-05-15T10:00:00.000Z');

  await create('cherry', P1, 'release', 'bob', '2026-05-16T00:00:00.000Z');
  await tag('cherry', 'simple', 'alpha');
  await tag('cherry', 'simple', 'bravo');
  await tag('cherry', 'kind', 'va:lue');
  await addStrategy('cherry', 'development', { name: 'default', disabled: true, segments: [segmentA, segmentB] });
  at('2026-05-16T01:00:00.000Z');
  expectStatus(await ctx.admin.post(`${featurePath('cherry')}/dependencies`, { feature: flag.banana }), 200);

  await create('damson', P1, 'operational', 'admin', '2026-05-17T09:00:00.000Z', {
    description: 'Rollout to 50 percent of hot-fix users',
  });
  at('2026-05-17T10:00:00.000Z');
  expectStatus(await ctx.admin.post(`/api/admin/projects/${P1}/stale`, { features: [flag.damson], stale: true }), 202);

  await create('elderberry', P1, 'kill-switch', 'alice', '2026-05-18T09:00:00.000Z', {
    description: 'Hot_fix kill switch',
    impressionData: true,
  });
  await enable('elderberry', 'production', '2026-05-18T10:00:00.000Z');
  at('2026-05-18T11:00:00.000Z');
  expectStatus(await ctx.admin.post(`${featurePath('elderberry')}/lifecycle/complete`, { status: 'kept' }), 200);

  // Same instant as elderberry: the name breaks the tie.
  await create('fig', P2, 'permission', 'admin', '2026-05-18T09:00:00.000Z', { description: 'Admin permission' });
  await tag('fig', 'kind', 'va:lue');
  await enable('fig', 'development', '2026-05-18T12:00:00.000Z');

  await create('grape', P2, 'release', 'bob', '2026-05-19T09:00:00.000Z', { description: 'Grape archived' });
  await tag('grape', 'simple', 'alpha');
  at('2026-05-19T15:00:00.000Z');
  expectStatus(await ctx.admin.delete(featurePath('grape')), 202);

  await create('iris', P3, 'experiment', 'bob', '2026-05-19T10:00:00.000Z', { description: 'Iris in the third project' });

  at('2026-05-19T12:00:00.000Z');
  for (let index = 0; index < 55; index++) {
    expectStatus(await ctx.admin.post(`/api/admin/projects/${PB}/features`, { name: bulkName(index) }), 201);
  }

  at(NOW);
  for (const [client, key] of [
    [clients.alice, 'apple'],
    [clients.alice, 'cherry'],
    [clients.bob, 'banana'],
    [clients.bob, 'fig'],
    [ctx.withCookie(viewer.cookie), 'hazel'],
  ] as const) {
    expectStatus(await client.post(`${featurePath(key)}/favorites`), 200);
  }

  // Usage reported by SDKs: apple and fig in development, banana in production (two hours ago: not in the last hour).
  const tokenFor = async (environment: string, projects: string[]) => {
    const created = await ctx.admin.post('/api/admin/api-tokens', { tokenName: uniqueName('sdk'), type: 'client', environment, projects });
    expectStatus(created, 201);
    return (created.json() as { secret: string }).secret;
  };
  const development = await tokenFor('development', [P1, P2]);
  const production = await tokenFor('production', [P1]);
  const report = async (token: string, name: string, start: string, stop: string, yes: number, no: number) =>
    expectStatus(
      await ctx
        .as(token)
        .post('/api/client/metrics', { appName: 'search-test', bucket: { start, stop, toggles: { [name]: { yes, no } } } }),
      202,
    );
  await report(development, flag.apple, '2026-05-20T11:40:00.000Z', '2026-05-20T11:50:00.000Z', 4, 1);
  await report(development, flag.fig, '2026-05-20T11:20:00.000Z', '2026-05-20T11:30:00.000Z', 2, 2);
  await report(production, flag.banana, '2026-05-20T09:50:00.000Z', '2026-05-20T10:00:00.000Z', 7, 0);
});
after(() => ctx.close());

describe('query', () => {
  test('matches descriptions case-insensitively', async () => {
    await expectFlags(`${SCOPE}&query=CHECKOUT`, ['apple']);
    await expectFlags(`${SCOPE}&query=ranking`, ['banana']);
  });

  test('matches names case-insensitively', async () => {
    await expectFlags(`${SCOPE}&query=BANANA`, ['banana']);
    await expectFlags(`${SCOPE}&query=elderB`, ['elderberry']);
  });

  test('matches tag values, colons included', async () => {
    await expectFlags(`${SCOPE}&query=bravo`, ['banana', 'cherry']);
    await expectFlags(`${SCOPE}&query=${encodeURIComponent('VA:LUE')}`, ['cherry', 'fig']);
  });

  test('comma-separated terms match any of them', async () => {
    await expectFlags(`${SCOPE}&query=${encodeURIComponent('checkout, iris')}`, ['apple', 'iris']);
    await expectFlags(`${SCOPE}&query=${encodeURIComponent('bravo,ops toggle,nothing-like-this')}`, ['lemon', 'banana', 'cherry']);
  });

  test('% and _ are literal characters', async () => {
    // As wildcards, "50%" would also match damson's "50 percent" and "hot_fix" its "hot-fix".
    await expectFlags(`${SCOPE}&query=${encodeURIComponent('50%')}`, ['apple']);
    await expectFlags(`${SCOPE}&query=${encodeURIComponent('hot_fix')}`, ['elderberry']);
    await expectFlags(`${SCOPE}&query=${encodeURIComponent('%')}`, ['apple']);
    await expectFlags(`${SCOPE}&query=${encodeURIComponent('_')}`, ['apple', 'elderberry']);
  });

  test('an archived flag matches only when archived flags are asked for', async () => {
    await expectFlags(`${SCOPE}&query=grape`, []);
    await expectFlags(`${SCOPE}&query=grape&archived=IS:true`, ['grape']);
  });
});

describe('project filter', () => {
  test('IS', async () => {
    await expectFlags(`project=IS:${P1}`, P1_FLAGS);
  });

  test('IS_ANY_OF', async () => {
    await expectFlags(`project=IS_ANY_OF:${P2}, ${P3}`, ['kiwi', 'juniper', 'lemon', 'fig', 'iris']);
  });

  test('IS_NOT', async () => {
    await expectFlags(`project=IS_NOT:${P1}&query=${suffix}`, ['kiwi', 'juniper', 'lemon', 'fig', 'iris']);
  });

  test('IS_NONE_OF', async () => {
    await expectFlags(`project=IS_NONE_OF:${P1},${P2}&query=${suffix}`, ['kiwi', 'iris']);
  });
});

describe('state filter', () => {
  test('IS:stale', async () => {
    await expectFlags(`${SCOPE}&state=IS:stale`, ['juniper', 'damson']);
  });

  test('IS:active is every flag not marked stale', async () => {
    await expectFlags(`${SCOPE}&state=IS:active`, ['kiwi', 'hazel', 'lemon', 'apple', 'banana', 'cherry', 'elderberry', 'fig', 'iris']);
  });

  test('IS:potentially-stale: past the expected lifetime of its type and not marked stale', async () => {
    // hazel: release, 80 days; lemon: operational, 10 days. juniper is overdue but already stale; kiwi is a kill switch.
    await expectFlags(`${SCOPE}&state=IS:potentially-stale`, ['hazel', 'lemon']);
  });

  test('IS_ANY_OF:stale,potentially-stale', async () => {
    await expectFlags(`${SCOPE}&state=IS_ANY_OF:stale,potentially-stale`, ['hazel', 'juniper', 'lemon', 'damson']);
  });

  test('IS_NOT:potentially-stale', async () => {
    await expectFlags(`${SCOPE}&state=IS_NOT:potentially-stale`, [
      'kiwi',
      'juniper',
      'apple',
      'banana',
      'cherry',
      'damson',
      'elderberry',
      'fig',
      'iris',
    ]);
  });

  test('IS_NONE_OF:stale,potentially-stale', async () => {
    await expectFlags(`${SCOPE}&state=IS_NONE_OF:stale,potentially-stale`, [
      'kiwi',
      'apple',
      'banana',
      'cherry',
      'elderberry',
      'fig',
      'iris',
    ]);
  });

  test('potentially-stale is measured from the server clock, 40 days for a release flag', async () => {
    try {
      // Exactly 40 days after hazel was created it is not yet overdue; a millisecond later it is.
      ctx.clock.set('2026-04-10T09:00:00.000Z');
      await expectFlags(`project=IS:${P1}&state=IS:potentially-stale`, []);
      ctx.clock.set('2026-04-10T09:00:00.001Z');
      await expectFlags(`project=IS:${P1}&state=IS:potentially-stale`, ['hazel']);
    } finally {
      ctx.clock.set(NOW);
    }
  });
});

describe('type filter', () => {
  test('IS', async () => {
    await expectFlags(`${SCOPE}&type=IS:release`, ['hazel', 'apple', 'cherry']);
  });

  test('IS_ANY_OF', async () => {
    await expectFlags(`${SCOPE}&type=IS_ANY_OF:experiment,kill-switch`, ['kiwi', 'juniper', 'banana', 'elderberry', 'iris']);
  });

  test('IS_NOT', async () => {
    await expectFlags(`${SCOPE}&type=IS_NOT:release`, ['kiwi', 'juniper', 'lemon', 'banana', 'damson', 'elderberry', 'fig', 'iris']);
  });

  test('IS_NONE_OF', async () => {
    await expectFlags(`${SCOPE}&type=IS_NONE_OF:release,experiment`, ['kiwi', 'lemon', 'damson', 'elderberry', 'fig']);
  });
});

describe('createdBy filter (user id)', () => {
  test('IS a user', async () => {
    await expectFlags(`${SCOPE}&createdBy=IS:${alice.id}`, ['lemon', 'banana', 'elderberry']);
  });

  test('IS_ANY_OF two users', async () => {
    await expectFlags(`${SCOPE}&createdBy=IS_ANY_OF:${alice.id},${bob.id}`, ['lemon', 'banana', 'cherry', 'elderberry', 'iris']);
  });

  test('IS the admin token identity (-42)', async () => {
    await expectFlags(`${SCOPE}&createdBy=IS:-42`, ['kiwi', 'hazel', 'juniper', 'apple', 'damson', 'fig']);
  });

  test('IS_NOT and IS_NONE_OF', async () => {
    await expectFlags(`${SCOPE}&createdBy=IS_NOT:-42`, ['lemon', 'banana', 'cherry', 'elderberry', 'iris']);
    await expectFlags(`${SCOPE}&createdBy=IS_NONE_OF:-42,${bob.id}`, ['lemon', 'banana', 'elderberry']);
  });
});

// P1's flags carry {alpha} (apple), {bravo} (banana), {alpha, bravo} (cherry) and nothing (hazel, damson, elderberry);
// its segments are the same pattern: {A} apple, {B} banana, {A, B} cherry.
const LIST_MATRIX: Array<[string, Key[], Key[]]> = [
  // operator, expected for values "a,b", expected for value "a"
  ['INCLUDE', ['apple', 'banana', 'cherry'], ['apple', 'cherry']],
  ['INCLUDE_ANY_OF', ['apple', 'banana', 'cherry'], ['apple', 'cherry']],
  ['INCLUDE_ALL_OF', ['cherry'], ['apple', 'cherry']],
  ['DO_NOT_INCLUDE', ['hazel', 'damson', 'elderberry'], ['hazel', 'banana', 'damson', 'elderberry']],
  ['EXCLUDE_IF_ANY_OF', ['hazel', 'damson', 'elderberry'], ['hazel', 'banana', 'damson', 'elderberry']],
  ['EXCLUDE_ALL', ['hazel', 'apple', 'banana', 'damson', 'elderberry'], ['hazel', 'banana', 'damson', 'elderberry']],
];

describe('tag filter', () => {
  for (const [operator, both, alphaOnly] of LIST_MATRIX) {
    test(`${operator} with two tags and with one`, async () => {
      await expectFlags(`project=IS:${P1}&tag=${operator}:simple:alpha,simple:bravo`, both);
      await expectFlags(`project=IS:${P1}&tag=${operator}:simple:alpha`, alphaOnly);
    });
  }

  test('values are trimmed after the comma', async () => {
    await expectFlags(`project=IS:${P1}&tag=${encodeURIComponent('INCLUDE_ALL_OF:simple:alpha, simple:bravo')}`, ['cherry']);
  });

  test('a tag is its type and its value', async () => {
    await expectFlags(`${SCOPE}&tag=INCLUDE:kind:alpha`, []);
    await expectFlags(`${SCOPE}&tag=INCLUDE:simple:alpha`, ['apple', 'cherry']);
  });

  test('a value containing a colon is split at the first colon', async () => {
    await expectFlags(`${SCOPE}&tag=INCLUDE:kind:va:lue`, ['cherry', 'fig']);
    await expectFlags(`${SCOPE}&tag=INCLUDE:kind:va`, []);
    await expectFlags(`project=IS:${P1}&tag=DO_NOT_INCLUDE:kind:va:lue`, ['hazel', 'apple', 'banana', 'damson', 'elderberry']);
  });
});

describe('segment filter', () => {
  for (const [operator, both, aOnly] of LIST_MATRIX) {
    test(`${operator} with two segments and with one`, async () => {
      await expectFlags(`project=IS:${P1}&segment=${operator}:${SEGMENT_A},${SEGMENT_B}`, both);
      await expectFlags(`project=IS:${P1}&segment=${operator}:${SEGMENT_A}`, aOnly);
    });
  }

  test('an unknown segment name matches no flag', async () => {
    await expectFlags(`${SCOPE}&segment=INCLUDE:no-such-segment-${suffix}`, []);
    await expectFlags(`project=IS:${P1}&segment=DO_NOT_INCLUDE:no-such-segment-${suffix}`, P1_FLAGS);
  });
});

describe('status filter', () => {
  test('one entry', async () => {
    await expectFlags(`${SCOPE}&status=production:enabled`, ['banana', 'elderberry']);
    await expectFlags(`${SCOPE}&status=development:enabled`, ['apple', 'fig']);
  });

  test('two entries are OR-ed, repeated or comma-separated', async () => {
    await expectFlags(`${SCOPE}&status=production:enabled&status=development:enabled`, ['apple', 'banana', 'elderberry', 'fig']);
    await expectFlags(`${SCOPE}&status=production:enabled,development:enabled`, ['apple', 'banana', 'elderberry', 'fig']);
  });

  test('disabled: the project has the environment and the flag is off there', async () => {
    // kiwi and iris are in P3, which has no production environment.
    await expectFlags(`${SCOPE}&status=production:disabled`, ['hazel', 'juniper', 'lemon', 'apple', 'cherry', 'damson', 'fig']);
    await expectFlags(`${SCOPE}&status=${QA}:disabled`, P1_FLAGS);
    await expectFlags(`${SCOPE}&status=${QA}:enabled`, []);
  });

  test('disabled OR-ed with enabled', async () => {
    await expectFlags(`${SCOPE}&status=development:enabled&status=${QA}:disabled`, [
      'hazel',
      'apple',
      'banana',
      'cherry',
      'damson',
      'elderberry',
      'fig',
    ]);
  });
});

describe('createdAt filter', () => {
  test('IS_BEFORE a day excludes that day', async () => {
    await expectFlags(`${SCOPE}&createdAt=IS_BEFORE:2026-05-15`, ['kiwi', 'hazel', 'juniper', 'lemon', 'apple']);
    // cherry was created at 2026-05-16T00:00:00.000Z exactly.
    await expectFlags(`${SCOPE}&createdAt=IS_BEFORE:2026-05-16`, ['kiwi', 'hazel', 'juniper', 'lemon', 'apple', 'banana']);
  });

  test('IS_ON_OR_AFTER a day includes that day from midnight UTC', async () => {
    await expectFlags(`${SCOPE}&createdAt=IS_ON_OR_AFTER:2026-05-15`, ['banana', 'cherry', 'damson', 'elderberry', 'fig', 'iris']);
    await expectFlags(`${SCOPE}&createdAt=IS_ON_OR_AFTER:2026-05-16`, ['cherry', 'damson', 'elderberry', 'fig', 'iris']);
    await expectFlags(`${SCOPE}&createdAt=IS_ON_OR_AFTER:2026-05-20`, []);
  });
});

describe('lifecycle filter', () => {
  test('IS each stage', async () => {
    await expectFlags(`${SCOPE}&lifecycle=IS:initial`, ['kiwi', 'hazel', 'juniper', 'lemon', 'cherry', 'damson', 'iris']);
    await expectFlags(`${SCOPE}&lifecycle=IS:pre-live`, ['apple', 'fig']);
    await expectFlags(`${SCOPE}&lifecycle=IS:live`, ['banana']);
    await expectFlags(`${SCOPE}&lifecycle=IS:completed`, ['elderberry']);
  });

  test('IS_ANY_OF, IS_NOT and IS_NONE_OF', async () => {
    await expectFlags(`${SCOPE}&lifecycle=IS_ANY_OF:live,completed`, ['banana', 'elderberry']);
    await expectFlags(`${SCOPE}&lifecycle=IS_NOT:initial`, ['apple', 'banana', 'elderberry', 'fig']);
    await expectFlags(`${SCOPE}&lifecycle=IS_NONE_OF:initial,pre-live`, ['banana', 'elderberry']);
  });

  test('archived flags are in the archived stage', async () => {
    await expectFlags(`${SCOPE}&archived=IS:true&lifecycle=IS:archived`, ['grape']);
    await expectFlags(`${SCOPE}&archived=IS:true&lifecycle=IS:live`, []);
  });

  test('asking for the archived stage is asking for archived flags (as Unleash)', async () => {
    // Otherwise lifecycle=IS:archived could never match anything: a filter silently without effect.
    await expectFlags(`${SCOPE}&lifecycle=IS:archived`, ['grape']);
    await expectFlags(`${SCOPE}&lifecycle=IS_ANY_OF:live,archived`, ['banana', 'grape']);
  });
});

describe('favorite filter', () => {
  test('is per calling user', async () => {
    await expectFlags(`${SCOPE}&favorite=IS:true`, ['apple', 'cherry'], ctx.withCookie(alice.cookie));
    await expectFlags(`${SCOPE}&favorite=IS:true`, ['banana', 'fig'], ctx.withCookie(bob.cookie));
    await expectFlags(`${SCOPE}&favorite=IS:true`, ['hazel'], ctx.withCookie(viewer.cookie));
  });

  test('an admin token has no favorites', async () => {
    await expectFlags(`${SCOPE}&favorite=IS:true`, [], ctx.admin);
    await expectFlags(`${SCOPE}&favorite=IS:false`, ALL, ctx.admin);
  });

  test('IS:false and IS_NOT:true keep the rest', async () => {
    const rest: Key[] = ['kiwi', 'hazel', 'juniper', 'lemon', 'banana', 'damson', 'elderberry', 'fig', 'iris'];
    await expectFlags(`${SCOPE}&favorite=IS:false`, rest, ctx.withCookie(alice.cookie));
    await expectFlags(`${SCOPE}&favorite=IS_NOT:true`, rest, ctx.withCookie(alice.cookie));
  });
});

describe('archived filter', () => {
  test('archived flags are left out by default and with IS:false', async () => {
    await expectFlags(`project=IS:${P2}`, ['juniper', 'lemon', 'fig']);
    await expectFlags(`project=IS:${P2}&archived=IS:false`, ['juniper', 'lemon', 'fig']);
  });

  test('IS:true shows only archived flags', async () => {
    await expectFlags(`${SCOPE}&archived=IS:true`, ['grape']);
    await expectFlags(`${SCOPE}&archived=IS:true&tag=INCLUDE:simple:alpha`, ['grape']);
  });
});

describe('filters combine with AND', () => {
  test('project, type and tag', async () => {
    await expectFlags(`project=IS:${P1}&type=IS:release&tag=INCLUDE:simple:alpha`, ['apple', 'cherry']);
  });

  test('state, createdBy and status', async () => {
    await expectFlags(`${SCOPE}&state=IS:active&createdBy=IS:${alice.id}&status=production:enabled`, ['banana', 'elderberry']);
  });

  test('query, type and createdAt', async () => {
    await expectFlags(`${SCOPE}&query=hot&type=IS:operational`, ['damson']);
    await expectFlags(`${SCOPE}&query=hot&createdAt=IS_ON_OR_AFTER:2026-05-18`, ['elderberry']);
  });

  test('segment, lifecycle and favorite', async () => {
    await expectFlags(`${SCOPE}&segment=INCLUDE:${SEGMENT_A}&lifecycle=IS:initial`, ['cherry']);
    await expectFlags(
      `${SCOPE}&segment=INCLUDE_ANY_OF:${SEGMENT_A},${SEGMENT_B}&favorite=IS:true`,
      ['apple', 'cherry'],
      ctx.withCookie(alice.cookie),
    );
  });
});

describe('sorting', () => {
  const cases: Array<[string, string, Key[]]> = [
    ['createdAt', 'asc', ALL],
    ['createdAt', 'desc', ['iris', 'elderberry', 'fig', 'damson', 'cherry', 'banana', 'apple', 'lemon', 'juniper', 'hazel', 'kiwi']],
    ['name', 'asc', ['apple', 'banana', 'cherry', 'damson', 'elderberry', 'fig', 'hazel', 'iris', 'juniper', 'kiwi', 'lemon']],
    ['name', 'desc', ['lemon', 'kiwi', 'juniper', 'iris', 'hazel', 'fig', 'elderberry', 'damson', 'cherry', 'banana', 'apple']],
    ['type', 'asc', ['banana', 'iris', 'juniper', 'elderberry', 'kiwi', 'damson', 'lemon', 'fig', 'apple', 'cherry', 'hazel']],
    ['type', 'desc', ['apple', 'cherry', 'hazel', 'fig', 'damson', 'lemon', 'elderberry', 'kiwi', 'banana', 'iris', 'juniper']],
    ['project', 'asc', ['apple', 'banana', 'cherry', 'damson', 'elderberry', 'hazel', 'fig', 'juniper', 'lemon', 'iris', 'kiwi']],
    ['project', 'desc', ['iris', 'kiwi', 'fig', 'juniper', 'lemon', 'apple', 'banana', 'cherry', 'damson', 'elderberry', 'hazel']],
    ['stale', 'asc', ['apple', 'banana', 'cherry', 'elderberry', 'fig', 'hazel', 'iris', 'kiwi', 'lemon', 'damson', 'juniper']],
    ['stale', 'desc', ['damson', 'juniper', 'apple', 'banana', 'cherry', 'elderberry', 'fig', 'hazel', 'iris', 'kiwi', 'lemon']],
    // Seen: banana 10:00, fig 11:30, apple 11:50; the never-seen come last in both orders.
    ['lastSeenAt', 'asc', ['banana', 'fig', 'apple', 'cherry', 'damson', 'elderberry', 'hazel', 'iris', 'juniper', 'kiwi', 'lemon']],
    ['lastSeenAt', 'desc', ['apple', 'fig', 'banana', 'cherry', 'damson', 'elderberry', 'hazel', 'iris', 'juniper', 'kiwi', 'lemon']],
    [
      'environment:development',
      'asc',
      ['banana', 'cherry', 'damson', 'elderberry', 'hazel', 'iris', 'juniper', 'kiwi', 'lemon', 'apple', 'fig'],
    ],
    [
      'environment:development',
      'desc',
      ['apple', 'fig', 'banana', 'cherry', 'damson', 'elderberry', 'hazel', 'iris', 'juniper', 'kiwi', 'lemon'],
    ],
  ];
  for (const [sortBy, sortOrder, expected] of cases) {
    test(`sortBy=${sortBy}&sortOrder=${sortOrder}, ties broken by name`, async () => {
      await expectFlags(`${SCOPE}&sortBy=${sortBy}&sortOrder=${sortOrder}`, expected);
    });
  }

  test('sortBy=environment:production in both orders (projects that have production)', async () => {
    // The order is by the flag's state in production; flags in the same state keep their names' order either way.
    const oneState: Key[] = ['apple', 'cherry', 'damson', 'fig', 'hazel', 'juniper', 'lemon'];
    const otherState: Key[] = ['banana', 'elderberry'];
    const byProduction = `project=IS_ANY_OF:${P1},${P2}&sortBy=environment:production`;
    await expectFlags(`${byProduction}&sortOrder=asc`, [...oneState, ...otherState]);
    await expectFlags(`${byProduction}&sortOrder=desc`, [...otherState, ...oneState]);
  });

  test('the default is createdAt ascending', async () => {
    await expectFlags(SCOPE, ALL);
    await expectFlags(`${SCOPE}&sortBy=createdAt`, ALL);
    await expectFlags(`${SCOPE}&sortOrder=asc`, ALL);
  });

  test("favoritesFirst=true puts the caller's favorites first, each group in the asked order", async () => {
    const asAlice = ctx.withCookie(alice.cookie);
    await expectFlags(
      `${SCOPE}&favoritesFirst=true&sortBy=name`,
      ['apple', 'cherry', 'banana', 'damson', 'elderberry', 'fig', 'hazel', 'iris', 'juniper', 'kiwi', 'lemon'],
      asAlice,
    );
    await expectFlags(
      `${SCOPE}&favoritesFirst=true`,
      ['apple', 'cherry', 'kiwi', 'hazel', 'juniper', 'lemon', 'banana', 'damson', 'elderberry', 'fig', 'iris'],
      asAlice,
    );
    await expectFlags(
      `${SCOPE}&favoritesFirst=true&sortOrder=desc`,
      ['cherry', 'apple', 'iris', 'elderberry', 'fig', 'damson', 'banana', 'lemon', 'juniper', 'hazel', 'kiwi'],
      asAlice,
    );
    await expectFlags(
      `${SCOPE}&favoritesFirst=true&sortBy=name`,
      ['banana', 'fig', 'apple', 'cherry', 'damson', 'elderberry', 'hazel', 'iris', 'juniper', 'kiwi', 'lemon'],
      ctx.withCookie(bob.cookie),
    );
  });

  test('favoritesFirst=false keeps the plain order', async () => {
    await expectFlags(`${SCOPE}&favoritesFirst=false`, ALL, ctx.withCookie(alice.cookie));
    await expectFlags(
      `${SCOPE}&favoritesFirst=false&sortBy=name&sortOrder=desc`,
      ['lemon', 'kiwi', 'juniper', 'iris', 'hazel', 'fig', 'elderberry', 'damson', 'cherry', 'banana', 'apple'],
      ctx.withCookie(alice.cookie),
    );
  });

  test('favoritesFirst=true for an admin token (no favorites) keeps the plain order', async () => {
    await expectFlags(`${SCOPE}&favoritesFirst=true`, ALL, ctx.admin);
  });
});

describe('paging', () => {
  async function walk(query: string, limit: number, expectedTotal: number): Promise<string[]> {
    const seen: string[] = [];
    for (let offset = 0; offset < expectedTotal; offset += limit) {
      const page = await search(`${query}&limit=${limit}&offset=${offset}`);
      assert.equal(page.total, expectedTotal, `total on the page at offset ${offset}`);
      assert.equal(page.features.length, Math.min(limit, expectedTotal - offset));
      seen.push(...keys(page));
    }
    const beyond = await search(`${query}&limit=${limit}&offset=${expectedTotal}`);
    assert.deepEqual(beyond.features, []);
    assert.equal(beyond.total, expectedTotal);
    return seen;
  }

  test('limit and offset walk every match exactly once, in order, with the same total', async () => {
    assert.deepEqual(await walk(SCOPE, 3, ALL.length), ALL);
    assert.deepEqual(await walk(`${SCOPE}&sortBy=type&sortOrder=desc`, 4, ALL.length), [
      'apple',
      'cherry',
      'hazel',
      'fig',
      'damson',
      'lemon',
      'elderberry',
      'kiwi',
      'banana',
      'iris',
      'juniper',
    ]);
    // Ties (same createdAt for all bulk flags) are broken by name, so pages never overlap.
    const bulk = await walk(`project=IS:${PB}`, 7, 55);
    assert.deepEqual(
      bulk,
      Array.from({ length: 55 }, (_, index) => keyOf(bulkName(index))),
    );
  });

  test('total counts distinct flags, whatever tags, segments and environments they have', async () => {
    await expectFlags(`project=IS:${P1}&tag=INCLUDE_ANY_OF:simple:alpha,simple:bravo,kind:va:lue`, ['apple', 'banana', 'cherry']);
    await expectFlags(`project=IS:${P1}&segment=INCLUDE_ANY_OF:${SEGMENT_A},${SEGMENT_B}`, ['apple', 'banana', 'cherry']);
    const pages: string[] = [];
    for (let offset = 0; offset < 3; offset++) {
      const page = await search(`project=IS:${P1}&segment=INCLUDE_ANY_OF:${SEGMENT_A},${SEGMENT_B}&limit=1&offset=${offset}`);
      assert.equal(page.total, 3);
      pages.push(...keys(page));
    }
    assert.deepEqual(pages, ['apple', 'banana', 'cherry']);
  });

  test('the default limit is 50', async () => {
    const first = await search(`project=IS:${PB}`);
    assert.equal(first.total, 55);
    assert.deepEqual(
      keys(first),
      Array.from({ length: 50 }, (_, index) => keyOf(bulkName(index))),
    );
    const rest = await search(`project=IS:${PB}&offset=50`);
    assert.equal(rest.total, 55);
    assert.deepEqual(
      keys(rest),
      Array.from({ length: 5 }, (_, index) => keyOf(bulkName(50 + index))),
    );
    assert.equal((await search(`project=IS:${PB}&limit=1000`)).features.length, 55);
  });
});

describe('computed fields of each result', () => {
  const environment = (name: string, type: string, sortOrder: number, state: Partial<SearchEnvironment> = {}): SearchEnvironment => ({
    name,
    environment: name,
    type,
    enabled: false,
    sortOrder,
    variantCount: 0,
    hasStrategies: false,
    hasEnabledStrategies: false,
    lastSeenAt: null,
    yes: 0,
    no: 0,
    ...state,
  });
  const pickEnvironment = (e: SearchEnvironment): SearchEnvironment => ({
    name: e.name,
    environment: e.environment,
    type: e.type,
    enabled: e.enabled,
    sortOrder: e.sortOrder,
    variantCount: e.variantCount,
    hasStrategies: e.hasStrategies,
    hasEnabledStrategies: e.hasEnabledStrategies,
    lastSeenAt: e.lastSeenAt,
    yes: e.yes,
    no: e.no,
  });
  const tagOrder = (a: { type: string; value: string }, b: { type: string; value: string }) =>
    `${a.type}:${a.value}`.localeCompare(`${b.type}:${b.value}`);

  type Expected = Omit<SearchFeature, 'createdBy'> & { createdBy: { id: number; name: string } };
  /** The fields of spec 2.5 as this test compares them; list fields in a canonical order. */
  function view(feature: SearchFeature): Expected {
    assert.equal(typeof feature.createdBy.imageUrl, 'string');
    return {
      name: feature.name,
      type: feature.type,
      description: feature.description,
      dependencyType: feature.dependencyType,
      archived: feature.archived,
      project: feature.project,
      stale: feature.stale,
      favorite: feature.favorite,
      impressionData: feature.impressionData,
      createdAt: feature.createdAt,
      archivedAt: feature.archivedAt,
      lastSeenAt: feature.lastSeenAt,
      environments: feature.environments.map(pickEnvironment),
      segments: [...feature.segments].sort(),
      tags: [...feature.tags].sort(tagOrder),
      lifecycle: feature.lifecycle,
      createdBy: { id: feature.createdBy.id, name: feature.createdBy.name },
    };
  }
  const p1Environments = (state: Record<string, Partial<SearchEnvironment>> = {}) => [
    environment('development', 'development', 100, state.development),
    environment(QA, 'test', 150, state[QA]),
    environment('production', 'production', 200, state.production),
  ];

  let asAlice: SearchResult;
  before(async () => {
    asAlice = await search(`${SCOPE}&limit=100`, ctx.withCookie(alice.cookie));
  });

  test('apple: enabled with variants, a segment, usage in the last hour, a favorite of the caller', () => {
    assert.deepEqual(view(featureIn(asAlice, 'apple')), {
      name: flag.apple,
      type: 'release',
      description: 'Checkout redesign, 50%_off campaign',
      dependencyType: null,
      archived: false,
      project: P1,
      stale: false,
      favorite: true,
      impressionData: false,
      createdAt: '2026-05-14T09:00:00.000Z',
      archivedAt: null,
      lastSeenAt: '2026-05-20T11:50:00.000Z',
      environments: p1Environments({
        development: {
          enabled: true,
          variantCount: 2,
          hasStrategies: true,
          hasEnabledStrategies: true,
          lastSeenAt: '2026-05-20T11:50:00.000Z',
          yes: 4,
          no: 1,
        },
      }),
      segments: [SEGMENT_A],
      tags: [{ type: 'simple', value: 'alpha' }],
      lifecycle: { stage: 'pre-live', status: null, enteredStageAt: '2026-05-14T10:00:00.000Z' },
      createdBy: { id: -42, name: 'admin-token' },
    });
  });

  test('banana: a parent, live, seen more than an hour ago (no yes/no)', () => {
    assert.deepEqual(view(featureIn(asAlice, 'banana')), {
      name: flag.banana,
      type: 'experiment',
      description: 'Search ranking experiment',
      dependencyType: 'parent',
      archived: false,
      project: P1,
      stale: false,
      favorite: false,
      impressionData: false,
      createdAt: '2026-05-15T09:00:00.000Z',
      archivedAt: null,
      lastSeenAt: '2026-05-20T10:00:00.000Z',
      environments: p1Environments({
        production: { enabled: true, hasStrategies: true, hasEnabledStrategies: true, lastSeenAt: '2026-05-20T10:00:00.000Z' },
      }),
      segments: [SEGMENT_B],
      tags: [{ type: 'simple', value: 'bravo' }],
      lifecycle: { stage: 'live', status: null, enteredStageAt: '2026-05-15T10:00:00.000Z' },
      createdBy: { id: alice.id, name: alice.username },
    });
  });

  test('cherry: a child with only a disabled strategy, every segment it uses, all its tags', () => {
    assert.deepEqual(view(featureIn(asAlice, 'cherry')), {
      name: flag.cherry,
      type: 'release',
      description: null,
      dependencyType: 'child',
      archived: false,
      project: P1,
      stale: false,
      favorite: true,
      impressionData: false,
      createdAt: '2026-05-16T00:00:00.000Z',
      archivedAt: null,
      lastSeenAt: null,
      environments: p1Environments({ development: { hasStrategies: true, hasEnabledStrategies: false } }),
      segments: [SEGMENT_A, SEGMENT_B],
      tags: [
        { type: 'kind', value: 'va:lue' },
        { type: 'simple', value: 'alpha' },
        { type: 'simple', value: 'bravo' },
      ],
      lifecycle: { stage: 'initial', status: null, enteredStageAt: '2026-05-16T00:00:00.000Z' },
      createdBy: { id: bob.id, name: bob.username },
    });
  });

  test('damson: stale', () => {
    const damson = view(featureIn(asAlice, 'damson'));
    assert.equal(damson.stale, true);
    assert.equal(damson.type, 'operational');
    assert.deepEqual(damson.environments, p1Environments());
    assert.deepEqual(damson.tags, []);
    assert.deepEqual(damson.segments, []);
    assert.equal(damson.dependencyType, null);
  });

  test('elderberry: completed and kept, impression data on, the default strategy added on enabling', () => {
    assert.deepEqual(view(featureIn(asAlice, 'elderberry')), {
      name: flag.elderberry,
      type: 'kill-switch',
      description: 'Hot_fix kill switch',
      dependencyType: null,
      archived: false,
      project: P1,
      stale: false,
      favorite: false,
      impressionData: true,
      createdAt: '2026-05-18T09:00:00.000Z',
      archivedAt: null,
      lastSeenAt: null,
      environments: p1Environments({ production: { enabled: true, hasStrategies: true, hasEnabledStrategies: true } }),
      segments: [],
      tags: [],
      lifecycle: { stage: 'completed', status: 'kept', enteredStageAt: '2026-05-18T11:00:00.000Z' },
      createdBy: { id: alice.id, name: alice.username },
    });
  });

  test("fig and kiwi list exactly their project's environments", () => {
    assert.deepEqual(view(featureIn(asAlice, 'fig')).environments, [
      environment('development', 'development', 100, {
        enabled: true,
        hasStrategies: true,
        hasEnabledStrategies: true,
        lastSeenAt: '2026-05-20T11:30:00.000Z',
        yes: 2,
        no: 2,
      }),
      environment('production', 'production', 200),
    ]);
    assert.deepEqual(view(featureIn(asAlice, 'kiwi')).environments, [environment('development', 'development', 100)]);
  });

  test('grape: archived, with its archive time and the archived stage', async () => {
    const result = await expectFlags(`${SCOPE}&archived=IS:true`, ['grape']);
    assert.deepEqual(view(featureIn(result, 'grape')), {
      name: flag.grape,
      type: 'release',
      description: 'Grape archived',
      dependencyType: null,
      archived: true,
      project: P2,
      stale: false,
      favorite: false,
      impressionData: false,
      createdAt: '2026-05-19T09:00:00.000Z',
      archivedAt: '2026-05-19T15:00:00.000Z',
      lastSeenAt: null,
      environments: [environment('development', 'development', 100), environment('production', 'production', 200)],
      segments: [],
      tags: [{ type: 'simple', value: 'alpha' }],
      lifecycle: { stage: 'archived', status: null, enteredStageAt: '2026-05-19T15:00:00.000Z' },
      createdBy: { id: bob.id, name: bob.username },
    });
  });

  test('a tag filter selects flags without cutting their tag list', async () => {
    const result = await expectFlags(`${SCOPE}&tag=INCLUDE:simple:bravo`, ['banana', 'cherry']);
    assert.deepEqual([...featureIn(result, 'cherry').tags].sort(tagOrder), [
      { type: 'kind', value: 'va:lue' },
      { type: 'simple', value: 'alpha' },
      { type: 'simple', value: 'bravo' },
    ]);
    const byQuery = await expectFlags(`${SCOPE}&query=bravo`, ['banana', 'cherry']);
    assert.equal(featureIn(byQuery, 'cherry').tags.length, 3);
  });

  test('a segment filter selects flags without cutting their segment list', async () => {
    const result = await expectFlags(`${SCOPE}&segment=INCLUDE_ALL_OF:${SEGMENT_B}`, ['banana', 'cherry']);
    assert.deepEqual([...featureIn(result, 'cherry').segments].sort(), [SEGMENT_A, SEGMENT_B]);
  });

  test('a status filter selects flags without cutting their environments', async () => {
    const result = await expectFlags(`${SCOPE}&status=production:enabled`, ['banana', 'elderberry']);
    assert.deepEqual(
      featureIn(result, 'banana').environments.map((e) => e.name),
      ['development', QA, 'production'],
    );
  });

  test('favorite is the calling user’s own', async () => {
    const favorites = (result: SearchResult) => result.features.filter((f) => f.favorite).map((f) => keyOf(f.name));
    assert.deepEqual(favorites(asAlice), ['apple', 'cherry']);
    assert.deepEqual(favorites(await search(SCOPE, ctx.withCookie(bob.cookie))), ['banana', 'fig']);
    assert.deepEqual(favorites(await search(SCOPE, ctx.withCookie(viewer.cookie))), ['hazel']);
    assert.deepEqual(favorites(await search(SCOPE)), []);
  });

  test('dependencyType is parent, child or null', () => {
    const types = Object.fromEntries(asAlice.features.map((f) => [keyOf(f.name), f.dependencyType]));
    assert.deepEqual(types, {
      kiwi: null,
      hazel: null,
      juniper: null,
      lemon: null,
      apple: null,
      banana: 'parent',
      cherry: 'child',
      damson: null,
      elderberry: null,
      fig: null,
      iris: null,
    });
  });
});

describe('bad input is a 400 naming the parameter', () => {
  const cases: Array<[string, string]> = [
    ['project=BOGUS:x', '/query/project'],
    ['project=INCLUDE:x', '/query/project'],
    ['tag=IS:a:b', '/query/tag'],
    ['segment=IS:x', '/query/segment'],
    ['type=IS:', '/query/type'],
    ['project=IS:a,,b', '/query/project'],
    ['tag=INCLUDE:alpha', '/query/tag'],
    ['tag=INCLUDE:simple:', '/query/tag'],
    ['tag=INCLUDE::alpha', '/query/tag'],
    ['sortOrder=up', '/query/sortOrder'],
    ['status=production:on', '/query/status'],
    ['status=production', '/query/status'],
    ['status=development:enabled&status=production:on', '/query/status'],
    ['status=production:enabled,development:on', '/query/status'],
    ['createdAt=IS_BEFORE:2024-13-45', '/query/createdAt'],
    ['createdAt=IS_BEFORE:2024-02-30', '/query/createdAt'],
    ['createdAt=IS:2024-01-01', '/query/createdAt'],
    ['createdAt=IS_BEFORE:yesterday', '/query/createdAt'],
    ['limit=abc', '/query/limit'],
    ['limit=0', '/query/limit'],
    ['limit=1001', '/query/limit'],
    ['limit=-5', '/query/limit'],
    ['limit=2.5', '/query/limit'],
    ['offset=-1', '/query/offset'],
    ['offset=abc', '/query/offset'],
    ['createdBy=IS:bob', '/query/createdBy'],
    ['state=IS:zombie', '/query/state'],
    ['type=IS:rocket', '/query/type'],
    ['favoritesFirst=yes', '/query/favoritesFirst'],
    ['lifecycle=IS:retired', '/query/lifecycle'],
    ['favorite=IS:maybe', '/query/favorite'],
    ['archived=IS:maybe', '/query/archived'],
    ['limit=1&limit=2', '/query/limit'],
  ];
  for (const [query, path] of cases) {
    test(query, async () => {
      const error = expectError(await ctx.admin.get(`/api/admin/search/features?${query}`), 400, 'BadDataError');
      assert.equal(error.details[0]!.path, path);
      assert.match(error.details[0]!.message, /got /);
    });
  }

  test('a filter lists at most 100 values, status at most 100 entries, query at most 10 terms', async () => {
    const values = (count: number, make: (i: number) => string) => Array.from({ length: count }, (_, i) => make(i)).join(',');
    const tooMany: Array<[string, string, RegExp]> = [
      [`project=IS_ANY_OF:${values(101, (i) => `p${i}`)}`, '/query/project', /at most 100 values/],
      [`tag=INCLUDE_ANY_OF:${values(101, (i) => `simple:v${i}`)}`, '/query/tag', /at most 100 values/],
      [`segment=INCLUDE_ALL_OF:${values(101, (i) => `s${i}`)}`, '/query/segment', /at most 100 values/],
      [`createdBy=IS_ANY_OF:${values(101, (i) => String(i))}`, '/query/createdBy', /at most 100 values/],
      [Array.from({ length: 400 }, () => 'status=development:enabled').join('&'), '/query/status', /100/],
      [`status=${values(101, (i) => `env${i}:enabled`)}`, '/query/status', /at most 100 entries/],
      [`query=${values(11, (i) => `term${i}`)}`, '/query/query', /at most 10/],
      [`query=short,${'y'.repeat(101)}`, '/query/query', /a search term is at most 100 characters/],
    ];
    for (const [query, path, message] of tooMany) {
      const error = expectError(await ctx.admin.get(`/api/admin/search/features?${query}`), 400, 'BadDataError');
      assert.equal(error.details[0]!.path, path, query.slice(0, 40));
      assert.match(error.message + error.details[0]!.message, message);
    }
  });

  test('at the limits, the filters still mean what they say', async () => {
    const padding = (count: number, make: (i: number) => string) => Array.from({ length: count }, (_, i) => make(i));
    const projects = [P1, ...padding(99, (i) => `nowhere-${i}`)].join(',');
    assert.deepEqual(keys(await search(`project=IS_ANY_OF:${projects}`)), P1_FLAGS);
    const statuses = Array.from({ length: 100 }, () => 'status=nowhere:enabled').join('&');
    assert.deepEqual(keys(await search(`${SCOPE}&${statuses}`)), []);
  });

  test('an unknown sortBy lists the allowed fields', async () => {
    const error = expectError(await ctx.admin.get('/api/admin/search/features?sortBy=popularity'), 400, 'BadDataError');
    assert.equal(error.details[0]!.path, '/query/sortBy');
    for (const field of ['createdAt', 'name', 'type', 'project', 'stale', 'lastSeenAt', 'environment:']) {
      assert.ok(error.details[0]!.message.includes(field), `the message names ${field}: ${error.details[0]!.message}`);
    }
    assert.match(error.details[0]!.message, /popularity/);
  });
});

describe('permissions', () => {
  test('a Viewer may search', async () => {
    const result = await expectFlags(`project=IS:${P1}`, P1_FLAGS, ctx.withCookie(viewer.cookie));
    assert.equal(featureIn(result, 'hazel').favorite, true);
  });

  test('an Editor may search', async () => {
    await expectFlags(`project=IS:${P1}`, P1_FLAGS, ctx.withCookie(bob.cookie));
  });

  test('without credentials the search is refused', async () => {
    expectError(await ctx.as().get(`/api/admin/search/features?project=IS:${P1}`), 401, 'AuthenticationRequired');
  });
});
