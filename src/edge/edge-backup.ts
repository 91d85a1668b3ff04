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

/**
 * The backup in `BACKUP_FOLDER`: written whole after each change (to a new file, then renamed over the old one, so
 * a crash mid-write leaves the previous backup), read at start-up.
 */
export class BackupFolder {
  private writing: Promise<void> = Promise.resolve();

  constructor(private readonly folder: string) {}

  /** The last backup, or undefined when there is none (a first start). A file that cannot be read is an error. */
  async read(): Promise<EdgeBackup | undefined> {
    let text: string;
    try {
      text = await readFile(join(this.folder, FILE), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    const backup = JSON.parse(text) as EdgeBackup;
    if (backup.version !== 1 || !Array.isArray(backup.syncs) || !Array.isArray(backup.tokens)) {
      throw new Error(`${join(this.folder, FILE)} is not a backup of this version of Vexil Edge`);
    }
    return backup;
  }

  /** Writes one backup after another, in the order asked: a slow disk never lets an older one land last. */
  write(backup: EdgeBackup): Promise<void> {
    // A failed write (told to its caller) does not stop the ones after it.
    this.writing = this.writing
      .catch(() => undefined)
      .then(async () => {
        await mkdir(this.folder, { recursive: true });
        const path = join(this.folder, FILE);
        await writeFile(`${path}.tmp`, JSON.stringify(backup));
        await rename(`${path}.tmp`, path);
      });
    return this.writing;
  }
}
