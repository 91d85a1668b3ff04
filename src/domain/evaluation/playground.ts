import type { ClientFeature } from '../client-features/environment-configuration.js';
import type { Constraint } from '../features/feature-views.js';
import type { EvaluationContext } from './context.js';
import { BadDataError, NotFoundError } from '../../shared/errors.js';
import type { Db } from '../../db/database.js';
import type { Actor } from '../../db/unit-of-work.js';
import type { ClientFeatureStore } from '../client-features/client-feature-store.js';
import { projectsHiddenFrom } from '../access/project-visibility.js';
import { type CompiledStrategy, engineFor, type FlagConfiguration } from './engine.js';
import { recordSampledEvaluation } from './ofrep.js';

/** Unleash's playgroundFeatureSchema: the outcome of one flag, and why, strategy by strategy. */
export interface PlaygroundFeature {
  name: string;
  projectId: string;
  isEnabled: boolean;
  isEnabledInCurrentEnvironment: boolean;
  hasUnsatisfiedDependency: boolean;
  variant: { name: string; enabled: boolean; payload?: { type: string; value: string } };
  variants: ClientFeature['variants'];
  strategies: { result: boolean | 'unknown'; data: PlaygroundStrategy[] };
}

export interface PlaygroundStrategy {
  id: string;
  name: string;
  title?: string;
  disabled: false;
  parameters: Record<string, string>;
  result: { enabled: boolean | 'unknown'; evaluationStatus: 'complete' | 'incomplete' };
  constraints: Array<Constraint & { result: boolean }>;
  segments: Array<{ id: number; name: string; result: boolean; constraints: Array<Constraint & { result: boolean }> }>;
}

/** One strategy as evaluated, part by part, with the same compiled checks the engine's answer used. */
function explain(strategy: CompiledStrategy, context: EvaluationContext): PlaygroundStrategy {
  const { source } = strategy;
  const known = strategy.rule !== undefined;
  // A strategy the SDKs do not know is skipped whole: none of its parts counts as met.
  const constraints = (source.constraints ?? []).map((constraint, index) => ({
    ...constraint,
    result: known && strategy.constraints[index]!(context),
  }));
  const segments = strategy.segments.map(({ id, segment, constraints: checks }) => {
    const checked = (segment?.constraints ?? []).map((constraint, index) => ({ ...constraint, result: known && checks[index]!(context) }));
    return { id, name: segment?.name ?? `#${id}`, result: segment !== undefined && checked.every((c) => c.result), constraints: checked };
  });
  const enabled =
    strategy.rule === undefined
      ? ('unknown' as const)
      : constraints.every((c) => c.result) && segments.every((s) => s.result) && strategy.rule(context);
  return {
    id: source.id,
    name: source.name,
    ...(source.title ? { title: source.title } : {}),
    disabled: false,
    parameters: source.parameters,
    result: { enabled, evaluationStatus: known ? 'complete' : 'incomplete' },
    constraints,
    segments,
  };
}

/**
 * Evaluates every flag for the context and explains each strategy: its constraints, its segments and its own
 * rule. The outcome is the engine's answer (dependencies and variants included); the explanation runs the same
 * compiled checks, so the two cannot disagree. A strategy the SDKs do not know is `unknown`.
 */
export function playground(features: ClientFeature[], configuration: FlagConfiguration, context: EvaluationContext): PlaygroundFeature[] {
  const engine = engineFor(configuration);
  return engine.compiledList(features).map((flag) => {
    const { feature } = flag;
    const outcome = engine.evaluate(flag, context);
    recordSampledEvaluation(outcome);
    const data = flag.strategies.map((strategy) => explain(strategy, context));
    const anyOn = data.some((strategy) => strategy.result.enabled === true);
    const anyUnknown = data.some((strategy) => strategy.result.enabled === 'unknown');
    const strategyResult: boolean | 'unknown' = data.length === 0 ? true : anyOn ? true : anyUnknown ? 'unknown' : false;
    const dependenciesMet = outcome.enabled || !feature.enabled || strategyResult !== true;
    return {
      name: feature.name,
      projectId: feature.project,
      isEnabled: outcome.enabled,
      isEnabledInCurrentEnvironment: feature.enabled,
      hasUnsatisfiedDependency: (feature.dependencies?.length ?? 0) > 0 && !dependenciesMet,
      variant: { ...outcome.variant },
      variants: feature.variants,
      strategies: { result: strategyResult, data },
    };
  });
}

