import type { FileFlag, FileFlagEnvironment, FileStrategy, FlagsFile } from '../domain/flags-file/flags-file.js';
import { type AdminApi, ApiAnswerError, CommandError, mapLimited } from './http-api.js';
import { projectsServedToSdks } from './import-check.js';

/** The shapes of Unleash's admin API this reader relies on (its featureSchema, segmentSchema…), as far as it reads them. */
interface UnleashStrategy {
  name: string;
  title?: string | null;
  disabled?: boolean | null;
  sortOrder?: number;
  parameters?: Record<string, string | number>;
  constraints?: FileStrategy['constraints'];
  segments?: number[];
  variants?: FileStrategy['variants'];
}

interface UnleashFeature {
  name: string;
  type?: string;
  description?: string | null;
  impressionData?: boolean;
  stale?: boolean;
  archived?: boolean;
  environments?: Array<{ name: string; enabled: boolean; strategies?: UnleashStrategy[]; variants?: FileFlagEnvironment['variants'] }>;
  dependencies?: Array<{ feature: string; enabled?: boolean; variants?: string[] }>;
  links?: Array<{ url: string; title?: string | null }>;
  tags?: Array<{ type: string; value: string }>;
}

/** Archived flags are read a page at a time: Unleash 7 and 8 answer at most 100 per search. */
const ARCHIVED_PAGE = 100;

/** What the import brings, and what it cannot, said aloud rather than dropped. */
export interface UnleashSnapshot {
  file: FlagsFile;
  notBrought: string[];
  /** Projects brought although Unleash's admin API does not list them (their flags reach SDKs all the same). */
  unlistedProjects: string[];
}

const FETCH_CONCURRENCY = 8;

async function countOf(api: AdminApi, path: string, pick: (body: unknown) => unknown[] | undefined): Promise<number | undefined> {
  try {
    return pick(await api.get(path))?.length;
  } catch (error) {
    // Editions differ in what they expose; an answer we cannot read is not a reason to stop the import.
    if (error instanceof ApiAnswerError) return undefined;
    throw error;
  }
}

type Constraint = NonNullable<FileStrategy['constraints']>[number];

/** Only the fields of Unleash's constraintSchema that mean something to evaluation. */
function toConstraint({ contextName, operator, values, value, inverted, caseInsensitive }: Constraint): Constraint {
  return {
    contextName,
    operator,
    ...(values !== undefined ? { values } : {}),
    ...(value !== undefined ? { value } : {}),
    ...(inverted ? { inverted } : {}),
    ...(caseInsensitive ? { caseInsensitive } : {}),
  };
}

function toStrategy(strategy: UnleashStrategy, segmentNames: Map<number, string>, where: string): FileStrategy {
  return {
    name: strategy.name,
    ...(strategy.title ? { title: strategy.title } : {}),
    ...(strategy.disabled ? { disabled: true } : {}),
    parameters: strategy.parameters ?? {},
    constraints: (strategy.constraints ?? []).map(toConstraint),
    segments: (strategy.segments ?? []).map((id) => {
      const name = segmentNames.get(id);
      if (name === undefined) throw new CommandError(`${where} uses segment ${id}, which Unleash does not list`);
      return name;
    }),
    variants: (strategy.variants ?? []).map(({ name, weight, weightType, stickiness, payload }) => ({
      name,
      weight,
      weightType,
      stickiness,
      ...(payload ? { payload } : {}),
    })),
  };
}

function toFlag(feature: UnleashFeature, segmentNames: Map<number, string>, projectEnvironments: string[]): FileFlag {
  const environments = (feature.environments ?? []).filter((env) => projectEnvironments.includes(env.name));
  return {
    name: feature.name,
    ...(feature.type ? { type: feature.type as FileFlag['type'] } : {}),
    description: feature.description ?? null,
    impressionData: feature.impressionData ?? false,
    stale: feature.stale ?? false,
    // Unleash lists a flag's links only when it has some; a file listing none would take away links added in Vexil.
    ...(feature.links && feature.links.length > 0
      ? { links: feature.links.map(({ url, title }) => ({ url, ...(title ? { title } : {}) })) }
      : {}),
    ...(feature.dependencies && feature.dependencies.length > 0
      ? {
          dependencies: feature.dependencies.map((d) => ({ feature: d.feature, enabled: d.enabled ?? true, variants: d.variants ?? [] })),
        }
      : {}),
    environments: Object.fromEntries(
      environments.map((env) => [
        env.name,
        {
          enabled: env.enabled,
          strategies: [...(env.strategies ?? [])]
            .sort((a, b) => (a.sortOrder ?? 0) - (b.sortOrder ?? 0))
            .map((s) => toStrategy(s, segmentNames, `Flag "${feature.name}" in "${env.name}"`)),
          variants: (env.variants ?? []).map(({ name, weight, weightType, stickiness, payload, overrides }) => ({
            name,
            weight,
            weightType,
            stickiness,
            ...(payload ? { payload } : {}),
            ...(overrides && overrides.length > 0 ? { overrides } : {}),
          })),
        },
      ]),
    ),
  };
}

