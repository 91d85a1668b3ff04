import { isDeepStrictEqual } from 'node:util';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { ApiError, BadDataError, PermissionError } from '../../shared/errors.js';
import { actorIdentity } from '../access/actor.js';
import { applyChange, type ChangeRequestScope, type FeatureChange } from '../change-requests/change-actions.js';
import { addChanges, discardChange } from '../change-requests/change-request-contents.js';
import { OPEN_STATES } from '../change-requests/change-request-views.js';
import { createContextField, updateContextField, listContextFields, type ContextFieldView } from '../context-fields/context-fields.js';
import {
  createEnvironment,
  listEnvironments,
  setEnvironmentEnabled,
  updateEnvironment,
  type EnvironmentView,
} from '../environments/environments.js';
import { normalizeConstraints } from '../features/constraints.js';
import { addDependency, removeDependency, parentsOf } from '../features/dependencies.js';
import { loadFeatureLinks, loadFeatureTags, loadStrategies, type StrategyView, type Variant } from '../features/feature-views.js';
import { addFeatureLink, linkUrl, removeFeatureLink } from '../features/feature-links.js';
import { projectDefaultStrategies } from '../features/project-environments.js';
import { setProjectDefaultStrategy } from '../projects/default-strategies.js';
import { createFeature, reviveFeatures, setFeaturesStale, updateFeature } from '../features/features.js';
import { archiveFlags } from '../release-plans/plans.js';
import { resolveStrategy, type StrategyInput } from '../features/strategies.js';
import { distributeWeights } from '../features/variants.js';
import { addProjectEnvironment, createProject, listProjects, updateProject } from '../projects/projects.js';
import { createSegment, updateSegment, listSegments, type AdminSegmentView } from '../segments/segments.js';
import { isProtected } from '../protected-environments/protection.js';
import {
  createStrategyDefinition,
  listStrategyDefinitions,
  updateStrategyDefinition,
  type StrategyDefinitionView,
} from '../strategies/strategy-definitions.js';
import { updateFeatureTags } from '../tags/feature-tags.js';
import { ensureTagType, updateTagType } from '../tags/tag-types.js';
import { listTagTypes, type TagTypeView } from '../tags/tags.js';
import {
  pointer,
  type FileContextField,
  type FileEnvironment,
  type FileFlag,
  type FileFlagEnvironment,
  type FileProject,
  type FileSegment,
  type FileStrategy,
  type FileStrategyDefinition,
  type FileTagType,
  type FlagsFile,
} from './flags-file.js';

/** One thing an apply changes (or, in a dry run, would change), named for people and located in the file. */
export interface PlannedChange {
  /** JSON pointer of the entry in the file. */
  path: string;
  /** `created`, `updated`, `archived`, `revived`, or `proposed` (added to a change request). */
  change: 'created' | 'updated' | 'archived' | 'revived' | 'proposed';
  /** What is changed: `flag "checkout" in "production"`, `segment "beta"`… */
  target: string;
  /** What differs, briefly: `enabled: false → true`, `strategies: 2 updated, 1 added`. */
  detail?: string;
}

export interface ApplyReport {
  changes: PlannedChange[];
  /**
   * The change requests the changes to protected environments went to: `created` when this apply opened it. A dry
   * run cannot know the id of a request it would open (ids are not given back by a rollback): it is null there.
   */
  changeRequests: Array<{ project: string; environment: string; id: number | null; created: boolean }>;
}

export const emptyReport = (): ApplyReport => ({ changes: [], changeRequests: [] });

/** A refusal already located in the file: entries around it pass it on as it is. */
class FileEntryError extends BadDataError {}

/**
 * Runs one step of an apply; a refusal of the step's command becomes a 400 that names the entry of the file
 * (its JSON pointer), so a file's author sees which entry to fix. Details already inside the entry keep their
 * finer place. Permission refusals stay 403.
 */
async function atEntry<T>(path: string, target: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof ApiError) || error instanceof PermissionError || error instanceof FileEntryError) throw error;
    const inside = (detailPath: string | undefined) => (detailPath?.startsWith(path) ? detailPath : path);
    throw new FileEntryError(
      `${target} (at ${path}): ${error.message}`,
      error.details.map((d) => ({ path: inside(d.path), message: d.message })),
    );
  }
}

