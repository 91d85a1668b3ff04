import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, extname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { createMarkdownRenderer } from 'vitepress';

/**
 * The documentation as a reader follows it: the README, CONTRIBUTING.md and every page of docs/, rendered by the
 * site's own Markdown renderer (VitePress), so anchors are the ids the site gives its headings.
 */
const ROOT = join(import.meta.dirname, '../..');
const DOCS = join(ROOT, 'docs');
const PAGES = [
  join(ROOT, 'README.md'),
  join(ROOT, 'CONTRIBUTING.md'),
  ...readdirSync(DOCS)
    .filter((name) => name.endsWith('.md'))
    .map((name) => join(DOCS, name)),
];

const renderer = await createMarkdownRenderer(DOCS);
const rendered = new Map<string, string>();
function html(page: string): string {
  let text = rendered.get(page);
  if (text === undefined) {
    text = renderer.render(readFileSync(page, 'utf8'), { relativePath: relative(DOCS, page), cleanUrls: true });
    rendered.set(page, text);
  }
  return text;
}
const anchorsOf = (page: string) => new Set([...html(page).matchAll(/\sid="([^"]+)"/g)].map((match) => match[1]!));
const decode = (text: string) => decodeURIComponent(text.replaceAll('&amp;', '&'));

/** Every link and image of a page that stays in the repository, as written in it after rendering. */
function localTargets(page: string): string[] {
  return [...html(page).matchAll(/<(?:a|img)\s[^>]*?(?:href|src)="([^"]+)"/g)]
    .map((match) => decode(match[1]!))
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

/** The file a link leads to: the site drops `.md` from page links (clean URLs). */
function fileOf(page: string, path: string): string {
  const target = resolve(dirname(page), path);
  if (extname(target) === '' && existsSync(`${target}.md`)) return `${target}.md`;
  if (existsSync(target) && statSync(target).isDirectory() && existsSync(join(target, 'index.md'))) return join(target, 'index.md');
  return target;
}

test('every link between the pages, and every anchor, leads somewhere that exists in the repository', () => {
  const broken: string[] = [];
  for (const page of PAGES) {
    for (const target of localTargets(page)) {
      const [path, anchor] = target.split('#') as [string, string | undefined];
      const file = path === '' ? page : fileOf(page, path);
      const where = `${relative(ROOT, page)} → ${target}`;
      if (relative(ROOT, file).startsWith('..')) broken.push(`${where} (outside the repository)`);
      else if (!existsSync(file)) broken.push(`${where} (no such file)`);
      else if (anchor && file.endsWith('.md') && !anchorsOf(file).has(anchor)) broken.push(`${where} (no such heading)`);
    }
  }
  assert.deepEqual(broken, []);
});

test('the README is a front page: at most 150 lines, the two commands first', () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  assert.ok(readme.split('\n').length <= 150, `the README has ${readme.split('\n').length} lines`);
  assert.match(readme, /^# Vexil\n\n```sh\nnpm ci && npm start .*\nnpm test .*\n```/);
});

test('npm run docs:build makes the site, a page for each document', () => {
  const out = mkdtempSync(join(tmpdir(), 'vexil-docs-'));
  try {
    const build = spawnSync(process.execPath, [join(ROOT, 'node_modules/vitepress/bin/vitepress.js'), 'build', DOCS, '--outDir', out], {
      encoding: 'utf8',
    });
    assert.equal(build.status, 0, build.stdout + build.stderr);
    assert.doesNotMatch(build.stdout + build.stderr, /Error/);
    const built = readdirSync(out).filter((name) => name.endsWith('.html'));
    const documents = readdirSync(DOCS).filter((name) => name.endsWith('.md'));
    assert.deepEqual(built.filter((name) => name !== '404.html').sort(), documents.map((name) => name.replace(/\.md$/, '.html')).sort());
    assert.match(readFileSync(join(out, 'configuration.html'), 'utf8'), /FLAG_EVALUATION_EVENTS_RATIO/);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});

test('the Node.js the documents name is the one package.json asks for and the image runs', () => {
  const { engines } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
  const oldest = Number(/\^(\d+)\./.exec(engines.node)![1]);
  const imageLine = /^FROM node:(\d+)-/m.exec(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'))![1]!;
  const stale: string[] = [];
  // PERFORMANCE.md measures older lines beside the current one on purpose; every other page describes today.
  for (const page of PAGES.filter((path) => !path.endsWith('PERFORMANCE.md'))) {
    const text = readFileSync(page, 'utf8');
    for (const [mention, line] of text.matchAll(/\bNode(?:\.js)?:? (\d{2})\b/g)) {
      if (Number(line) < oldest) stale.push(`${relative(ROOT, page)}: "${mention}" (package.json asks for ${engines.node})`);
    }
    for (const [mention, line] of text.matchAll(/\bnode:(\d{2})-/g)) {
      if (line !== imageLine) stale.push(`${relative(ROOT, page)}: "${mention}" (the Dockerfile is on node:${imageLine})`);
    }
  }
  assert.deepEqual(stale, []);
});
