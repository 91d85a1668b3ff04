import jsonPatch, { type Operation } from 'fast-json-patch';
import { sql, type Selectable } from 'kysely';
import type { FeaturesTable } from '../../db/schema.js';
import type { UnitOfWork, Actor } from '../../db/unit-of-work.js';
import { actorIdentity } from '../access/actor.js';
import { BadDataError, ConflictError, NameExistsError, NotFoundError } from '../../shared/errors.js';
import { guardDirectChange } from '../protected-environments/guard.js';
import { protectedEnvironmentsOf } from '../protected-environments/protection.js';
import { prototypeKeyIn } from '../../shared/prototype-hardening.js';
import { recordFeatureEvent } from './feature-events.js';
import { assertProject, findFeature, projectOfFlag } from './feature-lookup.js';
import { toFeatureMetadata, type FeatureMetadata, loadFeatureViews, type FeatureView } from './feature-views.js';
import { enterLifecycleStage, leaveLifecycleStage } from './lifecycle.js';
import type { Db } from '../../db/database.js';
import { FEATURE_TYPES, type FeatureType } from './feature-types.js';

export interface CreateFeatureInput {
  project: string;
  name: string;
  type?: FeatureType;
  description?: string | null;
  impressionData?: boolean;
}

export async function createFeature(uow: UnitOfWork, input: CreateFeatureInput): Promise<FeatureMetadata> {
  const { createdBy, createdByUserId } = actorIdentity(uow.actor);
  const row = await uow.tx
    .insertInto('features')
    .values({
      name: input.name,
      project: input.project,
      type: input.type ?? 'release',
      description: input.description ?? null,
      impression_data: input.impressionData ?? false,
      created_at: uow.now,
      created_by_user_id: createdByUserId,
      created_by: createdBy,
      archived_at: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  await enterLifecycleStage(uow, input.name, 'initial');
  const feature = toFeatureMetadata(row);
  await recordFeatureEvent(uow, { type: 'feature-created', featureName: input.name, project: input.project, data: feature });
  return feature;
}

/** The fields PUT and PATCH may change; `name` and `archived` may be sent but not changed. */
export interface FeatureChanges {
  name?: string;
  type?: FeatureType;
  description?: string | null;
  impressionData?: boolean;
  stale?: boolean;
  archived?: boolean;
}

function validateChanges(current: FeatureMetadata, changes: FeatureChanges, pathPrefix: string): void {
  if (changes.name !== undefined && changes.name !== current.name) {
    throw new BadDataError('A flag cannot be renamed', [
      { path: `${pathPrefix}/name`, message: `name must stay "${current.name}" (got ${JSON.stringify(changes.name)})` },
    ]);
  }
  if (changes.archived !== undefined && changes.archived !== current.archived) {
    throw new BadDataError('Archive a flag with DELETE or the archive endpoint, and revive it with the revive endpoint', [
      { path: `${pathPrefix}/archived`, message: `archived must stay ${current.archived} here (got ${changes.archived})` },
    ]);
  }
  if (changes.type !== undefined && !(FEATURE_TYPES as readonly string[]).includes(changes.type)) {
    throw new BadDataError(`Unknown flag type ${JSON.stringify(changes.type)}`, [
      { path: `${pathPrefix}/type`, message: `type must be one of ${FEATURE_TYPES.join(', ')} (got ${JSON.stringify(changes.type)})` },
    ]);
  }
}

/**
 * Applies new values of a flag's own fields and records what changed: `feature-type-updated` for the type,
 * `feature-stale-on/off` for staleness, `feature-metadata-updated` for the rest. Unchanged values record nothing.
 */
export async function updateFeature(
  uow: UnitOfWork,
  project: string,
  name: string,
  changes: FeatureChanges,
  pathPrefix = '/body',
): Promise<FeatureMetadata> {
  const before = toFeatureMetadata(await findFeature(uow.tx, project, name, { lock: true }));
  validateChanges(before, changes, pathPrefix);
  const next = {
    type: changes.type ?? before.type,
    description: changes.description === undefined ? before.description : changes.description,
    impressionData: changes.impressionData ?? before.impressionData,
    stale: changes.stale ?? before.stale,
  };
  const row = await uow.tx
    .updateTable('features')
    .set({ type: next.type, description: next.description, impression_data: next.impressionData, stale: next.stale })
    .where('name', '=', name)
    .returningAll()
    .executeTakeFirstOrThrow();
  const after = toFeatureMetadata(row);
  const event = { featureName: name, project };
  if (after.type !== before.type) {
    await recordFeatureEvent(uow, { ...event, type: 'feature-type-updated', data: { type: after.type }, preData: { type: before.type } });
  }
  if (after.description !== before.description || after.impressionData !== before.impressionData) {
    await recordFeatureEvent(uow, {
      ...event,
      type: 'feature-metadata-updated',
      data: after,
      preData: { ...before, type: after.type, stale: after.stale },
    });
  }
  if (after.stale !== before.stale) {
    await recordFeatureEvent(uow, {
      ...event,
      type: after.stale ? 'feature-stale-on' : 'feature-stale-off',
      data: { stale: after.stale },
      preData: { stale: before.stale },
    });
  }
  return after;
}

/** JSON Patch (RFC 6902) over the flag's editable fields, as Unleash's PATCH takes it. */
export async function patchFeature(uow: UnitOfWork, project: string, name: string, operations: Operation[]): Promise<FeatureMetadata> {
  const current = toFeatureMetadata(await findFeature(uow.tx, project, name));
  const editable: FeatureChanges = {
    name: current.name,
    type: current.type as FeatureType,
    description: current.description,
    impressionData: current.impressionData,
    stale: current.stale,
    archived: current.archived,
  };
  const patched = applyPatch(editable, operations) as Record<string, unknown>;
  const unknown = Object.keys(patched).filter((key) => !(key in editable));
  if (unknown.length > 0) {
    throw new BadDataError(
      `A patch may change ${Object.keys(editable).join(', ')}`,
      unknown.map((key) => ({
        path: `/body`,
        message: `"${key}" is not a field of a flag that can be patched`,
      })),
    );
  }
  for (const [key, expected] of [
    ['type', 'string'],
    ['impressionData', 'boolean'],
    ['stale', 'boolean'],
    ['archived', 'boolean'],
    ['name', 'string'],
  ] as const) {
    if (typeof patched[key] !== expected) {
      throw new BadDataError(`The patch leaves "${key}" without a ${expected}`, [
        { path: '/body', message: `"${key}" must be a ${expected} after the patch (got ${JSON.stringify(patched[key])})` },
      ]);
    }
  }
  if (patched.description !== null && typeof patched.description !== 'string') {
    throw new BadDataError('The patch leaves "description" without a string', [
      { path: '/body', message: `"description" must be a string or null after the patch (got ${JSON.stringify(patched.description)})` },
    ]);
  }
  return updateFeature(uow, project, name, patched as FeatureChanges, '/body');
}

/** Applies a JSON Patch to a copy, turning a failing operation into a 400 that names it. */
export function applyPatch<T>(document: T, operations: Operation[]): T {
  for (const [index, operation] of operations.entries()) {
    const from = 'from' in operation ? operation.from : '';
    const prototypeKey = prototypeKeyIn([...operation.path.split('/'), ...from.split('/')]);
    if (prototypeKey !== undefined) {
      throw new BadDataError('The JSON Patch cannot be applied', [
        { path: `/body/${index}/path`, message: `"${prototypeKey}" names no field` },
      ]);
    }
  }
  try {
    return jsonPatch.applyPatch(structuredClone(document), operations, true, false).newDocument;
  } catch (error) {
    const index = (error as { index?: number }).index;
    const message = (error as Error).message.split('\n')[0] ?? 'invalid operation';
    throw new BadDataError('The JSON Patch cannot be applied', [{ path: index === undefined ? '/body' : `/body/${index}`, message }]);
  }
}

async function activeChildren(uow: UnitOfWork, parents: string[]): Promise<Array<{ parent: string; child: string }>> {
  return uow.tx
    .selectFrom('feature_dependencies as d')
    .innerJoin('features as f', 'f.name', 'd.child')
    .select(['d.parent', 'd.child'])
    .where('d.parent', 'in', parents)
    .where('f.archived_at', 'is', null)
    .orderBy('d.child')
    .execute();
}

/** Archives flags of one project; a parent goes only together with its active children. */
export async function archiveFeatures(uow: UnitOfWork, project: string, names: string[]): Promise<void> {
  const unique = [...new Set(names)];
  for (const name of unique) await guardDirectChange(uow, { kind: 'flag', project, featureName: name });
  const rows = [];
  for (const name of unique) rows.push(await findFeature(uow.tx, project, name, { lock: true }));
  const alreadyArchived = rows.filter((row) => row.archived_at).map((row) => row.name);
  if (alreadyArchived.length > 0) {
    throw new BadDataError(`Flag(s) ${alreadyArchived.map((n) => `"${n}"`).join(', ')} are already archived`);
  }
  const orphans = (await activeChildren(uow, unique)).filter((d) => !unique.includes(d.child));
  if (orphans.length > 0) {
    const list = orphans.map((d) => `"${d.child}" depends on "${d.parent}"`).join(', ');
    throw new ConflictError(`Flags that others depend on can only be archived together with them: ${list}`);
  }
  for (const row of rows) await setArchived(uow, project, row, true);
}

/** Archives or revives one flag, with its lifecycle stage and its event. */
async function setArchived(uow: UnitOfWork, project: string, row: Selectable<FeaturesTable>, archived: boolean): Promise<void> {
  const after = await uow.tx
    .updateTable('features')
    .set({ archived_at: archived ? uow.now : null })
    .where('name', '=', row.name)
    .returningAll()
    .executeTakeFirstOrThrow();
  if (archived) await enterLifecycleStage(uow, row.name, 'archived');
  else await leaveLifecycleStage(uow, row.name, 'archived');
  await recordFeatureEvent(uow, {
    type: archived ? 'feature-archived' : 'feature-revived',
    featureName: row.name,
    project,
    data: toFeatureMetadata(after),
    preData: toFeatureMetadata(row),
  });
}

/**
 * Whether a flag could be created under `name` (in `project`, when given): a name is taken by any flag, archived
 * ones included, in every project, as creating one would find.
 */
export async function validateFeatureName(db: Db, name: string, project?: string): Promise<void> {
  if (project !== undefined) await assertProject(db, project);
  if ((await projectOfFlag(db, name)) !== undefined) {
    throw new NameExistsError(`A flag named "${name}" already exists (flag names are unique across projects, archived flags included)`, [
      { path: '/body/name', message: `"${name}" is taken: choose another name` },
    ]);
  }
}

/** Revives one archived flag named without its project (Unleash's older path); a flag of no project is not found. */
export async function reviveFeatureByName(uow: UnitOfWork, name: string): Promise<void> {
  const project = await projectOfFlag(uow.tx, name);
  if (project === undefined) throw new NotFoundError(`Could not find flag "${name}"`);
  await reviveFeatures(uow, project, [name]);
}

/**
 * Revives archived flags turned off in every environment, as Unleash revives them: a flag archived while on comes
 * back serving nothing until someone turns it on, through change requests where the environment has them.
 */
export async function reviveFeatures(uow: UnitOfWork, project: string, names: string[]): Promise<void> {
  const rows = [];
  for (const name of new Set(names)) rows.push(await findFeature(uow.tx, project, name, { lock: true }));
  const live = rows.filter((row) => !row.archived_at).map((row) => row.name);
  if (live.length > 0) throw new BadDataError(`Flag(s) ${live.map((n) => `"${n}"`).join(', ')} are not archived`);
  for (const row of rows) {
    await setArchived(uow, project, row, false);
    const turnedOff = await uow.tx
      .updateTable('feature_environments')
      .set({ enabled: false })
      .where('feature_name', '=', row.name)
      .where('enabled', '=', true)
      .returning('environment')
      .execute();
    for (const { environment } of turnedOff.sort((a, b) => a.environment.localeCompare(b.environment))) {
      await recordFeatureEvent(uow, {
        type: 'feature-environment-disabled',
        featureName: row.name,
        project,
        environment,
        data: { enabled: false },
        preData: { enabled: true },
      });
    }
  }
}

/** Deletes an archived flag for good; a live flag must be archived first. */
export async function deleteArchivedFeature(uow: UnitOfWork, name: string): Promise<void> {
  const row = await uow.tx.selectFrom('features').selectAll().where('name', '=', name).forUpdate().executeTakeFirst();
  if (!row?.archived_at) throw new NotFoundError(`Could not find archived flag "${name}"`);
  await recordFeatureEvent(uow, { type: 'feature-deleted', featureName: name, project: row.project, preData: toFeatureMetadata(row) });
  await uow.tx.deleteFrom('features').where('name', '=', name).execute();
}

export async function setFeaturesStale(uow: UnitOfWork, project: string, names: string[], stale: boolean): Promise<void> {
  for (const name of new Set(names)) await updateFeature(uow, project, name, { stale });
}

/**
 * Moves a flag to another project that has every environment the flag is configured in. Not while either project
 * uses change requests, as in Unleash: a flag moved out of a protected environment could be changed directly and
 * moved back, and one moved in would arrive there with nobody's approval.
 */
export async function changeFeatureProject(uow: UnitOfWork, project: string, name: string, newProject: string): Promise<void> {
  const row = await findFeature(uow.tx, project, name, { lock: true, archived: false });
  if (newProject === project) return;
  await assertProject(uow.tx, newProject);
  const [protectedEnvironment] = await protectedEnvironmentsOf(uow.tx, [project, newProject]);
  if (protectedEnvironment) {
    throw new ConflictError(
      `Flag "${name}" cannot move while change requests are enabled for environment "${protectedEnvironment.environment}" of project "${protectedEnvironment.project}"`,
    );
  }
  const dependencies = await uow.tx
    .selectFrom('feature_dependencies')
    .select(['parent', 'child'])
    .where((eb) => eb.or([eb('parent', '=', name), eb('child', '=', name)]))
    .execute();
  if (dependencies.length > 0) {
    throw new ConflictError(`Flag "${name}" has dependencies; remove them before moving it, as dependent flags share a project`);
  }
  // Configured means enabled, given variants, or given strategies: none of it may be left behind unseen.
  const configured = uow.tx
    .selectFrom('feature_environments')
    .select('environment')
    .where('feature_name', '=', name)
    .where((eb) => eb.or([eb('enabled', '=', true), eb(sql`jsonb_array_length(variants)`, '>', 0)]))
    .union(uow.tx.selectFrom('feature_strategies').select('environment').where('feature_name', '=', name));
  const missing = await uow.tx
    .selectFrom(configured.as('configured'))
    .select('configured.environment')
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('project_environments as pe')
            .select('pe.environment_name')
            .where('pe.project_id', '=', newProject)
            .whereRef('pe.environment_name', '=', 'configured.environment'),
        ),
      ),
    )
    .orderBy('configured.environment')
    .execute();
  if (missing.length > 0) {
    const list = missing.map((m) => `"${m.environment}"`).join(', ');
    throw new ConflictError(`Project "${newProject}" lacks environment(s) ${list} that flag "${name}" is configured in`);
  }
  await uow.tx.updateTable('features').set({ project: newProject }).where('name', '=', name).execute();
  await recordFeatureEvent(uow, {
    type: 'feature-project-change',
    featureName: name,
    project: newProject,
    data: { oldProject: row.project, newProject },
  });
}

