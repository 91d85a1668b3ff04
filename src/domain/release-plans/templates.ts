import { randomUUID } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { Db } from '../../db/database.js';
import type { ReleasePlanTemplatesTable } from '../../db/schema.js';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { BadDataError, NotFoundError } from '../../shared/errors.js';
import { actorIdentity } from '../access/actor.js';
import { recordEvent } from '../events/record-event.js';
import { resolveStrategy, type StrategyInput } from '../features/strategies.js';

/** A step of a rollout: the strategies a flag has while it is active, and when to move on by itself. */
export interface MilestoneInput {
  name: string;
  strategies: StrategyInput[];
  /** Move on to the next milestone this many minutes after this one started. */
  transitionCondition?: { intervalMinutes: number } | null;
}

export interface TemplateInput {
  name: string;
  description?: string | null;
  milestones: MilestoneInput[];
}

export interface MilestoneView {
  id: string;
  name: string;
  sortOrder: number;
  strategies: StrategyInput[];
  transitionCondition: { intervalMinutes: number } | null;
}

/** A template as Unleash's release plan template schema shows it. */
export interface TemplateView {
  id: string;
  name: string;
  description: string | null;
  milestones: MilestoneView[];
  createdAt: string;
  createdByUserId: number;
  archivedAt: string | null;
}

function toView(row: Selectable<ReleasePlanTemplatesTable>): TemplateView {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    milestones: row.milestones as MilestoneView[],
    createdAt: row.created_at.toISOString(),
    createdByUserId: row.created_by_user_id,
    archivedAt: row.archived_at?.toISOString() ?? null,
  };
}

/**
 * Checks every milestone's strategies as a flag's would be checked (known strategy, typed parameters,
 * constraints, existing segments), each refusal at its place in the body, and gives the milestones their ids
 * and order.
 */
async function checkedMilestones(db: Db, milestones: MilestoneInput[]): Promise<MilestoneView[]> {
  const names = new Set<string>();
  const views: MilestoneView[] = [];
  for (const [index, milestone] of milestones.entries()) {
    const path = `/body/milestones/${index}`;
    const name = milestone.name.trim();
    if (names.has(name.toLowerCase())) {
      throw new BadDataError('Milestone names must differ', [{ path: `${path}/name`, message: `another milestone is called "${name}"` }]);
    }
    names.add(name.toLowerCase());
    for (const [strategyIndex, strategy] of milestone.strategies.entries()) {
      const at = `${path}/strategies/${strategyIndex}`;
      await resolveStrategy(db, strategy, 'release-plan-template', at);
      if (strategy.segments && strategy.segments.length > 0) {
        const found = await db.selectFrom('segments').select('id').where('id', 'in', strategy.segments).execute();
        const missing = strategy.segments.filter((id) => !found.some((row) => row.id === id));
        if (missing.length > 0) {
          throw new BadDataError('Unknown segment', [{ path: `${at}/segments`, message: `no segment has id ${missing.join(', ')}` }]);
        }
      }
    }
    views.push({
      id: randomUUID(),
      name,
      sortOrder: index,
      strategies: milestone.strategies,
      transitionCondition: milestone.transitionCondition ?? null,
    });
  }
  return views;
}

/** A template has this many at most; an instance needs tens. */
export const TEMPLATE_LIST_LIMIT = 500;

export async function listTemplates(db: Db): Promise<TemplateView[]> {
  const rows = await db
    .selectFrom('release_plan_templates')
    .selectAll()
    .where('archived_at', 'is', null)
    .orderBy('name')
    .limit(TEMPLATE_LIST_LIMIT)
    .execute();
  return rows.map(toView);
}

export async function getTemplate(db: Db, id: string): Promise<TemplateView> {
  const row = await db.selectFrom('release_plan_templates').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw new NotFoundError(`Could not find release plan template ${id}`);
  return toView(row);
}

/** The template a plan is made from: it must exist and not be archived, or the request is refused at `path`. */
export async function usableTemplate(db: Db, id: string, path: string): Promise<TemplateView> {
  const row = await db.selectFrom('release_plan_templates').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw new BadDataError(`There is no release plan template ${id}`, [{ path, message: `unknown template ${id}` }]);
  if (row.archived_at) {
    throw new BadDataError(`The release plan template "${row.name}" is archived`, [{ path, message: 'archived template' }]);
  }
  return toView(row);
}

function creatorId(uow: UnitOfWork): number {
  return actorIdentity(uow.actor).createdByUserId;
}

export async function createTemplate(uow: UnitOfWork, input: TemplateInput): Promise<TemplateView> {
  const milestones = await checkedMilestones(uow.tx, input.milestones);
  const row = await uow.tx
    .insertInto('release_plan_templates')
    .values({
      id: randomUUID(),
      name: input.name.trim(),
      description: input.description ?? null,
      milestones: JSON.stringify(milestones),
      created_by_user_id: creatorId(uow),
      created_at: uow.now,
      archived_at: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  const template = toView(row);
  await recordEvent(uow, { type: 'release-plan-template-created', data: template });
  return template;
}

export async function updateTemplate(uow: UnitOfWork, id: string, input: TemplateInput): Promise<TemplateView> {
  const before = await uow.tx
    .selectFrom('release_plan_templates')
    .selectAll()
    .where('id', '=', id)
    .where('archived_at', 'is', null)
    .forUpdate()
    .executeTakeFirst();
  if (!before) throw new NotFoundError(`Could not find release plan template ${id}`);
  const milestones = await checkedMilestones(uow.tx, input.milestones);
  const row = await uow.tx
    .updateTable('release_plan_templates')
    .set({ name: input.name.trim(), description: input.description ?? null, milestones: JSON.stringify(milestones) })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
  const template = toView(row);
  await recordEvent(uow, { type: 'release-plan-template-updated', data: template, preData: toView(before) });
  return template;
}

/** Deletes the template for good (Unleash's DELETE): plans made from it keep their own copy of its milestones. */
export async function deleteTemplate(uow: UnitOfWork, id: string): Promise<void> {
  const row = await uow.tx.deleteFrom('release_plan_templates').where('id', '=', id).returningAll().executeTakeFirst();
  if (!row) throw new NotFoundError(`Could not find release plan template ${id}`);
  await recordEvent(uow, { type: 'release-plan-template-deleted', preData: toView(row) });
}

/** Archives the template: plans made from it keep their own copy of its milestones. */
export async function archiveTemplate(uow: UnitOfWork, id: string): Promise<void> {
  const row = await uow.tx
    .updateTable('release_plan_templates')
    .set({ archived_at: uow.now })
    .where('id', '=', id)
    .where('archived_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
  if (!row) throw new NotFoundError(`Could not find release plan template ${id}`);
  await recordEvent(uow, { type: 'release-plan-template-archived', preData: toView(row) });
}
