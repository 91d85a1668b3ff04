import { createHash } from 'node:crypto';
import type { DatabaseHandle, Db, Unlisten } from '../../db/database.js';
import {
  loadEnvironmentConfiguration,
  type ClientFeature,
  type ClientSegment,
  type EnvironmentConfiguration,
} from './client-features.queries.js';

/** The channel every committed change notifies (record-event.ts), on every instance sharing the database. */
export const CONFIGURATION_CHANNEL = 'vexil_configuration';

export type DeltaEvent =
  | { type: 'hydration'; eventId: number; features: ClientFeature[]; segments: ClientSegment[] }
  | { type: 'feature-updated'; eventId: number; feature: ClientFeature }
  | { type: 'feature-removed'; eventId: number; featureName: string; project: string }
  | { type: 'segment-updated'; eventId: number; segment: ClientSegment }
  | { type: 'segment-removed'; eventId: number; segmentId: number };

/** Which flags a caller sees: its token's environment and projects, narrowed by the query filters SDKs send. */
export interface ClientScope {
  environment: string;
  projects: string[] | '*';
  /** `project` query parameters (each must be within the token's projects to count). */
  project?: string[];
  namePrefix?: string;
  /** `type:value` tags; a flag matches with any of them. */
  tag?: string[];
}

/** One answer of `/api/client/features` for a scope, serialised once per revision. */
export interface ScopedFeatures {
  revision: number;
  etag: string;
  body: string;
  features: ClientFeature[];
  segments: ClientSegment[];
}

/** Whether an `If-None-Match` header names the answer's ETag: then no body is needed. */
export function matchesEtag(answer: ScopedFeatures, ifNoneMatch: string | undefined): boolean {
  return ifNoneMatch !== undefined && ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === answer.etag);
}

/** The changes between two revisions of an environment, as SDKs apply them. */
interface HistoryEntry {
  from: number;
  to: number;
  events: DeltaEvent[];
}

interface EnvironmentEntry {
  configuration: EnvironmentConfiguration;
  stale: boolean;
  reloading?: Promise<EnvironmentConfiguration>;
  history: HistoryEntry[];
  answers: Map<string, ScopedFeatures>;
}

/** Deltas kept per environment: an SDK further behind than this is sent a hydration. */
const HISTORY_LENGTH = 500;

function scopeKey(scope: ClientScope): string {
  return JSON.stringify([scope.environment, scope.projects, scope.project ?? [], scope.namePrefix ?? '', scope.tag ?? []]);
}

export function inScope(scope: ClientScope, feature: ClientFeature, tags: Set<string> | undefined): boolean {
  if (scope.projects !== '*' && !scope.projects.includes(feature.project)) return false;
  if (scope.project && scope.project.length > 0 && !scope.project.includes(feature.project)) return false;
  if (scope.namePrefix && !feature.name.startsWith(scope.namePrefix)) return false;
  if (scope.tag && scope.tag.length > 0 && !scope.tag.some((tag) => tags?.has(tag))) return false;
  return true;
}

function segmentsUsedBy(features: ClientFeature[], segments: Map<number, ClientSegment>): ClientSegment[] {
  const ids = new Set(features.flatMap((feature) => feature.strategies.flatMap((strategy) => strategy.segments ?? [])));
  return [...ids].sort((a, b) => a - b).flatMap((id) => segments.get(id) ?? []);
}

/** What changed from one configuration to the next, as delta events stamped with the new revision. */
function diff(before: EnvironmentConfiguration, after: EnvironmentConfiguration): DeltaEvent[] {
  const eventId = after.revision;
  const events: DeltaEvent[] = [];
  const previous = new Map(before.features.map((feature) => [feature.name, feature]));
  const current = new Set<string>();
  for (const feature of after.features) {
    current.add(feature.name);
    const old = previous.get(feature.name);
    const tagsChanged = JSON.stringify([...(before.tags.get(feature.name) ?? [])]) !== JSON.stringify([...(after.tags.get(feature.name) ?? [])]);
    if (!old || tagsChanged || JSON.stringify(old) !== JSON.stringify(feature)) events.push({ type: 'feature-updated', eventId, feature });
  }
  for (const feature of before.features) {
    if (!current.has(feature.name)) events.push({ type: 'feature-removed', eventId, featureName: feature.name, project: feature.project });
  }
  for (const segment of after.segments.values()) {
    const old = before.segments.get(segment.id);
    if (!old || JSON.stringify(old) !== JSON.stringify(segment)) events.push({ type: 'segment-updated', eventId, segment });
  }
  for (const id of before.segments.keys()) {
    if (!after.segments.has(id)) events.push({ type: 'segment-removed', eventId, segmentId: id });
  }
  return events;
}

export type ChangeListener = (environment: string, events: DeltaEvent[], configuration: EnvironmentConfiguration) => void;

/**
 * What SDKs read, held in memory per environment and rebuilt only when something changed: every commit that
 * records an event sends a NOTIFY (PostgreSQL: from any instance; PGlite: in-process), which marks every
 * environment stale. Environments with streaming SDKs attached are rebuilt at once and their changes pushed;
 * the others on their next read. Answers per scope are serialised once per revision, so a poll whose ETag
 * matches costs no query.
 */
export class ClientFeatureStore {
  private readonly environments = new Map<string, EnvironmentEntry>();
  private readonly listeners = new Set<ChangeListener>();
  private readonly changeHooks = new Set<() => void>();
  private unlisten: Unlisten | undefined;

