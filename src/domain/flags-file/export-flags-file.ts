import type { Db } from '../../db/database.js';
import type { Actor } from '../../db/unit-of-work.js';
import { assertProjectVisible, projectsHiddenFrom } from '../access/project-visibility.js';
import { listContextFields } from '../context-fields/context-fields.js';
import { listEnvironments } from '../environments/environments.js';
import { loadFeatureViews, type StrategyView } from '../features/feature-views.js';
import { projectDefaultStrategies } from '../features/project-environments.js';
import { listProjects } from '../projects/projects.js';
import { listSegments } from '../segments/segments.js';
import { listStrategyDefinitions } from '../strategies/strategy-definitions.js';
import { listTagTypes } from '../tags/tags.js';
import type { FileFlag, FileStrategy, FlagsFile } from './flags-file.js';

export interface ExportScope {
  /** Only this project's flags (and the segments, environments it uses); every project when absent. */
  project?: string;
  /** Only these flags. */
  features?: string[];
  /** Archived flags too. */
  includeArchived?: boolean;
}

function fileStrategy(strategy: StrategyView, segmentNames: Map<number, string>): FileStrategy {
  return {
    name: strategy.name,
    ...(strategy.title ? { title: strategy.title } : {}),
    ...(strategy.disabled ? { disabled: true } : {}),
    parameters: strategy.parameters,
    constraints: strategy.constraints,
    ...(strategy.segments.length > 0 ? { segments: strategy.segments.map((id) => segmentNames.get(id) ?? String(id)) } : {}),
    ...(strategy.variants.length > 0 ? { variants: strategy.variants } : {}),
  };
}

/** The current configuration as a flags file: what `apply` of it on another instance reproduces. */
export async function exportFlagsFile(db: Db, actor: Actor, scope: ExportScope = {}): Promise<FlagsFile> {
  // A project the reader may not see is a 404, as its paths are; the whole file leaves such projects out.
  if (scope.project !== undefined) await assertProjectVisible(db, actor, scope.project);
  const [environments, contextFields, tagTypes, definitions, segments, projects, hidden] = await Promise.all([
    listEnvironments(db),
    listContextFields(db, { includeProjects: true, visibleTo: actor }),
    listTagTypes(db),
    listStrategyDefinitions(db),
    listSegments(db),
    listProjects(db),
    projectsHiddenFrom(db, actor),
  ]);
  const chosenProjects = projects.filter((p) => !hidden.has(p.id) && (scope.project === undefined || p.id === scope.project));
  let query = db
    .selectFrom('features')
    .selectAll()
    .where(
      'project',
      'in',
      chosenProjects.map((p) => p.id),
    )
    .orderBy('created_at')
    .orderBy('name');
  if (!scope.includeArchived) query = query.where('archived_at', 'is', null);
  if (scope.features) query = query.where('name', 'in', scope.features.length > 0 ? scope.features : ['']);
  const rows = chosenProjects.length === 0 ? [] : await query.execute();
  const views = await loadFeatureViews(db, rows, null);
  const segmentNames = new Map(segments.map((s) => [s.id, s.name]));
  const usedSegments = new Set(views.flatMap((v) => v.environments.flatMap((e) => e.strategies.flatMap((s) => s.segments))));
  const whole = scope.project === undefined && scope.features === undefined;
  const usedEnvironments = new Set(chosenProjects.flatMap((p) => p.environments));
  const defaultStrategies = new Map(
    await Promise.all(chosenProjects.map(async (p) => [p.id, await projectDefaultStrategies(db, p.id)] as const)),
  );

  const flagsOf = (project: string): FileFlag[] =>
    views
      .filter((view) => view.project === project)
      .map((view) => ({
        name: view.name,
        type: view.type as FileFlag['type'],
        ...(view.description ? { description: view.description } : {}),
        ...(view.impressionData ? { impressionData: true } : {}),
        ...(view.stale ? { stale: true } : {}),
        ...(view.archived ? { archived: true } : {}),
        ...(view.tags.length > 0 ? { tags: view.tags } : {}),
        ...(view.links.length > 0 ? { links: view.links.map(({ url, title }) => ({ url, ...(title ? { title } : {}) })) } : {}),
        ...(view.dependencies.length > 0 ? { dependencies: view.dependencies } : {}),
        environments: Object.fromEntries(
          view.environments.map((env) => [
            env.name,
            {
              enabled: env.enabled,
              strategies: env.strategies.map((s) => fileStrategy(s, segmentNames)),
              ...(env.variants.length > 0 ? { variants: env.variants } : {}),
            },
          ]),
        ),
      }));

  return {
    version: 1,
    environments: environments
      .filter((e) => whole || usedEnvironments.has(e.name))
      .map((e) => ({ name: e.name, type: e.type as 'development', enabled: e.enabled, sortOrder: e.sortOrder })),
    contextFields: contextFields
      .filter((f) => f.project === undefined || chosenProjects.some((p) => p.id === f.project))
      .map((f) => ({
        name: f.name,
        ...(f.project ? { project: f.project } : {}),
        ...(f.description ? { description: f.description } : {}),
        stickiness: f.stickiness,
        sortOrder: f.sortOrder,
        legalValues: f.legalValues,
      })),
    tagTypes: tagTypes.map((t) => ({
      name: t.name,
      ...(t.description ? { description: t.description } : {}),
      ...(t.icon ? { icon: t.icon } : {}),
    })),
    strategies: definitions
      .filter((d) => d.editable)
      .map((d) => ({
        name: d.name,
        ...(d.title ? { title: d.title } : {}),
        description: d.description,
        parameters: d.parameters,
      })),
    segments: segments
      .filter((s) => (whole && (scope.project === undefined || s.project === null)) || usedSegments.has(s.id))
      .map((s) => ({
        name: s.name,
        ...(s.description ? { description: s.description } : {}),
        ...(s.project ? { project: s.project } : {}),
        constraints: s.constraints,
      })),
    projects: chosenProjects.map((p) => {
      const defaults = Object.fromEntries(
        [...(defaultStrategies.get(p.id) ?? [])].map(([environment, strategy]) => {
          const { groupId: _groupId, ...parameters } = strategy.parameters;
          return [
            environment,
            fileStrategy(
              { ...strategy, id: '', featureName: '', sortOrder: 0, disabled: false, title: strategy.title || null, parameters },
              segmentNames,
            ),
          ];
        }),
      );
      return {
        id: p.id,
        name: p.name,
        ...(p.description ? { description: p.description } : {}),
        mode: p.mode as 'open',
        environments: p.environments,
        ...(Object.keys(defaults).length > 0 ? { defaultStrategies: defaults } : {}),
        flags: flagsOf(p.id),
      };
    }),
  };
}