/** Plain JSON, so that a value read from the database and one built here compare equal when they mean the same. */
const plain = <T>(value: T): T => JSON.parse(JSON.stringify(value ?? null)) as T;
const same = (a: unknown, b: unknown) => isDeepStrictEqual(plain(a), plain(b));
const quote = (value: unknown) => JSON.stringify(value);

/**
 * One kind of definition the projects' flags refer to: how the stored ones are listed, how a missing one is
 * created, and how a stored one is brought to what the file says, answering one entry per change it made (its
 * detail, when the report shows one), none when it already was.
 */
interface SharedKind<Entry extends { name: string }, Stored extends { name: string }> {
  key: 'environments' | 'contextFields' | 'tagTypes' | 'strategies' | 'segments';
  noun: string;
  list(uow: UnitOfWork): Promise<Stored[]>;
  create(uow: UnitOfWork, entry: Entry): Promise<unknown>;
  update(uow: UnitOfWork, entry: Entry, current: Stored): Promise<Array<string | undefined>>;
  /** What must exist before the entry is applied. */
  prepare?(uow: UnitOfWork, entry: Entry): Promise<void>;
}

/** Creates each entry of one kind that is missing and updates those the file says otherwise, reporting each change. */
async function applyKind<Entry extends { name: string }, Stored extends { name: string }>(
  uow: UnitOfWork,
  report: ApplyReport,
  kind: SharedKind<Entry, Stored>,
  entries: Entry[] = [],
): Promise<void> {
  const stored = new Map((await kind.list(uow)).map((item) => [item.name, item]));
  for (const [index, entry] of entries.entries()) {
    const path = pointer(kind.key, index);
    const target = `${kind.noun} "${entry.name}"`;
    const current = stored.get(entry.name);
    await kind.prepare?.(uow, entry);
    await atEntry(path, target, async () => {
      if (!current) {
        await kind.create(uow, entry);
        report.changes.push({ path, change: 'created', target });
        return;
      }
      for (const detail of await kind.update(uow, entry, current)) {
        report.changes.push({ path, change: 'updated', target, ...(detail === undefined ? {} : { detail }) });
      }
    });
  }
}

/** Updates with `update` when `wanted` differs from `stored`: the change of kinds whose report shows no detail. */
async function updateWhenDifferent(stored: unknown, wanted: unknown, update: () => Promise<unknown>): Promise<Array<string | undefined>> {
  if (same(stored, wanted)) return [];
  await update();
  return [undefined];
}

const ENVIRONMENTS: SharedKind<FileEnvironment, EnvironmentView> = {
  key: 'environments',
  noun: 'environment',
  list: (uow) => listEnvironments(uow.tx),
  create: createEnvironment,
  async update(uow, environment, current) {
    const details: string[] = [];
    const typeChanged = current.type !== environment.type;
    if (typeChanged || (environment.sortOrder !== undefined && environment.sortOrder !== current.sortOrder)) {
      await updateEnvironment(uow, environment.name, { type: environment.type, sortOrder: environment.sortOrder });
      details.push(typeChanged ? `type: ${current.type} → ${environment.type}` : 'sortOrder');
    }
    if (environment.enabled !== undefined && environment.enabled !== current.enabled) {
      await setEnvironmentEnabled(uow, environment.name, environment.enabled);
      details.push(`enabled: ${current.enabled} → ${environment.enabled}`);
    }
    return details;
  },
};

const CONTEXT_FIELDS: SharedKind<FileContextField, ContextFieldView> = {
  key: 'contextFields',
  noun: 'context field',
  list: (uow) => listContextFields(uow.tx, { includeProjects: true }),
  create: (uow, { project, ...field }) => createContextField(uow, { ...field, ...(project ? { project } : {}) }),
  update(uow, field, current) {
    if (field.project !== undefined && (field.project ?? undefined) !== current.project) {
      throw new BadDataError(
        `Context field "${field.name}" belongs to ${current.project ? `project "${current.project}"` : 'the whole instance'}; a field cannot move`,
      );
    }
    const wanted = {
      description: field.description === undefined ? current.description : field.description,
      stickiness: field.stickiness ?? current.stickiness,
      sortOrder: field.sortOrder ?? current.sortOrder,
      legalValues: field.legalValues ?? current.legalValues,
    };
    const { name: _name, createdAt: _createdAt, project: _project, ...stored } = current;
    return updateWhenDifferent(stored, wanted, () => updateContextField(uow, field.name, wanted));
  },
};

