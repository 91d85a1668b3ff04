import { isDeepStrictEqual } from 'node:util';
import { sql } from 'kysely';
import {
  CHANGED_ACCESS,
  CHANGED_FLAGS,
  CHANGED_SEGMENTS,
  CHANGED_SETTINGS,
  CONFIGURATION_CHANNEL,
  flagChanged,
} from '../../db/notification-channels.js';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { enqueueIntegrationDeliveries } from './delivery-outbox.js';
import { actorIdentity } from '../access/actor.js';
import { scopesOf, type CountedEvent } from './event-counts.js';
import { isEventType, type EventType } from './event-types.js';

export interface EventTag {
  type: string;
  value: string;
}

export interface EventInput {
  type: EventType;
  project?: string | null;
  environment?: string | null;
  featureName?: string | null;
  data?: unknown;
  preData?: unknown;
  tags?: EventTag[];
}

/** JSON as stored: dates become strings and undefined fields disappear, so comparisons see what readers see. */
function asStoredJson(value: unknown): unknown {
  return value === undefined ? null : JSON.parse(JSON.stringify(value));
}

const EVENT_COUNT_SHARDS = 16;
const pendingCounts = new WeakMap<UnitOfWork, Map<string, number>>();
/** One shard per transaction, so even a second flush in it takes its locks in the same order. */
const shards = new WeakMap<UnitOfWork, number>();
let flushes = 0;

/**
 * Tallies the event for the exact counters (event-counts.ts). They are written once per transaction, on one
 * random shard and in scope order, so concurrent writers rarely touch the same row and, when they do, take the
 * locks in the same order and cannot deadlock. An event recorded after the flush (by a later before-commit
 * task) starts a new tally with its own flush.
 */
function countEvent(uow: UnitOfWork, event: CountedEvent): void {
  let counts = pendingCounts.get(uow);
  if (!counts) {
    const tally = new Map<string, number>();
    counts = tally;
    pendingCounts.set(uow, tally);
    flushes += 1;
    uow.beforeCommit(`event-counts-${flushes}`, async () => {
      pendingCounts.delete(uow);
      const shard = shards.get(uow) ?? Math.floor(Math.random() * EVENT_COUNT_SHARDS);
      shards.set(uow, shard);
      const rows = [...tally].sort(([a], [b]) => (a < b ? -1 : 1)).map(([scope, count]) => ({ scope, shard, count }));
      await uow.tx
        .insertInto('event_counts')
        .values(rows)
        .onConflict((oc) => oc.columns(['scope', 'shard']).doUpdateSet({ count: sql`event_counts.count + excluded.count` }))
        .execute();
    });
  }
  for (const scope of scopesOf(event)) counts.set(scope, (counts.get(scope) ?? 0) + 1);
}

/** What else than flags an event type says changed, for caches that hold only that (notification-channels.ts). */
function changedBy(type: string): string | undefined {
  if (type.startsWith('api-token-') || type === 'environment-deleted' || type === 'project-deleted') return CHANGED_ACCESS;
  if (type === 'setting-updated') return CHANGED_SETTINGS;
  return undefined;
}
/** Events without a flag that cannot change what SDKs read: about people, tokens, integrations, definitions… */
const UNSEEN_BY_SDKS = [
  'api-token-',
  'user-',
  'pat-',
  'mcp-token-',
  'addon-',
  'change-',
  'setting-',
  'application-',
  'tag-',
  'context-field-',
  'strategy-',
  'code-references-',
  'role-',
  'group-',
  'service-account-',
  'banner-',
  'public-signup-',
  'client-',
  'signal-',
  'actions-',
  'release-plan-template-',
  'project-access-',
  'project-user-',
  'project-group-',
  'project-favorited',
  'project-unfavorited',
  'project-created',
  'project-updated',
  'features-exported',
  'default-strategy-',
];

/** What of SDKs' configuration an event may have changed: its flag, segments, all of it, or nothing. */
/** Events about a flag that change nothing an SDK reads: what code references say of it. */
const DESCRIBE_A_FLAG = new Set(['feature-removed-from-code', 'feature-ready-for-removal']);

