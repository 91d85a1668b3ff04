import { assertProjectVisible, projectsHiddenFrom } from '../access/project-visibility.js';
import type { Db } from '../../db/database.js';
import type { Actor, UnitOfWork } from '../../db/unit-of-work.js';
import { BadDataError, NotFoundError, PermissionError } from '../../shared/errors.js';
import { roleHasPermission, type Permission } from '../access/permissions.js';
import { actorRootRole } from '../access/actor.js';
import { listContextFields } from '../context-fields/context-fields.js';
import { normalizeConstraints } from '../features/constraints.js';
import { loadStrategies } from '../features/feature-views.js';
import { recordEvent } from '../events/record-event.js';
import { applyProject, applyShared, emptyReport, type ApplyReport } from '../flags-file/apply-flags-file.js';
import type { FileFlag, FileStrategy, FlagsFile } from '../flags-file/flags-file.js';
import { listProjects } from '../projects/projects.js';
import { listSegments } from '../segments/segments.js';
import { listStrategyDefinitions } from '../strategies/strategy-definitions.js';
import { listTagTypes } from '../tags/tags.js';
import type { ExportResult, ExportedStrategy } from './features-export.js';

/** Unleash's `importTogglesSchema`: an export of one environment, imported into a project's environment. */
export interface ImportDocument {
  project: string;
  environment: string;
  data: ExportResult;
}

/** Unleash's `importTogglesValidateItemSchema`. */
export interface ValidationItem {
  message: string;
  affectedItems: string[];
}

export interface ImportValidation {
  errors: ValidationItem[];
  warnings: ValidationItem[];
  permissions: ValidationItem[];
}

/** One problem with one entry of the document: grouped by message for validation, listed with its place for a 400. */
interface Finding {
  message: string;
  item: string;
  path: string;
}

/** Unleash's wording, so that scripts and people who know its import read the same messages. */
const MESSAGES = {
  strategies: 'We detected the following custom strategy that needs to be created first:',
  contextFields: 'We detected the following context fields that do not have matching legal values with the imported ones:',
  otherProject: (project: string) =>
    `You cannot import a features that already exist in other projects. You already have the following features defined outside of project ${project}:`,
  duplicates: 'We detected the following features are duplicate in your import data:',
  segments: 'We detected the following segments that need to be created first:',
  dependencies: 'We detected the following dependencies that need to be created first:',
  unlistedSegments: 'These strategies use segment ids that the file does not list under segments:',
  unknownFeatures: 'These entries name a feature that the file does not list under features:',
  environment: 'The project does not use the environment of the import:',
  customStrategies:
    'The following strategy types will be used in import. Please make sure the strategy type parameters are configured as in source environment:',
  archived: 'The following features will not be imported as they are currently archived. To import them, please unarchive them first:',
  existing: 'The following features already exist in this project and will be overwritten:',
  links: 'Vexil does not keep feature links; the links of these features are not imported:',
  permissions: 'We detected you are missing the following permissions:',
} as const;

function grouped(findings: Finding[]): ValidationItem[] {
  const groups = new Map<string, string[]>();
  for (const { message, item } of findings) {
    const items = groups.get(message) ?? [];
    if (!items.includes(item)) items.push(item);
    groups.set(message, items);
  }
  return [...groups].map(([message, affectedItems]) => ({ message, affectedItems }));
}

interface Assessment {
  errors: Finding[];
  warnings: Finding[];
  missingPermissions: Permission[];
  /** Features of the document to import: not archived here. */
  importable: Set<string>;
  newContextFields: Set<string>;
  newTagTypes: Set<string>;
  /** Per flag that exists, its strategies in the environment as `strategyKey`s, in their current order. */
  currentOrder: Map<string, string[]>;
}

