import { inProjectVisibleTo } from '../access/project-visibility.js';
import { isDeepStrictEqual } from 'node:util';
import type { Actor, UnitOfWork } from '../../db/unit-of-work.js';
import { BadDataError, ConflictError, repeatedKeys, NameExistsError, NotFoundError } from '../../shared/errors.js';
import { recordEvent } from '../events/record-event.js';
import { BY_FLAG_AND_PLACE, describeFlagUsage, joinWords, strategyUse, type FlagUsage } from '../../shared/flag-usage.js';
import { sql, type Selectable } from 'kysely';
import type { ContextFieldsTable } from '../../db/schema.js';
import type { Db, LockingHandle } from '../../db/database.js';

// Unleash's default position for a new field: after the built-in ones.
const DEFAULT_SORT_ORDER = 10;

export interface CreateContextFieldInput {
  name: string;
  /** The project the field belongs to; none: the whole instance's. */
  project?: string;
  description?: string | null;
  legalValues?: LegalValue[];
  stickiness?: boolean;
  sortOrder?: number;
}

export type UpdateContextFieldInput = Omit<CreateContextFieldInput, 'name' | 'project'>;

/**
 * Where a request reaches fields: a project's own only, the instance's own only (`project: null`, the global routes,
 * which never reach a project's field), or (none) every field; `visibleTo` leaves out the fields of projects that
 * actor may not see.
 */
export type FieldScope = { project?: string | null; visibleTo?: Actor };

/** Legal values are unique by value; a description is kept only when given. */
function normalizeLegalValues(legalValues: LegalValue[]): LegalValue[] {
  const details = repeatedKeys(
    legalValues,
    (legalValue) => legalValue.value,
    (index) => `/body/legalValues/${index}/value`,
    'Legal values',
  );
  if (details.length > 0) throw new BadDataError('The legal values are invalid', details);
  return legalValues.map(({ value, description }) => (description === undefined ? { value } : { value, description }));
}

