import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runRefsCommand } from '../../src/cli/refs/refs-command.js';
import { type ProcessOutcome, runProcess } from '../helpers/child-process.js';
import { scanRepository } from '../../src/domain/code-references/code-reading/scanner.js';

/*
 * `vexil refs cleanup` on test/fixtures/cleanup: each folder is a small project (TypeScript, TSX, JavaScript or
 * Python) with a flag to take out (`cleanup.json`: the flag, the branch to keep, and whether the fixture reads the
 * flag in a way only a person can settle) and tests of its own that pass with the client answering as production
 * does. Each patch is compared with the one written beside the fixture (`expected.patch`; rewritten with
 * UPDATE_CLEANUP_PATCHES=1), applied, and then the fixtures are type-checked and their tests run again.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FIXTURES = join(ROOT, 'test/fixtures/cleanup');
const PYTHON = '/usr/bin/python3';

interface Fixture {
  name: string;
  flag: string;
  keep: 'on' | 'off';
  leftForPerson?: boolean;
}

const fixtures: Fixture[] = readdirSync(FIXTURES, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => ({ name: entry.name, ...JSON.parse(readFileSync(join(FIXTURES, entry.name, 'cleanup.json'), 'utf8')) }));
const isPython = (fixture: Fixture) => fixture.name.startsWith('py-');

function run(command: string, args: string[], cwd: string, extraEnv: Record<string, string> = {}): Promise<ProcessOutcome> {
  // Without the runner's own context, a `node --test` started here runs its files rather than reporting to this one.
  const { NODE_TEST_CONTEXT: _runner, ...env } = process.env;
  return runProcess(command, args, { cwd, env: { ...env, ...extraEnv } });
}

/** The fixtures' outcome in one folder: which pass their own tests and which type-check. */
async function verdicts(folder: string) {
  const specs = fixtures
    .filter((fixture) => !isPython(fixture))
    .flatMap((fixture) =>
      readdirSync(join(folder, fixture.name))
        .filter((file) => /\.spec\.tsx?$/.test(file))
        .map((file) => join(fixture.name, file)),
    );
  // The fixtures' own tsconfig (JSX, DOM) governs their TypeScript; run from their folder, tsx reads it too.
  const [tests, types] = await Promise.all([
    run(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=tap', ...specs], folder),
    run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], folder),
  ]);
  const passing = new Set([...tests.stdout.matchAll(/^ok \d+ - (\S+)$/gm)].map((match) => match[1]!));
  const typeErrors = new Set([...types.stdout.matchAll(/^([\w-]+)\/[^\n(]+\(\d+,\d+\): error/gm)].map((match) => match[1]!));
  if (existsSync(PYTHON)) {
    for (const fixture of fixtures.filter(isPython)) {
      // The fixtures' fake SDK clients (fake_clients.py) sit beside them.
      const unittest = await run(PYTHON, ['-m', 'unittest', '-q'], join(folder, fixture.name), { PYTHONPATH: folder });
      if (unittest.status === 0) passing.add(fixture.name);
    }
  }
  return { passing, typeErrors, typeOutput: types.stdout, testOutput: tests.stdout + tests.stderr };
}

/** Every fixture type-checks and passes its own tests (the Python ones where Python is installed). */
async function assertEveryFixturePasses(folder: string): Promise<void> {
  const found = await verdicts(folder);
  assert.deepEqual([...found.typeErrors], [], found.typeOutput);
  const failing = fixtures.filter((fixture) => (isPython(fixture) ? existsSync(PYTHON) : true) && !found.passing.has(fixture.name));
  assert.deepEqual(
    failing.map((fixture) => fixture.name),
    [],
    found.testOutput,
  );
}

