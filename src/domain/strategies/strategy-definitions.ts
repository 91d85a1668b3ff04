import { isDeepStrictEqual } from 'node:util';
import type { Selectable } from 'kysely';
import type { StrategyDefinitionsTable } from '../../db/schema.js';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { BadDataError, ConflictError, NotFoundError, repeatedKeys } from '../../shared/errors.js';
import { recordEvent } from '../events/record-event.js';
import { describeFlagUsage } from '../../shared/flag-usage.js';
import type { Db, LockingHandle } from '../../db/database.js';

export const PARAMETER_TYPES = ['string', 'percentage', 'list', 'number', 'boolean'] as const;
export type ParameterType = (typeof PARAMETER_TYPES)[number];

export interface StrategyParameter {
  name: string;
  type: ParameterType;
  description: string;
  required: boolean;
}

/** A strategy definition as Unleash's `strategySchema` shows it; built-in ones are not editable. */
export interface StrategyDefinitionView {
  name: string;
  title: string | null;
  displayName: string;
  description: string;
  editable: boolean;
  deprecated: boolean;
  parameters: StrategyParameter[];
}

/**
 * Vexil adds `flexibleRollout` to a flag enabled without strategies, and `default` is what old SDKs fall back
 * to: deprecating either would leave users unable to enable flags the usual way.
 */
const UNDEPRECATABLE = new Set(['default', 'flexibleRollout']);

function toView(row: Selectable<StrategyDefinitionsTable>): StrategyDefinitionView {
  return {
    name: row.name,
    title: row.title,
    displayName: row.title ?? row.name,
    description: row.description,
    editable: !row.built_in,
    deprecated: row.deprecated,
    parameters: row.parameters as StrategyParameter[],
  };
}

export async function listStrategyDefinitions(db: Db): Promise<StrategyDefinitionView[]> {
  const rows = await db.selectFrom('strategy_definitions').selectAll().orderBy('sort_order').orderBy('name').execute();
  return rows.map(toView);
}

function definitionRow<Lock extends boolean = false>(db: LockingHandle<Lock>, name: string, lock?: Lock) {
  let query = db.selectFrom('strategy_definitions').selectAll().where('name', '=', name);
  if (lock) query = query.forUpdate();
  return query.executeTakeFirst();
}

export async function findStrategyDefinition(db: Db, name: string, lock = false): Promise<StrategyDefinitionView> {
  const row = await definitionRow(db, name, lock);
  if (!row) throw new NotFoundError(`Could not find strategy "${name}"`);
  return toView(row);
}

/**
 * The definition a flag's strategy names, as a 400 at `path` when there is none. New strategies may not use a
 * deprecated definition; a strategy that already uses one keeps working and can still be edited.
 */
export async function strategyDefinitionFor(
  db: Db,
  name: string,
  path: string,
  options: { allowDeprecated: boolean },
): Promise<StrategyDefinitionView> {
  const row = await definitionRow(db, name);
  if (!row) {
    throw new BadDataError(`Unknown strategy "${name}"`, [
      { path: `${path}/name`, message: `name must be a strategy listed by GET /api/admin/strategies (got ${JSON.stringify(name)})` },
    ]);
  }
  if (row.deprecated && !options.allowDeprecated) {
    throw new BadDataError(`Strategy "${name}" is deprecated; reactivate it to use it on more flags`, [
      { path: `${path}/name`, message: `${name} is deprecated` },
    ]);
  }
  return toView(row);
}

export interface ParameterInput {
  name: string;
  type: ParameterType;
  description?: string;
  required?: boolean;
}

export interface CreateStrategyDefinitionInput {
  name: string;
  title?: string | null;
  description?: string | null;
  deprecated?: boolean;
  parameters?: ParameterInput[];
}

export type UpdateStrategyDefinitionInput = Omit<CreateStrategyDefinitionInput, 'name' | 'deprecated'>;