/** What a strategy is, whatever its id and place: how a file without `sortOrder` is matched to the strategies held. */
function strategyKey(
  strategy: Pick<ExportedStrategy, 'name' | 'title' | 'disabled' | 'parameters' | 'constraints' | 'variants'>,
  segmentNames: string[],
): string {
  const parameters = Object.entries(strategy.parameters ?? {})
    .map(([key, value]) => [key, String(value)])
    .sort(([a], [b]) => (a! < b! ? -1 : 1));
  return JSON.stringify([
    strategy.name,
    strategy.title ?? null,
    strategy.disabled ?? false,
    parameters,
    normalizeConstraints(strategy.constraints),
    [...segmentNames].sort(),
    (strategy.variants ?? []).map((v) => [v.name, v.weight, v.payload ?? null]),
  ]);
}

/** What importing the document would meet here, read in one go (the caller's transaction on import). */
async function assess(db: Db, actor: Actor, document: ImportDocument): Promise<Assessment> {
  const { project, environment, data } = document;
  // A project the caller may not see is a 404, as its paths are.
  await assertProjectVisible(db, actor, project);
  const [projects, hidden] = await Promise.all([listProjects(db), projectsHiddenFrom(db, actor)]);
  const target = projects.find((p) => p.id === project);
  if (!target) throw new NotFoundError(`Could not find project "${project}"`);
  const environmentRow = await db.selectFrom('environments').select('name').where('name', '=', environment).executeTakeFirst();
  if (!environmentRow) throw new NotFoundError(`Could not find environment "${environment}"`);

  const names = data.features.map((f) => f.name);
  const [rows, definitions, contextFields, segments, tagTypes] = await Promise.all([
    names.length === 0 ? [] : db.selectFrom('features').select(['name', 'project', 'archived_at']).where('name', 'in', names).execute(),
    listStrategyDefinitions(db),
    listContextFields(db),
    listSegments(db),
    listTagTypes(db),
  ]);
  const stored = new Map(rows.map((row) => [row.name, row]));
  const errors: Finding[] = [];
  const warnings: Finding[] = [];

  if (!target.environments.includes(environment)) {
    errors.push({ message: MESSAGES.environment, item: environment, path: '/environment' });
  }
  const listed = new Set<string>();
  for (const [index, feature] of data.features.entries()) {
    const path = `/data/features/${index}`;
    if (listed.has(feature.name)) errors.push({ message: MESSAGES.duplicates, item: feature.name, path });
    listed.add(feature.name);
    const row = stored.get(feature.name);
    if (row && row.project !== project) {
      // Flag names are unique across projects, so the clash is said; which project holds the flag only when visible.
      const item = hidden.has(row.project) ? feature.name : `${feature.name} (in project ${row.project})`;
      errors.push({ message: MESSAGES.otherProject(project), item, path });
    } else if (row?.archived_at) warnings.push({ message: MESSAGES.archived, item: feature.name, path });
    else if (row) warnings.push({ message: MESSAGES.existing, item: feature.name, path });
  }

  const strategyNames = new Map(definitions.map((d) => [d.name, d]));
  const segmentIds = new Map((data.segments ?? []).map((s) => [s.id, s.name]));
  for (const [index, strategy] of data.featureStrategies.entries()) {
    const path = `/data/featureStrategies/${index}`;
    const definition = strategyNames.get(strategy.name);
    if (!definition) errors.push({ message: MESSAGES.strategies, item: strategy.name, path: `${path}/name` });
    else if (definition.editable) warnings.push({ message: MESSAGES.customStrategies, item: strategy.name, path });
    if (strategy.featureName === undefined || !listed.has(strategy.featureName)) {
      errors.push({
        message: MESSAGES.unknownFeatures,
        item: strategy.featureName ?? `featureStrategies[${index}]`,
        path: `${path}/featureName`,
      });
    }
    for (const [position, id] of (strategy.segments ?? []).entries()) {
      if (!segmentIds.has(id)) errors.push({ message: MESSAGES.unlistedSegments, item: String(id), path: `${path}/segments/${position}` });
    }
  }
  for (const [index, entry] of (data.featureEnvironments ?? []).entries()) {
    const name = entry.featureName ?? entry.name;
    if (!listed.has(name)) errors.push({ message: MESSAGES.unknownFeatures, item: name, path: `/data/featureEnvironments/${index}` });
  }
  for (const [index, tag] of (data.featureTags ?? []).entries()) {
    if (!listed.has(tag.featureName))
      errors.push({ message: MESSAGES.unknownFeatures, item: tag.featureName, path: `/data/featureTags/${index}` });
  }

  // A segment is matched by name; one that belongs to another project cannot be used here.
  for (const [index, segment] of (data.segments ?? []).entries()) {
    const usable = segments.some((s) => s.name === segment.name && (s.project === null || s.project === project));
    if (!usable) errors.push({ message: MESSAGES.segments, item: segment.name, path: `/data/segments/${index}` });
  }

  const existingFields = new Map(contextFields.map((f) => [f.name, f]));
  const newContextFields = new Set<string>();
  for (const [index, field] of (data.contextFields ?? []).entries()) {
    const existing = existingFields.get(field.name);
    if (!existing) {
      newContextFields.add(field.name);
      continue;
    }
    // A field whose values are restricted here must allow every value the imported flags may rely on.
    const allowed = new Set(existing.legalValues.map((v) => v.value));
    const extra = (field.legalValues ?? []).filter((v) => !allowed.has(v.value));
    if (allowed.size > 0 && extra.length > 0)
      errors.push({ message: MESSAGES.contextFields, item: field.name, path: `/data/contextFields/${index}` });
  }

  const known = new Set(tagTypes.map((t) => t.name));
  const newTagTypes = new Set((data.featureTags ?? []).map((t) => t.tagType ?? 'simple').filter((type) => !known.has(type)));

  const parents = new Set((data.dependencies ?? []).flatMap((d) => d.dependencies.map((p) => p.feature)));
  const outside = [...parents].filter((parent) => !listed.has(parent));
  const existingParents = new Set(
    outside.length === 0
      ? []
      : (await db.selectFrom('features').select('name').where('name', 'in', outside).where('archived_at', 'is', null).execute()).map(
          (r) => r.name,
        ),
  );
  for (const [index, dependency] of (data.dependencies ?? []).entries()) {
    for (const [position, parent] of dependency.dependencies.entries()) {
      if (!listed.has(parent.feature) && !existingParents.has(parent.feature)) {
        errors.push({ message: MESSAGES.dependencies, item: parent.feature, path: `/data/dependencies/${index}/dependencies/${position}` });
      }
    }
  }
  for (const [index, entry] of (data.links ?? []).entries()) {
    if (entry.links.length > 0) warnings.push({ message: MESSAGES.links, item: entry.feature, path: `/data/links/${index}` });
  }

  const needed: Permission[] = [
    ...(data.features.some((f) => !stored.has(f.name)) ? (['CREATE_FEATURE'] as const) : []),
    'UPDATE_FEATURE',
    'UPDATE_FEATURE_ENVIRONMENT',
    ...(data.featureStrategies.length > 0 ? (['CREATE_FEATURE_STRATEGY', 'DELETE_FEATURE_STRATEGY'] as const) : []),
    ...(newContextFields.size > 0 ? (['CREATE_CONTEXT_FIELD'] as const) : []),
    ...(newTagTypes.size > 0 ? (['CREATE_TAG_TYPE'] as const) : []),
  ];
  const role = actorRootRole(actor);
  const missingPermissions = needed.filter((permission) => !roleHasPermission(role, permission));
  const importable = new Set(data.features.filter((f) => !stored.get(f.name)?.archived_at).map((f) => f.name));
  const segmentNameOf = new Map(segments.map((s) => [s.id, s.name]));
  const currentOrder = new Map<string, string[]>();
  const held = await loadStrategies(
    db,
    rows.filter((row) => row.project === project).map((row) => row.name),
  );
  for (const strategy of held.filter((h) => h.environment === environment)) {
    const keys = currentOrder.get(strategy.featureName) ?? [];
    keys.push(
      strategyKey(
        strategy,
        strategy.segments.map((id) => segmentNameOf.get(id) ?? String(id)),
      ),
    );
    currentOrder.set(strategy.featureName, keys);
  }
  return { errors, warnings, missingPermissions, importable, newContextFields, newTagTypes, currentOrder };
}

