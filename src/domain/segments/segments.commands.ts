import { isDeepStrictEqual } from 'node:util';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { ConflictError } from '../../shared/errors.js';
import { actorIdentity } from '../access/actor.js';
import { guardDirectChange } from '../protected-environments/guard.js';
import { recordEvent } from '../events/record-event.js';
import { normalizeConstraints, validateConstraints } from '../features/constraints.js';
import type { Constraint } from '../features/feature-views.js';
import { describeFlagUsage } from '../../shared/flag-usage.js';
import { findSegment, strategiesUsingSegment, toSegmentView, type SegmentView } from './segments.queries.js';

/** Unleash's `upsertSegmentSchema`: creating and updating take the whole segment. */
export interface UpsertSegmentInput {
  name: string;
  description?: string | null;
  project?: string | null;
  constraints: Constraint[];
}

function normalizeSegment(input: UpsertSegmentInput) {
  validateConstraints(input.constraints, '/body/constraints');
  return {
    name: input.name,
    description: input.description ?? null,
    project: input.project ?? null,
    constraints: normalizeConstraints(input.constraints),
  };
}

/** A project-scoped segment may be used only by that project's flags (an unknown project fails on its FK: 404). */
export async function createSegment(uow: UnitOfWork, input: UpsertSegmentInput): Promise<SegmentView> {
  const segment = normalizeSegment(input);
  const row = await uow.tx
    .insertInto('segments')
    .values({
      ...segment,
      constraints: JSON.stringify(segment.constraints),
      created_at: uow.now,
      created_by: actorIdentity(uow.actor).createdBy,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  const created = toSegmentView(row);
  await recordEvent(uow, { type: 'segment-created', project: created.project, data: created });
  return created;
}

/**
 * Replaces a segment's fields. Moving it into a project is refused while flags of other projects use it, since
 * a project's segment serves only that project's flags. Unchanged values record nothing.
 */
export async function updateSegment(uow: UnitOfWork, id: number, input: UpsertSegmentInput): Promise<SegmentView> {
  await guardDirectChange(uow, { kind: 'segment', segmentId: id });
  const segment = normalizeSegment(input);
  const before = await findSegment(uow.tx, id, true);
  const unchanged =
    segment.name === before.name &&
    segment.description === before.description &&
    segment.project === before.project &&
    isDeepStrictEqual(segment.constraints, before.constraints);
  if (unchanged) return before;
  if (segment.project !== null && segment.project !== before.project) {
    const usages = await strategiesUsingSegment(uow.tx, id);
    const elsewhere = usages.filter((usage) => usage.projectId !== segment.project);
    if (elsewhere.length > 0) {
      const users = describeFlagUsage(elsewhere);
      throw new ConflictError(
        `Segment "${before.name}" cannot move to project "${segment.project}" while ${users} of other projects use it`,
      );
    }
  }
  const row = await uow.tx
    .updateTable('segments')
    .set({ ...segment, constraints: JSON.stringify(segment.constraints) })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
  const after = toSegmentView(row);
  await recordEvent(uow, { type: 'segment-updated', project: after.project, data: after, preData: before });
  return after;
}

/**
 * Deletes a segment no strategy uses; otherwise a 409 names the flags and environments to change first. The
 * lock keeps a strategy from taking the segment up meanwhile (its foreign key check waits for it).
 */
export async function deleteSegment(uow: UnitOfWork, id: number): Promise<void> {
  await guardDirectChange(uow, { kind: 'segment', segmentId: id });
  const before = await findSegment(uow.tx, id, true);
  const usages = await strategiesUsingSegment(uow.tx, id);
  if (usages.length > 0) {
    throw new ConflictError(
      `Segment "${before.name}" is used by the strategies of ${describeFlagUsage(usages)}; remove it from those strategies first`,
    );
  }
  await uow.tx.deleteFrom('segments').where('id', '=', id).execute();
  await recordEvent(uow, { type: 'segment-deleted', project: before.project, preData: before });
}
