import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { PushSummary } from '../../src/domain/code-references/code-references.js';
import { expectError, expectStatus } from '../helpers/assertions.js';
import { eventsSince, lastEventId } from '../helpers/events.js';
import { createUserSession, sendMalformedJson, uniqueName } from '../helpers/fixtures.js';
import { useTestApp } from '../helpers/test-app.js';
import { createProject } from '../helpers/projects.js';

/*
 * Code references as a repository's CI pushes them (`vexil refs push`) with a token whose role holds only
 * UPDATE_CODE_REFERENCES, and as the flag's API serves them.
 */
const ctx = useTestApp();

interface FlagReferences {
  references: Array<{
    repository: string;
    branch: string;
    commit: string;
    file: string;
    line: number;
    url: string | null;
    context: string[];
  }>;
  total: number;
  removedFromCode: { repository: string; branch: string; commit: string; removedAt: string } | null;
}

const GITHUB = 'https://github.com/acme/shop/blob/{commit}/{file}#L{line}';
const COMMITS = ['a1b2c3d4e5f60718293a4b5c6d7e8f9012345678', 'b2c3d4e5f60718293a4b5c6d7e8f901234567890'] as const;

async function codeReferencesBot() {
  const role = await ctx.admin.post('/api/admin/roles', {
    name: uniqueName('code-refs'),
    description: 'pushes code references from CI',
    type: 'root-custom',
    permissions: [{ name: 'UPDATE_CODE_REFERENCES' }],
  });
  expectStatus(role, 201);
  const account = await ctx.admin.post('/api/admin/service-account', {
    username: uniqueName('refs-bot'),
    rootRole: (role.json() as { id: number }).id,
  });
  expectStatus(account, 201);
  const expiresAt = new Date(ctx.clock.now().getTime() + 86_400_000).toISOString();
  const token = await ctx.admin.post(`/api/admin/service-account/${(account.json() as { id: number }).id}/token`, {
    description: 'ci',
    expiresAt,
  });
  expectStatus(token, 201);
  return ctx.as((token.json() as { secret: string }).secret);
}

function reference(flag: string, file: string, line: number) {
  return {
    flag,
    file,
    line,
    column: 5,
    language: 'TypeScript',
    call: 'isEnabled',
    expression: `'${flag}'`,
    context: [`if (unleash.isEnabled('${flag}')) {`],
  };
}

async function referencesOf(project: string, flag: string): Promise<FlagReferences> {
  const response = await ctx.admin.get(`/api/admin/projects/${project}/features/${flag}/code-references`);
  expectStatus(response, 200);
  return response.json() as FlagReferences;
}