function configurationChangedBy(event: ChangingEvent): string | undefined {
  if (DESCRIBE_A_FLAG.has(event.type)) return undefined;
  if (event.featureName) return flagChanged(event.featureName);
  if (event.type.startsWith('segment-')) return CHANGED_SEGMENTS;
  if (UNSEEN_BY_SDKS.some((prefix) => event.type.startsWith(prefix))) return undefined;
  return CHANGED_FLAGS;
}

/** What of an event says what it changed: as recorded, or as read back from the event log. */
export interface ChangingEvent {
  type: string;
  featureName?: string | null;
}

/** Adds to `changed` what the event changed, as the entries of a NOTIFY payload (notification-channels.ts). */
export function addChangesOf(changed: Set<string>, event: ChangingEvent): void {
  const kind = changedBy(event.type);
  if (kind) changed.add(kind);
  const configuration = configurationChangedBy(event);
  if (configuration) changed.add(configuration);
}

/** More flags than this in one commit are announced as a change of everything (a NOTIFY payload is small). */
const MAX_NAMED_FLAGS = 50;

/** The NOTIFY payload that tells what a run of events changed. */
export function changePayloadOf(changed: Set<string>): string {
  const flags = [...changed].filter((entry) => entry !== CHANGED_ACCESS && entry !== CHANGED_SETTINGS && entry !== CHANGED_SEGMENTS);
  const payload =
    flags.length > MAX_NAMED_FLAGS ? [...[...changed].filter((entry) => !flags.includes(entry)), CHANGED_FLAGS] : [...changed];
  return payload.sort().join(',');
}

const changesOfUnit = new WeakMap<UnitOfWork, Set<string>>();

/**
 * One NOTIFY per transaction, delivered when it commits (never for a rollback), naming what besides flags its
 * events changed: SDK caches on every instance refresh, and caches of tokens or settings only when those changed.
 * A commit that changes any of it raises the configuration's revision as its last statement, so that revisions
 * follow the order of commits (migration 0020).
 */
function notifyChange(uow: UnitOfWork, input: EventInput): void {
  let changes = changesOfUnit.get(uow);
  if (!changes) {
    const changed = new Set<string>();
    changes = changed;
    changesOfUnit.set(uow, changed);
    uow.beforeCommit(
      'configuration-changed',
      async () => {
        if (changed.size === 0) return;
        await uow.tx.updateTable('configuration_revision').set({ revision: sql`revision + 1` }).execute();
        await sql`SELECT pg_notify(${CONFIGURATION_CHANNEL}, ${changePayloadOf(changed)})`.execute(uow.tx);
      },
      { last: true },
    );
  }
  addChangesOf(changes, input);
}

/**
 * Records one event in the unit of work's transaction, so the event commits or rolls back with the change it
 * describes, and with it the integration deliveries it owes (the outbox). An update whose data deep-equals its
 * preData changed nothing and records nothing (returns null).
 */
export async function recordEvent(uow: UnitOfWork, input: EventInput): Promise<{ id: number } | null> {
  // The type list is a compile-time union; this guards values assembled at run time (e.g. from a payload).
  if (!isEventType(input.type)) throw new Error(`Unknown event type "${input.type}"`);
  const data = asStoredJson(input.data);
  const preData = asStoredJson(input.preData);
  if (data !== null && preData !== null && isDeepStrictEqual(data, preData)) return null;

  const { createdBy, createdByUserId } = actorIdentity(uow.actor);
  countEvent(uow, { type: input.type, project: input.project ?? null, createdByUserId });
  const recorded = await uow.tx
    .insertInto('events')
    .values({
      created_at: uow.now,
      type: input.type,
      created_by: createdBy,
      created_by_user_id: createdByUserId,
      project: input.project ?? null,
      environment: input.environment ?? null,
      feature_name: input.featureName ?? null,
      data: data === null ? null : JSON.stringify(data),
      pre_data: preData === null ? null : JSON.stringify(preData),
      tags: JSON.stringify(input.tags ?? []),
      change_request_id: uow.changeRequestId ?? null,
      via: 'via' in uow.actor ? (uow.actor.via ?? null) : null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  enqueueIntegrationDeliveries(uow, recorded.id);
  notifyChange(uow, input);
  return recorded;
}
