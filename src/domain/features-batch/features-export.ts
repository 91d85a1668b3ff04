import { assertProjectVisible, inProjectVisibleTo } from '../access/project-visibility.js';
import type { Db } from '../../db/database.js';
import type { Actor, UnitOfWork } from '../../db/unit-of-work.js';
import { BadDataError, NotFoundError } from '../../shared/errors.js';
import { MAX_FILE_FLAGS } from '../flags-file/apply-flags-file.js';
import { listContextFields } from '../context-fields/context-fields.js';
import { listEnvironments } from '../environments/environments.js';
import { type Constraint, type StrategyVariant, type Variant, loadFeatureViews } from '../features/feature-views.js';
import { recordEvent } from '../events/record-event.js';
import { listSegments } from '../segments/segments.js';
import { listTagTypes } from '../tags/tags.js';

/**
 * Unleash's export format (`exportResultSchema`): the flags of one environment with what they refer to, so that
 * a file written here imports into Unleash and a file Unleash wrote imports here. Segments travel by id and
 * name and are matched by name on import.
 */
export interface ExportResult {
  features: ExportedFeature[];
  featureStrategies: ExportedStrategy[];
  featureEnvironments: ExportedFeatureEnvironment[];
  contextFields: ExportedContextField[];
  featureTags: ExportedFeatureTag[];
  segments: Array<{ id: number; name: string }>;
  tagTypes: Array<{ name: string; description?: string | null; icon?: string | null }>;
  dependencies: Array<{ feature: string; dependencies: Array<{ feature: string; enabled?: boolean; variants?: string[] }> }>;
  links?: Array<{ feature: string; links: Array<{ url: string; title?: string | null }> }>;
}

export interface ExportedFeature {
  name: string;
  type?: string;
  description?: string | null;
  project?: string;
  stale?: boolean;
  impressionData?: boolean;
  archived?: boolean;
}

export interface ExportedStrategy {
  name: string;
  id?: string;
  featureName?: string;
  title?: string | null;
  disabled?: boolean | null;
  sortOrder?: number;
  parameters?: Record<string, string | number>;
  constraints?: Constraint[];
  variants?: StrategyVariant[];
  segments?: number[];
}

export interface ExportedFeatureEnvironment {
  name: string;
  featureName?: string;
  environment?: string;
  enabled: boolean;
  variants?: Variant[];
}

export interface ExportedContextField {
  name: string;
  description?: string | null;
  stickiness?: boolean;
  sortOrder?: number;
  legalValues?: Array<{ value: string; description?: string }>;
}

export interface ExportedFeatureTag {
  featureName: string;
  tagType?: string;
  tagValue: string;
}

/** Which flags to export, as Unleash's `exportQuerySchema` selects them: by name, else by tag, else by project, else all. */
export interface ExportQuery {
  environment: string;
  features?: string[];
  tag?: string;
  project?: string;
}

async function selectedFeatureRows(db: Db, actor: Actor, query: ExportQuery) {
  let select = db
    .selectFrom('features')
    .selectAll()
    .where('archived_at', 'is', null)
    .where(inProjectVisibleTo(actor, 'project'))
    .orderBy('created_at')
    .orderBy('name');
  if (query.features && query.features.length > 0) {
    select = select.where('name', 'in', query.features);
  } else if (query.tag !== undefined) {
    // Unleash selects by the tag's value; `type:value` narrows it to one tag type.
    const [type, value] = query.tag.includes(':')
      ? [query.tag.slice(0, query.tag.indexOf(':')), query.tag.slice(query.tag.indexOf(':') + 1)]
      : [undefined, query.tag];
    let tagged = db.selectFrom('feature_tags').select('feature_name').where('tag_value', '=', value);
    if (type !== undefined) tagged = tagged.where('tag_type', '=', type);
    select = select.where('name', 'in', tagged);
  } else if (query.project !== undefined) {
    select = select.where('project', '=', query.project);
  }
  // One more than an import takes, to tell an export that is too large from one that is exactly full.
  return select.limit(MAX_FILE_FLAGS + 1).execute();
}

