/**
 * Code references: `vexil refs scan` on a generated repository of a million lines, a push of 10,000 references, and
 * a flag's references read at 5,000 flags.
 *   npm run bench:refs [-- --lines 1000000 --references 10000 --flags 5000]
 * The repository is TypeScript, Python and Go in equal parts, files of 500 lines with an SDK call every 25 lines and
 * ordinary code between. The server runs on an embedded database of its own, as `npm start` runs it.
 */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { cleanUpFlag } from '../src/domain/code-references/code-reading/flag-cleanup.js';
import { scanRepository, sourceTexts } from '../src/domain/code-references/code-reading/scanner.js';
import { ms, percentile } from './measure.js';
import { startServer, TOKEN } from './server.js';

const LINES_PER_FILE = 500;
const CLEANED_FLAG = 'flag-42';
const CALL_EVERY = 25;

const FILLERS = {
  ts: (i: number) => `  const total${i} = items.reduce((sum, item) => sum + item.price * item.quantity, ${i});`,
  py: (i: number) => `    total_${i} = sum(item.price * item.quantity for item in items) + ${i}`,
  go: (i: number) => `\ttotal${i} := computeTotal(items, ${i})`,
};
const CALLS = {
  ts: (flag: string) => `  if (unleash.isEnabled('${flag}', context)) render();`,
  py: (flag: string) => `    if client.is_enabled("${flag}", context): render()`,
  go: (flag: string) => `\tif unleash.IsEnabled("${flag}") { render() }`,
};
const HEADERS = { ts: 'export function page(items, context) {', py: 'def page(items, context):', go: 'package main\n\nfunc page() {' };
const FOOTERS = { ts: '}', py: '    return None', go: '}' };

/** A repository of about `lines` lines; returns its folder and how many references it holds. */
async function generateRepository(lines: number): Promise<{ root: string; references: number; files: number }> {
  const root = await mkdtemp(join(tmpdir(), 'vexil-refs-bench-'));
  const kinds = ['ts', 'py', 'go'] as const;
  const files = Math.ceil(lines / LINES_PER_FILE);
  let references = 0;
  for (let file = 0; file < files; file++) {
    const kind = kinds[file % kinds.length]!;
    const body: string[] = [HEADERS[kind]];
    for (let line = 1; line < LINES_PER_FILE - 1; line++) {
      if (line % CALL_EVERY === 0) {
        body.push(CALLS[kind](`flag-${(file * 31 + line) % 5000}`));
        references++;
      } else body.push(FILLERS[kind](line));
    }
    body.push(FOOTERS[kind]);
    const folder = join(root, `module-${Math.floor(file / 100)}`);
    await mkdir(folder, { recursive: true });
    await writeFile(join(folder, `file-${file}.${kind}`), `${body.join('\n')}\n`);
  }
  return { root, references, files };
}

async function call(baseUrl: string, method: string, path: string, body?: unknown): Promise<Response> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: TOKEN, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${await response.text()}`);
  return response;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      lines: { type: 'string', default: '1000000' },
      references: { type: 'string', default: '10000' },
      flags: { type: 'string', default: '5000' },
    },
  });
  const lines: string[] = [];

  const repository = await generateRepository(Number(values.lines));
  try {
    const started = performance.now();
    const scan = await scanRepository(repository.root);
    const seconds = (performance.now() - started) / 1000;
    const found = scan.references.filter((reference) => reference.flag !== null).length;
    lines.push(
      `vexil refs scan, ${Number(values.lines).toLocaleString('en')} lines in ${repository.files.toLocaleString('en')} files (TypeScript, Python, Go): **${seconds.toFixed(1)} s** (target ≤ 30 s), ${found.toLocaleString('en')} of ${repository.references.toLocaleString('en')} references found`,
    );

    // `vexil refs cleanup` is that scan, then reading the files and rewriting those that read the flag.
    const cleanupStarted = performance.now();
    const cleanup = await cleanUpFlag(await sourceTexts(repository.root), CLEANED_FLAG, true, { references: scan.references });
    const cleanupSeconds = (performance.now() - cleanupStarted) / 1000;
    const places = scan.references.filter((reference) => reference.flag === CLEANED_FLAG).length;
    lines.push(
      `vexil refs cleanup of one flag (${places} references, ${cleanup.changed.length} files changed, ${cleanup.leftForPerson.length} Go places left for a person) in the same repository: **${(seconds + cleanupSeconds).toFixed(1)} s** (the scan, then ${cleanupSeconds.toFixed(1)} s to read the files and rewrite)`,
    );
  } finally {
    await rm(repository.root, { recursive: true, force: true });
  }

  const dataDir = await mkdtemp(join(tmpdir(), 'vexil-refs-server-'));
  const server = await startServer({ DATA_DIR: dataDir });
  try {
    const flagCount = Number(values.flags);
    const names = Array.from({ length: flagCount }, (_, index) => `flag-${index}`);
    for (let from = 0; from < names.length; from += 1000) {
      const chunk = names.slice(from, from + 1000);
      await call(server.baseUrl, 'POST', '/api/admin/features-batch/import', {
        project: 'default',
        environment: 'production',
        data: { features: chunk.map((name) => ({ name, type: 'release' })), featureStrategies: [], featureEnvironments: [], tagTypes: [] },
      });
    }
    const count = Number(values.references);
    const references = Array.from({ length: count }, (_, index) => ({
      flag: names[index % flagCount]!,
      file: `src/module-${index % 40}/file-${index % 700}.ts`,
      line: (index % 480) + 1,
      column: 7,
      language: 'TypeScript',
      call: 'isEnabled',
      expression: `'${names[index % flagCount]}'`,
      context: [
        'export function page(items, context) {',
        `  if (unleash.isEnabled('${names[index % flagCount]}', context)) render();`,
        '}',
      ],
    }));
    const pushes: number[] = [];
    for (let round = 0; round < 3; round++) {
      const commit = (round + 1).toString(16).padStart(40, 'a');
      const started = performance.now();
      await call(server.baseUrl, 'POST', '/api/admin/code-references', {
        repository: 'acme/monorepo',
        branch: 'main',
        commit,
        urlTemplate: 'https://github.com/acme/monorepo/blob/{commit}/{file}#L{line}',
        references,
      });
      pushes.push(performance.now() - started);
    }
    pushes.sort((a, b) => a - b);
    lines.push(
      `A push of ${count.toLocaleString('en')} references (${flagCount.toLocaleString('en')} flags), median of 3: **${ms(pushes[1]!)}** (${pushes.map(ms).join(', ')}; target ≤ 2 s)`,
    );

    const reads: number[] = [];
    for (let round = 0; round < 200; round++) {
      const started = performance.now();
      await (await call(server.baseUrl, 'GET', `/api/admin/projects/default/features/${names[round % flagCount]}/code-references`)).json();
      reads.push(performance.now() - started);
    }
    reads.sort((a, b) => a - b);
    lines.push(
      `A flag's references at ${flagCount.toLocaleString('en')} flags and ${count.toLocaleString('en')} references, 200 reads: p50 **${ms(percentile(reads, 0.5))}**, p99 ${ms(percentile(reads, 0.99))} (target ≤ 100 ms)`,
    );
  } finally {
    server.process.kill('SIGTERM');
    if (server.process.exitCode === null) await new Promise((resolve) => server.process.once('exit', resolve));
    await rm(dataDir, { recursive: true, force: true });
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

await main();
