import { createHash } from 'node:crypto';
import { CHANGED_FLAGS, CHANGED_SEGMENTS, changedFlagOf } from '../../db/notification-channels.js';
import type { ClientFeature, ClientSegment, EnvironmentConfiguration } from './environment-configuration.js';
import { isDatabaseUnavailable } from '../../db/pg-errors.js';

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

/**
 * One answer of `/api/client/features` for a scope, serialised once per revision that changed it. `revision` is
 * the last revision that changed what the scope sees, so its ETag holds across changes that are not its business.
 */
export interface ScopedFeatures {
  revision: number;
  etag: string;
  /**
   * The JSON of `/api/client/features`, as UTF-8 bytes, serialised when first asked for (streams never need it):
   * bytes are written to every SDK as they are, where a string would be encoded anew for each.
   */
  readonly body: Buffer;
  features: ClientFeature[];
  /** The flags on in the environment: the only ones an evaluation can answer as enabled. */
  enabledFeatures: ClientFeature[];
  segments: ClientSegment[];
}

const featureJson = new WeakMap<ClientFeature, string>();

/**
 * A flag's JSON, made once per flag object: a flag read is never changed (a change is read as a new object), so a
 * configuration compared with the next stringifies only the flags that are new, not the thousands it held already.
 */
export function jsonOfFeature(feature: ClientFeature): string {
  let json = featureJson.get(feature);
  if (json === undefined) {
    json = JSON.stringify(feature);
    featureJson.set(feature, json);
  }
  return json;
}

/** Whether an `If-None-Match` header names the answer's ETag: then no body is needed. */
export function matchesEtag(etag: string, ifNoneMatch: string | undefined): boolean {
  return (ifNoneMatch?.split(',') ?? []).some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

/** What a streaming SDK is sent of a change (`unleash-updated`'s data). */
export interface StreamedUpdate {
  events: DeltaEvent[];
}

/** A flag as it stood at one revision, with the tags the `tag` filter reads. */
interface FlagState {
  feature: ClientFeature;
  tags: Set<string> | undefined;
}

/**
 * One flag that changed between two revisions, before and after (absent when it did not exist there). Kept
 * whole, not as an SDK event, so each scope can tell a flag that left it (a removal it must hear of) from one it
 * never saw (nothing at all).
 */
interface FlagChange {
  name: string;
  before?: FlagState;
  after?: FlagState;
}

/** The changes between two revisions of an environment. */
export interface ConfigurationChange {
  from: number;
  to: number;
  flags: FlagChange[];
  /** Segments whose definition changed or that no strategy of the environment uses any more. */
  segments: number[];
}

/** What committed changes named since the configuration was read: some flags, segments, or everything. */
interface PendingChange {
  all: boolean;
  flags: Set<string>;
  segments: boolean;
}

/** What a notification's payload says changed for SDKs; undefined when nothing they read did. */
function pendingOf(payload: string | undefined): PendingChange | undefined {
  // No payload (listening restarted): anything may have changed.
  if (payload === undefined) return { all: true, flags: new Set(), segments: true };
  const entries = payload.split(',');
  const flags = new Set(entries.flatMap((entry) => changedFlagOf(entry) ?? []));
  const all = entries.includes(CHANGED_FLAGS);
  const segments = entries.includes(CHANGED_SEGMENTS);
  return all || segments || flags.size > 0 ? { all, flags, segments } : undefined;
}

function mergePending(held: PendingChange | undefined, change: PendingChange): PendingChange {
  if (!held) return { all: change.all, flags: new Set(change.flags), segments: change.segments };
  for (const name of change.flags) held.flags.add(name);
  held.all ||= change.all;
  held.segments ||= change.segments;
  return held;
}

/**
 * The held configuration with the named flags as `loaded` has them (changed, added, or gone when it has not
 * got them), in name order, and the segments the result uses, with `loaded`'s definitions where it read them.
 */
function merged(held: EnvironmentConfiguration, loaded: EnvironmentConfiguration, names: Set<string>): EnvironmentConfiguration {
  const fresh = new Map(loaded.features.map((feature) => [feature.name, feature]));
  const features: ClientFeature[] = [];
  for (const feature of held.features) {
    if (!names.has(feature.name)) features.push(feature);
    else if (fresh.has(feature.name)) {
      features.push(fresh.get(feature.name)!);
      fresh.delete(feature.name);
    }
  }
  for (const added of fresh.values()) {
    let low = 0;
    let high = features.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (features[middle]!.name < added.name) low = middle + 1;
      else high = middle;
    }
    features.splice(low, 0, added);
  }
  const tags = new Map(held.tags);
  for (const name of names) tags.delete(name);
  for (const [name, set] of loaded.tags) tags.set(name, set);
  const segments = new Map<number, ClientSegment>();
  for (const id of new Set(features.flatMap(segmentIdsOf))) {
    const segment = loaded.segments.get(id) ?? held.segments.get(id);
    if (segment) segments.set(id, segment);
  }
  return { environment: held.environment, revision: loaded.revision, features, tags, segments };
}