describe('code references', () => {
  test('a push with the dedicated permission replaces the branch, links each line, and is recorded; the same commit again changes nothing', async () => {
    const project = await createProject(ctx, { prefix: 'refs' });
    const flag = uniqueName('checkout');
    expectStatus(await ctx.admin.post(`/api/admin/projects/${project}/features`, { name: flag }), 201);
    const bot = await codeReferencesBot();
    const repository = uniqueName('acme/shop');
    const unknown = uniqueName('not-a-flag');
    const since = await lastEventId(ctx);
    const body = {
      repository,
      branch: 'main',
      commit: COMMITS[0],
      urlTemplate: GITHUB,
      references: [reference(flag, 'src/checkout page.ts', 12), reference(flag, 'src/cart.ts', 3), reference(unknown, 'src/cart.ts', 9)],
    };
    const pushed = await bot.post('/api/admin/code-references', body);
    expectStatus(pushed, 200);
    assert.deepEqual(pushed.json(), {
      repository,
      branch: 'main',
      commit: COMMITS[0],
      changed: true,
      references: 3,
      flags: 2,
      unknownFlags: [unknown],
      removedFlags: [],
    } satisfies PushSummary);
    const listed = await referencesOf(project, flag);
    assert.deepEqual(
      listed.references.map((found) => [found.repository, found.branch, found.commit, found.file, found.line, found.url, found.context]),
      [
        [
          repository,
          'main',
          COMMITS[0],
          'src/cart.ts',
          3,
          `https://github.com/acme/shop/blob/${COMMITS[0]}/src/cart.ts#L3`,
          [`if (unleash.isEnabled('${flag}')) {`],
        ],
        [
          repository,
          'main',
          COMMITS[0],
          'src/checkout page.ts',
          12,
          `https://github.com/acme/shop/blob/${COMMITS[0]}/src/checkout%20page.ts#L12`,
          [`if (unleash.isEnabled('${flag}')) {`],
        ],
      ],
    );
    assert.equal(listed.total, 2);
    assert.equal(listed.removedFromCode, null);
    const events = await eventsSince(ctx, since);
    assert.deepEqual(
      events.map((event) => [event.type, event.project, event.featureName, event.data]),
      [
        [
          'code-references-pushed',
          null,
          null,
          { repository, branch: 'main', commit: COMMITS[0], references: 3, flags: 2, removedFlags: [] },
        ],
      ],
    );

    const again = await bot.post('/api/admin/code-references', body);
    expectStatus(again, 200);
    assert.equal((again.json() as PushSummary).changed, false);
    assert.deepEqual(await eventsSince(ctx, since), events);

    // The token does what its role names and nothing more.
    expectError(await bot.post('/api/admin/projects', { id: uniqueName('p'), name: 'p' }), 403, 'PermissionError');
  });

  test("a flag whose last reference goes is 'removed from code' in that commit, in its own history; it comes back when referenced again", async () => {
    const project = await createProject(ctx, { prefix: 'refs-gone' });
    const [kept, gone] = [uniqueName('kept'), uniqueName('gone')];
    for (const name of [kept, gone]) expectStatus(await ctx.admin.post(`/api/admin/projects/${project}/features`, { name }), 201);
    const repository = uniqueName('acme/api');
    const push = (commit: string, flags: string[]) =>
      ctx.admin.post('/api/admin/code-references', {
        repository,
        branch: 'main',
        commit,
        references: flags.map((flag, index) => reference(flag, 'src/app.ts', index + 1)),
      });
    expectStatus(await push(COMMITS[0], [kept, gone]), 200);
    const since = await lastEventId(ctx);
    const second = await push(COMMITS[1], [kept]);
    expectStatus(second, 200);
    assert.deepEqual((second.json() as PushSummary).removedFlags, [gone]);
    const removed = await referencesOf(project, gone);
    assert.deepEqual(removed.references, []);
    assert.deepEqual(removed.removedFromCode && { ...removed.removedFromCode, removedAt: 'at' }, {
      repository,
      branch: 'main',
      commit: COMMITS[1],
      removedAt: 'at',
    });
    assert.equal((await referencesOf(project, kept)).references[0]?.url, null, 'no URL template, no link');
    assert.deepEqual(
      (await eventsSince(ctx, since)).map((event) => [event.type, event.project, event.featureName, event.data]),
      [
        [
          'code-references-pushed',
          null,
          null,
          { repository, branch: 'main', commit: COMMITS[1], references: 1, flags: 1, removedFlags: [gone] },
        ],
        ['feature-removed-from-code', project, gone, { repository, branch: 'main', commit: COMMITS[1] }],
      ],
    );
    expectStatus(await push(COMMITS[0], [kept, gone]), 200);
    assert.equal((await referencesOf(project, gone)).removedFromCode, null);
  });

  test('bad pushes are refused with a 400 at the field, and what was stored stays', async () => {
    const project = await createProject(ctx, { prefix: 'refs-bad' });
    const flag = uniqueName('stays');
    expectStatus(await ctx.admin.post(`/api/admin/projects/${project}/features`, { name: flag }), 201);
    const repository = uniqueName('acme/web');
    const good = { repository, branch: 'main', commit: COMMITS[0], urlTemplate: GITHUB, references: [reference(flag, 'a.ts', 1)] };
    expectStatus(await ctx.admin.post('/api/admin/code-references', good), 200);
    const before = await referencesOf(project, flag);
    const since = await lastEventId(ctx);
    const refusals: Array<[unknown, RegExp]> = [
      [{ ...good, commit: COMMITS[1], urlTemplate: 'ftp://git.example.com/{file}' }, /urlTemplate must be an http\(s\) URL/],
      [{ ...good, commit: COMMITS[1], urlTemplate: 'javascript:alert(1)//{file}' }, /urlTemplate must be an http\(s\) URL/],
      [{ ...good, commit: COMMITS[1], urlTemplate: 'https://github.com/acme/web' }, /urlTemplate must place the file/],
      [{ ...good, commit: 'main' }, /commit is a commit hash/],
      [{ ...good, commit: COMMITS[1], references: [{ ...reference(flag, 'a.ts', 0) }] }, /line is a whole number from 1/],
      [{ ...good, commit: COMMITS[1], references: [{ ...reference(flag, 'a.ts', 1), owner: 'x' }] }, /owner/],
      [{ ...good, repository: '../../etc' }, /repository is a name/],
      [{ ...good, references: 'all of them' }, /references/],
      [
        {
          ...good,
          commit: COMMITS[1],
          references: Array.from({ length: 50_001 }, (_, index) => ({
            flag,
            file: 'a.ts',
            line: index + 1,
            language: 'Go',
            call: 'IsEnabled',
            expression: 'x',
          })),
        },
        /at most 50000 references/,
      ],
    ];
    for (const [body, message] of refusals) {
      const refused = expectError(await ctx.admin.post('/api/admin/code-references', body), 400, 'BadDataError');
      assert.match(JSON.stringify(refused), message);
    }
    expectError(await sendMalformedJson(ctx.admin, 'POST', '/api/admin/code-references', '{"repository": "a'), 400, 'BadDataError');
    assert.deepEqual(await referencesOf(project, flag), before);
    assert.deepEqual(await eventsSince(ctx, since), []);
  });

  test('feature search filters on having code references, and refuses a value it does not know', async () => {
    const project = await createProject(ctx, { prefix: 'refs-search' });
    const [referenced, unreferenced] = [uniqueName('in-code'), uniqueName('not-in-code')];
    for (const name of [referenced, unreferenced])
      expectStatus(await ctx.admin.post(`/api/admin/projects/${project}/features`, { name }), 201);
    expectStatus(
      await ctx.admin.post('/api/admin/code-references', {
        repository: uniqueName('acme/search'),
        branch: 'main',
        commit: COMMITS[0],
        references: [reference(referenced, 'a.ts', 1)],
      }),
      200,
    );
    const names = async (filter: string) => {
      const response = await ctx.admin.get(`/api/admin/search/features?project=IS:${project}&codeReferences=${filter}&sortBy=name`);
      expectStatus(response, 200);
      return (response.json() as { features: Array<{ name: string }> }).features.map((feature) => feature.name);
    };
    assert.deepEqual(await names('IS:true'), [referenced]);
    assert.deepEqual(await names('IS:false'), [unreferenced]);
    assert.deepEqual(await names('IS_NOT:true'), [unreferenced]);
    const refused = expectError(await ctx.admin.get(`/api/admin/search/features?codeReferences=IS:maybe`), 400, 'BadDataError');
    assert.match(JSON.stringify(refused), /codeReferences/);
  });

  test("a Viewer may read a flag's references but not push; a private project's stay hidden from who may not see it", async () => {
    const viewer = await createUserSession(ctx, 'Viewer');
    const browser = ctx.withCookie(viewer.cookie);
    const refused = expectError(
      await browser.post('/api/admin/code-references', { repository: 'a/b', branch: 'main', commit: COMMITS[0], references: [] }),
      403,
      'PermissionError',
    );
    assert.match(refused.message, /UPDATE_CODE_REFERENCES/);
    const open = await createProject(ctx, { prefix: 'refs-open' });
    const secret = uniqueName('refs-private');
    expectStatus(await ctx.admin.post('/api/admin/projects', { id: secret, name: secret, mode: 'private' }), 201);
    const [seen, hidden] = [uniqueName('seen'), uniqueName('hidden')];
    expectStatus(await ctx.admin.post(`/api/admin/projects/${open}/features`, { name: seen }), 201);
    expectStatus(await ctx.admin.post(`/api/admin/projects/${secret}/features`, { name: hidden }), 201);
    expectStatus(
      await ctx.admin.post('/api/admin/code-references', {
        repository: uniqueName('acme/both'),
        branch: 'main',
        commit: COMMITS[0],
        references: [reference(seen, 'a.ts', 1), reference(hidden, 'a.ts', 2)],
      }),
      200,
    );
    const read = await browser.get(`/api/admin/projects/${open}/features/${seen}/code-references`);
    expectStatus(read, 200);
    assert.equal((read.json() as FlagReferences).references[0]?.file, 'a.ts');
    expectError(await browser.get(`/api/admin/projects/${secret}/features/${hidden}/code-references`), 404, 'NotFoundError');
    expectError(await ctx.admin.get(`/api/admin/projects/${open}/features/${hidden}/code-references`), 404, 'NotFoundError');
  });
});
