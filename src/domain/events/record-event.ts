import { isDeepStrictEqual } from 'node:util';
import { sql } from 'kysely';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { actorIdentity } from '../access/actor.js';
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

export const ALL_EVENTS_SCOPE = '*';
export const projectScope = (project: string) => `project:${project}`;

/**
 * Tallies the event for the exact counters of the whole log and of its project. They are written once per
 * transaction, on one random shard and in scope order, so concurrent writers rarely touch the same row and,
 * when they do, take the locks in the same order and cannot deadlock.
 */
function countEvent(uow: UnitOfWork, project: string | null): void {
  let counts = pendingCounts.get(uow);
  if (!counts) {
    const tally = new Map<string, number>();
    counts = tally;
    pendingCounts.set(uow, tally);
    uow.beforeCommit('event-counts', async () => {
      const shard = Math.floor(Math.random() * EVENT_COUNT_SHARDS);
      const rows = [...tally].sort(([a], [b]) => (a < b ? -1 : 1)).map(([scope, count]) => ({ scope, shard, count }));
      await uow.tx
        .insertInto('event_counts')
        .values(rows)
        .onConflict((oc) => oc.columns(['scope', 'shard']).doUpdateSet({ count: sql`event_counts.count + excluded.count` }))
        .execute();
    });
  }
  counts.set(ALL_EVENTS_SCOPE, (counts.get(ALL_EVENTS_SCOPE) ?? 0) + 1);
  if (project) counts.set(projectScope(project), (counts.get(projectScope(project)) ?? 0) + 1);
}

/**
 * Records one event in the unit of work's transaction, so the event commits or rolls back with the change it
 * describes. An update whose data deep-equals its preData changed nothing and records nothing (returns null).
 */
export async function recordEvent(uow: UnitOfWork, input: EventInput): Promise<{ id: number } | null> {
  // The type list is a compile-time union; this guards values assembled at run time (e.g. from a payload).
  if (!isEventType(input.type)) throw new Error(`Unknown event type "${input.type}"`);
  const data = asStoredJson(input.data);
  const preData = asStoredJson(input.preData);
  if (data !== null && preData !== null && isDeepStrictEqual(data, preData)) return null;

  const { createdBy, createdByUserId } = actorIdentity(uow.actor);
  countEvent(uow, input.project ?? null);
  return uow.tx
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
    })
    .returning('id')
    .executeTakeFirstOrThrow();
}