/** Context fields a strategy, segment-free constraint or variant of the export reads, as Unleash lists them. */
function usedContextNames(strategies: ExportedStrategy[], environments: ExportedFeatureEnvironment[]): Set<string> {
  const names = new Set<string>();
  for (const strategy of strategies) {
    const stickiness = strategy.parameters?.stickiness;
    if (typeof stickiness === 'string') names.add(stickiness);
    for (const constraint of strategy.constraints ?? []) names.add(constraint.contextName);
    for (const variant of strategy.variants ?? []) if (variant.stickiness) names.add(variant.stickiness);
  }
  for (const environment of environments) {
    for (const variant of environment.variants ?? []) {
      if (variant.stickiness) names.add(variant.stickiness);
      for (const override of variant.overrides ?? []) names.add(override.contextName);
    }
  }
  return names;
}

/** The flags `query` selects that `actor` may see (a project it may not see is a 404, as its paths are). */
export async function exportFeatures(db: Db, actor: Actor, query: ExportQuery): Promise<ExportResult> {
  if (query.project !== undefined) await assertProjectVisible(db, actor, query.project);
  const environments = await listEnvironments(db);
  if (!environments.some((e) => e.name === query.environment)) throw new NotFoundError(`Could not find environment "${query.environment}"`);
  const rows = await selectedFeatureRows(db, actor, query);
  if (rows.length > MAX_FILE_FLAGS) {
    throw new BadDataError(
      `An export holds at most ${MAX_FILE_FLAGS} flags, as many as an import takes; choose a project, a tag or flag names`,
      [{ path: '/body', message: `more than ${MAX_FILE_FLAGS} flags selected` }],
    );
  }
  const views = await loadFeatureViews(db, rows, null);
  const [contextFields, segments, tagTypes] = await Promise.all([listContextFields(db), listSegments(db), listTagTypes(db)]);

  const featureEnvironments: ExportedFeatureEnvironment[] = [];
  const featureStrategies: ExportedStrategy[] = [];
  for (const view of views) {
    const environment = view.environments.find((e) => e.name === query.environment);
    if (!environment) continue;
    featureEnvironments.push({
      name: view.name,
      featureName: view.name,
      environment: query.environment,
      enabled: environment.enabled,
      variants: environment.variants,
    });
    for (const strategy of environment.strategies) {
      featureStrategies.push({
        name: strategy.name,
        id: strategy.id,
        featureName: view.name,
        title: strategy.title,
        parameters: strategy.parameters,
        constraints: strategy.constraints,
        variants: strategy.variants,
        disabled: strategy.disabled,
        sortOrder: strategy.sortOrder,
        segments: strategy.segments,
      });
    }
  }
  const featureTags = views.flatMap((view) => view.tags.map((tag) => ({ featureName: view.name, tagType: tag.type, tagValue: tag.value })));
  const usedSegments = new Set(featureStrategies.flatMap((s) => s.segments ?? []));
  const usedTagTypes = new Set(featureTags.map((t) => t.tagType));
  const usedContext = usedContextNames(featureStrategies, featureEnvironments);

  return {
    features: views.map((view) => ({
      name: view.name,
      type: view.type,
      description: view.description,
      project: view.project,
      stale: view.stale,
      impressionData: view.impressionData,
      archived: false,
    })),
    featureStrategies,
    featureEnvironments,
    contextFields: contextFields
      .filter((field) => usedContext.has(field.name))
      .map(({ name, description, stickiness, sortOrder, legalValues }) => ({ name, description, stickiness, sortOrder, legalValues })),
    featureTags,
    segments: segments.filter((s) => usedSegments.has(s.id)).map(({ id, name }) => ({ id, name })),
    tagTypes: tagTypes.filter((t) => usedTagTypes.has(t.name)),
    dependencies: views
      .filter((view) => view.dependencies.length > 0)
      .map((view) => ({ feature: view.name, dependencies: view.dependencies })),
  };
}

/** An export is recorded, as Unleash records it: who took which flags out, not the whole file. */
export async function recordExport(uow: UnitOfWork, query: ExportQuery, result: ExportResult): Promise<void> {
  await recordEvent(uow, {
    type: 'features-exported',
    environment: query.environment,
    project: query.project ?? null,
    data: { environment: query.environment, features: result.features.map((f) => f.name) },
  });
}