/**
 * Every archived flag of every project (or of one), a page at a time: Unleash answers at most 100 per search, and
 * Unleash 8 allows 15 searches a minute, so one search over all projects, not one per project.
 */
async function archivedFeatures(api: AdminApi, onlyProject: string | undefined): Promise<Array<UnleashFeature & { project?: string }>> {
  const all: Array<UnleashFeature & { project?: string }> = [];
  for (let offset = 0; ; offset += ARCHIVED_PAGE) {
    const query = new URLSearchParams({
      ...(onlyProject === undefined ? {} : { project: `IS:${onlyProject}` }),
      archived: 'IS:true',
      offset: String(offset),
      limit: String(ARCHIVED_PAGE),
    });
    const page = await api.get<{ features: Array<UnleashFeature & { project?: string }>; total?: number }>(
      `/api/admin/search/features?${query}`,
    );
    all.push(...page.features);
    if (page.features.length < ARCHIVED_PAGE || (page.total !== undefined && all.length >= page.total)) return all;
  }
}

/**
 * Reads a running Unleash through its admin API into a flags file: environments, context fields, tag types,
 * custom strategies, segments, projects with their environments and every flag (archived ones too, without
 * their configuration, which Unleash no longer serves).
 */
export async function readUnleash(api: AdminApi, onlyProject?: string): Promise<UnleashSnapshot> {
  const [environments, contextFields, tagTypes, strategies, segments, projects] = await Promise.all([
    api.get<{ environments: Array<{ name: string; type: string; enabled: boolean; sortOrder: number }> }>('/api/admin/environments'),
    api.get<
      Array<{
        name: string;
        description?: string | null;
        stickiness?: boolean;
        sortOrder?: number;
        legalValues?: Array<{ value: string; description?: string }>;
        project?: string | null;
      }>
      // Projects' own context fields too (Unleash 7.4 and later; earlier ones ignore the question).
    >('/api/admin/context?include=project'),
    api.get<{ tagTypes: Array<{ name: string; description?: string | null; icon?: string | null }> }>('/api/admin/tag-types'),
    api.get<{
      strategies: Array<{
        name: string;
        title?: string | null;
        description?: string;
        editable: boolean;
        parameters: Array<{ name: string; type: string; description?: string; required?: boolean }>;
      }>;
    }>('/api/admin/strategies'),
    api.get<{
      segments: Array<{
        id: number;
        name: string;
        description?: string | null;
        project?: string | null;
        constraints: FileStrategy['constraints'];
      }>;
    }>('/api/admin/segments'),
    api.get<{ projects: Array<{ id: string; name: string; description?: string | null; mode?: string }> }>('/api/admin/projects'),
  ]);
  // Unleash's open-source edition lists only its default project, yet serves SDKs the flags of projects left from
  // a Pro or Enterprise past: those are found in what SDKs get, and brought too.
  const listed = new Set(projects.projects.map((project) => project.id));
  const enabledEnvironments = environments.environments.filter((e) => e.enabled).map((e) => e.name);
  let unlistedProjects: string[] = [];
  let unlistedNotice: string | undefined;
  try {
    unlistedProjects = [...(await projectsServedToSdks(api, enabledEnvironments))].filter((id) => !listed.has(id)).sort();
  } catch (error) {
    // Looking needs a client token made for it; a token that may not make one cannot look.
    if (!(error instanceof ApiAnswerError)) throw error;
    unlistedNotice = `projects Unleash serves SDKs but does not list could not be looked for (${error.message}); import with an admin token to find them`;
  }
  const allArchived = await archivedFeatures(api, onlyProject);
  // A project left with archived flags only is served to no SDK, yet its flags are as much a part of the history.
  for (const feature of allArchived) {
    if (feature.project && !listed.has(feature.project) && !unlistedProjects.includes(feature.project)) {
      unlistedProjects.push(feature.project);
    }
  }
  unlistedProjects.sort();
  const known = [...projects.projects, ...unlistedProjects.map((id) => ({ id, name: id, description: null, mode: undefined }))];
  const chosen = known.filter((p) => onlyProject === undefined || p.id === onlyProject);
  if (onlyProject !== undefined && chosen.length === 0) throw new CommandError(`Unleash has no project "${onlyProject}"`);
  const segmentNames = new Map(segments.segments.map((s) => [s.id, s.name]));

  const fileProjects = await mapLimited(chosen, 2, async (project) => {
    const projectPath = `/api/admin/projects/${encodeURIComponent(project.id)}`;
    const archived = allArchived.filter((feature) => feature.project === project.id);
    const [overview, list] = await Promise.all([
      api.get<{ environments: Array<{ environment: string; defaultStrategy?: UnleashStrategy | null }> }>(`${projectPath}/overview`),
      api.get<{ features: Array<{ name: string }> }>(`${projectPath}/features`),
    ]);
    const projectEnvironments = overview.environments.map((e) => e.environment);
    const defaultStrategies = Object.fromEntries(
      overview.environments.flatMap(({ environment, defaultStrategy }) =>
        defaultStrategy
          ? [
              [
                environment,
                toStrategy(defaultStrategy, segmentNames, `The default strategy of project "${project.id}" in "${environment}"`),
              ],
            ]
          : [],
      ),
    );
    const features = await mapLimited(list.features, FETCH_CONCURRENCY, async (f) => {
      const featurePath = `${projectPath}/features/${encodeURIComponent(f.name)}`;
      const feature = await api.get<UnleashFeature>(featurePath);
      // Unleash 7 and 8 leave a flag's own variants out of the flag; each environment serves them on its own path.
      const environments = await mapLimited(feature.environments ?? [], FETCH_CONCURRENCY, async (environment) =>
        environment.variants !== undefined || !projectEnvironments.includes(environment.name)
          ? environment
          : {
              ...environment,
              variants: (
                await api.get<{ variants: FileFlagEnvironment['variants'] }>(
                  `${featurePath}/environments/${encodeURIComponent(environment.name)}/variants`,
                )
              ).variants,
            },
      );
      return { ...feature, environments };
    });
    const tags = await mapLimited([...features, ...archived], FETCH_CONCURRENCY, (f) =>
      api.get<{ tags: Array<{ type: string; value: string }> }>(`/api/admin/features/${encodeURIComponent(f.name)}/tags`),
    );
    const tagsOf = (index: number) => tags[index]!.tags.map(({ type, value }) => ({ type, value }));
    const flags: FileFlag[] = features.map((feature, index) => ({
      ...toFlag(feature, segmentNames, projectEnvironments),
      tags: tagsOf(index),
    }));
    for (const [index, feature] of archived.entries()) {
      flags.push({
        name: feature.name,
        ...(feature.type ? { type: feature.type as FileFlag['type'] } : {}),
        description: feature.description ?? null,
        impressionData: feature.impressionData ?? false,
        stale: feature.stale ?? false,
        archived: true,
        tags: tagsOf(features.length + index),
      });
    }
    return {
      id: project.id,
      name: project.name,
      description: project.description ?? null,
      ...(project.mode === 'open' || project.mode === 'protected' || project.mode === 'private' ? { mode: project.mode as 'open' } : {}),
      environments: projectEnvironments,
      ...(Object.keys(defaultStrategies).length > 0 ? { defaultStrategies } : {}),
      flags,
    };
  });

  const [users, tokens, addons] = await Promise.all([
    countOf(api, '/api/admin/user-admin', (b) => (b as { users?: unknown[] }).users),
    countOf(api, '/api/admin/api-tokens', (b) => (b as { tokens?: unknown[] }).tokens),
    countOf(api, '/api/admin/addons', (b) => (b as { addons?: unknown[] }).addons),
  ]);
  const notBrought = [
    `users${users === undefined ? '' : ` (${users})`}: passwords cannot be read; create them in Vexil or sign them in with your identity provider`,
    `API tokens${tokens === undefined ? '' : ` (${tokens})`}: secrets cannot be read; create new tokens in Vexil and hand them to your SDKs`,
    `integrations${addons === undefined ? '' : ` (${addons})`}: their credentials cannot be read; configure them again in Vexil`,
    'project access (members and roles), change-request settings and other Enterprise-only data',
    'usage metrics and the event log: Vexil records its own from now on',
    ...(unlistedNotice ? [unlistedNotice] : []),
  ];

  const file: FlagsFile = {
    version: 1,
    environments: environments.environments.map((e) => ({
      name: e.name,
      type: (['development', 'test', 'preproduction', 'production'].includes(e.type) ? e.type : 'development') as 'development',
      enabled: e.enabled,
      sortOrder: e.sortOrder,
    })),
    // A project's own field comes with its project; one of a project left behind stays behind too.
    contextFields: contextFields
      .filter((f) => !f.project || fileProjects.some((p) => p.id === f.project))
      .map((f) => ({
        name: f.name,
        description: f.description ?? null,
        stickiness: f.stickiness ?? false,
        sortOrder: f.sortOrder ?? 10,
        legalValues: (f.legalValues ?? []).map(({ value, description }) => ({ value, ...(description ? { description } : {}) })),
        ...(f.project ? { project: f.project } : {}),
      })),
    tagTypes: tagTypes.tagTypes.map((t) => ({ name: t.name, description: t.description ?? null, icon: t.icon ?? null })),
    strategies: strategies.strategies
      .filter((s) => s.editable)
      .map((s) => ({
        name: s.name,
        title: s.title ?? null,
        description: s.description ?? null,
        parameters: s.parameters.map((p) => ({
          name: p.name,
          type: p.type as 'string',
          description: p.description ?? '',
          required: p.required ?? false,
        })),
      })),
    segments: segments.segments.map((s) => ({
      name: s.name,
      description: s.description ?? null,
      project: s.project ?? null,
      constraints: (s.constraints ?? []).map(toConstraint),
    })),
    projects: fileProjects,
  };
  return { file, notBrought, unlistedProjects: unlistedProjects.filter((id) => chosen.some((p) => p.id === id)) };
}