/** What an import would meet, without changing anything: Unleash's `POST /api/admin/features-batch/validate`. */
export async function validateImport(db: Db, actor: Actor, document: ImportDocument): Promise<ImportValidation> {
  const { errors, warnings, missingPermissions } = await assess(db, actor, document);
  return {
    errors: grouped(errors),
    warnings: grouped(warnings),
    permissions: missingPermissions.length > 0 ? [{ message: MESSAGES.permissions, affectedItems: missingPermissions }] : [],
  };
}

/**
 * A flag's strategies in the order the file gives them (`sortOrder`). Unleash's export leaves `sortOrder` out, so
 * a file without it says nothing about order: strategies the flag already has keep their place, and new ones
 * follow in the file's order, so importing such a file does not reshuffle what decides a variant.
 */
function inEvaluationOrder(
  strategies: Array<{ strategy: ExportedStrategy; index: number }>,
  currentKeys: string[],
  segmentNames: Map<number, string>,
): Array<{ strategy: ExportedStrategy; index: number }> {
  if (strategies.some((s) => s.strategy.sortOrder !== undefined)) {
    return [...strategies].sort((a, b) => (a.strategy.sortOrder ?? 0) - (b.strategy.sortOrder ?? 0));
  }
  const free = [...currentKeys];
  const placed = strategies.map((entry) => {
    const key = strategyKey(
      entry.strategy,
      (entry.strategy.segments ?? []).map((id) => segmentNames.get(id) ?? String(id)),
    );
    const at = free.indexOf(key);
    if (at >= 0) free[at] = '';
    return { entry, place: at >= 0 ? at : Number.MAX_SAFE_INTEGER };
  });
  return placed.sort((a, b) => a.place - b.place).map((p) => p.entry);
}

