import type { DeltaEvent } from '../domain/client-features/client-feature-store.js';
import type { ClientFeature, ClientSegment } from '../domain/client-features/environment-configuration.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { hashToken } from '../shared/secrets.js';
import { type BackstageRefresh, ConfigurationFeed, type FeedStatus } from './configuration-feed.js';
import { maskedToken } from './edge-tokens.js';
import type { BackedUpSync } from './edge-backup.js';
import { UpstreamRefused, type StreamedChange, type UpstreamClient, type UpstreamToken } from './upstream-client.js';

/** One client token whose flags the edge follows. */
interface Sync extends BackedUpSync {
  /** The secret to fetch with; absent for a sync restored from a backup until a request or TOKENS brings it. */
  secret?: string;
  /** Whether it holds flags: fetched once, or restored from a backup. */
  loaded: boolean;
  /** A fetch in flight, and whether another was asked for meanwhile (a change it may have missed). */
  fetching?: Promise<void>;
  fetchAgain?: boolean;
}

/** A sync's flags and segments by name and id, while a streamed change is applied to them. */
interface HeldFlags {
  features: Map<string, ClientFeature>;
  segments: Map<number, ClientSegment>;
}

/** What each kind of streamed event does to the flags held: a hydration replaces them all, the others one each. */
const applyEvent: { [Type in DeltaEvent['type']]: (held: HeldFlags, event: Extract<DeltaEvent, { type: Type }>) => void } = {
  hydration: (held, { features, segments }) => {
    held.features = new Map(features.map((feature) => [feature.name, feature]));
    held.segments = new Map(segments.map((segment) => [segment.id, segment]));
  },
  'feature-updated': (held, { feature }) => held.features.set(feature.name, feature),
  'feature-removed': (held, { featureName }) => held.features.delete(featureName),
  'segment-updated': (held, { segment }) => held.segments.set(segment.id, segment),
  'segment-removed': (held, { segmentId }) => held.segments.delete(segmentId),
};

/**
 * The flags the edge serves, as the upstream last sent them for each followed client token, merged per environment.
 * A flag seen through two tokens of one environment is one flag (the upstream sends the same).
 */
export class UpstreamMirror extends ConfigurationFeed {
  private readonly syncs = new Map<string, Sync>();
  /** The projects followed per environment (`*` for all), kept as syncs come and go: every request asks `covers`. */
  private followed = new Map<string, Set<string>>();
  private readonly firstFetches = new Map<string, Promise<void>>();
  private readonly changeStreams = new Map<string, AbortController>();
  /** Whether the upstream streams its changes (Vexil, Vexil Edge): it then also answers what changed since a revision. */
  private upstreamStreams = false;
  private stopped = false;
  readonly status: FeedStatus = { reachable: false, lastSuccessAt: undefined, lastError: undefined, changes: 'streamed' };

  constructor(
    private readonly upstream: UpstreamClient,
    onChange: () => void,
  ) {
    super(onChange);
  }

  /** The syncs of a backup, served until the upstream answers. */
  restore(syncs: BackedUpSync[]): void {
    for (const sync of syncs) this.syncs.set(sync.tokenHash, { ...sync, loaded: true });
    this.syncsChanged();
    for (const environment of new Set(syncs.map((sync) => sync.environment))) this.rebuild(environment);
  }

  backedUp(): BackedUpSync[] {
    return [...this.syncs.values()]
      .filter((sync) => sync.loaded)
      .map(({ tokenHash, environment, projects, etag, revision, features, segments }) => ({
        tokenHash,
        environment,
        projects,
        etag,
        revision,
        features,
        segments,
      }));
  }

  override refreshes(): BackstageRefresh[] {
    const at = this.status.lastSuccessAt?.toISOString() ?? null;
    return [...this.syncs.values()].map((sync) => ({
      token: {
        token: maskedToken(sync),
        type: 'backend' as const,
        environment: sync.environment,
        projects: sync.projects,
        status: 'Validated' as const,
      },
      etag: sync.etag ?? null,
      next_refresh: null,
      last_refreshed: sync.loaded ? at : null,
      last_feature_count: sync.loaded ? sync.features.length : null,
      last_check: at,
      revision_id: sync.revision ?? null,
      failure_count: this.status.reachable ? 0 : 1,
    }));
  }