const viewerOf = (actor: Actor) => (actor.kind === 'user' ? actor.userId : null);

/** The project's flags (archived ones only when asked), oldest first. */
export async function listProjectFeatures(db: Db, project: string, actor: Actor, archived = false): Promise<FeatureView[]> {
  await assertProject(db, project);
  const rows = await db
    .selectFrom('features')
    .selectAll()
    .where('project', '=', project)
    .where('archived_at', archived ? 'is not' : 'is', null)
    .orderBy('created_at')
    .orderBy('name')
    .execute();
  return loadFeatureViews(db, rows, viewerOf(actor));
}

export async function getFeature(db: Db, project: string, name: string, actor: Actor): Promise<FeatureView> {
  const row = await db.selectFrom('features').selectAll().where('name', '=', name).where('project', '=', project).executeTakeFirst();
  if (!row) throw new NotFoundError(`Could not find flag "${name}" in project "${project}"`);
  const [view] = await loadFeatureViews(db, [row], viewerOf(actor));
  return view!;
}

/** Deletes archived flags of one project for good, all or none (Unleash's `POST …/projects/:projectId/delete`). */
export async function deleteArchivedFeatures(uow: UnitOfWork, project: string, names: string[]): Promise<void> {
  const wanted = [...new Set(names)].sort();
  const rows =
    wanted.length === 0
      ? []
      : await uow.tx.selectFrom('features').select(['name', 'project', 'archived_at']).where('name', 'in', wanted).execute();
  const missing = wanted.filter((name) => !rows.some((row) => row.name === name && row.project === project && row.archived_at !== null));
  if (missing.length > 0) {
    throw new NotFoundError(`Project "${project}" has no archived flag ${missing.map((name) => `"${name}"`).join(', ')}`);
  }
  for (const name of wanted) await deleteArchivedFeature(uow, name);
}