const TAG_TYPES: SharedKind<FileTagType, TagTypeView> = {
  key: 'tagTypes',
  noun: 'tag type',
  list: (uow) => listTagTypes(uow.tx),
  create: ensureTagType,
  async update(uow, tagType, current) {
    const changed =
      (tagType.description !== undefined && tagType.description !== current.description) ||
      (tagType.icon !== undefined && tagType.icon !== current.icon);
    if (!changed) return [];
    await updateTagType(uow, tagType.name, { description: tagType.description, icon: tagType.icon });
    return [undefined];
  },
};

const STRATEGY_DEFINITIONS: SharedKind<FileStrategyDefinition, StrategyDefinitionView> = {
  key: 'strategies',
  noun: 'strategy',
  list: (uow) => listStrategyDefinitions(uow.tx),
  create: createStrategyDefinition,
  update(uow, definition, current) {
    if (!current.editable) throw new BadDataError(`"${definition.name}" is a built-in strategy; a file cannot redefine it`);
    const wanted = {
      title: definition.title === undefined ? current.title : definition.title,
      description: definition.description ?? current.description,
      parameters: (definition.parameters ?? current.parameters).map((p) => ({
        name: p.name,
        type: p.type,
        description: p.description ?? '',
        required: p.required ?? false,
      })),
    };
    const stored = { title: current.title, description: current.description, parameters: current.parameters };
    return updateWhenDifferent(stored, wanted, () => updateStrategyDefinition(uow, definition.name, wanted));
  },
};

const SEGMENTS: SharedKind<FileSegment, AdminSegmentView> = {
  key: 'segments',
  noun: 'segment',
  list: (uow) => listSegments(uow.tx),
  create: createSegment,
  update(uow, segment, current) {
    const wanted = {
      name: segment.name,
      description: segment.description === undefined ? current.description : segment.description,
      project: segment.project === undefined ? current.project : segment.project,
      constraints: segment.constraints,
    };
    const stored = { description: current.description, project: current.project, constraints: current.constraints };
    return updateWhenDifferent(stored, { ...wanted, name: undefined, constraints: normalizeConstraints(wanted.constraints) }, () =>
      updateSegment(uow, current.id, wanted),
    );
  },
};

/**
 * Environments, context fields, tag types, strategy definitions and segments: what the projects' flags refer
 * to, so applied first. Each is created when missing and updated where the file says otherwise.
 */
export async function applyShared(uow: UnitOfWork, file: FlagsFile, report: ApplyReport): Promise<void> {
  await applyKind(uow, report, ENVIRONMENTS, file.environments);
  // A segment or context field of a project the file brings needs that project first (its flags come later).
  const projectsMade = new Set<string>();
  const prepare = async (entryUow: UnitOfWork, entry: { name: string; project?: string | null }) => {
    const projectIndex = entry.project ? (file.projects ?? []).findIndex((project) => project.id === entry.project) : -1;
    if (projectIndex < 0 || projectsMade.has(entry.project!)) return;
    projectsMade.add(entry.project!);
    const projectPath = pointer('projects', projectIndex);
    await atEntry(projectPath, `project "${entry.project}"`, () =>
      applyProjectSettings(entryUow, file.projects![projectIndex]!, projectPath, report),
    );
  };
  await applyKind(uow, report, { ...CONTEXT_FIELDS, prepare }, file.contextFields);
  await applyKind(uow, report, TAG_TYPES, file.tagTypes);
  await applyKind(uow, report, STRATEGY_DEFINITIONS, file.strategies);
  await applyKind(uow, report, { ...SEGMENTS, prepare }, file.segments);
}

