import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';

const root = fileURLToPath(new URL('../../', import.meta.url));
const fixture = fileURLToPath(new URL('../fixtures/domain-floors/', import.meta.url));
const config = createRequire(import.meta.url)('../../.dependency-cruiser.cjs') as { forbidden: { name: string }[] };
const run = promisify(execFile);

describe('the floors inside src/domain', () => {
  it('puts every area of src/domain on a floor', () => {
    const areas = readdirSync(`${root}src/domain`, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    const loose = readdirSync(`${root}src/domain`).filter((name) => name.endsWith('.ts'));
    assert.deepEqual(loose, [], 'every module of src/domain belongs to an area folder');
    const ruled = new Set(config.forbidden.map((rule) => rule.name));
    assert.deepEqual(
      areas.filter((area) => !ruled.has(`domain-${area}-imports-lower-floors`)),
      [],
    );
  });

  it('refuses an import from an area to one on a higher floor', async () => {
    const check = run(`${root}node_modules/.bin/depcruise`, ['src', '--config', `${root}.dependency-cruiser.cjs`, '--output-type', 'err'], {
      cwd: fixture,
    });
    const failure = await check.then(
      () => assert.fail('the upward import passed the check'),
      (error: { code: number; stdout: string }) => error,
    );
    assert.equal(failure.code, 1);
    assert.match(
      failure.stdout,
      /error domain-access-imports-lower-floors: src\/domain\/access\/upward-import\.ts → src\/domain\/features\/flag-name\.ts/,
    );
  });
});

describe('units of work', () => {
  it('are the only transactions: nothing outside src/db opens one', () => {
    const sources = readdirSync(`${root}src`, { recursive: true, encoding: 'utf8' }).filter(
      (path) => path.endsWith('.ts') && !path.startsWith('db/'),
    );
    assert.ok(sources.length > 100, 'the source tree was read');
    assert.deepEqual(
      sources.filter((path) => readFileSync(`${root}src/${path}`, 'utf8').includes('.transaction()')),
      [],
    );
  });
});

describe('tables', () => {
  it('each have one writer: the area of src/domain that owns it, and nothing outside src/domain writes one', () => {
    const writers = new Map<string, Set<string>>();
    const sources = readdirSync(`${root}src`, { recursive: true, encoding: 'utf8' }).filter(
      (path) => path.endsWith('.ts') && !path.startsWith('db/migrations/'),
    );
    for (const path of sources) {
      const owner = path.startsWith('domain/') ? path.split('/')[1]! : path.split('/')[0]!;
      for (const match of readFileSync(`${root}src/${path}`, 'utf8').matchAll(/(?:insertInto|updateTable|deleteFrom)\('([a-z_]+)'/g)) {
        const table = match[1]!;
        writers.set(table, new Set([...(writers.get(table) ?? []), owner]));
      }
    }
    assert.ok(writers.size > 30, 'the writes were read');
    const shared = [...writers].filter(([, owners]) => owners.size > 1).map(([table, owners]) => `${table}: ${[...owners].join(', ')}`);
    const outside = [...writers]
      .filter(([, owners]) => [...owners].some((owner) => !sources.some((path) => path.startsWith(`domain/${owner}/`))))
      .map(([table, owners]) => `${table}: ${[...owners].join(', ')}`);
    assert.deepEqual(shared, []);
    assert.deepEqual(outside, []);
  });
});
