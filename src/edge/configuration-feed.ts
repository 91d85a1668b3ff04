import { type ConfigurationSource, jsonOfFeature } from '../domain/client-features/client-feature-store.js';
import type { ConfigurationChanges } from '../domain/events/configuration-changes.js';
import type { ClientFeature, ClientSegment, EnvironmentConfiguration } from '../domain/client-features/environment-configuration.js';
import type { UpstreamToken } from './upstream-client.js';

type ChangeHandler = (payload: string | undefined) => void;

/** Where the edge's flags come from and how that is going, for `/internal-backstage/ready` and the metrics. */
export interface FeedStatus {
  /** Whether the last round reached the upstream (always false in offline mode, which has none). */
  reachable: boolean;
  /** When the flags were last read from their source. */
  lastSuccessAt: Date | undefined;
  /** Why the last round failed, when it did. */
  lastError: string | undefined;
  /**
   * How changes arrive: the upstream's change stream (Vexil, Vexil Edge), fetches on the refresh interval (Unleash),
   * or reading the bootstrap file again (offline).
   */
  changes: 'streamed' | 'polled' | 'file';
}

/** One followed token's refresh, in Unleash Edge's backstage shape (its field names are snake_case there). */
export interface BackstageRefresh {
  token: { token: string; type: 'backend'; environment: string; projects: string[]; status: 'Validated' };
  etag: string | null;
  next_refresh: string | null;
  last_refreshed: string | null;
  last_feature_count: number | null;
  last_check: string | null;
  revision_id: number | null;
  failure_count: number;
}

const byName = (a: ClientFeature, b: ClientFeature) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

const emptyConfiguration = (environment: string): EnvironmentConfiguration => ({
  environment,
  revision: 0,
  features: [],
  tags: new Map(),
  segments: new Map(),
});

/**
 * The flags an edge serves, per environment, as its SDK store reads them (`source`) and hears of their changes
 * (`listen`, as a server's store hears its database). An environment's revision follows its source's when it has
 * one, and grows by one at the least on each change, so several edges behind one load balancer give the same ETags.
 */
export abstract class ConfigurationFeed {
  private readonly handlers = new Set<ChangeHandler>();
  protected readonly environments = new Map<string, EnvironmentConfiguration>();
  abstract readonly status: FeedStatus;

  constructor(private readonly onChange: () => void) {}

  /** Whether the flags a token may see are all among those the edge holds. */
  abstract covers(scope: Pick<UpstreamToken, 'environment' | 'projects'>): boolean;

  /** Follows a client token not covered yet (Unleash Edge's dynamic mode); resolved once its flags are held. */
  abstract follow(secret: string, scope: Pick<UpstreamToken, 'environment' | 'projects'>): Promise<void>;

  /** Whether the edge holds the flags it is to serve. */
  abstract ready(): boolean;

  /** The configuration the store reads for an environment. */
  protected configurationOf(environment: string): EnvironmentConfiguration {
    return this.environments.get(environment) ?? emptyConfiguration(environment);
  }

  readonly source: ConfigurationSource = async (environment, only) => {
    const configuration = this.configurationOf(environment);
    if (!only) return configuration;
    const names = new Set(only);
    return { ...configuration, features: configuration.features.filter((feature) => names.has(feature.name)) };
  };

  readonly changes: ConfigurationChanges = async (handler) => {
    this.handlers.add(handler);
    return async () => {
      this.handlers.delete(handler);
    };
  };

  /** Each environment's flags and segments, as Unleash Edge's `/internal-backstage/features` shows what it holds. */
  held(): Array<[string, EnvironmentConfiguration]> {
    return [...this.environments];
  }

  /** What is fetched from the upstream, per followed token, as Unleash Edge's backstage lists its refreshes. */
  refreshes(): BackstageRefresh[] {
    return [];
  }

  flagCounts(): Array<[string, number]> {
    return [...this.environments].map(([environment, configuration]) => [environment, configuration.features.length]);
  }

  /**
   * Sets an environment's flags and segments (and the flags' tags, where the source knows them); the store hears of
   * it when they differ from those held.
   */
  protected publish(
    environment: string,
    features: ClientFeature[],
    segments: Map<number, ClientSegment>,
    sourceRevision = 0,
    tags = new Map<string, Set<string>>(),
  ): void {
    const sorted = [...features].sort(byName);
    const held = this.environments.get(environment);
    const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
    const sameFeatures = (a: ClientFeature[], b: ClientFeature[]) =>
      a.length === b.length && a.every((feature, index) => jsonOfFeature(feature) === jsonOfFeature(b[index]!));
    const tagList = (map: Map<string, Set<string>>) => [...map].map(([name, set]) => [name, [...set]]);
    if (held && sameFeatures(held.features, sorted) && same([...held.segments], [...segments]) && same(tagList(held.tags), tagList(tags))) {
      return;
    }
    const revision = Math.max(sourceRevision, (held?.revision ?? 0) + 1);
    this.environments.set(environment, { environment, revision, features: sorted, tags, segments });
    for (const handler of this.handlers) handler(undefined);
    this.onChange();
  }
}