/** The most evaluations (environments × flags × contexts) one advanced playground request may ask for. */
export const ADVANCED_PLAYGROUND_MAX_EVALUATIONS = 10_000;

type ContextInput = Record<string, unknown> & { properties?: Record<string, unknown> };

type Axis = { key: string; inProperties: boolean; values: unknown[] };

/** Each context field (custom properties too) with its alternatives: a text value is a comma-separated list of them. */
function contextAxes(context: ContextInput): Axis[] {
  const { properties, ...top } = context;
  const alternatives = (value: unknown) => (typeof value === 'string' ? value.split(',') : [value]);
  return [
    ...Object.entries(top).map(([key, value]) => ({ key, inProperties: false, values: alternatives(value) })),
    ...Object.entries(properties ?? {}).map(([key, value]) => ({ key, inProperties: true, values: alternatives(value) })),
  ];
}

/** Every context the axes stand for, one per combination of their alternatives (as Unleash's advanced playground). */
function contextCombinations(axes: Axis[]): ContextInput[] {
  return axes.reduce<ContextInput[]>(
    (combinations, axis) =>
      combinations.flatMap((combination) =>
        axis.values.map((value) =>
          axis.inProperties
            ? { ...combination, properties: { ...(combination.properties ?? {}), [axis.key]: value } }
            : { ...combination, [axis.key]: value },
        ),
      ),
    [{}],
  );
}

export interface PlaygroundEnvironment {
  environment: string;
  features: ClientFeature[];
  configuration: FlagConfiguration;
}

/**
 * The playground over several environments and every combination of context values at once: for each flag, its
 * outcome per environment and context. Refused beyond ADVANCED_PLAYGROUND_MAX_EVALUATIONS, before any is run.
 */
export function advancedPlayground(environments: PlaygroundEnvironment[], context: ContextInput) {
  const axes = contextAxes(context);
  // Counted before any context is made: the combinations of a few long lists are more than memory holds.
  const combinationCount = axes.reduce((product, axis) => product * axis.values.length, 1);
  const flagCount = Math.max(1, ...environments.map((environment) => environment.features.length));
  const evaluations = environments.length * flagCount * combinationCount;
  if (evaluations > ADVANCED_PLAYGROUND_MAX_EVALUATIONS) {
    throw new BadDataError(
      `This would make ${evaluations} evaluations, more than ${ADVANCED_PLAYGROUND_MAX_EVALUATIONS}: choose fewer environments (${environments.length}), projects (${flagCount} flags) or context values (${combinationCount} combinations)`,
    );
  }
  const contexts = contextCombinations(axes);
  const byFlag = new Map<
    string,
    {
      name: string;
      projectId: string;
      environments: Record<string, Array<PlaygroundFeature & { environment: string; context: ContextInput }>>;
    }
  >();
  for (const { environment, features, configuration } of environments) {
    for (const single of contexts) {
      const evaluationContext: EvaluationContext = {
        ...(single as EvaluationContext),
        environment,
        ...(typeof single.currentTime === 'string' ? { currentTime: new Date(single.currentTime) } : {}),
      };
      for (const outcome of playground(features, configuration, evaluationContext)) {
        const entry = byFlag.get(outcome.name) ?? { name: outcome.name, projectId: outcome.projectId, environments: {} };
        byFlag.set(outcome.name, entry);
        (entry.environments[environment] ??= []).push({ ...outcome, environment, context: { ...single, environment } });
      }
    }
  }
  return [...byFlag.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * Each environment's flags as SDKs read them, of the projects asked for and `actor` may see; an unknown environment is
 * a 404.
 */
export async function playgroundEnvironments(
  deps: { db: Db; clientFeatures: ClientFeatureStore },
  actor: Actor,
  environments: string[],
  projects: '*' | string[],
): Promise<PlaygroundEnvironment[]> {
  const known = await deps.db.selectFrom('environments').select('name').where('name', 'in', environments).execute();
  const missing = environments.find((environment) => !known.some((row) => row.name === environment));
  if (missing !== undefined) throw new NotFoundError(`Could not find environment "${missing}"`);
  const hidden = await projectsHiddenFrom(deps.db, actor);
  return Promise.all(
    environments.map(async (environment) => {
      const configuration = await deps.clientFeatures.configuration(environment);
      const features = configuration.features.filter(
        (feature) => !hidden.has(feature.project) && (projects === '*' || projects.includes(feature.project)),
      );
      return { environment, features, configuration };
    }),
  );
}
