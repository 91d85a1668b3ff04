import { isDeepStrictEqual } from 'node:util';
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
