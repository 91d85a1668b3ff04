import type { ClientFeature, ClientSegment, ClientStrategy } from '../client-features/environment-configuration.js';
import { normalizeConstraints } from '../features/constraints.js';
import { normalizeStrategy } from '../features/strategies.js';
import { normalizeEnvironmentVariants } from '../features/variants.js';
import { pointer, type FlagsFile } from './flags-file.js';

/** What SDKs of one environment read of a flags file. */
export interface FileClientConfiguration {
  features: ClientFeature[];
  segments: Map<number, ClientSegment>;
  /** `type:value` of each flag's tags, for the `tag` query filter. */
  tags: Map<string, Set<string>>;
}

/**
 * What a server that applied the flags file would serve SDKs, environment by environment, without a server: Vexil
 * Edge's offline mode. Strategies and variants are completed as the server completes them (`normalizeStrategy`,
 * `normalizeEnvironmentVariants`), and a mistake in them is refused as applying the file would refuse it, with its
 * place in the file. Segments are numbered in the file's order; archived flags are left out; a flag whose project
 * lists environments without this one is served off, with no strategies, as the server serves it.
 */
export function clientConfigurationsOf(file: FlagsFile): Map<string, FileClientConfiguration> {
  const segmentIds = new Map((file.segments ?? []).map((segment, index) => [segment.name, index + 1]));
  const segmentsById = new Map(
    (file.segments ?? []).map((segment, index) => [
      index + 1,
      { id: index + 1, name: segment.name, constraints: normalizeConstraints(segment.constraints) },
    ]),
  );
  const environments = new Set<string>((file.environments ?? []).map((environment) => environment.name));
  for (const project of file.projects ?? []) {
    for (const environment of project.environments ?? []) environments.add(environment);
    for (const flag of project.flags ?? []) for (const environment of Object.keys(flag.environments ?? {})) environments.add(environment);
  }
  const configurations = new Map<string, FileClientConfiguration>();
  for (const environment of environments) {
    const features: ClientFeature[] = [];
    const tags = new Map<string, Set<string>>();
    const used = new Set<number>();
    for (const [projectIndex, project] of (file.projects ?? []).entries()) {
      const hasEnvironment = project.environments === undefined || project.environments.includes(environment);
      for (const [flagIndex, flag] of (project.flags ?? []).entries()) {
        if (flag.archived) continue;
        const place = ['projects', projectIndex, 'flags', flagIndex, 'environments', environment] as const;
        const settings = hasEnvironment ? flag.environments?.[environment] : undefined;
        const strategies: ClientStrategy[] = (settings?.strategies ?? [])
          .map((strategy, index) => ({ strategy, index }))
          .filter(({ strategy }) => !strategy.disabled)
          .map(({ strategy, index }, sortOrder) => {
            const path = pointer(...place, 'strategies', index);
            const segments = (strategy.segments ?? []).map((name, segmentIndex) => {
              const id = segmentIds.get(name);
              if (id === undefined) throw new Error(`${path}/segments/${segmentIndex}: the file has no segment "${name}"`);
              used.add(id);
              return id;
            });
            const normalized = normalizeStrategy({ ...strategy, segments }, flag.name, undefined, path);
            return {
              id: `${environment}:${flag.name}:${index}`,
              name: normalized.name,
              ...(normalized.title ? { title: normalized.title } : {}),
              sortOrder,
              constraints: normalized.constraints,
              parameters: normalized.parameters,
              ...(normalized.segments.length > 0 ? { segments: normalized.segments } : {}),
              variants: normalized.variants,
            };
          });
        const feature: ClientFeature = {
          name: flag.name,
          type: flag.type ?? 'release',
          description: flag.description ?? null,
          project: project.id,
          enabled: hasEnvironment && (settings?.enabled ?? false),
          stale: flag.stale ?? false,
          impressionData: flag.impressionData ?? false,
          strategies,
          variants: normalizeEnvironmentVariants(settings?.variants ?? [], pointer(...place, 'variants')),
        };
        if (flag.dependencies && flag.dependencies.length > 0) {
          feature.dependencies = flag.dependencies.map(({ feature: parent, enabled, variants }) => ({
            feature: parent,
            enabled: enabled ?? true,
            ...(variants && variants.length > 0 ? { variants } : {}),
          }));
        }
        features.push(feature);
        if (flag.tags && flag.tags.length > 0) tags.set(flag.name, new Set(flag.tags.map((tag) => `${tag.type}:${tag.value}`)));
      }
    }
    const segments = new Map([...used].sort((a, b) => a - b).map((id) => [id, segmentsById.get(id)!]));
    configurations.set(environment, { features, segments, tags });
  }
  return configurations;
}
