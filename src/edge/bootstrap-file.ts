import { readFile } from 'node:fs/promises';
import type { ClientFeature, ClientSegment, EnvironmentConfiguration } from '../domain/client-features/environment-configuration.js';
import { ConfigurationFeed, type FeedStatus } from './configuration-feed.js';

/** Every environment reads the file's flags: an offline edge holds one configuration, whatever a token's environment. */
const FILE_ENVIRONMENT = '';

/**
 * Offline mode's flags: a features document as `/api/client/features` answers it (from Unleash or Vexil), read at
 * start and again on the reload interval. A file that cannot be read or is not such a document keeps the flags read
 * before (at start it stops the edge: there would be nothing to serve).
 */
export class BootstrapFile extends ConfigurationFeed {
  readonly status: FeedStatus = { reachable: false, lastSuccessAt: undefined, lastError: undefined, changes: 'file' };

  constructor(
    private readonly path: string,
    onChange: () => void,
  ) {
    super(onChange);
  }

  async read(): Promise<void> {
    let document: { features?: unknown; segments?: unknown };
    try {
      document = JSON.parse(await readFile(this.path, 'utf8')) as typeof document;
    } catch (error) {
      this.status.lastError = `${this.path} cannot be read as JSON: ${(error as Error).message}`;
      throw new Error(this.status.lastError);
    }
    if (!document || !Array.isArray(document.features)) {
      this.status.lastError = `${this.path} has no "features" list: it should be what /api/client/features answers`;
      throw new Error(this.status.lastError);
    }
    const segments = Array.isArray(document.segments) ? (document.segments as ClientSegment[]) : [];
    this.publish(FILE_ENVIRONMENT, document.features as ClientFeature[], new Map(segments.map((segment) => [segment.id, segment])));
    this.status.lastError = undefined;
    this.status.lastSuccessAt = new Date();
  }

  protected override configurationOf(environment: string): EnvironmentConfiguration {
    return { ...super.configurationOf(FILE_ENVIRONMENT), environment };
  }

  override flagCounts(): Array<[string, number]> {
    return [['*', super.configurationOf(FILE_ENVIRONMENT).features.length]];
  }

  covers(): boolean {
    return true;
  }

  async follow(): Promise<void> {}

  ready(): boolean {
    return this.status.lastSuccessAt !== undefined;
  }
}