interface EnvironmentEntry {
  configuration: EnvironmentConfiguration;
  stale: boolean;
  /** Changes notified since `configuration` was read, for the next reload to read. */
  pending?: PendingChange;
  reloading?: Promise<EnvironmentConfiguration>;
  history: ConfigurationChange[];
  /** Answers of the current configuration, per scope, least recently asked for first (see `MAX_CACHED_ANSWERS`). */
  answers: Map<string, ScopedFeatures>;
  /** Answers of the configuration before, and the change from it: kept by the scopes that change did not touch. */
  previous?: { answers: Map<string, ScopedFeatures>; change: ConfigurationChange };
}

/** Deltas kept per environment: an SDK further behind than this is sent a hydration. */
const HISTORY_LENGTH = 500;

/**
 * Answers kept per environment. A client token chooses its scope with query parameters (`namePrefix` takes any
 * text), so without a bound ever new scopes would grow memory until the next change; past it, the answer asked
 * for least recently goes, and the scopes SDKs poll stay.
 */
export const MAX_CACHED_ANSWERS = 1_000;

/** Keeps an answer as the most recently asked for, dropping the least recent past the bound. */
function remember(answers: Map<string, ScopedFeatures>, key: string, answer: ScopedFeatures): void {
  answers.delete(key);
  answers.set(key, answer);
  if (answers.size > MAX_CACHED_ANSWERS) answers.delete(answers.keys().next().value!);
}

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

function segmentIdsOf(feature: ClientFeature): number[] {
  return feature.strategies.flatMap((strategy) => strategy.segments ?? []);
}

/** What changed from one configuration to the next; only among `names` when only those can have changed. */
function diff(before: EnvironmentConfiguration, after: EnvironmentConfiguration, names?: Set<string>): ConfigurationChange {
  const flags: FlagChange[] = [];
  const among = <T extends { name: string }>(features: T[]) => (names ? features.filter((feature) => names.has(feature.name)) : features);
  const previous = new Map(among(before.features).map((feature) => [feature.name, feature]));
  const current = new Set<string>();
  for (const feature of among(after.features)) {
    current.add(feature.name);
    const old = previous.get(feature.name);
    const oldTags = before.tags.get(feature.name);
    const newTags = after.tags.get(feature.name);
    const tagsChanged = JSON.stringify([...(oldTags ?? [])]) !== JSON.stringify([...(newTags ?? [])]);
    if (!old || tagsChanged || jsonOfFeature(old) !== jsonOfFeature(feature)) {
      flags.push({ name: feature.name, ...(old ? { before: { feature: old, tags: oldTags } } : {}), after: { feature, tags: newTags } });
    }
  }
  for (const feature of previous.values()) {
    if (!current.has(feature.name)) flags.push({ name: feature.name, before: { feature, tags: before.tags.get(feature.name) } });
  }
  const segments: number[] = [];
  for (const [id, segment] of after.segments) {
    const old = before.segments.get(id);
    if (!old || JSON.stringify(old) !== JSON.stringify(segment)) segments.push(id);
  }
  for (const id of before.segments.keys()) if (!after.segments.has(id)) segments.push(id);
  return { from: before.revision, to: after.revision, flags, segments };
}

/**
 * The delta events a scope needs for a run of changes, given what it sees at their end: a flag in the scope
 * is sent whole, one that left it is removed, one it never saw is not mentioned; a segment is sent when one
 * of the scope's flags uses it and it changed or a sent flag names it, and removed when the scope's flags no
 * longer use it.
 */