/** What the file wants of one project, with its flags: applied in the caller's unit of work. */
export async function applyProject(uow: UnitOfWork, file: FlagsFile, projectIndex: number, report: ApplyReport): Promise<void> {
  const project = file.projects![projectIndex]!;
  const projectPath = pointer('projects', projectIndex);
  const target = `project "${project.id}"`;
  await atEntry(projectPath, target, () => applyProjectSettings(uow, project, projectPath, report));
  // After the shared kinds: a default strategy may name a segment the file brings.
  await applyDefaultStrategies(uow, project, projectPath, report);

  const segmentIds = new Map((await listSegments(uow.tx)).map((s) => [s.name, s.id]));
  const names = (project.flags ?? []).map((flag) => flag.name);
  const existing = new Map(
    (names.length === 0 ? [] : await uow.tx.selectFrom('features').selectAll().where('name', 'in', names).execute()).map((row) => [
      row.name,
      row,
    ]),
  );
  for (const [index, flag] of (project.flags ?? []).entries()) {
    const path = `${projectPath}${pointer('flags', index)}`;
    await atEntry(path, `flag "${flag.name}"`, () =>
      applyFlag(uow, { project: project.id, flag, path, row: existing.get(flag.name), segmentIds, report }),
    );
  }
  // Dependencies last: a flag may depend on one the file lists after it.
  for (const [index, flag] of (project.flags ?? []).entries()) {
    if (flag.dependencies === undefined || flag.archived) continue;
    const path = `${projectPath}${pointer('flags', index, 'dependencies')}`;
    await atEntry(path, `flag "${flag.name}"`, () => applyDependencies(uow, project.id, flag, path, report));
  }
}

async function applyProjectSettings(uow: UnitOfWork, project: FileProject, path: string, report: ApplyReport): Promise<void> {
  const target = `project "${project.id}"`;
  const current = (await listProjects(uow.tx)).find((p) => p.id === project.id);
  if (!current) {
    await createProject(uow, {
      id: project.id,
      name: project.name ?? project.id,
      description: project.description,
      mode: project.mode,
      environments: project.environments,
    });
    report.changes.push({ path, change: 'created', target });
    return;
  }
  const wanted = {
    name: project.name ?? current.name,
    description: project.description === undefined ? current.description : project.description,
    mode: project.mode ?? (current.mode as FileProject['mode']),
  };
  if (!same({ name: current.name, description: current.description, mode: current.mode }, wanted)) {
    await updateProject(uow, project.id, wanted);
    report.changes.push({ path, change: 'updated', target });
  }
  for (const environment of project.environments ?? []) {
    if (current.environments.includes(environment)) continue;
    await addProjectEnvironment(uow, project.id, environment);
    report.changes.push({ path, change: 'updated', target, detail: `environment "${environment}" added` });
  }
}

/** Each environment's default strategy the file gives, set where it differs; environments it leaves out are left alone. */
async function applyDefaultStrategies(uow: UnitOfWork, project: FileProject, path: string, report: ApplyReport): Promise<void> {
  const wanted = Object.entries(project.defaultStrategies ?? {});
  if (wanted.length === 0) return;
  const [stored, segments] = await Promise.all([projectDefaultStrategies(uow.tx, project.id), listSegments(uow.tx)]);
  const segmentIds = new Map(segments.map((segment) => [segment.name, segment.id]));
  for (const [environment, strategy] of wanted) {
    const entryPath = `${path}${pointer('defaultStrategies', environment)}`;
    const { sortOrder: _sortOrder, ...input } = strategyInput(strategy, 0, segmentIds, entryPath);
    const current = stored.get(environment);
    const comparable = (value: {
      parameters?: unknown;
      constraints?: unknown;
      segments?: unknown;
      variants?: unknown;
      title?: unknown;
    }) => ({
      parameters: value.parameters,
      constraints: normalizeConstraints((value.constraints ?? []) as never),
      segments: value.segments,
      variants: value.variants,
      title: value.title || '',
    });
    if (current && isDeepStrictEqual(comparable(current), comparable({ ...input, parameters: { groupId: '', ...input.parameters } })))
      continue;
    await atEntry(entryPath, `default strategy of project "${project.id}" in ${environment}`, () =>
      setProjectDefaultStrategy(uow, { project: project.id, environment }, input),
    );
    report.changes.push({
      path: entryPath,
      change: current ? 'updated' : 'created',
      target: `default strategy of project "${project.id}" in ${environment}`,
    });
  }
}

interface FlagContext {
  project: string;
  flag: FileFlag;
  path: string;
  row:
    | { project: string; type: string; description: string | null; impression_data: boolean; stale: boolean; archived_at: Date | null }
    | undefined;
  segmentIds: Map<string, number>;
  report: ApplyReport;
}