  /** A followed client token of the environment, to send its usage upstream with. */
  secretFor(environment: string): string | undefined {
    return [...this.syncs.values()].find((sync) => sync.environment === environment && sync.secret)?.secret;
  }

  ready(): boolean {
    return [...this.syncs.values()].every((sync) => sync.loaded);
  }

  covers(scope: Pick<UpstreamToken, 'environment' | 'projects'>): boolean {
    const followed = this.followed.get(scope.environment);
    if (!followed) return false;
    if (followed.has('*')) return true;
    return !scope.projects.includes('*') && scope.projects.length > 0 && scope.projects.every((project) => followed.has(project));
  }

  private syncsChanged(): void {
    const followed = new Map<string, Set<string>>();
    for (const sync of this.syncs.values()) {
      const projects = followed.get(sync.environment) ?? new Set<string>();
      for (const project of sync.projects) projects.add(project);
      followed.set(sync.environment, projects);
    }
    this.followed = followed;
  }

  follow(secret: string, scope: Pick<UpstreamToken, 'environment' | 'projects'>): Promise<void> {
    const tokenHash = hashToken(secret);
    const existing = this.syncs.get(tokenHash);
    if (existing) {
      existing.secret ??= secret;
      this.followChanges(existing);
      return this.firstFetches.get(tokenHash) ?? Promise.resolve();
    }
    const sync: Sync = {
      tokenHash,
      secret,
      environment: scope.environment,
      projects: scope.projects,
      etag: undefined,
      revision: undefined,
      features: [],
      segments: [],
      loaded: false,
    };
    this.syncs.set(tokenHash, sync);
    this.syncsChanged();
    // Fetched (an upstream without a stream, Unleash, is only ever fetched from), then followed: the stream's
    // greeting names the revision it repeats, which is then held already and not read.
    this.fetchSoon(sync);
    const first = sync.fetching!.finally(() => this.firstFetches.delete(tokenHash));
    this.firstFetches.set(tokenHash, first);
    void first.then(() => this.followChanges(sync));
    return first;
  }

  /**
   * Follows the upstream's change stream for a sync and applies each change it streams, so a change reaches the
   * edge with no request of its own and the upstream sends only what changed; reconnects with backoff. An upstream
   * without a stream (Unleash) is polled on the refresh interval only, which goes on either way.
   */
  private followChanges(sync: Sync): void {
    if (this.stopped || this.status.changes === 'polled' || !sync.secret || this.changeStreams.has(sync.tokenHash)) return;
    const controller = new AbortController();
    this.changeStreams.set(sync.tokenHash, controller);
    const { signal } = controller;
    void (async () => {
      let backoffMs = 1000;
      while (!signal.aborted && this.syncs.get(sync.tokenHash) === sync) {
        try {
          const result = await this.upstream.followChanges(
            sync.secret!,
            (revision, read) => this.applyStreamed(sync, revision, read),
            signal,
          );
          if (result === 'unsupported') {
            this.status.changes = 'polled';
            break;
          }
          backoffMs = 1000;
        } catch {
          backoffMs = Math.min(backoffMs * 2, 30_000);
        }
        await sleep(backoffMs, undefined, { signal }).catch(() => undefined);
      }
      this.changeStreams.delete(sync.tokenHash);
    })();
  }

  /**
   * A streamed change applied to the sync's flags, unless it is of the revision held (a greeting after a fetch or
   * a reconnection): a hydration replaces them, the events of a change replace or remove the flags and segments
   * they name. A change that cannot be applied (one the edge cannot read, or a delta before the first flags
   * arrived) is fetched instead.
   */
  private applyStreamed(sync: Sync, revision: number | undefined, read: () => StreamedChange | undefined): void {
    this.upstreamStreams = true;
    if (sync.loaded && revision !== undefined && revision === sync.revision) return;
    const change = read();
    if (!change || (!sync.loaded && change.events[0]?.type !== 'hydration')) {
      this.fetchSoon(sync);
      return;
    }
    this.apply(sync, change);
  }

