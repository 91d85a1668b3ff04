import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

/*
 * `vexil refs scan` run as a user runs it, on the labelled corpus in test/fixtures/refs: each line that reads a flag
 * says so in a comment (`ref: new-checkout`, or `ref: ?` where the name is built at run time and must be reported as
 * unresolved); every other line, comments and strings that mention a flag among them, must yield nothing.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CORPUS = join(ROOT, 'test/fixtures/refs');

interface Reference {
  flag: string | null;
  file: string;
  line: number;
  language: string;
  call: string;
  resolution: string;
}

function vexil(args: string[], cwd = ROOT) {
  const result = spawnSync(process.execPath, ['--import', import.meta.resolve('tsx'), join(ROOT, 'src/cli/vexil.ts'), ...args], {
    cwd,
    encoding: 'utf8',
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function expectedReferences(): Set<string> {
  const expected = new Set<string>();
  const visit = (folder: string, prefix: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      if (entry.isDirectory()) visit(join(folder, entry.name), `${prefix}${entry.name}/`);
      else {
        readFileSync(join(folder, entry.name), 'utf8')
          .split('\n')
          .forEach((text, index) => {
            // One marker may name several references of its line: `ref: a, b`.
            const marker = /(?:\/\/|#|\/\*)\s*ref:\s*([^\s,]+(?:,\s*[^\s,]+)*)/.exec(text);
            for (const flag of marker?.[1]?.split(/,\s*/) ?? []) {
              expected.add(`${prefix}${entry.name}:${index + 1}:${flag === '?' ? null : flag}`);
            }
          });
      }
    }
  };
  visit(CORPUS, '');
  return expected;
}

