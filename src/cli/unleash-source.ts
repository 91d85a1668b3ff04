import type { FileFlag, FileFlagEnvironment, FileStrategy, FlagsFile } from '../domain/flags-file/flags-file.js';
import { type AdminApi, ApiAnswerError, CommandError, mapLimited } from './http-api.js';

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
}

/** What the import brings, and what it cannot, said aloud rather than dropped. */
export interface UnleashSnapshot {
  file: FlagsFile;
  notBrought: string[];
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
      }>
    >('/api/admin/context'),
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
  const chosen = projects.projects.filter((p) => onlyProject === undefined || p.id === onlyProject);
  if (onlyProject !== undefined && chosen.length === 0) throw new CommandError(`Unleash has no project "${onlyProject}"`);
  const segmentNames = new Map(segments.segments.map((s) => [s.id, s.name]));

  const fileProjects = await mapLimited(chosen, 2, async (project) => {
    const [overview, list, archived] = await Promise.all([
      api.get<{ environments: Array<{ environment: string }> }>(`/api/admin/projects/${encodeURIComponent(project.id)}/overview`),
      api.get<{ features: Array<{ name: string }> }>(`/api/admin/projects/${encodeURIComponent(project.id)}/features`),
      api.get<{ features: UnleashFeature[] }>(
        `/api/admin/search/features?project=${encodeURIComponent(`IS:${project.id}`)}&archived=IS:true&limit=100000`,
      ),
    ]);
    const projectEnvironments = overview.environments.map((e) => e.environment);
    const features = await mapLimited(list.features, FETCH_CONCURRENCY, (f) =>
      api.get<UnleashFeature>(`/api/admin/projects/${encodeURIComponent(project.id)}/features/${encodeURIComponent(f.name)}`),
    );
    const tags = await mapLimited(features, FETCH_CONCURRENCY, (f) =>
      api.get<{ tags: Array<{ type: string; value: string }> }>(`/api/admin/features/${encodeURIComponent(f.name)}/tags`),
    );
    const flags: FileFlag[] = features.map((feature, index) => ({
      ...toFlag(feature, segmentNames, projectEnvironments),
      tags: tags[index]!.tags.map(({ type, value }) => ({ type, value })),
    }));
    for (const feature of archived.features) {
      flags.push({
        name: feature.name,
        ...(feature.type ? { type: feature.type as FileFlag['type'] } : {}),
        description: feature.description ?? null,
        impressionData: feature.impressionData ?? false,
        stale: feature.stale ?? false,
        archived: true,
      });
    }
    return {
      id: project.id,
      name: project.name,
      description: project.description ?? null,
      ...(project.mode === 'open' || project.mode === 'protected' || project.mode === 'private' ? { mode: project.mode as 'open' } : {}),
      environments: projectEnvironments,
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
  ];

  const file: FlagsFile = {
    version: 1,
    environments: environments.environments.map((e) => ({
      name: e.name,
      type: (['development', 'test', 'preproduction', 'production'].includes(e.type) ? e.type : 'development') as 'development',
      enabled: e.enabled,
      sortOrder: e.sortOrder,
    })),
    contextFields: contextFields.map((f) => ({
      name: f.name,
      description: f.description ?? null,
      stickiness: f.stickiness ?? false,
      sortOrder: f.sortOrder ?? 10,
      legalValues: (f.legalValues ?? []).map(({ value, description }) => ({ value, ...(description ? { description } : {}) })),
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
  return { file, notBrought };
}