async function applyFlag(uow: UnitOfWork, context: FlagContext): Promise<void> {
  const { project, flag, path, row, report } = context;
  const target = `flag "${flag.name}"`;
  if (row && row.project !== project) {
    throw new BadDataError(`Flag "${flag.name}" exists in project "${row.project}"; move it there in the file, or move the flag first`);
  }
  if (row?.archived_at && flag.archived) return;
  if (!row) {
    await createFeature(uow, {
      project,
      name: flag.name,
      type: flag.type,
      description: flag.description,
      impressionData: flag.impressionData,
    });
    report.changes.push({ path, change: 'created', target });
  } else {
    if (row.archived_at) {
      await reviveFeatures(uow, project, [flag.name]);
      report.changes.push({ path, change: 'revived', target });
    }
    const changes = {
      ...(flag.type !== undefined && flag.type !== row.type ? { type: flag.type } : {}),
      ...(flag.description !== undefined && (flag.description ?? null) !== row.description ? { description: flag.description } : {}),
      ...(flag.impressionData !== undefined && flag.impressionData !== row.impression_data ? { impressionData: flag.impressionData } : {}),
    };
    if (Object.keys(changes).length > 0) {
      await updateFeature(uow, project, flag.name, changes);
      report.changes.push({ path, change: 'updated', target, detail: Object.keys(changes).join(', ') });
    }
  }
  if (flag.stale !== undefined && flag.stale !== (row?.stale ?? false)) {
    await setFeaturesStale(uow, project, [flag.name], flag.stale);
    report.changes.push({ path, change: 'updated', target, detail: `stale: ${!flag.stale} → ${flag.stale}` });
  }
  if (flag.tags !== undefined) await applyTags(uow, flag, path, report);
  if (flag.links !== undefined) await applyLinks(uow, project, flag, path, report);
  for (const [environment, wanted] of Object.entries(flag.environments ?? {})) {
    await applyFlagEnvironment(uow, context, environment, wanted, `${path}${pointer('environments', environment)}`);
  }
  if (flag.archived) {
    await archiveFlags(uow, project, [flag.name]);
    report.changes.push({ path, change: 'archived', target });
  }
}

async function applyTags(uow: UnitOfWork, flag: FileFlag, path: string, report: ApplyReport): Promise<void> {
  const current = (await loadFeatureTags(uow.tx, [flag.name])).get(flag.name) ?? [];
  const key = (tag: { type: string; value: string }) => `${tag.type}:${tag.value}`;
  const wanted = new Set((flag.tags ?? []).map(key));
  const held = new Set(current.map(key));
  const addedTags = (flag.tags ?? []).filter((tag) => !held.has(key(tag)));
  const removedTags = current.filter((tag) => !wanted.has(key(tag)));
  if (addedTags.length === 0 && removedTags.length === 0) return;
  await updateFeatureTags(uow, flag.name, { addedTags, removedTags });
  report.changes.push({
    path: `${path}/tags`,
    change: 'updated',
    target: `flag "${flag.name}"`,
    detail: `tags: ${[...addedTags.map((t) => `+${key(t)}`), ...removedTags.map((t) => `-${key(t)}`)].join(' ')}`,
  });
}

/** Makes the flag's links those the file lists: links it does not list go, those it lists that are missing come. */
async function applyLinks(uow: UnitOfWork, project: string, flag: FileFlag, path: string, report: ApplyReport): Promise<void> {
  const current = (await loadFeatureLinks(uow.tx, [flag.name])).get(flag.name) ?? [];
  const key = (link: { url: string; title?: string | null }) => `${link.url}\n${link.title?.trim() || ''}`;
  // Compared as stored: an address without a scheme is kept with https://.
  const wanted = [];
  for (const [index, link] of (flag.links ?? []).entries()) {
    wanted.push(await atEntry(`${path}/links/${index}`, `link of flag "${flag.name}"`, async () => ({ ...link, url: linkUrl(link.url) })));
  }
  const wantedKeys = new Set(wanted.map(key));
  const heldKeys = new Set(current.map(key));
  const target = { project, featureName: flag.name };
  const removed = current.filter((link) => !wantedKeys.has(key(link)));
  const added = wanted.filter((link) => !heldKeys.has(key(link)));
  for (const link of removed) await removeFeatureLink(uow, target, link.id);
  for (const link of added) await addFeatureLink(uow, target, link);
  if (removed.length === 0 && added.length === 0) return;
  report.changes.push({
    path: `${path}/links`,
    change: 'updated',
    target: `flag "${flag.name}"`,
    detail: `links: ${[...added.map((link) => `+${link.url}`), ...removed.map((link) => `-${link.url}`)].join(' ')}`,
  });
}

