import { readFile } from 'node:fs/promises';
import type { ClientFeature, ClientSegment, EnvironmentConfiguration } from '../domain/client-features/environment-configuration.js';
import type { FlagsFile } from '../domain/flags-file/flags-file.js';
import { ConfigurationFeed, type FeedStatus } from './configuration-feed.js';

/** A features document's flags are what every environment reads: one configuration, whatever a token's environment. */
const EVERY_ENVIRONMENT = '';

/**
 * Offline mode's flags, read at start and again on the reload interval, from either of two documents: a features
 * document as `/api/client/features` answers it (from Vexil or Unleash: every token sees it, whatever its
 * environment), or a Vexil flags file, JSON or YAML (each token sees its own environment's flags, as a server that
 * applied the file would serve them). A file that cannot be read, or is neither, keeps the flags read before (at
 * start it stops the edge: there would be nothing to serve).
 */
export class BootstrapFile extends ConfigurationFeed {
  readonly status: FeedStatus = { reachable: false, lastSuccessAt: undefined, lastError: undefined, changes: 'file' };
  /** Whether the file is a flags file, whose environments each have their own flags. */
  private perEnvironment = false;

  constructor(
    private readonly path: string,
    onChange: () => void,
  ) {
    super(onChange);
  }

  private refuse(problem: string): never {
    this.status.lastError = `${this.path} ${problem}`;
    throw new Error(this.status.lastError);
  }

  async read(): Promise<void> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (error) {
      this.refuse(`cannot be read: ${(error as Error).message}`);
    }
    let document: { features?: unknown; segments?: unknown; version?: unknown } | null;
    try {
      document = JSON.parse(text) as typeof document;
    } catch {
      // Flags files are often YAML; loaded only for them.
      const { parse } = await import('yaml');
      try {
        document = parse(text) as typeof document;
      } catch (error) {
        this.refuse(`is neither JSON nor YAML: ${(error as Error).message}`);
      }
    }
    if (document && Array.isArray(document.features)) {
      const segments = Array.isArray(document.segments) ? (document.segments as ClientSegment[]) : [];
      this.perEnvironment = false;
      this.publish(EVERY_ENVIRONMENT, document.features as ClientFeature[], new Map(segments.map((segment) => [segment.id, segment])));
    } else if (document && document.version === 1) {
      await this.publishFlagsFile(document as FlagsFile);
    } else {
      this.refuse('is neither what /api/client/features answers (a "features" list) nor a Vexil flags file ("version: 1")');
    }
    this.status.lastError = undefined;
    this.status.lastSuccessAt = new Date();
  }

  private async publishFlagsFile(file: FlagsFile): Promise<void> {
    // The server's own completion of strategies and variants, loaded only for flags files.
    const { clientConfigurationsOf } = await import('../domain/flags-file/client-configuration.js');
    let configurations: ReturnType<typeof clientConfigurationsOf>;
    try {
      configurations = clientConfigurationsOf(file);
    } catch (error) {
      const details = (error as { details?: Array<{ path?: string; message: string }> }).details ?? [];
      const where = details.map((detail) => `${detail.path ?? ''} ${detail.message}`.trim()).join('; ');
      this.refuse(`is a flags file SDKs cannot be served from: ${(error as Error).message}${where ? ` (${where})` : ''}`);
    }
    this.perEnvironment = true;
    for (const [environment, { features, segments, tags }] of configurations) this.publish(environment, features, segments, 0, tags);
  }

  protected override configurationOf(environment: string): EnvironmentConfiguration {
    if (this.perEnvironment) return super.configurationOf(environment);
    return { ...super.configurationOf(EVERY_ENVIRONMENT), environment };
  }

  override flagCounts(): Array<[string, number]> {
    if (this.perEnvironment) return super.flagCounts();
    return [['*', super.configurationOf(EVERY_ENVIRONMENT).features.length]];
  }

  covers(): boolean {
    return true;
  }

  async follow(): Promise<void> {}

  ready(): boolean {
    return this.status.lastSuccessAt !== undefined;
  }
}