export async function createContextField(uow: UnitOfWork, input: CreateContextFieldInput): Promise<ContextFieldView> {
  if (input.project !== undefined) {
    const project = await uow.tx.selectFrom('projects').select('id').where('id', '=', input.project).executeTakeFirst();
    if (!project) throw new NotFoundError(`Could not find project "${input.project}"`);
  }
  const row = await uow.tx
    .insertInto('context_fields')
    .values({
      name: input.name,
      project: input.project ?? null,
      description: input.description ?? null,
      legal_values: JSON.stringify(normalizeLegalValues(input.legalValues ?? [])),
      stickiness: input.stickiness ?? false,
      sort_order: input.sortOrder ?? DEFAULT_SORT_ORDER,
      created_at: uow.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  const field = toContextFieldView(row);
  await recordEvent(uow, { type: 'context-field-created', data: field, project: field.project ?? null });
  return field;
}

/**
 * Fields left out keep their value (Unleash's PUT resets them, silently dropping legal values a client did not
 * resend). Unchanged values record nothing.
 */
export async function updateContextField(
  uow: UnitOfWork,
  name: string,
  input: UpdateContextFieldInput,
  scope: FieldScope = {},
): Promise<ContextFieldView> {
  const before = await findContextField(uow.tx, name, true, scope);
  const next = {
    description: input.description === undefined ? before.description : input.description,
    legalValues: input.legalValues === undefined ? before.legalValues : normalizeLegalValues(input.legalValues),
    stickiness: input.stickiness ?? before.stickiness,
    sortOrder: input.sortOrder ?? before.sortOrder,
  };
  const unchanged =
    next.description === before.description &&
    isDeepStrictEqual(next.legalValues, before.legalValues) &&
    next.stickiness === before.stickiness &&
    next.sortOrder === before.sortOrder;
  if (unchanged) return before;
  const row = await uow.tx
    .updateTable('context_fields')
    .set({
      description: next.description,
      legal_values: JSON.stringify(next.legalValues),
      stickiness: next.stickiness,
      sort_order: next.sortOrder,
    })
    .where('name', '=', name)
    .returningAll()
    .executeTakeFirstOrThrow();
  const after = toContextFieldView(row);
  await recordEvent(uow, { type: 'context-field-updated', data: after, preData: before, project: after.project ?? null });
  return after;
}

/** A field lists at most this many legal values: enough for a picker, bounded for every request that sends them. */
export const MAX_LEGAL_VALUES = 1000;

/** Adds a legal value to a field, or replaces the description of the one with that value. */
export async function setLegalValue(
  uow: UnitOfWork,
  name: string,
  legalValue: LegalValue,
  scope: FieldScope = {},
): Promise<ContextFieldView> {
  const field = await findContextField(uow.tx, name, true, scope);
  const known = field.legalValues.some((entry) => entry.value === legalValue.value);
  if (!known && field.legalValues.length >= MAX_LEGAL_VALUES) {
    throw new BadDataError(`Context field "${name}" already has ${MAX_LEGAL_VALUES} legal values, the most a field may have`);
  }
  const legalValues = known
    ? field.legalValues.map((entry) => (entry.value === legalValue.value ? legalValue : entry))
    : [...field.legalValues, legalValue];
  return updateContextField(uow, name, { legalValues }, scope);
}

/** Removes a legal value from a field; a value the field does not have changes nothing. */
export async function removeLegalValue(uow: UnitOfWork, name: string, value: string, scope: FieldScope = {}): Promise<ContextFieldView> {
  const field = await findContextField(uow.tx, name, true, scope);
  return updateContextField(uow, name, { legalValues: field.legalValues.filter((entry) => entry.value !== value) }, scope);
}

/**
 * Deletes a context field no constraint uses; otherwise a 409 names the flags (with environments) and segments
 * whose constraints use it, so the UI never shows constraints on a field it no longer knows.
 */
export async function deleteContextField(uow: UnitOfWork, name: string, scope: FieldScope = {}): Promise<void> {
  const before = await findContextField(uow.tx, name, true, scope);
  const usage = await contextFieldUsage(uow.tx, name);
  if (usage.strategies.length > 0 || usage.segments.length > 0) {
    const users: string[] = [];
    if (usage.strategies.length > 0) users.push(`the strategies of ${describeFlagUsage(usage.strategies)}`);
    if (usage.segments.length > 0) {
      const names = usage.segments.map((segment) => `"${segment}"`).join(', ');
      users.push(`segment${usage.segments.length > 1 ? 's' : ''} ${names}`);
    }
    throw new ConflictError(`Context field "${name}" is used in constraints of ${joinWords(users)}; remove those constraints first`);
  }
  await uow.tx.deleteFrom('context_fields').where('name', '=', name).execute();
  await recordEvent(uow, { type: 'context-field-deleted', preData: before, project: before.project ?? null });
}

export interface LegalValue {
  value: string;
  description?: string;
}

/** A context field as Unleash's `contextFieldSchema` shows it. */
export interface ContextFieldView {
  name: string;
  description: string | null;
  legalValues: LegalValue[];
  stickiness: boolean;
  sortOrder: number;
  createdAt: string;
  /** Present for a project's own field. */
  project?: string;
}

export function toContextFieldView(row: Selectable<ContextFieldsTable>): ContextFieldView {
  return {
    name: row.name,
    description: row.description,
    legalValues: row.legal_values as LegalValue[],
    stickiness: row.stickiness,
    sortOrder: row.sort_order,
    createdAt: row.created_at.toISOString(),
    ...(row.project !== null ? { project: row.project } : {}),
  };
}

/**
 * The instance's fields (with every project's too when `includeProjects`), or one project's own (as Unleash lists
 * them on the project's page).
 */
export async function listContextFields(
  db: Db,
  which: { project?: string; includeProjects?: boolean; visibleTo?: Actor } = {},
): Promise<ContextFieldView[]> {
  let query = db.selectFrom('context_fields').selectAll().orderBy('sort_order').orderBy('name');
  if (which.project !== undefined) query = query.where('project', '=', which.project);
  else if (!which.includeProjects) query = query.where('project', 'is', null);
  if (which.visibleTo) query = query.where(inProjectVisibleTo(which.visibleTo, 'project'));
  return (await query.execute()).map(toContextFieldView);
}

/** The context field `name` (a 404 when the scope names a project it is not of), locked for the caller's transaction when asked. */
export async function findContextField<Lock extends boolean = false>(
  db: LockingHandle<Lock>,
  name: string,
  lock?: Lock,
  scope: FieldScope = {},
): Promise<ContextFieldView> {
  let query = db.selectFrom('context_fields').selectAll().where('name', '=', name);
  if (scope.visibleTo) query = query.where(inProjectVisibleTo(scope.visibleTo, 'project'));
  if (lock) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  if (!row || (scope.project !== undefined && row.project !== scope.project)) {
    const where =
      scope.project === null ? " among the instance's own fields" : scope.project !== undefined ? ` in project "${scope.project}"` : '';
    throw new NotFoundError(`Could not find context field "${name}"${where}`);
  }
  return toContextFieldView(row);
}

/** Deletes a project's own fields, each with its event, before the project goes; one a constraint uses is a 409. */
export async function deleteProjectContextFields(uow: UnitOfWork, project: string): Promise<void> {
  const rows = await uow.tx.selectFrom('context_fields').select('name').where('project', '=', project).orderBy('name').execute();
  for (const row of rows) await deleteContextField(uow, row.name, { project });
}

/** A 409 when the name is taken: what Unleash's create form checks before creating. */
export async function assertContextFieldNameFree(db: Db, name: string): Promise<void> {
  const row = await db.selectFrom('context_fields').select('name').where('name', '=', name).executeTakeFirst();
  if (row) throw new NameExistsError(`A context field named "${name}" already exists`);
}

/** Matches constraint lists (jsonb arrays) holding a constraint on the field, whatever its other keys. */
const constrainsOn = (column: string, name: string) =>
  sql<boolean>`${sql.ref(column)} @> ${JSON.stringify([{ contextName: name }])}::jsonb`;

/** A strategy whose constraints use a field, as Unleash's `contextFieldStrategiesSchema` lists it. */
export interface ContextFieldStrategyView {
  id: string;
  featureName: string;
  projectId: string;
  environment: string;
  strategyName: string;
}

async function strategiesConstrainingOn(db: Db, name: string, project?: string, visibleTo?: Actor) {
  return db
    .selectFrom('feature_strategies as fs')
    .innerJoin('features as f', 'f.name', 'fs.feature_name')
    .select(['fs.id', 'fs.feature_name', 'f.project', 'fs.environment', 'fs.strategy_name', 'f.archived_at'])
    .where(constrainsOn('fs.constraints', name))
    .$if(project !== undefined, (query) => query.where('f.project', '=', project!))
    .$if(visibleTo !== undefined, (query) => query.where(inProjectVisibleTo(visibleTo!, 'f.project')))
    .orderBy(BY_FLAG_AND_PLACE)
    .execute();
}

/**
 * Strategies constraining on `name`, archived flags' included. Like Unleash, a name that is not a defined field
 * lists its strategies too (SDKs evaluate any context property), so this is never a 404.
 */
export async function listContextFieldStrategies(
  db: Db,
  visibleTo: Actor,
  name: string,
  project?: string,
): Promise<ContextFieldStrategyView[]> {
  const rows = await strategiesConstrainingOn(db, name, project, visibleTo);
  return rows.map(strategyUse);
}

/** Strategies (archived flags' included) and segments whose constraints use the field. */
export async function contextFieldUsage(db: Db, name: string): Promise<{ strategies: FlagUsage[]; segments: string[] }> {
  const [strategies, segments] = await Promise.all([
    strategiesConstrainingOn(db, name),
    db.selectFrom('segments').select('name').where(constrainsOn('constraints', name)).orderBy('name').execute(),
  ]);
  return {
    strategies: strategies.map((row) => ({
      featureName: row.feature_name,
      environment: row.environment,
      archived: row.archived_at !== null,
    })),
    segments: segments.map((row) => row.name),
  };
}