/** The strategy as the file gives it, with segment names turned into the ids of this instance. */
function strategyInput(strategy: FileStrategy, sortOrder: number, segmentIds: Map<string, number>, path: string): StrategyInput {
  const segments = (strategy.segments ?? []).map((name, index) => {
    const id = segmentIds.get(name);
    if (id === undefined) {
      throw new BadDataError(`No segment is named "${name}"; list it under segments`, [
        { path: `${path}/segments/${index}`, message: `unknown segment "${name}"` },
      ]);
    }
    return id;
  });
  return {
    name: strategy.name,
    title: strategy.title ?? null,
    disabled: strategy.disabled ?? false,
    sortOrder,
    parameters: strategy.parameters ?? {},
    constraints: strategy.constraints ?? [],
    variants: strategy.variants ?? [],
    segments,
  };
}

/** What an update of a strategy changes, in words, for the plan: `updateStrategy` changes carry only the new state. */
const strategyUpdates = new WeakMap<FeatureChange, string>();

/**
 * A strategy's update in a few words: `flexibleRollout: rollout 45 → 65` (each parameter, and which other parts
 * changed), or `flexibleRollout → userWithId` when another strategy takes its place.
 */
function strategyDifference(before: Record<string, unknown>, after: Record<string, unknown>): string {
  if (before.name !== after.name) return `${before.name} → ${after.name}`;
  const words: string[] = [];
  const parametersBefore = (before.parameters ?? {}) as Record<string, unknown>;
  const parametersAfter = (after.parameters ?? {}) as Record<string, unknown>;
  for (const name of new Set([...Object.keys(parametersBefore), ...Object.keys(parametersAfter)])) {
    const from = parametersBefore[name];
    const to = parametersAfter[name];
    if (String(from ?? '') !== String(to ?? '')) words.push(`${name} ${from ?? '(none)'} → ${to ?? '(none)'}`);
  }
  if ((before.title ?? null) !== (after.title ?? null)) words.push(`title ${before.title ?? '(none)'} → ${after.title ?? '(none)'}`);
  if (Boolean(before.disabled) !== Boolean(after.disabled)) words.push(after.disabled ? 'disabled' : 'enabled');
  for (const part of ['constraints', 'segments', 'variants'] as const) {
    if (!same(before[part] ?? [], after[part] ?? [])) words.push(`${part} changed`);
  }
  return `${before.name}: ${words.join(', ')}`;
}

/** The changes that make one environment's strategies the file's: updates in place, additions, removals, order. */
async function strategyChanges(
  uow: UnitOfWork,
  featureName: string,
  current: Array<StrategyView & { environment: string }>,
  wanted: FileStrategy[],
  segmentIds: Map<string, number>,
  path: string,
): Promise<FeatureChange[]> {
  const changes: FeatureChange[] = [];
  const reorder: Array<{ id: string; sortOrder: number }> = [];
  for (const [index, strategy] of wanted.entries()) {
    const strategyPath = `${path}/strategies/${index}`;
    const input = strategyInput(strategy, index, segmentIds, strategyPath);
    const normalized = await atEntry(strategyPath, `strategy "${strategy.name}" of flag "${featureName}"`, () =>
      resolveStrategy(uow.tx, input, featureName, strategyPath, { allowDeprecated: current[index]?.name === strategy.name }),
    );
    const held = current[index];
    if (!held) {
      changes.push({ action: 'addStrategy', feature: featureName, payload: input });
      continue;
    }
    const { id, featureName: _feature, environment: _environment, sortOrder, ...stored } = held;
    if (!same(stored, normalized)) {
      const change: FeatureChange = { action: 'updateStrategy', feature: featureName, payload: { ...input, id } };
      strategyUpdates.set(change, strategyDifference(stored, { ...normalized }));
      changes.push(change);
    } else if (sortOrder !== index) reorder.push({ id, sortOrder: index });
  }
  for (const extra of current.slice(wanted.length)) {
    changes.push({ action: 'deleteStrategy', feature: featureName, payload: { id: extra.id } });
  }
  if (reorder.length > 0) changes.push({ action: 'reorderStrategy', feature: featureName, payload: reorder });
  return changes;
}