  constructor(private readonly db: Db) {}

  async start(listen: DatabaseHandle['listen']): Promise<void> {
    this.unlisten = await listen(CONFIGURATION_CHANNEL, () => this.onChange());
  }

  async stop(): Promise<void> {
    await this.unlisten?.();
  }

  /** Called on every committed change, e.g. to drop cached credentials. */
  onAnyChange(hook: () => void): void {
    this.changeHooks.add(hook);
  }

  /** Streaming: called with the delta events of each rebuild of an environment. Returns the unsubscribe function. */
  subscribe(listener: ChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private onChange(): void {
    for (const hook of this.changeHooks) hook();
    for (const entry of this.environments.values()) entry.stale = true;
    if (this.listeners.size === 0) return;
    for (const environment of this.environments.keys()) {
      this.configuration(environment).catch(() => undefined);
    }
  }

  /** The environment's current configuration, loading or rebuilding it if needed (one load at a time). */
  async configuration(environment: string): Promise<EnvironmentConfiguration> {
    const entry = this.environments.get(environment);
    if (entry && !entry.stale) return entry.configuration;
    if (entry?.reloading) return entry.reloading;
    const reloading = this.reload(environment, entry);
    if (entry) entry.reloading = reloading;
    return reloading;
  }

  private async reload(environment: string, entry: EnvironmentEntry | undefined): Promise<EnvironmentConfiguration> {
    if (entry) entry.stale = false;
    let configuration: EnvironmentConfiguration;
    try {
      configuration = await loadEnvironmentConfiguration(this.db, environment);
    } catch (error) {
      if (entry) {
        entry.stale = true;
        entry.reloading = undefined;
      }
      throw error;
    }
    if (!entry) {
      this.environments.set(environment, { configuration, stale: false, history: [], answers: new Map() });
      return configuration;
    }
    entry.reloading = undefined;
    if (configuration.revision === entry.configuration.revision) return entry.configuration;
    const events = diff(entry.configuration, configuration);
    entry.history.push({ from: entry.configuration.revision, to: configuration.revision, events });
    if (entry.history.length > HISTORY_LENGTH) entry.history.splice(0, entry.history.length - HISTORY_LENGTH);
    entry.configuration = configuration;
    entry.answers.clear();
    // A change that arrived while this load ran has marked the entry stale again; load once more for it.
    if (entry.stale && this.listeners.size > 0) this.configuration(environment).catch(() => undefined);
    if (events.length > 0) for (const listener of this.listeners) listener(environment, events, configuration);
    return configuration;
  }

  /** The flags and segments a scope sees, with the ETag and the serialised `/api/client/features` body. */
  async features(scope: ClientScope): Promise<ScopedFeatures> {
    const configuration = await this.configuration(scope.environment);
    const entry = this.environments.get(scope.environment)!;
    const key = scopeKey(scope);
    const cached = entry.answers.get(key);
    if (cached && cached.revision === configuration.revision) return cached;
    const features = configuration.features.filter((feature) => inScope(scope, feature, configuration.tags.get(feature.name)));
    const segments = segmentsUsedBy(features, configuration.segments);
    const query = {
      ...(scope.project ? { project: scope.project } : {}),
      ...(scope.namePrefix ? { namePrefix: scope.namePrefix } : {}),
      ...(scope.tag ? { tag: scope.tag } : {}),
      environment: scope.environment,
      inlineSegmentConstraints: false,
    };
    const body = JSON.stringify({ version: 2, features, segments, query, meta: { revisionId: configuration.revision, etag: null, queryHash: null } });
    const hash = createHash('sha256').update(key).digest('hex').slice(0, 12);
    const answer: ScopedFeatures = { revision: configuration.revision, etag: `"${hash}:${configuration.revision}"`, body, features, segments };
    entry.answers.set(key, answer);
    return answer;
  }


  /**
   * The delta events a scope needs to go from `since` to now: none when it is current, the changes in between
   * when they are still held, otherwise (unknown, too old or from the future) a hydration.
   */
  async delta(scope: ClientScope, since: number | undefined): Promise<{ revision: number; events: DeltaEvent[] }> {
    const answer = await this.features(scope);
    const configuration = await this.configuration(scope.environment);
    const hydration = (): DeltaEvent[] => [
      { type: 'hydration', eventId: answer.revision, features: answer.features, segments: answer.segments },
    ];
    if (since === undefined || since > answer.revision) return { revision: answer.revision, events: hydration() };
    if (since === answer.revision) return { revision: answer.revision, events: [] };
    const history = this.environments.get(scope.environment)!.history;
    if (history.length === 0 || since < history[0]!.from) return { revision: answer.revision, events: hydration() };
    const events = history.filter((entry) => entry.to > since).flatMap((entry) => entry.events);
    return { revision: answer.revision, events: this.scoped(scope, events, configuration) };
  }

  /** Delta events as a scope sees them: a flag that left the scope is removed, one outside it never shown. */
  scoped(scope: ClientScope, events: DeltaEvent[], configuration: EnvironmentConfiguration): DeltaEvent[] {
    return events.map((event) => {
      if (event.type !== 'feature-updated') return event;
      if (inScope(scope, event.feature, configuration.tags.get(event.feature.name))) return event;
      return { type: 'feature-removed', eventId: event.eventId, featureName: event.feature.name, project: event.feature.project };
    });
  }
}