function scopedEvents(
  scope: ClientScope,
  changes: ConfigurationChange[],
  current: Pick<ScopedFeatures, 'segments' | 'revision'>,
): DeltaEvent[] {
  const events: DeltaEvent[] = [];
  const usedBefore = new Set<number>();
  const named = new Set<number>();
  for (const change of changes) {
    for (const segment of change.segments) named.add(segment);
    for (const { name, before, after } of change.flags) {
      const wasVisible = before !== undefined && inScope(scope, before.feature, before.tags);
      if (after && inScope(scope, after.feature, after.tags)) {
        events.push({ type: 'feature-updated', eventId: change.to, feature: after.feature });
        for (const id of segmentIdsOf(after.feature)) named.add(id);
      } else if (wasVisible) {
        events.push({ type: 'feature-removed', eventId: change.to, featureName: name, project: before.feature.project });
      }
      if (wasVisible) for (const id of segmentIdsOf(before.feature)) usedBefore.add(id);
    }
  }
  const used = new Map(current.segments.map((segment) => [segment.id, segment]));
  for (const id of [...named].sort((a, b) => a - b)) {
    const segment = used.get(id);
    if (segment) events.push({ type: 'segment-updated', eventId: current.revision, segment });
  }
  for (const id of [...usedBefore].sort((a, b) => a - b)) {
    if (!used.has(id)) events.push({ type: 'segment-removed', eventId: current.revision, segmentId: id });
  }
  return events;
}

/**
 * Where the store reads an environment's configuration: the database on a server (`loadEnvironmentConfiguration`),
 * the configuration mirrored from upstream on an edge. With `only`, just those flags (and the segments they use,
 * and `alsoSegments`): what a change named, merged into what is held.
 */
export type ConfigurationSource = (environment: string, only?: string[], alsoSegments?: number[]) => Promise<EnvironmentConfiguration>;

/** Told of each rebuild of an environment that changed something, with the configuration it produced. */
export type ChangeListener = (environment: string, change: ConfigurationChange, configuration: EnvironmentConfiguration) => void;

/**
 * What SDKs read, held in memory per environment and rebuilt only when something changed: every commit that
 * records an event sends a NOTIFY (PostgreSQL: from any instance; PGlite: in-process), which marks every
 * environment stale. Environments with streaming SDKs attached are rebuilt at once and their changes pushed;
 * the others on their next read. Answers per scope are serialised once per revision, so a poll whose ETag
 * matches costs no query.
 */
export class ClientFeatureStore {
  private readonly environments = new Map<string, EnvironmentEntry>();
  private readonly firstLoads = new Map<string, Promise<EnvironmentConfiguration>>();
  private readonly listeners = new Set<ChangeListener>();
  /** What each scope's watchers are told of a change, by scope key; gone with the change. */
  private readonly updatesByChange = new WeakMap<ConfigurationChange, Map<string, StreamedUpdate>>();
  /**
   * The hydration of each scope's answer, made once: every stream of a scope opens with the same object, so its
   * serialisation (the whole configuration, megabytes at thousands of flags) is made and held once, not per stream.
   */
  private readonly hydrations = new WeakMap<ScopedFeatures, StreamedUpdate>();

  /**
   * `onBackgroundFailure` hears of a rebuild no reader waited for (one for streaming SDKs) that failed: it is tried
   * again on the next change or read, and the failure is logged and counted where the store is built.
   */
  constructor(
    private readonly load: ConfigurationSource,
    private readonly onBackgroundFailure: (error: unknown, environment: string) => void,
  ) {}

  /** Answers held for the current configurations, every environment's together (a gauge of the metrics). */
  cachedAnswers(): number {
    let count = 0;
    for (const entry of this.environments.values()) count += entry.answers.size;
    return count;
  }

