// Builds dist/: the server with tsc (src/ → dist/) and the web UI with Vite (web/ → dist/web/). Targets can be
// named (`node scripts/build.mjs web`); none means both. With --if-stale (what `npm start` runs) a target is
// built only when one of its inputs changed since its last build, so a restart costs no compilation.
import { spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { extname, join } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const root = join(import.meta.dirname, '..');
const require = createRequire(import.meta.url);

const TARGETS = {
  server: {
    inputs: ['src', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json'],
    command: [require.resolve('typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json')],
  },
  web: {
    inputs: ['web', 'package-lock.json'],
    command: [join(root, 'node_modules/vite/bin/vite.js'), 'build', '--logLevel', 'warn', join(root, 'web')],
    after: () => precompress(join(root, 'dist/web')),
  },
};

/**
 * Writes .br and .gz beside each text file of the UI, once at build time, so the server sends them to browsers
 * that accept them (about a quarter of the size) without compressing on every request.
 */
function precompress(directory) {
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) precompress(path);
    else if (['.js', '.css', '.html', '.svg'].includes(extname(entry.name))) {
      const content = readFileSync(path);
      if (content.length < 1024) continue;
      writeFileSync(`${path}.br`, brotliCompressSync(content, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
      writeFileSync(`${path}.gz`, gzipSync(content, { level: 9 }));
    }
  }
}

function newestChange(path) {
  const stats = statSync(path);
  if (!stats.isDirectory()) return stats.mtimeMs;
  return Math.max(stats.mtimeMs, ...readdirSync(path).map((entry) => newestChange(join(path, entry))));
}

function builtAt(stamp) {
  try {
    return statSync(stamp).mtimeMs;
  } catch {
    return -Infinity;
  }
}

/**
 * Holds dist/.build-lock-<target> while building it: test processes running side by side each ask for a fresh
 * UI, and two Vite builds into one directory delete each other's files. A waiting build checks staleness again
 * once it holds the lock, so it finds the other's result and skips. A lock whose process is gone is taken over.
 */
function withBuildLock(name, build) {
  mkdirSync(join(root, 'dist'), { recursive: true });
  const lock = join(root, 'dist', `.build-lock-${name}`);
  for (;;) {
    try {
      const fd = openSync(lock, 'wx');
      writeFileSync(fd, String(process.pid));
      closeSync(fd);
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      if (isAbandoned(lock)) rmSync(lock, { force: true });
      else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
    }
  }
  try {
    return build();
  } finally {
    rmSync(lock, { force: true });
  }
}

/** A lock whose process is gone, or one left empty (its process died between creating and writing it). */
function isAbandoned(lock) {
  let content, modified;
  try {
    content = readFileSync(lock, 'utf8');
    modified = statSync(lock).mtimeMs;
  } catch {
    return false; // released meanwhile: the next attempt takes it
  }
  const pid = Number(content);
  if (!pid) return Date.now() - modified > 5_000;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return error.code !== 'EPERM';
  }
}

const ifStale = process.argv.includes('--if-stale');
const named = process.argv.slice(2).filter((argument) => !argument.startsWith('--'));
for (const name of named.length ? named : Object.keys(TARGETS)) {
  const target = TARGETS[name];
  if (!target) {
    process.stderr.write(`Unknown build target "${name}" (known: ${Object.keys(TARGETS).join(', ')})\n`);
    process.exit(2);
  }
  // Outside dist/web, which Vite empties on each build.
  const stamp = join(root, 'dist', `.build-stamp-${name}`);
  const isFresh = () => ifStale && Math.max(...target.inputs.map((input) => newestChange(join(root, input)))) < builtAt(stamp);
  if (isFresh()) continue;
  const status = withBuildLock(name, () => {
    if (isFresh()) return 0;
    // A source saved while the build runs is newer than the stamp, so the next start builds again.
    const started = new Date();
    const result = spawnSync(process.execPath, target.command, { stdio: 'inherit', cwd: root });
    if (result.status !== 0) return result.status ?? 1;
    target.after?.();
    writeFileSync(stamp, `${started.toISOString()}\n`);
    utimesSync(stamp, started, started);
    return 0;
  });
  if (status !== 0) process.exit(status);
}
