/**
 * The headline figures on two (or more) Node lines in one run, so a change of runtime is judged on the same machine
 * at the same hour:
 *   npm run bench:node-lines -- --data-dir ./bench-data [--lines 20,26] [--duration 5] [--cases …]
 * Each line's newest Node comes from the npm registry (scripts/node-line.sh). For every case, `bench/run.ts --only`
 * runs once on each line in turn, Vexil's server and edge started by that Node, and the two answers are printed
 * together: table rows side by side, other figures one under the other.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const ROOT = join(import.meta.dirname, '..');
/** The benchmark's cases that docs/PERFORMANCE.md leads with (names as `bench/run.ts --cases` matches them). */
const HEADLINE_CASES = ['frontend API', 'OFREP', 'evaluation engine', 'vexil edge'];

const { values } = parseArgs({
  options: {
    'data-dir': { type: 'string' },
    'database-url': { type: 'string' },
    lines: { type: 'string', default: '20,26' },
    duration: { type: 'string', default: '5' },
    cases: { type: 'string', multiple: true },
  },
});
const database = values['database-url'] ? ['--database-url', values['database-url']] : ['--data-dir', values['data-dir'] ?? './bench-data'];
const lines = values.lines.split(',').map((line) => {
  const home = execFileSync(join(ROOT, 'scripts/node-line.sh'), [line.trim()], { encoding: 'utf8' }).trim();
  const node = join(home, 'bin/node');
  return { node, version: execFileSync(node, ['--version'], { encoding: 'utf8' }).trim() };
});

/** One case on one Node: bench/run.ts's report, lines of text. */
function runCase(node: string, benchCase: string): string[] {
  const run = spawnSync(
    node,
    ['--import', 'tsx', join(ROOT, 'bench/run.ts'), '--only', '--cases', benchCase, '--duration', values.duration, ...database],
    { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 16 * 1024 * 1024 },
  );
  if (run.status !== 0) throw new Error(`bench/run.ts --cases '${benchCase}' on ${node} exited with ${run.status}`);
  return run.stdout.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('|---') && !line.startsWith('| case '));
}

process.stdout.write(`Node lines: ${lines.map((line) => line.version).join(', ')}\n`);
for (const benchCase of values.cases ?? HEADLINE_CASES) {
  const reports = lines.map((line) => runCase(line.node, benchCase));
  process.stdout.write(`\n## ${benchCase}\n\n`);
  // The case table's rows (case, then c=1 and c=N req/s, p50, p99) are merged side by side; any other line, the
  // edge's rows among them, is printed once per line, one under the other.
  const caseRow = (line: string) => line.startsWith('| ') && line.split('|').length === 9;
  const rows = reports.map((report) => report.filter(caseRow));
  if (rows[0]!.length > 0) {
    // Table rows: the case, then each line's c=1 and c=N figures (req/s, p50, p99) in one row.
    const cells = (row: string) =>
      row
        .split('|')
        .slice(1, -1)
        .map((cell) => cell.trim());
    process.stdout.write(`| case | ${lines.map((line) => `${line.version}: c=1 req/s, p99 | c=N req/s, p99`).join(' | ')} |\n`);
    process.stdout.write(`|---|${lines.map(() => '---|---|').join('')}\n`);
    rows[0]!.forEach((row, index) => {
      const figures = rows.map((lineRows) => {
        const [, oneRps, , oneP99, manyRps, , manyP99] = cells(lineRows[index] ?? '');
        return `${oneRps}, ${oneP99} | ${manyRps}, ${manyP99}`;
      });
      process.stdout.write(`| ${cells(row)[0]} | ${figures.join(' | ')} |\n`);
    });
  }
  const others = reports.map((report) => report.filter((line) => !caseRow(line)));
  others[0]!.forEach((_, index) => {
    for (const [lineIndex, line] of lines.entries()) process.stdout.write(`${line.version}: ${others[lineIndex]![index] ?? ''}\n`);
  });
}