describe('vexil refs cleanup on the fixture projects', () => {
  let work: string;
  const outcomes = new Map<string, { exitCode: number; patch: string; stderr: string }>();

  before(async () => {
    // Inside the checkout, so the fixtures find react and @types/node in its node_modules.
    work = mkdtempSync(join(ROOT, '.cleanup-fixtures-'));
    cpSync(FIXTURES, work, { recursive: true });
  });
  after(() => rmSync(work, { recursive: true, force: true }));

  it('has at least fifty fixtures, TypeScript, JavaScript and Python, each passing its tests before the cleanup', async () => {
    assert.ok(fixtures.length >= 50, `${fixtures.length} fixtures`);
    assert.ok(fixtures.filter(isPython).length >= 15);
    assert.ok(fixtures.some((fixture) => fixture.name.startsWith('js')));
    await assertEveryFixturePasses(work);
  });

  it('writes each fixture’s patch as expected, and says what it left for a person where it left anything', async () => {
    for (const fixture of fixtures) {
      const folder = join(work, fixture.name);
      const printed = await runRefsCommand(['cleanup', fixture.flag, '--keep', fixture.keep, folder], ROOT, {});
      const written = await runRefsCommand(['cleanup', fixture.flag, '--keep', fixture.keep, '--write', folder], ROOT, {});
      outcomes.set(fixture.name, { exitCode: written.exitCode, patch: printed.stdout, stderr: written.stderr });
      assert.equal(written.stdout, '');
      assert.equal(written.stderr.replace('Changed', 'The patch changes'), printed.stderr);
      const expectedFile = join(FIXTURES, fixture.name, 'expected.patch');
      if (process.env.UPDATE_CLEANUP_PATCHES === '1') writeFileSync(expectedFile, printed.stdout);
      assert.equal(printed.stdout, readFileSync(expectedFile, 'utf8'), `${fixture.name}: the patch`);
      if (fixture.leftForPerson) {
        assert.equal(written.exitCode, 1, `${fixture.name}: exit code`);
        assert.match(written.stderr, /Left for a person:\n {2}\S+:\d+ \w+: /, fixture.name);
      } else {
        assert.equal(written.exitCode, 0, `${fixture.name}: ${written.stderr}`);
        assert.notEqual(printed.stdout, '', `${fixture.name}: a patch`);
      }
    }
  });

  it('leaves every fixture type-checking and passing its tests, with the flag gone from at least 90 % of them', async () => {
    assert.equal(outcomes.size, fixtures.length, 'the patches were written');
    await assertEveryFixturePasses(work);
    let cleaned = 0;
    for (const fixture of fixtures) {
      const remaining = (await scanRepository(join(work, fixture.name))).references.filter((reference) => reference.flag === fixture.flag);
      if (fixture.leftForPerson) {
        // What remains is what the command listed.
        for (const reference of remaining)
          assert.match(outcomes.get(fixture.name)!.stderr, new RegExp(`${reference.file}:\\d+ ${reference.call}:`));
        assert.ok(remaining.length > 0, `${fixture.name} still reads the flag where a person must decide`);
      } else {
        assert.deepEqual(remaining, [], `${fixture.name}: no reference left`);
        cleaned++;
      }
    }
    assert.ok(cleaned / fixtures.length >= 0.9, `${cleaned} of ${fixtures.length} cleaned whole`);
  });
});

describe('vexil refs cleanup, the command', () => {
  it('prints a patch git can apply, and refuses a call without a flag or a branch to keep with exit code 2', async () => {
    const folder = join(FIXTURES, 'ts-if-early-return');
    const outcome = await run(
      process.execPath,
      ['--import', 'tsx', join(ROOT, 'src/cli/vexil.ts'), 'refs', 'cleanup', 'new-checkout', '--keep', 'on', folder],
      ROOT,
    );
    assert.equal(outcome.status, 0, outcome.stderr);
    assert.match(outcome.stdout, /^--- a\/price\.ts\n\+\+\+ b\/price\.ts\n@@ /m);
    assert.match(outcome.stdout, /^- {2}if \(unleash\.isEnabled\('new-checkout'\)\) \{$/m);
    assert.match(outcome.stderr, /^The patch changes 1 files, keeping the on branch of new-checkout: price\.ts$/m);
    assert.match(outcome.stderr, /^Archive new-checkout in Vexil once a push of the cleaned branch shows no references left\.$/m);
    // Nothing was written: the fixture is as it was.
    assert.match(readFileSync(join(folder, 'price.ts'), 'utf8'), /isEnabled\('new-checkout'\)/);
    for (const [args, message] of [
      [['cleanup'], /cleanup needs the name of the flag to take out/],
      [['cleanup', 'new-checkout', folder], /cleanup needs --keep on or --keep off/],
      [['cleanup', 'new-checkout', '--keep', 'maybe', folder], /cleanup needs --keep on or --keep off/],
      [['cleanup', 'new-checkout', '--keep', 'on', folder, folder], /one directory at most/],
      [['cleanup', 'new-checkout', '--keep', 'on', join(folder, 'missing')], /is not a directory/],
    ] as const) {
      const refused = await runRefsCommand([...args], ROOT, {});
      assert.equal(refused.exitCode, 2, args.join(' '));
      assert.match(refused.stderr, message);
    }
  });
});
