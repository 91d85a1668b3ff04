import { type AdminApi, adminApi } from './http-api.js';

/**
 * The import's last step: what SDKs get from the source and from Vexil, compared flag by flag, per environment
 * and per project scope, with client tokens made for the comparison in both and deleted after it. What an SDK
 * reads (state, strategies with their constraints, segments, variants, dependencies) must be the same; ids and
 * bookkeeping are not compared.
 */

/** The client specification version the comparison asks as: one that reads segments. */
const CLIENT_SPEC = '5.2.0';

interface ClientFeature {
  name: string;
  project?: string;
  enabled: boolean;
  impressionData?: boolean;
  strategies?: Array<{
    name: string;
    parameters?: Record<string, unknown>;
    constraints?: Array<Record<string, unknown>>;
    segments?: number[];
    variants?: Array<Record<string, unknown>>;
    disabled?: boolean | null;
  }>;
  variants?: Array<Record<string, unknown>> | null;
  dependencies?: Array<{ feature: string; enabled?: boolean; variants?: string[] }>;
}

interface ClientAnswer {
  features: ClientFeature[];
  segments?: Array<{ id: number; constraints: Array<Record<string, unknown>> }>;
}

/** A client token made for the check in one server: what SDKs get with it there, and `remove` to delete it again. */
interface CheckToken {
  features(): Promise<ClientAnswer>;
  remove(): Promise<void>;
}

async function makeToken(what: string, api: AdminApi, environment: string, projects: string[]): Promise<CheckToken> {
  const created = await api.post<{ secret: string }>('/api/admin/api-tokens', {
    tokenName: 'vexil-import-check',
    type: 'client',
    environment,
    projects,
  });
  // As a current SDK asks: segments apart, not inlined into the strategies' constraints.
  const sdk = adminApi(what, api.baseUrl, created.secret, { headers: { 'unleash-client-spec': CLIENT_SPEC } });
  return {
    features: () => sdk.get<ClientAnswer>('/api/client/features'),
    remove: () => api.delete(`/api/admin/api-tokens/${encodeURIComponent(created.secret)}`),
  };
}

/**
 * The projects whose flags the source serves to SDKs, in any of the environments: an Unleash that was once a Pro
 * or Enterprise edition keeps serving the flags of projects its open-source admin API no longer lists.
 */
export async function projectsServedToSdks(source: AdminApi, environments: string[]): Promise<Set<string>> {
  const served = new Set<string>();
  for (const environment of environments) {
    const token = await makeToken('Unleash', source, environment, ['*']);
    try {
      const answer = await token.features();
      for (const feature of answer.features) if (feature.project) served.add(feature.project);
    } finally {
      await token.remove().catch(() => undefined);
    }
  }
  return served;
}

/** Only what decides an SDK's answer, in a stable form: constraints' fields, a segment by its constraints. */
function evaluated(feature: ClientFeature, segments: Map<number, string>): unknown {
  const constraint = ({ contextName, operator, values, value, inverted, caseInsensitive }: Record<string, unknown>) => ({
    contextName,
    operator,
    ...(Array.isArray(values) && values.length > 0 ? { values } : {}),
    ...(value !== undefined && value !== null && value !== '' ? { value } : {}),
    inverted: inverted === true,
    caseInsensitive: caseInsensitive === true,
  });
  const variant = ({ name, weight, weightType, stickiness, payload, overrides }: Record<string, unknown>) => ({
    name,
    weight,
    weightType: weightType ?? 'variable',
    stickiness: stickiness ?? 'default',
    payload: payload ?? null,
    overrides: Array.isArray(overrides) ? overrides : [],
  });
  return {
    enabled: feature.enabled,
    impressionData: feature.impressionData ?? false,
    strategies: (feature.strategies ?? [])
      .filter((strategy) => strategy.disabled !== true)
      .map((strategy) => ({
        name: strategy.name,
        parameters: Object.fromEntries(Object.entries(strategy.parameters ?? {}).map(([key, value]) => [key, String(value)])),
        constraints: (strategy.constraints ?? []).map(constraint),
        segments: (strategy.segments ?? []).map((id) => segments.get(id) ?? `unknown segment ${id}`).sort(),
        variants: (strategy.variants ?? []).map(variant),
      })),
    variants: (feature.variants ?? []).map(variant),
    dependencies: (feature.dependencies ?? [])
      .map((dependency) => ({ feature: dependency.feature, enabled: dependency.enabled ?? true, variants: dependency.variants ?? [] }))
      .sort((a, b) => a.feature.localeCompare(b.feature)),
  };
}