/**
 * The document as a flags file of one project and environment, and where each flag and strategy of that file
 * came from in the document, so that a refusal during the apply names the entry the user wrote.
 */
function asFlagsFile(document: ImportDocument, assessment: Assessment) {
  const { project, environment, data } = document;
  const segmentNames = new Map((data.segments ?? []).map((s) => [s.id, s.name]));
  const strategiesOf = new Map<string, Array<{ strategy: ExportedStrategy; index: number }>>();
  for (const [index, strategy] of data.featureStrategies.entries()) {
    const list = strategiesOf.get(strategy.featureName!) ?? [];
    list.push({ strategy, index });
    strategiesOf.set(strategy.featureName!, list);
  }
  const environmentOf = new Map(
    (data.featureEnvironments ?? []).map((entry, index) => [entry.featureName ?? entry.name, { entry, index }]),
  );
  const dependenciesOf = new Map((data.dependencies ?? []).map((d) => [d.feature, d.dependencies]));

  const sources: Array<{ feature: number; strategies: number[]; environment: number | undefined }> = [];
  const flags: FileFlag[] = [];
  for (const [featureIndex, feature] of data.features.entries()) {
    if (!assessment.importable.has(feature.name)) continue;
    const strategies = inEvaluationOrder(
      strategiesOf.get(feature.name) ?? [],
      assessment.currentOrder.get(feature.name) ?? [],
      segmentNames,
    );
    const state = environmentOf.get(feature.name);
    const dependencies = dependenciesOf.get(feature.name);
    sources.push({ feature: featureIndex, strategies: strategies.map((s) => s.index), environment: state?.index });
    flags.push({
      name: feature.name,
      ...(feature.type !== undefined ? { type: feature.type as FileFlag['type'] } : {}),
      ...(feature.description !== undefined ? { description: feature.description } : {}),
      ...(feature.impressionData !== undefined ? { impressionData: feature.impressionData } : {}),
      ...(feature.stale !== undefined ? { stale: feature.stale } : {}),
      // The document's tags replace the flag's, as Unleash's import does.
      tags: (data.featureTags ?? [])
        .filter((t) => t.featureName === feature.name)
        .map((t) => ({ type: t.tagType ?? 'simple', value: t.tagValue })),
      ...(dependencies
        ? { dependencies: dependencies.map((d) => ({ feature: d.feature, enabled: d.enabled ?? true, variants: d.variants ?? [] })) }
        : {}),
      environments: {
        [environment]: {
          ...(state ? { enabled: state.entry.enabled } : {}),
          strategies: strategies.map(
            ({ strategy }): FileStrategy => ({
              name: strategy.name,
              title: strategy.title ?? null,
              disabled: strategy.disabled ?? false,
              parameters: strategy.parameters ?? {},
              constraints: strategy.constraints ?? [],
              segments: (strategy.segments ?? []).map((id) => segmentNames.get(id)!),
              variants: strategy.variants ?? [],
            }),
          ),
          // Unleash imports environment variants only when the file has some.
          ...(state?.entry.variants && state.entry.variants.length > 0 ? { variants: state.entry.variants } : {}),
        },
      },
    });
  }
  const file: FlagsFile = {
    version: 1,
    contextFields: (data.contextFields ?? [])
      .filter((f) => assessment.newContextFields.has(f.name))
      .map(({ name, description, stickiness, sortOrder, legalValues }) => ({ name, description, stickiness, sortOrder, legalValues })),
    tagTypes: [...assessment.newTagTypes].map((name) => {
      const described = (data.tagTypes ?? []).find((t) => t.name === name);
      return { name, description: described?.description ?? null, icon: described?.icon ?? null };
    }),
    projects: [{ id: project, flags }],
  };
  return { file, sources };
}

