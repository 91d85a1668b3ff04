import type { Selectable } from 'kysely';
import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import type { EnvironmentsTable } from '../../db/schema.js';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { ConflictError, NotFoundError } from '../../shared/errors.js';
import { recordEvent } from '../events/record-event.js';

export const ENVIRONMENT_TYPES = ['development', 'test', 'preproduction', 'production'] as const;
export type EnvironmentType = (typeof ENVIRONMENT_TYPES)[number];

/** An environment as Unleash's `environmentSchema` shows it. */
export interface EnvironmentView {
  name: string;
  type: string;
  enabled: boolean;
  sortOrder: number;
  projectCount: number;
  apiTokenCount: number;
}

type EnvironmentRow = Selectable<EnvironmentsTable> & { project_count: number; api_token_count: number };

function toEnvironmentView(row: EnvironmentRow): EnvironmentView {
  return {
    name: row.name,
    type: row.type,
    enabled: row.enabled,
    sortOrder: row.sort_order,
    projectCount: row.project_count,
    apiTokenCount: row.api_token_count,
  };
}

function selectEnvironments(db: Db) {
  return db
    .selectFrom('environments as e')
    .selectAll('e')
    .select((eb) => [
      eb
        .selectFrom('project_environments as pe')
        .select(sql<number>`count(*)::int`.as('n'))
        .whereRef('pe.environment_name', '=', 'e.name')
        .as('project_count'),
      eb
        .selectFrom('api_tokens as t')
        .select(sql<number>`count(*)::int`.as('n'))
        .whereRef('t.environment', '=', 'e.name')
        .as('api_token_count'),
    ])
    .$narrowType<{ project_count: number; api_token_count: number }>();
}

export async function listEnvironments(db: Db): Promise<EnvironmentView[]> {
  const rows = await selectEnvironments(db).orderBy('e.sort_order').orderBy('e.name').execute();
  return rows.map(toEnvironmentView);
}

async function findEnvironment(db: Db, name: string): Promise<EnvironmentView> {
  const row = await selectEnvironments(db).where('e.name', '=', name).executeTakeFirst();
  if (!row) throw new NotFoundError(`Could not find environment "${name}"`);
  return toEnvironmentView(row);
}

export const getEnvironment = (db: Db, name: string) => findEnvironment(db, name);

export interface CreateEnvironmentInput {
  name: string;
  type: EnvironmentType;
  enabled?: boolean;
  sortOrder?: number;
}

export async function createEnvironment(uow: UnitOfWork, input: CreateEnvironmentInput): Promise<EnvironmentView> {
  // New environments go last unless an order is given.
  const sortOrder =
    input.sortOrder ??
    (await uow.tx.selectFrom('environments').select(sql<number>`coalesce(max(sort_order), 0) + 100`.as('next')).executeTakeFirstOrThrow())
      .next;
  await uow.tx
    .insertInto('environments')
    .values({ name: input.name, type: input.type, enabled: input.enabled ?? true, sort_order: sortOrder, created_at: uow.now })
    .execute();
  const environment = await findEnvironment(uow.tx, input.name);
  await recordEvent(uow, { type: 'environment-created', environment: input.name, data: environment });
  return environment;
}

async function lockEnvironment(uow: UnitOfWork, name: string): Promise<EnvironmentView> {
  const locked = await uow.tx.selectFrom('environments').select('name').where('name', '=', name).forUpdate().executeTakeFirst();
  if (!locked) throw new NotFoundError(`Could not find environment "${name}"`);
  return findEnvironment(uow.tx, name);
}

export async function updateEnvironment(
  uow: UnitOfWork,
  name: string,
  input: { type?: EnvironmentType; sortOrder?: number },
): Promise<EnvironmentView> {
  const before = await lockEnvironment(uow, name);
  const type = input.type ?? before.type;
  const sortOrder = input.sortOrder ?? before.sortOrder;
  if (type === before.type && sortOrder === before.sortOrder) return before;
  await uow.tx.updateTable('environments').set({ type, sort_order: sortOrder }).where('name', '=', name).execute();
  const after = await findEnvironment(uow.tx, name);
  await recordEvent(uow, { type: 'environment-updated', environment: name, data: after, preData: before });
  return after;
}

/** Gives several environments their sort order at once, all or none: an unknown name changes none. */
export async function setEnvironmentSortOrders(uow: UnitOfWork, sortOrders: Record<string, number>): Promise<void> {
  for (const [name, sortOrder] of Object.entries(sortOrders)) await updateEnvironment(uow, name, { sortOrder });
}

/** Disabled environments are not enabled in new projects by default; existing projects keep them. */
export async function setEnvironmentEnabled(uow: UnitOfWork, name: string, enabled: boolean): Promise<void> {
  const before = await lockEnvironment(uow, name);
  if (before.enabled === enabled) return;
  await uow.tx.updateTable('environments').set({ enabled }).where('name', '=', name).execute();
  await recordEvent(uow, {
    type: 'environment-updated',
    environment: name,
    data: { ...before, enabled },
    preData: before,
  });
}

/**
 * Deletes an environment and disconnects it from its projects. Refused while API tokens use it (their SDKs
 * would silently lose access) or while it is a project's only environment.
 */
export async function deleteEnvironment(uow: UnitOfWork, name: string): Promise<void> {
  const before = await lockEnvironment(uow, name);
  const stranded = await uow.tx
    .selectFrom('project_environments as pe')
    .select('pe.project_id')
    .where('pe.environment_name', '=', name)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('project_environments as other')
            .select('other.environment_name')
            .whereRef('other.project_id', '=', 'pe.project_id')
            .where('other.environment_name', '<>', name),
        ),
      ),
    )
    .orderBy('pe.project_id')
    .execute();
  if (stranded.length > 0) {
    const projects = stranded.map((row) => `"${row.project_id}"`).join(', ');
    throw new ConflictError(
      `Environment "${name}" is the only environment of project(s) ${projects}; add another environment to them first`,
    );
  }
  await uow.tx.deleteFrom('environments').where('name', '=', name).execute();
  await recordEvent(uow, { type: 'environment-deleted', environment: name, preData: before });
}
