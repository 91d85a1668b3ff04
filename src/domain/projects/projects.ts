import type { Selectable } from 'kysely';
import type { Db, LockingHandle } from '../../db/database.js';
import type { ProjectsTable } from '../../db/schema.js';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { BadDataError, ConflictError, NotFoundError } from '../../shared/errors.js';
import { recordEvent } from '../events/record-event.js';
import { makeOwner } from './project-access.js';
import { deleteProjectContextFields } from '../context-fields/context-fields.js';
import { iso } from '../../shared/dates.js';
import { guardDirectChange } from '../protected-environments/guard.js';

export const DEFAULT_PROJECT = 'default';
export const PROJECT_MODES = ['open', 'protected', 'private'] as const;
export type ProjectMode = (typeof PROJECT_MODES)[number];

/** A project as Unleash shows it, with the environments enabled in it. */
export interface ProjectView {
  id: string;
  name: string;
  description: string | null;
  mode: string;
  defaultStickiness: string;
  environments: string[];
  createdAt: string;
  updatedAt: string | null;
}

function toProjectView(row: Selectable<ProjectsTable>, environments: string[]): ProjectView {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    mode: row.mode,
    defaultStickiness: row.default_stickiness,
    environments,
    createdAt: row.created_at.toISOString(),
    updatedAt: iso(row.updated_at),
  };
}

/** Environment names per project, in the environments' display order. */
async function environmentsByProject(db: Db, projectIds?: string[]): Promise<Map<string, string[]>> {
  let query = db
    .selectFrom('project_environments as pe')
    .innerJoin('environments as e', 'e.name', 'pe.environment_name')
    .select(['pe.project_id', 'pe.environment_name'])
    .orderBy('e.sort_order')
    .orderBy('e.name');
  if (projectIds) query = query.where('pe.project_id', 'in', projectIds);
  const byProject = new Map<string, string[]>();
  for (const row of await query.execute()) {
    byProject.set(row.project_id, [...(byProject.get(row.project_id) ?? []), row.environment_name]);
  }
  return byProject;
}

export async function listProjects(db: Db): Promise<ProjectView[]> {
  const rows = await db.selectFrom('projects').selectAll().orderBy('name').orderBy('id').execute();
  const environments = await environmentsByProject(db);
  return rows.map((row) => toProjectView(row, environments.get(row.id) ?? []));
}

async function findProject<Lock extends boolean = false>(db: LockingHandle<Lock>, id: string, lock?: Lock): Promise<ProjectView> {
  let query = db.selectFrom('projects').selectAll().where('id', '=', id);
  if (lock) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  if (!row) throw new NotFoundError(`Could not find project "${id}"`);
  const environments = await environmentsByProject(db, [id]);
  return toProjectView(row, environments.get(id) ?? []);
}

export const getProject = (db: Db, id: string) => findProject(db, id);

export interface CreateProjectInput {
  id: string;
  name: string;
  description?: string | null;
  mode?: ProjectMode;
  defaultStickiness?: string;
  /** Environments to enable; all enabled environments when absent. */
  environments?: string[];
}

export async function createProject(uow: UnitOfWork, input: CreateProjectInput): Promise<ProjectView> {
  await uow.tx
    .insertInto('projects')
    .values({
      id: input.id,
      name: input.name,
      description: input.description ?? null,
      mode: input.mode ?? 'open',
      default_stickiness: input.defaultStickiness ?? 'default',
      created_at: uow.now,
      updated_at: null,
    })
    .execute();
  const environments = input.environments ? [...new Set(input.environments)] : await enabledEnvironments(uow);
  if (environments.length === 0) {
    throw new BadDataError('A project needs at least one environment', [
      { path: '/body/environments', message: 'Name at least one environment (got [])' },
    ]);
  }
  await assertEnvironmentsExist(uow, environments);
  await uow.tx
    .insertInto('project_environments')
    .values(environments.map((environment) => ({ project_id: input.id, environment_name: environment })))
    .execute();
  const project = await findProject(uow.tx, input.id);
  await recordEvent(uow, { type: 'project-created', project: input.id, data: project });
  // An Admin already holds everything; anyone else who creates a project owns it.
  if (uow.actor.kind === 'user' && uow.actor.rootRole !== 'Admin') await makeOwner(uow, input.id, uow.actor.userId);
  return project;
}