const canonicalVariants = (variants: Variant[], path: string) =>
  distributeWeights(
    variants.map((v) => ({ ...v, stickiness: v.stickiness ?? 'default' })),
    path,
  ).map(({ overrides, ...v }) => ({ ...v, overrides: overrides ?? [] }));

async function flagEnvironmentChanges(
  uow: UnitOfWork,
  context: FlagContext,
  environment: string,
  wanted: FileFlagEnvironment,
  path: string,
): Promise<FeatureChange[]> {
  const featureName = context.flag.name;
  const state = await uow.tx
    .selectFrom('feature_environments')
    .select(['enabled', 'variants'])
    .where('feature_name', '=', featureName)
    .where('environment', '=', environment)
    .executeTakeFirst();
  const current = (await loadStrategies(uow.tx, [featureName])).filter((s) => s.environment === environment);
  const changes: FeatureChange[] = [];
  if (wanted.strategies !== undefined) {
    changes.push(...(await strategyChanges(uow, featureName, current, wanted.strategies, context.segmentIds, path)));
  }
  if (wanted.variants !== undefined) {
    const held = canonicalVariants((state?.variants ?? []) as Variant[], `${path}/variants`);
    const next = canonicalVariants(wanted.variants as Variant[], `${path}/variants`);
    if (!same(held, next)) changes.push({ action: 'patchVariant', feature: featureName, payload: { variants: wanted.variants } });
  }
  if (wanted.enabled !== undefined && wanted.enabled !== (state?.enabled ?? false)) {
    changes.push({ action: 'updateEnabled', feature: featureName, payload: { enabled: wanted.enabled } });
  }
  return changes;
}

function describe(changes: FeatureChange[]): string {
  const counts = new Map<string, number>();
  for (const change of changes) {
    const update = strategyUpdates.get(change);
    const label =
      change.action === 'updateEnabled'
        ? `enabled → ${change.payload.enabled}`
        : change.action === 'patchVariant'
          ? 'variants'
          : update !== undefined
            ? `strategy updated (${update})`
            : ({ addStrategy: 'strategy added', updateStrategy: 'strategy updated', deleteStrategy: 'strategy removed' }[
                change.action as 'addStrategy'
              ] ?? 'strategies reordered');
    counts.set(label, (counts.get(label) ?? 0) + 1);
  }
  return [...counts].map(([label, count]) => (count > 1 ? `${count} × ${label}` : label)).join(', ');
}

async function applyFlagEnvironment(
  uow: UnitOfWork,
  context: FlagContext,
  environment: string,
  wanted: FileFlagEnvironment,
  path: string,
): Promise<void> {
  const scope = { project: context.project, environment };
  const target = `flag "${context.flag.name}" in "${environment}"`;
  const changes = await flagEnvironmentChanges(uow, context, environment, wanted, path);
  if (changes.length === 0) return;
  if (await isProtected(uow.tx, scope.project, scope.environment)) {
    await proposeChanges(uow, scope, context.flag.name, changes, path, context.report);
    return;
  }
  for (const change of changes) await atEntry(path, target, () => applyChange(uow, scope, change));
  context.report.changes.push({ path, change: 'updated', target, detail: describe(changes) });
  // Turning on an environment without strategies adds the default one; a file that lists none means none.
  if (wanted.strategies?.length === 0 && changes.some((c) => c.action === 'updateEnabled' && c.payload.enabled)) {
    for (const change of await flagEnvironmentChanges(uow, context, environment, { strategies: [] }, path)) {
      await applyChange(uow, scope, change);
    }
  }
}

/**
 * A protected environment's changes go to the caller's open change request of it, in place of what that
 * request already proposed for the flag; when it already proposes exactly these changes, nothing is done,
 * so applying the same file again while the request waits for review changes nothing.
 */