function normalizeParameters(parameters: ParameterInput[]): StrategyParameter[] {
  const details = repeatedKeys(
    parameters,
    (parameter) => parameter.name,
    (index) => `/body/parameters/${index}/name`,
    'Parameter names',
  );
  if (details.length > 0) throw new BadDataError('The strategy parameters are invalid', details);
  return parameters.map((parameter) => ({
    name: parameter.name,
    type: parameter.type,
    description: parameter.description ?? '',
    required: parameter.required ?? false,
  }));
}

async function findEditable(uow: UnitOfWork, name: string): Promise<StrategyDefinitionView> {
  const definition = await findStrategyDefinition(uow.tx, name, true);
  if (!definition.editable) throw new BadDataError(`Strategy "${name}" is built in and cannot be changed`);
  return definition;
}

export async function createStrategyDefinition(uow: UnitOfWork, input: CreateStrategyDefinitionInput): Promise<StrategyDefinitionView> {
  const row = await uow.tx
    .insertInto('strategy_definitions')
    .values({
      name: input.name,
      title: input.title ?? null,
      description: input.description ?? '',
      parameters: JSON.stringify(normalizeParameters(input.parameters ?? [])),
      deprecated: input.deprecated ?? false,
      created_at: uow.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  const definition = toView(row);
  await recordEvent(uow, { type: 'strategy-created', data: definition });
  return definition;
}

/** Fields left out keep their value; a change that changes nothing records nothing. */
export async function updateStrategyDefinition(
  uow: UnitOfWork,
  name: string,
  input: UpdateStrategyDefinitionInput,
): Promise<StrategyDefinitionView> {
  const before = await findEditable(uow, name);
  const next = {
    title: input.title === undefined ? before.title : input.title,
    description: input.description === undefined ? before.description : (input.description ?? ''),
    parameters: input.parameters === undefined ? before.parameters : normalizeParameters(input.parameters),
  };
  if (next.title === before.title && next.description === before.description && isDeepStrictEqual(next.parameters, before.parameters)) {
    return before;
  }
  const row = await uow.tx
    .updateTable('strategy_definitions')
    .set({ title: next.title, description: next.description, parameters: JSON.stringify(next.parameters) })
    .where('name', '=', name)
    .returningAll()
    .executeTakeFirstOrThrow();
  const after = toView(row);
  await recordEvent(uow, { type: 'strategy-updated', data: after, preData: before });
  return after;
}

/** Deletes a custom strategy no flag uses; otherwise a 409 names the flags to change first. */
export async function deleteStrategyDefinition(uow: UnitOfWork, name: string): Promise<void> {
  const before = await findEditable(uow, name);
  const usages = await uow.tx
    .selectFrom('feature_strategies as fs')
    .innerJoin('features as f', 'f.name', 'fs.feature_name')
    .select(['fs.feature_name as featureName', 'fs.environment', 'f.archived_at'])
    .where('fs.strategy_name', '=', name)
    .execute();
  if (usages.length > 0) {
    const flags = describeFlagUsage(
      usages.map((usage) => ({ featureName: usage.featureName, environment: usage.environment, archived: usage.archived_at !== null })),
    );
    throw new ConflictError(`Strategy "${name}" is used by ${flags}; remove it from those flags first`);
  }
  await uow.tx.deleteFrom('strategy_definitions').where('name', '=', name).execute();
  await recordEvent(uow, { type: 'strategy-deleted', preData: before });
}

/** Deprecating hides a strategy from new use; flags that use it keep it. Repeating either is a no-op. */
export async function setStrategyDeprecated(uow: UnitOfWork, name: string, deprecated: boolean): Promise<void> {
  const before = await findStrategyDefinition(uow.tx, name, true);
  if (deprecated && UNDEPRECATABLE.has(name)) {
    throw new BadDataError(`Strategy "${name}" cannot be deprecated: Vexil and the SDKs rely on it`);
  }
  if (before.deprecated === deprecated) return;
  await uow.tx.updateTable('strategy_definitions').set({ deprecated }).where('name', '=', name).execute();
  await recordEvent(uow, {
    type: deprecated ? 'strategy-deprecated' : 'strategy-reactivated',
    data: { ...before, deprecated },
    preData: before,
  });
}
