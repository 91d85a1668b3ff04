import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { expectStatus } from '../helpers/assertions.js';
import { uniqueName } from '../helpers/fixtures.js';
import { createProject } from '../helpers/projects.js';
import { type ProcessOutcome, runProcess } from '../helpers/child-process.js';
import { ADMIN_TOKEN, useTestApp } from '../helpers/test-app.js';

/*
 * `vexil refs push` as CI runs it: the command of the docs' GitHub Actions and GitLab CI examples, with the variables
 * those jobs set, and from a plain git checkout; against a server listening on a free port.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
let baseUrl = '';
const ctx = useTestApp({}, async (app) => {
  baseUrl = await app.app.listen({ port: 0, host: '127.0.0.1' });
  await makeCheckout();
});

let checkout = '';
let project = '';
let flag = '';
let commit = '';

async function makeCheckout() {
  project = await createProject(ctx, { prefix: 'push' });
  flag = uniqueName('push-flag');
  expectStatus(await ctx.admin.post(`/api/admin/projects/${project}/features`, { name: flag }), 201);
  checkout = mkdtempSync(join(tmpdir(), 'vexil-refs-push-'));
  mkdirSync(join(checkout, 'src'));
  writeFileSync(
    join(checkout, 'src/app.ts'),
    [
      '// the checkout page',
      `if (unleash.isEnabled('${flag}')) {`,
      '  render();',
      '}',
      "unleash.isEnabled('not-a-vexil-flag');",
      'unleash.isEnabled(name);',
      '',
    ].join('\n'),
  );
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', checkout, '-c', 'user.name=ci', '-c', 'user.email=ci@example.com', ...args], { encoding: 'utf8' }).trim();
  git('init', '-q', '-b', 'main');
  git('remote', 'add', 'origin', 'git@github.com:acme/shop.git');
  git('add', '.');
  git('commit', '-q', '-m', 'first');
  commit = git('rev-parse', 'HEAD');
}

after(() => rmSync(checkout, { recursive: true, force: true }));

/** `vexil refs push` in a process of its own: the server it calls answers from this one. */
function push(env: Record<string, string>, args: string[] = []): Promise<ProcessOutcome> {
  return runProcess(process.execPath, ['--import', import.meta.resolve('tsx'), join(ROOT, 'src/cli/vexil.ts'), 'refs', 'push', ...args], {
    cwd: checkout,
    env: { PATH: process.env.PATH ?? '', ...env },
  });
}

async function referencesOf(): Promise<
  Array<{ repository: string; branch: string; commit: string; file: string; line: number; url: string | null; context: string[] }>
> {
  const response = await ctx.admin.get(`/api/admin/projects/${project}/features/${flag}/code-references`);
  expectStatus(response, 200);
  return (response.json() as { references: never[] }).references;
}

describe('vexil refs push', () => {
  test('from a git checkout: the repository, branch and commit come from git, and each reference goes with the lines around it', async () => {
    const pushed = await push({ VEXIL_URL: baseUrl, VEXIL_TOKEN: ADMIN_TOKEN });
    assert.equal(pushed.status, 0, pushed.stderr);
    assert.equal(
      pushed.stdout,
      [
        `Pushed 2 references to 2 flags of acme/shop (main at ${commit})`,
        "Names that are no flag of Vexil's (kept): not-a-vexil-flag",
        '1 references whose flag could not be worked out were not sent (vexil refs scan lists them)',
        '',
      ].join('\n'),
    );
    assert.deepEqual(await referencesOf(), [
      {
        repository: 'acme/shop',
        branch: 'main',
        commit,
        file: 'src/app.ts',
        line: 2,
        column: 23,
        language: 'TypeScript',
        call: 'isEnabled',
        expression: `'${flag}'`,
        context: ['// the checkout page', `if (unleash.isEnabled('${flag}')) {`, '  render();', '}'],
        url: null,
      },
    ]);
    const again = await push({ VEXIL_URL: baseUrl, VEXIL_TOKEN: ADMIN_TOKEN });
    assert.match(again.stdout, new RegExp(`acme/shop \\(main\\) was already at ${commit}: nothing changed`));
  });

  test("GitHub Actions' example: the job's variables name the repository, the branch and the commit, and the links are GitHub's", async () => {
    const pushed = await push({
      VEXIL_URL: baseUrl,
      VEXIL_TOKEN: ADMIN_TOKEN,
      GITHUB_ACTIONS: 'true',
      GITHUB_SERVER_URL: 'https://github.com',
      GITHUB_REPOSITORY: 'acme/shop-gh',
      GITHUB_REF_NAME: 'release',
      GITHUB_SHA: commit,
    });
    assert.equal(pushed.status, 0, pushed.stderr);
    const fromGitHub = (await referencesOf()).find((reference) => reference.repository === 'acme/shop-gh');
    assert.deepEqual([fromGitHub?.branch, fromGitHub?.url], ['release', `https://github.com/acme/shop-gh/blob/${commit}/src/app.ts#L2`]);
  });

  test("GitLab CI's example: the links are GitLab's", async () => {
    const pushed = await push({
      VEXIL_URL: baseUrl,
      VEXIL_TOKEN: ADMIN_TOKEN,
      GITLAB_CI: 'true',
      CI_PROJECT_PATH: 'acme/shop-gl',
      CI_PROJECT_URL: 'https://gitlab.example.com/acme/shop-gl',
      CI_COMMIT_REF_NAME: 'main',
      CI_COMMIT_SHA: commit,
    });
    assert.equal(pushed.status, 0, pushed.stderr);
    const fromGitLab = (await referencesOf()).find((reference) => reference.repository === 'acme/shop-gl');
    assert.equal(fromGitLab?.url, `https://gitlab.example.com/acme/shop-gl/-/blob/${commit}/src/app.ts#L2`);
  });

  test('without a server it says what to set (exit 2); a refusal is printed and exits 1; a bad template is refused by the server', async () => {
    const unset = await push({});
    assert.deepEqual(
      [unset.status, unset.stderr],
      [2, 'vexil refs push: set VEXIL_URL and VEXIL_TOKEN (a token whose role holds UPDATE_CODE_REFERENCES)\n'],
    );
    const refused = await push({ VEXIL_URL: baseUrl, VEXIL_TOKEN: 'not-a-token' });
    assert.equal(refused.status, 1);
    assert.match(refused.stderr, /^vexil refs push: .*401/);
    const template = await push({ VEXIL_URL: baseUrl, VEXIL_TOKEN: ADMIN_TOKEN }, [
      '--repository',
      'acme/other',
      '--url-template',
      'ftp://git.example.com/{file}',
    ]);
    assert.equal(template.status, 1);
    assert.match(template.stderr, /urlTemplate must be an http\(s\) URL/);
  });
});