  private apply(sync: Sync, change: StreamedChange): void {
    const held: HeldFlags = {
      features: new Map(sync.features.map((feature) => [feature.name, feature])),
      segments: new Map(sync.segments.map((segment) => [segment.id, segment])),
    };
    for (const event of change.events) (applyEvent[event.type] as (held: HeldFlags, event: DeltaEvent) => void)(held, event);
    sync.loaded = true;
    sync.features = [...held.features.values()];
    sync.segments = [...held.segments.values()];
    sync.revision = change.revision ?? sync.revision;
    this.rebuild(sync.environment);
  }

  /** Fetches a sync's flags now, or once more after the fetch in flight (which may have left before the change). */
  private fetchSoon(sync: Sync): void {
    if (sync.fetching) {
      sync.fetchAgain = true;
      return;
    }
    sync.fetching = this.fetch(sync)
      .catch(() => undefined)
      .finally(() => {
        sync.fetching = undefined;
        if (sync.fetchAgain) {
          sync.fetchAgain = false;
          this.fetchSoon(sync);
        }
      });
  }

  /** Ends the change streams. */
  stop(): void {
    this.stopped = true;
    for (const controller of this.changeStreams.values()) controller.abort();
  }

  /** Stops following the tokens the upstream no longer knows (by hash). */
  forget(tokenHashes: string[]): void {
    const environments = new Set<string>();
    for (const hash of tokenHashes) {
      const sync = this.syncs.get(hash);
      if (!sync) continue;
      this.syncs.delete(hash);
      this.syncsChanged();
      this.changeStreams.get(hash)?.abort();
      environments.add(sync.environment);
    }
    for (const environment of environments) this.rebuild(environment);
  }

  /** One round: every followed token's flags, fetched with its ETag. */
  async refresh(): Promise<void> {
    const failures: string[] = [];
    await Promise.all(
      [...this.syncs.values()]
        .filter((sync) => sync.secret !== undefined)
        .map((sync) =>
          this.fetch(sync).catch((error: unknown) => {
            failures.push((error as Error).message);
          }),
        ),
    );
    this.status.reachable = failures.length === 0;
    this.status.lastError = failures[0];
    if (failures.length === 0) this.status.lastSuccessAt = new Date();
  }

  /**
   * A sync's flags fetched again: from an upstream that streams, what changed since the revision held (a 304 when
   * nothing did, as after the stream brought every change); from any other, the flags with the ETag held.
   */
  private async fetch(sync: Sync): Promise<void> {
    try {
      if (this.upstreamStreams && sync.loaded && sync.revision !== undefined) await this.fetchDelta(sync, sync.revision);
      else await this.fetchFeatures(sync);
    } catch (error) {
      // A token the upstream no longer takes stops being followed; what it served goes with it.
      if (error instanceof UpstreamRefused && (error.statusCode === 401 || error.statusCode === 403)) {
        this.forget([sync.tokenHash]);
        return;
      }
      throw error;
    }
  }

  private async fetchDelta(sync: Sync, revision: number): Promise<void> {
    const change = await this.upstream.delta(sync.secret!, revision);
    // A change streamed while the request was out is as new as its answer or newer, whose events would take flags back.
    if (change && sync.revision === revision) this.apply(sync, change);
  }

  private async fetchFeatures(sync: Sync): Promise<void> {
    const revision = sync.revision;
    const answer = await this.upstream.features(sync.secret!, sync.etag);
    if (answer.kind === 'not-modified') return;
    // A change applied while the request was out (streamed, or a delta) may be newer than its answer; the next round
    // fetches again (the ETag held is that of the older answer).
    const overtaken =
      sync.revision !== revision && answer.revision !== undefined && sync.revision !== undefined && answer.revision < sync.revision;
    if (overtaken) return;
    sync.loaded = true;
    sync.etag = answer.etag;
    sync.revision = answer.revision;
    sync.features = answer.features;
    sync.segments = answer.segments;
    this.rebuild(sync.environment);
  }

  private rebuild(environment: string): void {
    const syncs = [...this.syncs.values()].filter((sync) => sync.environment === environment);
    const features = new Map<string, ClientFeature>();
    const segments = new Map<number, ClientSegment>();
    for (const sync of syncs) {
      for (const feature of sync.features) features.set(feature.name, feature);
      for (const segment of sync.segments) segments.set(segment.id, segment);
    }
    this.publish(environment, [...features.values()], segments, Math.max(0, ...syncs.map((sync) => sync.revision ?? 0)));
  }
}
