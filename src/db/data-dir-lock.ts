import { closeSync, mkdirSync, openSync, readFileSync, statSync, unlinkSync, utimesSync, writeSync } from 'node:fs';
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

/** How often the owner touches its lock file, to show it is alive to processes that cannot see its pid. */
const HEARTBEAT_MS = 5_000;
/** A lock of another host not touched for this long belongs to a process that is gone. */
const SILENT_OWNER_MS = 4 * HEARTBEAT_MS;
/** A lock older than this is stale at once, whatever the clocks of two hosts say. */
const LONG_STALE_MS = 5 * 60_000;

function modifiedAt(path: string): number | undefined {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return undefined;
  }
}

/**
 * Whether the owner on another host still touches the lock: watched for SILENT_OWNER_MS unless it is long stale.
 * The other host's pid cannot be checked from here; this covers a container started anew after a crash (its host
 * name is new) as well as two hosts sharing a volume.
 */
async function ownerTouches(path: string): Promise<boolean> {
  const first = modifiedAt(path);
  if (first === undefined || Date.now() - first > LONG_STALE_MS) return false;
  const until = Date.now() + SILENT_OWNER_MS;
  while (Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, HEARTBEAT_MS / 5));
    const now = modifiedAt(path);
    if (now === undefined) return false;
    if (now !== first) return true;
  }
  return false;
}

/**
 * Takes the embedded database's directory for this process's life. PGlite has no locking of its own: two
 * processes on one directory each keep their own copy in memory and overwrite each other's files, losing
 * acknowledged writes. The lock file names its owner, who touches it every few seconds; a lock whose owner is
 * gone (a crash, kill -9, a container replaced) is stale and taken over, so it never blocks a restart for long.
 * Returns the release function.
 */
export async function lockDataDir(dataDir: string): Promise<() => void> {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, LOCK_FILE);
  const me: LockOwner = { pid: process.pid, host: hostname() };
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, JSON.stringify(me));
      closeSync(fd);
      const heartbeat = setInterval(() => {
        const now = new Date();
        try {
          utimesSync(path, now, now);
        } catch {
          // Removed from under us: the release below finds nothing to remove either.
        }
      }, HEARTBEAT_MS).unref();
      return () => {
        clearInterval(heartbeat);
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
    if (owner && owner.host !== me.host && (await ownerTouches(path))) {
      throw new DataDirInUseError(
        `the data directory ${dataDir} is in use by a Vexil on host ${owner.host} (pid ${owner.pid}); stop it or set another DATA_DIR`,
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