describe('vexil refs scan', () => {
  // The corpus's wrappers (useFeature, isFeatureOn, feature_required) come from its .vexil-refs.json.
  const scan = vexil(['refs', 'scan', CORPUS, '--json']);
  const found: Reference[] = scan.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Reference);

  it('finds the references of the labelled corpus in every language, precision 1 and recall 1 in each', () => {
    assert.equal(scan.status, 0, scan.stderr);
    const expected = expectedReferences();
    const keyOf = (reference: Reference) => `${reference.file}:${reference.line}:${reference.flag}`;
    const byLanguage = new Map<string, { found: number; right: number; expected: number }>();
    const languageOf = (key: string) => key.split('/')[0]!;
    for (const key of expected) {
      const tally = byLanguage.get(languageOf(key)) ?? { found: 0, right: 0, expected: 0 };
      tally.expected++;
      byLanguage.set(languageOf(key), tally);
    }
    for (const reference of found) {
      const tally = byLanguage.get(languageOf(reference.file)) ?? { found: 0, right: 0, expected: 0 };
      tally.found++;
      if (expected.has(keyOf(reference))) tally.right++;
      byLanguage.set(languageOf(reference.file), tally);
    }
    assert.deepEqual([...byLanguage.keys()].sort(), [
      'csharp',
      'dart',
      'elixir',
      'go',
      'java',
      'javascript',
      'kotlin',
      'php',
      'python',
      'ruby',
      'rust',
      'swift',
      'typescript',
    ]);
    const missed = [...expected].filter((key) => !found.some((reference) => keyOf(reference) === key));
    const wrong = found.filter((reference) => !expected.has(keyOf(reference))).map(keyOf);
    assert.deepEqual({ missed, wrong }, { missed: [], wrong: [] });
    for (const [language, tally] of byLanguage) {
      assert.equal(tally.right / tally.found, 1, `${language}: precision`);
      assert.equal(tally.right / tally.expected, 1, `${language}: recall`);
    }
    assert.ok(expected.size >= 508, `${expected.size} labelled references`);
  });

  it('says how it found each name: written out, a constant of the file, one imported from another', () => {
    const at = (file: string, flag: string) => found.find((reference) => reference.file === file && reference.flag === flag);
    assert.deepEqual(
      [
        at('typescript/checkout.ts', 'checkout-redesign'),
        at('typescript/checkout.ts', 'local-banner'),
        at('typescript/checkout.ts', 'dark-mode'),
      ].map((reference) => [reference?.call, reference?.language, reference?.resolution]),
      [
        ['isEnabled', 'TypeScript', 'literal'],
        ['isEnabled', 'TypeScript', 'constant in the file'],
        ['isEnabled', 'TypeScript', 'constant in another file'],
      ],
    );
  });

  it('prints a readable summary, and exits 1 on unresolved names only when asked to', () => {
    const folder = mkdtempSync(join(tmpdir(), 'vexil-refs-'));
    try {
      writeFileSync(join(folder, 'app.py'), 'client.is_enabled("summary-flag")\nclient.is_enabled(name)\nflag_on("wrapped-flag")\n');
      const summary = vexil(['refs', 'scan', '--wrapper', 'flag_on'], folder);
      assert.equal(summary.status, 0, summary.stderr);
      assert.equal(
        summary.stdout,
        [
          '3 references to 2 flags in 1 files; 1 whose flag could not be worked out',
          '  summary-flag: app.py:1',
          '  wrapped-flag: app.py:3',
          'Unresolved (the flag is named by an expression the scanner cannot follow):',
          '  app.py:2 is_enabled(name)',
          '',
        ].join('\n'),
      );
      assert.equal(vexil(['refs', 'scan', '--fail-on-unresolved'], folder).status, 1);
      // A settings file that is not what it should be stops the scan and says what it must hold.
      for (const bad of ['{"wrappers": ', '{"wrappers": ["ok", "not a name"]}', '{"wrapers": ["flag_on"]}', '[]']) {
        writeFileSync(join(folder, '.vexil-refs.json'), bad);
        const refused = vexil(['refs', 'scan'], folder);
        assert.equal(refused.status, 2, bad);
        assert.match(refused.stderr, /\.vexil-refs\.json (is not JSON|holds \{"wrappers": \[function names\]\} and nothing else)/, bad);
      }
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('a repository of many files is read on worker threads, with names still looked up across files', () => {
    const folder = mkdtempSync(join(tmpdir(), 'vexil-refs-threads-'));
    try {
      writeFileSync(join(folder, 'flags.py'), 'SHARED = "shared-flag"\n');
      for (let index = 0; index < 200; index++) {
        writeFileSync(
          join(folder, `module_${index}.py`),
          `from flags import SHARED\nclient.is_enabled("flag-${index}")\nclient.is_enabled(SHARED)\n`,
        );
      }
      const scanned = vexil(['refs', 'scan', folder, '--json']);
      assert.equal(scanned.status, 0, scanned.stderr);
      const flags = scanned.stdout
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as Reference).flag);
      assert.equal(flags.length, 400);
      assert.equal(flags.filter((flag) => flag === 'shared-flag').length, 200);
      assert.deepEqual(
        new Set(flags.filter((flag) => flag !== 'shared-flag')),
        new Set(Array.from({ length: 200 }, (_, index) => `flag-${index}`)),
      );
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('names the files it could read only in part', () => {
    const folder = mkdtempSync(join(tmpdir(), 'vexil-refs-partial-'));
    try {
      writeFileSync(join(folder, 'a.py'), 'client.is_enabled("whole")\n');
      writeFileSync(join(folder, 'b.py'), 'def broken(:\n    client.is_enabled("partial")\n');
      const scanned = vexil(['refs', 'scan'], folder);
      assert.equal(scanned.status, 0, scanned.stderr);
      assert.match(scanned.stdout, /^Read in part \(syntax errors\): b\.py$/m);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('a usage error exits 2 and says what was wrong', () => {
    const missing = vexil(['refs', 'scan', '/no/such/folder']);
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /\/no\/such\/folder is not a directory/);
    const unknown = vexil(['refs', 'scan', '--colour']);
    assert.equal(unknown.status, 2);
    assert.match(unknown.stderr, /Unknown option '--colour'/);
    assert.match(vexil(['refs', 'frobnicate']).stderr, /unknown command "frobnicate"/);
  });
});