async function proposeChanges(
  uow: UnitOfWork,
  scope: ChangeRequestScope,
  featureName: string,
  changes: FeatureChange[],
  path: string,
  report: ApplyReport,
): Promise<void> {
  const { createdByUserId } = actorIdentity(uow.actor);
  const open = await uow.tx
    .selectFrom('change_requests')
    .select('id')
    .where('project', '=', scope.project)
    .where('environment', '=', scope.environment)
    .where('created_by_user_id', '=', createdByUserId)
    .where('state', 'in', OPEN_STATES)
    .executeTakeFirst();
  const proposed = open
    ? await uow.tx
        .selectFrom('change_request_changes')
        .select(['id', 'action', 'payload'])
        .where('change_request_id', '=', open.id)
        .where('feature_name', '=', featureName)
        .orderBy('id')
        .execute()
    : [];
  const target = `flag "${featureName}" in "${scope.environment}"`;
  const noteRequest = (id: number, created: boolean) => {
    if (!report.changeRequests.some((cr) => cr.id === id)) report.changeRequests.push({ ...scope, id, created });
  };
  if (
    open &&
    same(
      proposed.map((p) => ({ action: p.action, payload: p.payload })),
      changes.map((c) => ({ action: c.action, payload: c.payload ?? null })),
    )
  ) {
    noteRequest(open.id, false);
    return;
  }
  for (const change of proposed) await discardChange(uow, scope.project, open!.id, change.id);
  const id = await atEntry(path, target, () => addChanges(uow, scope, changes, () => path));
  const created = !open && !report.changeRequests.some((cr) => cr.id === id);
  noteRequest(id, created);
  const request = report.changeRequests.find((cr) => cr.id === id)!;
  report.changes.push({
    path,
    change: 'proposed',
    target,
    detail: `${describe(changes)} (${request.created ? 'new change request' : `change request ${id}`})`,
  });
}

async function applyDependencies(uow: UnitOfWork, project: string, flag: FileFlag, path: string, report: ApplyReport): Promise<void> {
  const current = await parentsOf(uow.tx, flag.name);
  const wanted = (flag.dependencies ?? []).map((d) => ({ feature: d.feature, enabled: d.enabled ?? true, variants: d.variants ?? [] }));
  const target = `flag "${flag.name}"`;
  for (const dependency of wanted) {
    const held = current.find((d) => d.feature === dependency.feature);
    if (held && same({ enabled: held.enabled, variants: held.variants }, { enabled: dependency.enabled, variants: dependency.variants })) {
      continue;
    }
    await addDependency(uow, project, flag.name, dependency);
    report.changes.push({ path, change: 'updated', target, detail: `depends on ${quote(dependency.feature)}` });
  }
  for (const held of current) {
    if (wanted.some((d) => d.feature === held.feature)) continue;
    await removeDependency(uow, project, flag.name, held.feature);
    report.changes.push({ path, change: 'updated', target, detail: `no longer depends on ${quote(held.feature)}` });
  }
}

/** The whole file in the caller's unit of work: shared definitions first, then each project. */
export async function applyFlagsFile(uow: UnitOfWork, file: FlagsFile, report: ApplyReport): Promise<void> {
  await applyShared(uow, file, report);
  for (const index of (file.projects ?? []).keys()) await applyProject(uow, file, index, report);
}

/** The most flags one file may hold: it is applied in one transaction, which must stay short. */
export const MAX_FILE_FLAGS = 5000;

/**
 * Applies a whole file in the caller's unit of work, which makes it all or nothing: nothing is applied when any
 * entry is refused, and a dry run (rolled back) reports exactly what the real run would do.
 */
export async function applyWholeFlagsFile(uow: UnitOfWork, file: FlagsFile): Promise<ApplyReport> {
  const count = (file.projects ?? []).reduce((sum, project) => sum + (project.flags ?? []).length, 0);
  if (count > MAX_FILE_FLAGS) {
    throw new BadDataError(`A file may hold at most ${MAX_FILE_FLAGS} flags (this one has ${count}); split it by project`, [
      { path: '/projects', message: `${count} flags in all` },
    ]);
  }
  const report = emptyReport();
  await applyFlagsFile(uow, file, report);
  return report;
}

/** What an apply or import answers: the report, and for a dry run without the ids that never came to exist. */
export function applyAnswer(report: ApplyReport, dryRun: boolean): ApplyReport & { dryRun: boolean } {
  return { dryRun, ...(dryRun ? withoutUnknowableIds(report) : report) };
}

/** A dry run's report, without the ids of change requests it opened and rolled back: those never exist. */
export function withoutUnknowableIds(report: ApplyReport): ApplyReport {
  return { ...report, changeRequests: report.changeRequests.map((cr) => (cr.created ? { ...cr, id: null } : cr)) };
}
