import { isDeepStrictEqual } from 'node:util';
import type { Actor, UnitOfWork } from '../../db/unit-of-work.js';
import { ConflictError, NameExistsError, NotFoundError } from '../../shared/errors.js';
import { actorIdentity } from '../access/actor.js';
import { inProjectVisibleTo } from '../access/project-visibility.js';
import { guardDirectChange } from '../protected-environments/guard.js';
import { recordEvent } from '../events/record-event.js';
import { normalizeConstraints, validateConstraints } from '../features/constraints.js';
import type { Constraint } from '../features/feature-views.js';
import { BY_FLAG_AND_PLACE, describeFlagUsage, strategyUse } from '../../shared/flag-usage.js';
import { sql, type Selectable } from 'kysely';
import type { SegmentsTable } from '../../db/schema.js';
import type { Db, LockingHandle } from '../../db/database.js';

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

/** A segment as Unleash's `segmentSchema` shows it, and as its events carry it. */
export interface SegmentView {
  id: number;
  name: string;
  description: string | null;
  project: string | null;
  constraints: Constraint[];
  createdAt: string;
  createdBy: string | null;
}

/** Unleash's `adminSegmentSchema`: the segment and how widely it is used (archived flags included). */
export interface AdminSegmentView extends SegmentView {
  usedInFeatures: number;
  usedInProjects: number;
}

/** A strategy using a segment, as Unleash's `segmentStrategiesSchema` lists it. */
export interface SegmentStrategyView {
  id: string;
  featureName: string;
  projectId: string;
  environment: string;
  strategyName: string;
}

export function toSegmentView(row: Selectable<SegmentsTable>): SegmentView {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    project: row.project,
    constraints: row.constraints as Constraint[],
    createdAt: row.created_at.toISOString(),
    createdBy: row.created_by,
  };
}

function selectAdminSegments(db: Db) {
  return db
    .selectFrom('segments as s')
    .selectAll('s')
    .select((eb) => [
      eb
        .selectFrom('feature_strategy_segments as fss')
        .innerJoin('feature_strategies as fs', 'fs.id', 'fss.strategy_id')
        .select(sql<number>`count(distinct fs.feature_name)::int`.as('n'))
        .whereRef('fss.segment_id', '=', 's.id')
        .as('used_in_features'),
      eb
        .selectFrom('feature_strategy_segments as fss')
        .innerJoin('feature_strategies as fs', 'fs.id', 'fss.strategy_id')
        .innerJoin('features as f', 'f.name', 'fs.feature_name')
        .select(sql<number>`count(distinct f.project)::int`.as('n'))
        .whereRef('fss.segment_id', '=', 's.id')
        .as('used_in_projects'),
    ])
    .$narrowType<{ used_in_features: number; used_in_projects: number }>();
}

type AdminSegmentRow = Selectable<SegmentsTable> & { used_in_features: number; used_in_projects: number };

function toAdminSegmentView(row: AdminSegmentRow): AdminSegmentView {
  const { used_in_features, used_in_projects, ...segment } = row;
  return { ...toSegmentView(segment), usedInFeatures: used_in_features, usedInProjects: used_in_projects };
}

export async function listSegments(db: Db): Promise<AdminSegmentView[]> {
  const rows = await selectAdminSegments(db).orderBy('s.name').execute();
  return rows.map(toAdminSegmentView);
}

export async function getSegment(db: Db, id: number): Promise<AdminSegmentView> {
  const row = await selectAdminSegments(db).where('s.id', '=', id).executeTakeFirst();
  if (!row) throw new NotFoundError(`Could not find segment ${id}`);
  return toAdminSegmentView(row);
}

/** The segment `id`, locked for the caller's transaction when asked. */
export async function findSegment<Lock extends boolean = false>(db: LockingHandle<Lock>, id: number, lock?: Lock): Promise<SegmentView> {
  let query = db.selectFrom('segments').selectAll().where('id', '=', id);
  if (lock) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  if (!row) throw new NotFoundError(`Could not find segment ${id}`);
  return toSegmentView(row);
}

/** A 409 when the name is taken: what Unleash's create form checks before creating. */
export async function assertSegmentNameFree(db: Db, name: string): Promise<void> {
  const row = await db.selectFrom('segments').select('id').where('name', '=', name).executeTakeFirst();
  if (row) throw new NameExistsError(`A segment named "${name}" already exists`);
}

/** Strategies using the segment, archived flags' included, by flag and environment. */
export async function strategiesUsingSegment(
  db: Db,
  id: number,
  visibleTo?: Actor,
): Promise<Array<SegmentStrategyView & { archived: boolean }>> {
  const rows = await db
    .selectFrom('feature_strategy_segments as fss')
    .innerJoin('feature_strategies as fs', 'fs.id', 'fss.strategy_id')
    .innerJoin('features as f', 'f.name', 'fs.feature_name')
    .select(['fs.id', 'fs.feature_name', 'f.project', 'fs.environment', 'fs.strategy_name', 'f.archived_at'])
    .where('fss.segment_id', '=', id)
    .$if(visibleTo !== undefined, (query) => query.where(inProjectVisibleTo(visibleTo!, 'f.project')))
    .orderBy(BY_FLAG_AND_PLACE)
    .execute();
  return rows.map((row) => ({ ...strategyUse(row), archived: row.archived_at !== null }));
}

export async function listSegmentStrategies(db: Db, actor: Actor, id: number): Promise<SegmentStrategyView[]> {
  await findSegment(db, id);
  return (await strategiesUsingSegment(db, id, actor)).map(({ archived: _archived, ...strategy }) => strategy);
}

/** The segments a flag's strategy uses (Unleash's `GET /api/admin/segments/strategies/:strategyId`); an unknown strategy is a 404. */
export async function listStrategySegments(db: Db, strategyId: string): Promise<AdminSegmentView[]> {
  const strategy = await db.selectFrom('feature_strategies').select('id').where('id', '=', strategyId).executeTakeFirst();
  if (!strategy) throw new NotFoundError(`Could not find strategy ${strategyId}`);
  const rows = await selectAdminSegments(db)
    .where('s.id', 'in', (eb) => eb.selectFrom('feature_strategy_segments').select('segment_id').where('strategy_id', '=', strategyId))
    .orderBy('s.name')
    .execute();
  return rows.map(toAdminSegmentView);
}
