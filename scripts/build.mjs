// Builds dist/ from src/ with tsc. With --if-stale (what `npm start` runs) it builds only when a source or build
// setting changed since the last build, so a restart costs no compilation.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const stamp = join(root, 'dist', '.build-stamp');
const inputs = ['src', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json'];

function newestChange(path) {
  const stats = statSync(path);
  if (!stats.isDirectory()) return stats.mtimeMs;
  return Math.max(stats.mtimeMs, ...readdirSync(path).map((entry) => newestChange(join(path, entry))));
}

function builtAt() {
  try {
    return statSync(stamp).mtimeMs;
  } catch {
    return -Infinity;
  }
}

if (process.argv.includes('--if-stale') && Math.max(...inputs.map((input) => newestChange(join(root, input)))) < builtAt()) {
  process.exit(0);
}
// A source saved while tsc runs is newer than the stamp, so the next start builds again.
const started = new Date();
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const result = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
if (result.status !== 0) process.exit(result.status ?? 1);
writeFileSync(stamp, `${started.toISOString()}\n`);
utimesSync(stamp, started, started);
