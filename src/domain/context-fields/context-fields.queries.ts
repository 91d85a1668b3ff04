import { sql, type Selectable } from 'kysely';
import type { ContextFieldsTable } from '../../db/schema.js';
import { NameExistsError, NotFoundError } from '../../shared/errors.js';
import type { FlagUsage } from '../../shared/flag-usage.js';
import type { Db } from '../../db/database.js';

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
}

export function toContextFieldView(row: Selectable<ContextFieldsTable>): ContextFieldView {
  return {
    name: row.name,
    description: row.description,
    legalValues: row.legal_values as LegalValue[],
    stickiness: row.stickiness,
    sortOrder: row.sort_order,
    createdAt: row.created_at.toISOString(),
  };
}

export async function listContextFields(db: Db): Promise<ContextFieldView[]> {
  const rows = await db.selectFrom('context_fields').selectAll().orderBy('sort_order').orderBy('name').execute();
  return rows.map(toContextFieldView);
}

/** The context field `name`, locked for the caller's transaction when asked. */
export async function findContextField(db: Db, name: string, lock = false): Promise<ContextFieldView> {
  let query = db.selectFrom('context_fields').selectAll().where('name', '=', name);
  if (lock) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  if (!row) throw new NotFoundError(`Could not find context field "${name}"`);
  return toContextFieldView(row);
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

async function strategiesConstrainingOn(db: Db, name: string) {
  return db
    .selectFrom('feature_strategies as fs')
    .innerJoin('features as f', 'f.name', 'fs.feature_name')
    .select(['fs.id', 'fs.feature_name', 'f.project', 'fs.environment', 'fs.strategy_name', 'f.archived_at'])
    .where(constrainsOn('fs.constraints', name))
    .orderBy('fs.feature_name')
    .orderBy('fs.environment')
    .orderBy('fs.sort_order')
    .orderBy('fs.id')
    .execute();
}

/**
 * Strategies constraining on `name`, archived flags' included. Like Unleash, a name that is not a defined field
 * lists its strategies too (SDKs evaluate any context property), so this is never a 404.
 */
export async function listContextFieldStrategies(db: Db, name: string): Promise<ContextFieldStrategyView[]> {
  const rows = await strategiesConstrainingOn(db, name);
  return rows.map((row) => ({
    id: row.id,
    featureName: row.feature_name,
    projectId: row.project,
    environment: row.environment,
    strategyName: row.strategy_name,
  }));
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