async function enabledEnvironments(uow: UnitOfWork): Promise<string[]> {
  const rows = await uow.tx.selectFrom('environments').select('name').where('enabled', '=', true).execute();
  return rows.map((row) => row.name);
}

async function assertEnvironmentsExist(uow: UnitOfWork, names: string[]): Promise<void> {
  const rows = await uow.tx.selectFrom('environments').select('name').where('name', 'in', names).execute();
  const known = new Set(rows.map((row) => row.name));
  const unknown = names.filter((name) => !known.has(name));
  if (unknown.length > 0) throw new NotFoundError(`Could not find environment(s) ${unknown.map((n) => `"${n}"`).join(', ')}`);
}

export interface UpdateProjectInput {
  name: string;
  description?: string | null;
  mode?: ProjectMode;
  defaultStickiness?: string;
}

export async function updateProject(uow: UnitOfWork, id: string, input: UpdateProjectInput): Promise<ProjectView> {
  const before = await findProject(uow.tx, id, true);
  const changes = {
    name: input.name,
    description: input.description === undefined ? before.description : input.description,
    mode: input.mode ?? before.mode,
    default_stickiness: input.defaultStickiness ?? before.defaultStickiness,
  };
  const unchanged =
    changes.name === before.name &&
    changes.description === before.description &&
    changes.mode === before.mode &&
    changes.default_stickiness === before.defaultStickiness;
  if (unchanged) return before;
  await uow.tx
    .updateTable('projects')
    .set({ ...changes, updated_at: uow.now })
    .where('id', '=', id)
    .execute();
  const after = await findProject(uow.tx, id);
  await recordEvent(uow, { type: 'project-updated', project: id, data: after, preData: before });
  return after;
}

/** The default project always exists, as in Unleash: flags and tokens fall back to it. */
export async function deleteProject(uow: UnitOfWork, id: string): Promise<void> {
  if (id === DEFAULT_PROJECT) throw new BadDataError('The default project cannot be deleted');
  const before = await findProject(uow.tx, id, true);
  const tokens = await uow.tx
    .selectFrom('api_token_projects as tp')
    .innerJoin('api_tokens as t', 't.id', 'tp.token_id')
    .select('t.token_name')
    .where('tp.project_id', '=', id)
    .orderBy('t.token_name')
    .execute();
  if (tokens.length > 0) {
    const names = tokens.map((token) => `"${token.token_name}"`).join(', ');
    throw new ConflictError(`Project "${id}" is still used by API tokens ${names}; delete those tokens first`);
  }
  await deleteProjectContextFields(uow, id);
  await uow.tx.deleteFrom('projects').where('id', '=', id).execute();
  await recordEvent(uow, { type: 'project-deleted', project: id, preData: before });
}

export async function addProjectEnvironment(uow: UnitOfWork, projectId: string, environment: string): Promise<void> {
  await findProject(uow.tx, projectId, true);
  await assertEnvironmentsExist(uow, [environment]);
  await guardDirectChange(uow, { kind: 'project-environment', project: projectId, environment });
  await uow.tx.insertInto('project_environments').values({ project_id: projectId, environment_name: environment }).execute();
  await recordEvent(uow, {
    type: 'project-environment-added',
    project: projectId,
    environment,
    data: { project: projectId, environment },
  });
}

export async function removeProjectEnvironment(uow: UnitOfWork, projectId: string, environment: string): Promise<void> {
  const project = await findProject(uow.tx, projectId, true);
  if (!project.environments.includes(environment)) {
    throw new NotFoundError(`Environment "${environment}" is not enabled in project "${projectId}"`);
  }
  if (project.environments.length === 1) {
    throw new ConflictError(`Environment "${environment}" is the only environment of project "${projectId}"; a project needs at least one`);
  }
  await guardDirectChange(uow, { kind: 'project-environment', project: projectId, environment });
  await uow.tx.deleteFrom('project_environments').where('project_id', '=', projectId).where('environment_name', '=', environment).execute();
  await recordEvent(uow, {
    type: 'project-environment-removed',
    project: projectId,
    environment,
    preData: { project: projectId, environment },
  });
}