  /** Streaming: called with the changes of each rebuild of an environment. Returns the unsubscribe function. */
  subscribe(listener: ChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** A committed change, as the change feed tells it: what it touched is stale, and rebuilt now for streaming SDKs. */
  changed(payload: string | undefined): void {
    const change = pendingOf(payload);
    if (!change) return;
    for (const entry of this.environments.values()) {
      entry.pending = mergePending(entry.pending, change);
      entry.stale = true;
    }
    if (this.listeners.size === 0) return;
    for (const environment of this.environments.keys()) {
      this.configuration(environment).catch((error: unknown) => this.onBackgroundFailure(error, environment));
    }
  }

  /**
   * The environment's current configuration, loading or rebuilding it if needed (one load at a time). A read
   * while a reload runs waits for it: the reload holds a change already committed.
   */
  async configuration(environment: string): Promise<EnvironmentConfiguration> {
    const entry = this.environments.get(environment);
    if (entry?.reloading) return entry.reloading;
    if (entry && !entry.stale) return entry.configuration;
    if (!entry) {
      // Requests that arrive together before the first load share it: each loading its own would queue as many
      // whole-environment reads on the database.
      let first = this.firstLoads.get(environment);
      if (!first) {
        first = this.reload(environment, undefined).finally(() => this.firstLoads.delete(environment));
        this.firstLoads.set(environment, first);
      }
      return first;
    }
    const reloading = this.reload(environment, entry);
    entry.reloading = reloading;
    return reloading;
  }

  /**
   * Reads what changed since the held configuration: only the flags the notifications named (and segments when
   * theirs changed), merged into it, so a change costs the same whatever the number of flags; everything when a
   * change was not about single flags, or on the first read.
   */
  private async reload(environment: string, entry: EnvironmentEntry | undefined): Promise<EnvironmentConfiguration> {
    const pending = entry?.pending;
    const names = entry && pending && !pending.all ? pending.flags : undefined;
    if (entry) {
      entry.stale = false;
      entry.pending = undefined;
    }
    let configuration: EnvironmentConfiguration;
    try {
      if (entry && names) {
        const held = entry.configuration;
        const segments = pending!.segments ? [...held.segments.keys()] : [];
        configuration = merged(held, await this.load(environment, [...names], segments), names);
      } else {
        configuration = await this.load(environment);
      }
    } catch (error) {
      if (entry) {
        entry.stale = true;
        // What was not read is read on the next try, and all of it: the notifications in between are unknown.
        entry.pending = mergePending(entry.pending, { all: true, flags: new Set(), segments: true });
        entry.reloading = undefined;
        // While the database is away, SDKs keep what they had rather than an error: it is read again once it is back.
        if (isDatabaseUnavailable(error)) return entry.configuration;
      }
      throw error;
    }
    if (!entry) {
      this.environments.set(environment, { configuration, stale: false, history: [], answers: new Map() });
      return configuration;
    }
    entry.reloading = undefined;
    // A change that arrives while this load runs marks the entry stale again; load once more for it.
    if (entry.stale && this.listeners.size > 0) {
      queueMicrotask(() => this.configuration(environment).catch((error: unknown) => this.onBackgroundFailure(error, environment)));
    }
    if (configuration.revision === entry.configuration.revision) return entry.configuration;
    const change = diff(entry.configuration, configuration, names);
    // Events SDKs cannot see (tokens, users, comments…) change nothing they read: the revision, and so every
    // ETag, stays as it was.
    if (change.flags.length === 0 && change.segments.length === 0) return entry.configuration;
    entry.history.push(change);
    if (entry.history.length > HISTORY_LENGTH) entry.history.splice(0, entry.history.length - HISTORY_LENGTH);
    entry.configuration = configuration;
    entry.previous = { answers: entry.answers, change };
    entry.answers = new Map();
    for (const listener of this.listeners) listener(environment, change, configuration);
    return configuration;
  }

  /** The flags and segments a scope sees, with the ETag and the serialised `/api/client/features` body. */
  async features(scope: ClientScope): Promise<ScopedFeatures> {
    return this.answer(scope, await this.configuration(scope.environment));
  }

  /**
   * The answer a scope was last given, while it is still the current one: read at once, for a conditional request
   * that needs nothing but its ETag. Undefined when answering needs a (re)load or a new answer (`features`).
   */
  heldAnswer(scope: ClientScope): ScopedFeatures | undefined {
    const entry = this.environments.get(scope.environment);
    if (!entry || entry.stale || entry.reloading) return undefined;
    const key = scopeKey(scope);
    const held = entry.answers.get(key);
    if (held) remember(entry.answers, key, held);
    return held;
  }

  /**
   * What a scope sees and the whole configuration it was cut from, one revision for both: an evaluation reads
   * its flags from the one and their parents and segments from the other, so they must never come from two
   * reads between which a change could land.
   */
  async snapshot(scope: ClientScope): Promise<{ answer: ScopedFeatures; configuration: EnvironmentConfiguration }> {
    const configuration = await this.configuration(scope.environment);
    return { answer: this.answer(scope, configuration), configuration };
  }

  /** What a scope sees of one configuration: cached while that configuration is the environment's current one. */
  private answer(scope: ClientScope, configuration: EnvironmentConfiguration): ScopedFeatures {
    const entry = this.environments.get(scope.environment)!;
    const key = scopeKey(scope);
    const current = configuration === entry.configuration;
    const cached = current ? entry.answers.get(key) : undefined;
    if (cached) {
      remember(entry.answers, key, cached);
      return cached;
    }
    // The answer before this configuration's change still holds when that change is nothing the scope sees; its
    // own segments are the ones to ask about, since a scope none of whose flags changed uses the same ones.
    const kept = current && entry.previous ? entry.previous.answers.get(key) : undefined;
    // Whether it holds or not, the scope's answer before the change is needed only this once: dropped, its body
    // (megabytes for a whole configuration, and its gzipped copy) is not kept until the next change.
    if (kept) entry.previous!.answers.delete(key);
    if (kept && scopedEvents(scope, [entry.previous!.change], kept).length === 0) {
      remember(entry.answers, key, kept);
      return kept;
    }
    const features = configuration.features.filter((feature) => inScope(scope, feature, configuration.tags.get(feature.name)));
    const segments = segmentsUsedBy(features, configuration.segments);
    const query = {
      ...(scope.project ? { project: scope.project } : {}),
      ...(scope.namePrefix ? { namePrefix: scope.namePrefix } : {}),
      ...(scope.tag ? { tag: scope.tag } : {}),
      environment: scope.environment,
      inlineSegmentConstraints: false,
    };
    let body: Buffer | undefined;
    const serialise = () =>
      Buffer.from(
        JSON.stringify({
          version: 2,
          features,
          segments,
          query,
          meta: { revisionId: configuration.revision, etag: null, queryHash: null },
        }),
      );
    const hash = createHash('sha256').update(key).digest('hex').slice(0, 12);
    const answer: ScopedFeatures = {
      revision: configuration.revision,
      etag: `"${hash}:${configuration.revision}"`,
      get body() {
        body ??= serialise();
        return body;
      },
      features,
      enabledFeatures: features.filter((feature) => feature.enabled),
      segments,
    };
    if (current) remember(entry.answers, key, answer);
    return answer;
  }

  /**
   * The delta events a scope needs to go from `since` to now: none when it is current, the changes in between
   * when they are still held, otherwise (unknown, too old or from the future) a hydration, the same object for
   * every caller of a scope at a revision.
   */
  async delta(scope: ClientScope, since: number | undefined): Promise<{ revision: number; update: StreamedUpdate }> {
    const answer = await this.features(scope);
    const { revision } = answer;
    const hydration = () => {
      let update = this.hydrations.get(answer);
      if (!update) {
        update = { events: [{ type: 'hydration', eventId: revision, features: answer.features, segments: answer.segments }] };
        this.hydrations.set(answer, update);
      }
      return { revision, update };
    };
    if (since === undefined || since > revision) return hydration();
    if (since === revision) return { revision, update: { events: [] } };
    const history = this.environments.get(scope.environment)!.history.filter((change) => change.to <= revision);
    if (history.length === 0 || since < history[0]!.from) return hydration();
    const changes = history.filter((change) => change.to > since);
    return { revision, update: { events: scopedEvents(scope, changes, answer) } };
  }

  /**
   * Streaming: calls `onChange` with each later rebuild's delta events for the scope, from revision `after` on,
   * and never for a change that is none of the scope's business (not even its revision would be told). Watchers
   * of one scope are given the same update object for a change, worked out once, so its serialisation can be
   * shared too (thousands of SDKs stream one scope). Returns the unsubscribe function.
   */
  watch(scope: ClientScope, after: number, onChange: (revision: number, update: StreamedUpdate) => void): () => void {
    let sent = after;
    const key = scopeKey(scope);
    return this.subscribe((environment, change, configuration) => {
      if (environment !== scope.environment || configuration.revision <= sent) return;
      let updates = this.updatesByChange.get(change);
      if (!updates) this.updatesByChange.set(change, (updates = new Map()));
      let update = updates.get(key);
      if (!update) updates.set(key, (update = { events: scopedEvents(scope, [change], this.answer(scope, configuration)) }));
      if (update.events.length === 0) return;
      sent = configuration.revision;
      onChange(configuration.revision, update);
    });
  }
}
