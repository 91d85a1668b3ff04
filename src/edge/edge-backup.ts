import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ClientFeature, ClientSegment } from '../domain/client-features/environment-configuration.js';
import type { UpstreamToken } from './upstream-client.js';

/** A token's scope as the backup keeps it: under the token's hash, never the secret. */
export interface BackedUpToken extends Omit<UpstreamToken, 'token'> {
  tokenHash: string;
}

/** What one synchronised client token last received from upstream. */
export interface BackedUpSync {
  tokenHash: string;
  environment: string;
  projects: string[];
  etag: string | undefined;
  revision: number | undefined;
  features: ClientFeature[];
  segments: ClientSegment[];
}

/** Everything an edge needs to serve while its upstream is away: the flags of each sync, and the tokens it knows. */
export interface EdgeBackup {
  version: 1;
  writtenAt: string;
  tokens: BackedUpToken[];
  syncs: BackedUpSync[];
}

const FILE = 'vexil-edge-backup.json';

/** Where a backup is kept: BACKUP_FOLDER, Redis (REDIS_URL), or both. */
export interface BackupStore {
  /** What it is, for the log. */
  readonly name: string;
  /** The last backup, or undefined when there is none (a first start). */
  read(): Promise<EdgeBackup | undefined>;
  write(backup: EdgeBackup): Promise<void>;
  close(): Promise<void>;
}

function parsed(text: string, where: string): EdgeBackup {
  const backup = JSON.parse(text) as EdgeBackup;
  if (backup.version !== 1 || !Array.isArray(backup.syncs) || !Array.isArray(backup.tokens)) {
    throw new Error(`${where} is not a backup of this version of Vexil Edge`);
  }
  return backup;
}

/**
 * The backup in `BACKUP_FOLDER`: written whole after each change (to a new file, then renamed over the old one, so
 * a crash mid-write leaves the previous backup), read at start-up.
 */
export class BackupFolder implements BackupStore {
  private writing: Promise<void> = Promise.resolve();
  readonly name: string;

  constructor(private readonly folder: string) {
    this.name = join(folder, FILE);
  }

  async read(): Promise<EdgeBackup | undefined> {
    let text: string;
    try {
      text = await readFile(this.name, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    return parsed(text, this.name);
  }

  /** Writes one backup after another, in the order asked: a slow disk never lets an older one land last. */
  write(backup: EdgeBackup): Promise<void> {
    // A failed write (told to its caller) does not stop the ones after it.
    this.writing = this.writing
      .catch(() => undefined)
      .then(async () => {
        await mkdir(this.folder, { recursive: true });
        await writeFile(`${this.name}.tmp`, JSON.stringify(backup));
        await rename(`${this.name}.tmp`, this.name);
      });
    return this.writing;
  }

  async close(): Promise<void> {
    await this.writing.catch(() => undefined);
  }
}

const REDIS_KEY = 'vexil-edge:backup';
const CONNECT_TIMEOUT_MS = 2_000;

/**
 * The backup in Redis (REDIS_URL), one key that every edge sharing the Redis writes and reads: a new edge starts from
 * it while the upstream is away even on a machine that never ran one. A command while Redis is away fails at once
 * rather than queueing: the next change writes the backup whole again.
 */
export class RedisBackup implements BackupStore {
  readonly name: string;

  private constructor(
    private readonly client: RedisClient,
    url: URL,
  ) {
    this.name = `Redis at ${url.host}`;
  }

  static async connect(url: string, onError: (error: Error) => void): Promise<RedisBackup> {
    // Loaded only by edges that use Redis.
    const { createClient } = await import('redis');
    const client = createClient({
      url,
      disableOfflineQueue: true,
      socket: { connectTimeout: CONNECT_TIMEOUT_MS, reconnectStrategy: (retries) => Math.min(100 * 2 ** retries, 10_000) },
    });
    client.on('error', onError);
    // A Redis that does not answer at start must not hold the edge's start-up (it keeps trying to connect).
    let timer: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no connection within ${CONNECT_TIMEOUT_MS} ms`)), CONNECT_TIMEOUT_MS);
    });
    try {
      await Promise.race([client.connect(), gaveUp]);
    } catch (error) {
      client.destroy();
      throw error;
    } finally {
      clearTimeout(timer);
    }
    return new RedisBackup(client, new URL(url));
  }

  async read(): Promise<EdgeBackup | undefined> {
    const text = await this.client.get(REDIS_KEY);
    return text === null ? undefined : parsed(text, `${this.name}, key ${REDIS_KEY}`);
  }

  async write(backup: EdgeBackup): Promise<void> {
    await this.client.set(REDIS_KEY, JSON.stringify(backup));
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}

/** What the backup uses of a Redis client. */
interface RedisClient {
  get(key: string): Promise<string | null>;
  destroy(): void;
  set(key: string, value: string): Promise<unknown>;
  close(): Promise<unknown>;
}