function byName(answer: ClientAnswer): Map<string, { shape: string }> {
  const segments = new Map(
    (answer.segments ?? []).map((segment) => [
      segment.id,
      JSON.stringify(segment.constraints.map(({ contextName, operator, values, value }) => ({ contextName, operator, values, value }))),
    ]),
  );
  return new Map(answer.features.map((feature) => [feature.name, { shape: JSON.stringify(evaluated(feature, segments)) }]));
}

/** The first place two shapes part, as a short text for the report. */
function firstDifference(a: unknown, b: unknown, path = ''): string {
  if (JSON.stringify(a) === JSON.stringify(b)) return '';
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
      const found = firstDifference((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key], `${path}/${key}`);
      if (found) return found;
    }
  }
  return `${path || '/'}: ${JSON.stringify(a)} in the source, ${JSON.stringify(b)} in Vexil`;
}

export interface ImportCheck {
  /** One line per difference, naming the environment, the scope and the flag. */
  differences: string[];
  /** What was compared: environments × scopes, and flags. */
  compared: { scopes: number; flags: number };
  /** Projects whose flags the source serves to SDKs but does not list (left from another edition). */
  unlistedProjects: string[];
}

/**
 * Compares, per environment, what a client token of each imported project (and of every project) gets from the
 * source and from Vexil. The tokens made for it are deleted in both, whatever happens.
 */
export async function checkImport(source: AdminApi, target: AdminApi, environments: string[], projects: string[]): Promise<ImportCheck> {
  const differences: string[] = [];
  let flags = 0;
  let scopes = 0;
  const unlisted = new Set<string>();
  const scopesToCompare = [['*'], ...projects.map((project) => [project])];
  for (const environment of environments) {
    for (const scope of scopesToCompare) {
      const [sourceToken, targetToken] = await Promise.all([
        makeToken('Unleash', source, environment, scope),
        makeToken('Vexil', target, environment, scope),
      ]);
      try {
        const [fromSource, fromVexil] = await Promise.all([sourceToken.features(), targetToken.features()]);
        scopes += 1;
        const where = `${environment}, ${scope[0] === '*' ? 'all projects' : `project ${scope[0]}`}`;
        if (scope[0] === '*') {
          for (const feature of fromSource.features)
            if (feature.project && !projects.includes(feature.project)) unlisted.add(feature.project);
          // Vexil may hold projects of its own: the all-projects scope compares only what came from the source.
          fromVexil.features = fromVexil.features.filter((feature) => !feature.project || projects.includes(feature.project));
          fromSource.features = fromSource.features.filter((feature) => !feature.project || projects.includes(feature.project));
        }
        const expected = byName(fromSource);
        const actual = byName(fromVexil);
        for (const [name, { shape }] of expected) {
          flags += 1;
          const got = actual.get(name);
          if (!got) differences.push(`${where}: flag "${name}" is served by the source, not by Vexil`);
          else if (got.shape !== shape) {
            differences.push(`${where}: flag "${name}" differs at ${firstDifference(JSON.parse(shape), JSON.parse(got.shape))}`);
          }
        }
        for (const name of actual.keys()) {
          if (!expected.has(name)) differences.push(`${where}: flag "${name}" is served by Vexil, not by the source`);
        }
      } finally {
        await Promise.allSettled([sourceToken.remove(), targetToken.remove()]);
      }
    }
  }
  return { differences, compared: { scopes, flags }, unlistedProjects: [...unlisted].sort() };
}
