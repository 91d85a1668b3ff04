import type { ClientFeature, ClientStrategy } from '../../src/domain/client-features/environment-configuration.js';
import type { FlagConfiguration } from '../../src/domain/evaluation/engine.js';
import { isBuiltInStrategy } from '../../src/domain/evaluation/strategies.js';
import type { Constraint, Variant } from '../../src/domain/features/feature-views.js';
import type { TestApp } from './test-app.js';

const constraintOf = (c: Constraint) => ({
  contextName: c.contextName,
  operator: c.operator,
  ...(c.caseInsensitive !== undefined ? { caseInsensitive: c.caseInsensitive } : {}),
  ...(c.inverted !== undefined ? { inverted: c.inverted } : {}),
  ...(c.values !== undefined ? { values: c.values } : {}),
  ...(c.value !== undefined ? { value: c.value } : {}),
});

/**
 * Weights are stored as given (`fix`): Vexil would share 1000 among `variable` ones, moving every bucket. The one
 * weighted variant of a list takes the whole 1000, which picks it for every context, as its weight of 1 did.
 */
const variantsOf = (variants: Variant[]) => {
  const total = variants.reduce((sum, v) => sum + v.weight, 0);
  return variants.map((v) => variantOf(v, total !== 1000 && v.weight > 0 ? 1000 : v.weight));
};

const variantOf = (v: Variant, weight: number) => ({
  name: v.name,
  weight,
  weightType: 'fix',
  ...(v.stickiness ? { stickiness: v.stickiness } : {}),
  ...(v.payload ? { payload: v.payload } : {}),
  ...(v.overrides ? { overrides: v.overrides } : {}),
});

function strategyOf(strategy: ClientStrategy, segmentName: (id: number) => string) {
  return {
    name: strategy.name,
    parameters: strategy.parameters ?? {},
    constraints: (strategy.constraints ?? []).map(constraintOf),
    segments: (strategy.segments ?? []).map(segmentName),
    variants: variantsOf(strategy.variants ?? []),
  };
}

/**
 * A configuration written into Vexil through its flags file (`POST /api/admin/flags-file/apply`), the same in every
 * given environment of the `default` project. Flags Vexil refuses at write time (with the reason it gives) are
 * left out, and so are the flags that depend on them; what was refused is returned with Vexil's message.
 */
export async function loadThroughFlagsFile(
  ctx: TestApp,
  configuration: FlagConfiguration,
  environments: string[],
): Promise<{ loaded: string[]; refused: Map<string, string> }> {
  const refused = new Map<string, string>();
  const segmentName = (id: number) => configuration.segments.get(id)?.name ?? `segment-${id}`;
  for (const feature of configuration.features) {
    const missing = (feature.strategies ?? []).flatMap((s) => s.segments ?? []).find((id) => !configuration.segments.has(id));
    if (missing !== undefined) refused.set(feature.name, `names segment ${missing}, which does not exist: Vexil cannot store that`);
    if ((feature.dependencies?.length ?? 0) > 1) refused.set(feature.name, 'has more than one parent: Vexil, as Unleash, allows one');
    for (const variants of [feature.variants ?? [], ...(feature.strategies ?? []).map((s) => s.variants ?? [])]) {
      const total = variants.reduce((sum, v) => sum + v.weight, 0);
      if (variants.length > 0 && total !== 1000 && variants.filter((v) => v.weight > 0).length !== 1) {
        refused.set(feature.name, `has variant weights adding up to ${total}: Vexil, as Unleash, stores weights that add up to 1000`);
      }
    }
  }
  const known = new Set(configuration.features.map((feature) => feature.name));
  // Each refused answer blames at least one more flag, so there are at most as many tries as flags.
  for (let attempt = 0; attempt <= configuration.features.length; attempt++) {
    // A flag whose parent was refused goes too (and then its own children).
    for (let dropped = true; dropped; ) {
      dropped = false;
      for (const feature of configuration.features) {
        const parent = feature.dependencies?.find((d) => known.has(d.feature) && refused.has(d.feature));
        if (!refused.has(feature.name) && parent) {
          refused.set(feature.name, `depends on ${parent.feature}, which was refused`);
          dropped = true;
        }
      }
    }
    const kept = configuration.features.filter((feature) => !refused.has(feature.name));
    const file = fileOf(kept, configuration, environments, segmentName);
    const response = await ctx.admin.post('/api/admin/flags-file/apply', file);
    if (response.statusCode === 200) return { loaded: kept.map((feature) => feature.name), refused };
    const body = response.json() as { message: string; details?: Array<{ path?: string; message: string }> };
    const blamed = new Set<string>();
    const usedSegments = [...configuration.segments.values()].filter((segment) =>
      kept.some((f) => (f.strategies ?? []).some((s) => s.segments?.includes(segment.id))),
    );
    for (const detail of body.details ?? [{ message: body.message }]) {
      const where = detail.path ?? detail.message;
      const index = /\/projects\/0\/flags\/(\d+)/.exec(where)?.[1];
      const segment = /\/segments\/(\d+)/.exec(where)?.[1];
      const names =
        index !== undefined
          ? [kept[Number(index)]!.name]
          : segment !== undefined
            ? kept
                .filter((f) => (f.strategies ?? []).some((s) => s.segments?.includes(usedSegments[Number(segment)]!.id)))
                .map((f) => f.name)
            : [];
      for (const name of names) {
        blamed.add(name);
        refused.set(name, detail.message);
      }
    }
    if (blamed.size === 0) throw new Error(`The flags file was refused and no flag was blamed: ${response.body}`);
  }
  throw new Error('The flags file kept being refused');
}

function fileOf(features: ClientFeature[], configuration: FlagConfiguration, environments: string[], segmentName: (id: number) => string) {
  const custom = new Set(features.flatMap((f) => (f.strategies ?? []).map((s) => s.name)).filter((name) => !isBuiltInStrategy(name)));
  const used = new Set(features.flatMap((f) => (f.strategies ?? []).flatMap((s) => s.segments ?? [])));
  return {
    version: 1,
    environments: environments.map((name) => ({ name, type: 'development' })),
    strategies: [...custom].map((name) => ({ name, parameters: [] })),
    segments: [...configuration.segments.values()]
      .filter((segment) => used.has(segment.id))
      .map((segment) => ({ name: segmentName(segment.id), constraints: (segment.constraints ?? []).map(constraintOf) })),
    projects: [
      {
        id: 'default',
        environments,
        flags: features.map((feature) => ({
          name: feature.name,
          impressionData: feature.impressionData ?? false,
          ...(feature.dependencies?.length
            ? {
                dependencies: feature.dependencies.map((d) => ({
                  feature: d.feature,
                  ...(d.enabled !== undefined ? { enabled: d.enabled } : {}),
                  ...(d.variants ? { variants: d.variants } : {}),
                })),
              }
            : {}),
          environments: Object.fromEntries(
            environments.map((environment) => [
              environment,
              {
                enabled: feature.enabled,
                strategies: (feature.strategies ?? []).map((strategy) => strategyOf(strategy, segmentName)),
                variants: variantsOf(feature.variants ?? []),
              },
            ]),
          ),
        })),
      },
    ],
  };
}
