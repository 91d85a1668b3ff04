import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';

/** Thrown when another live process holds the embedded database's directory. */
export class DataDirInUseError extends Error {
  override readonly name = 'DataDirInUseError';
}

const LOCK_FILE = 'vexil.lock';

interface LockOwner {
  pid: number;
  host: string;
}

function readOwner(path: string): LockOwner | undefined {
  try {
    const owner = JSON.parse(readFileSync(path, 'utf8')) as Partial<LockOwner>;
    return typeof owner.pid === 'number' && typeof owner.host === 'string' ? { pid: owner.pid, host: owner.host } : undefined;
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes the embedded database's directory for this process's life. PGlite has no locking of its own: two
 * processes on one directory each keep their own copy in memory and overwrite each other's files, losing
 * acknowledged writes. The lock file names its owner; a lock whose owner is gone (a crash, kill -9) is stale
 * and taken over, so it never blocks a restart. Returns the release function.
 */
export function lockDataDir(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, LOCK_FILE);
  const me: LockOwner = { pid: process.pid, host: hostname() };
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, JSON.stringify(me));
      closeSync(fd);
      return () => {
        if (readOwner(path)?.pid === me.pid) unlinkSync(path);
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const owner = readOwner(path);
    // Same host and a live process other than this one (a restarted container may reuse the dead owner's pid).
    if (owner && owner.host === me.host && owner.pid !== me.pid && isAlive(owner.pid)) {
      throw new DataDirInUseError(
        `the data directory ${dataDir} is in use by another Vexil (pid ${owner.pid}); stop it or set another DATA_DIR`,
      );
    }
    if (owner && owner.host !== me.host) {
      throw new DataDirInUseError(
        `the data directory ${dataDir} is locked by a Vexil on host ${owner.host} (pid ${owner.pid}); ` +
          `if that process is gone, delete ${path}`,
      );
    }
    // Stale: its owner is gone, or the file was left half-written. Remove it and try again.
    try {
      unlinkSync(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  throw new DataDirInUseError(`the data directory ${dataDir} is being taken by another process; try again`);
}