/** `/projects/0/flags/3/environments/production/strategies/1/constraints/0` → `/data/featureStrategies/7/constraints/0`. */
function documentPath(path: string, sources: ReturnType<typeof asFlagsFile>['sources']): string {
  const match = path.match(
    /^\/projects\/0\/flags\/(\d+)(?:\/environments\/[^/]+\/(strategies\/(\d+)|variants)|\/(tags|dependencies))?(.*)$/,
  );
  if (!match) return path.startsWith('/contextFields') || path.startsWith('/tagTypes') ? `/data${path}` : path;
  const source = sources[Number(match[1])];
  if (!source) return path;
  const rest = match[5] ?? '';
  if (match[3] !== undefined) return `/data/featureStrategies/${source.strategies[Number(match[3])]}${rest}`;
  if (match[2] === 'variants' && source.environment !== undefined) return `/data/featureEnvironments/${source.environment}/variants${rest}`;
  return `/data/features/${source.feature}`;
}

/**
 * Imports the document in the caller's unit of work: new context fields and tag types, then every flag made
 * what the document says in that environment (strategies and tags replaced, state and variants set), as
 * Unleash's import does. A protected environment's changes become a change request. Refused whole, naming
 * each entry, when anything in it cannot be imported.
 */
export async function importFeatures(uow: UnitOfWork, document: ImportDocument): Promise<ApplyReport> {
  const assessment = await assess(uow.tx, uow.actor, document);
  if (assessment.missingPermissions.length > 0) {
    const [first] = assessment.missingPermissions;
    throw new PermissionError(`You need the ${first} permission to import these features`, assessment.missingPermissions);
  }
  if (assessment.errors.length > 0) {
    throw new BadDataError(
      `The import cannot be done: ${grouped(assessment.errors)
        .map((e) => `${e.message} ${e.affectedItems.join(', ')}`)
        .join(' ')}`,
      assessment.errors.map((e) => ({ path: e.path, message: `${e.message} ${e.item}` })),
    );
  }
  const { file, sources } = asFlagsFile(document, assessment);
  const report = emptyReport();
  try {
    await applyShared(uow, file, report);
    await applyProject(uow, file, 0, report);
  } catch (error) {
    if (!(error instanceof BadDataError)) throw error;
    const message = error.message.replace(/\(at (\/[^)]*)\)/g, (_, path: string) => `(at ${documentPath(path, sources)})`);
    throw new BadDataError(
      message,
      error.details.map((d) => ({ message: d.message, ...(d.path ? { path: documentPath(d.path, sources) } : {}) })),
    );
  }
  for (const change of report.changes) change.path = documentPath(change.path, sources);
  if (report.changes.length > 0) {
    await recordEvent(uow, {
      type: 'features-imported',
      project: document.project,
      environment: document.environment,
      data: { project: document.project, environment: document.environment, features: [...assessment.importable] },
    });
  }
  return report;
}
