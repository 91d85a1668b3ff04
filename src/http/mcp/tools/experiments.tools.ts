import { Type } from '@sinclair/typebox';
import { createExperiment, getExperiment, shipVariant, startExperiment } from '../../../domain/experiments/experiments.js';
import type { ExperimentResults } from '../../../domain/experiments/results.js';
import { getFeature } from '../../../domain/features/features.js';
import { BadDataError } from '../../../shared/errors.js';
import { args, Environment, environmentOf, FeatureName, type McpTool, Name, ProjectId, projectOf, tool, type ToolCall } from './tool.js';

const ExperimentName = Name('Experiment name');
const NamedExperiment = args({ projectId: ProjectId, experimentName: ExperimentName });
const MetricNames = (role: string) =>
  Type.Array(Name(`A metric of the environment (see its experiment metrics) measured as a ${role}`), { maxItems: 10 });

const experimentPage = (call: ToolCall, project: string, name: string) =>
  call.link(`/projects/${encodeURIComponent(project)}/experiments/${encodeURIComponent(name)}`);

/** The results as a model reads them: the sentence, the alarms, then each metric's comparisons in one line each. */
function describeResults(results: ExperimentResults): string {
  const lines = [results.summary, ...results.warnings];
  for (const metric of results.metrics) {
    for (const variant of metric.variants.slice(1)) {
      const comparison = variant.comparison;
      const figure = comparison
        ? `${(comparison.estimate * 100).toFixed(1)}% [${comparison.interval.map((end) => (end === null ? '∞' : `${(end * 100).toFixed(1)}%`)).join(', ')}]${comparison.chanceToWin !== undefined ? `, ${(comparison.chanceToWin * 100).toFixed(1)}% chance to win` : `, p = ${(comparison.adjustedPValue ?? comparison.pValue ?? 1).toPrecision(2)}`}`
        : (variant.problem ?? 'no comparison');
      lines.push(`${metric.name} (${metric.role}) ${variant.variant} vs ${metric.variants[0]!.variant}: ${figure}`);
    }
  }
  return lines.join('\n');
}

/** The newest results, as the tool answers them; an analysis run for a tool call has the analysis timeout. */
async function answerWithResults(call: ToolCall, project: string, experimentName: string) {
  const experiment = await getExperiment(call.deps.db, project, experimentName);
  const results = await call.deps.experimentAnalyses.latest(experiment, undefined, {
    engine: call.deps.config.database.kind,
    timeoutMs: call.deps.config.experiments.analysisTimeoutMs,
    signal: new AbortController().signal,
  });
  const link = experimentPage(call, project, experimentName);
  return { text: `${describeResults(results)}\n${link}`, structured: results as unknown as Record<string, unknown>, link };
}

/** The tools that run experiments: draft and start one, read its results, ship the winning variant. */
export const EXPERIMENT_TOOLS: McpTool[] = [
  tool({
    name: 'create_experiment',
    title: "Experiment on a flag's variants",
    description:
      "Drafts (and by default starts) an A/B experiment comparing the variants of the flag's strategy in an environment, on metrics defined there. The strategy needs two or more variants sticking to userId, sessionId or a custom field.",
    input: args({
      projectId: ProjectId,
      featureName: FeatureName,
      environment: Environment,
      name: ExperimentName,
      hypothesis: Type.Optional(Type.String({ maxLength: 2000, description: 'What the experiment should show' })),
      strategyId: Type.Optional(
        Type.String({
          format: 'uuid',
          description: "The strategy whose variants are compared; the flag's first with two or more variants unless given",
        }),
      ),
      goalMetrics: MetricNames('goal (what decides)'),
      guardrailMetrics: Type.Optional(MetricNames('guardrail (what must not get worse)')),
      engine: Type.Optional(Type.Union([Type.Literal('bayesian'), Type.Literal('frequentist')], { description: 'bayesian unless given' })),
      start: Type.Optional(Type.Boolean({ description: 'Start it at once (true unless given)' })),
    }),
    effect: 'write',
    access: { permission: 'UPDATE_FEATURE', project: 'flag' },
    async run({ featureName, environment, name, hypothesis, strategyId, goalMetrics, guardrailMetrics = [], engine, start = true }, call) {
      const project = projectOf(call);
      const flag = await getFeature(call.deps.db, project, featureName, call.actor);
      const strategy =
        strategyId ?? environmentOf(flag, environment).strategies.find((candidate) => (candidate.variants?.length ?? 0) >= 2)?.id;
      if (!strategy)
        throw new BadDataError(`Flag "${featureName}" has no strategy with two or more variants in ${environment}: add variants first`);
      const metrics = [
        ...goalMetrics.map((metric) => ({ metric, role: 'goal' as const })),
        ...guardrailMetrics.map((metric) => ({ metric, role: 'guardrail' as const })),
      ];
      const experiment = await call.act(async (uow) => {
        const drafted = await createExperiment(uow, project, {
          name,
          hypothesis: hypothesis ?? null,
          featureName,
          environment,
          strategyId: strategy,
          metrics,
          engine: engine ?? 'bayesian',
        });
        return start ? startExperiment(uow, project, name) : drafted;
      });
      const link = experimentPage(call, project, name);
      return {
        text: `Experiment "${name}" is ${experiment.status} on ${featureName} in ${environment}. SDKs send exposures to /api/client/exposures and events to /api/client/track; read the results with get_experiment_results. ${link}`,
        structured: { name, project, status: experiment.status, featureName, environment, phases: experiment.phases },
        link,
      };
    },
  }),
  tool({
    name: 'get_experiment_results',
    title: "An experiment's results",
    description:
      "The newest results of an experiment: a sentence, the sample-ratio alarm and other warnings first, then each metric's lift per variant with its interval and chance to win (or p-value).",
    input: NamedExperiment,
    effect: 'read',
    access: { permission: 'READ', project: 'projectId or default' },
    run: async ({ experimentName }, call) => answerWithResults(call, projectOf(call), experimentName),
  }),
  tool({
    name: 'ship_experiment_variant',
    title: 'Ship the winning variant',
    description:
      "Decides an experiment: its strategy gives the variant to everyone. Where the environment requires change requests, the change goes into your draft change request instead. Read get_experiment_results first: don't ship past a sample-ratio alarm.",
    input: args({ projectId: ProjectId, experimentName: ExperimentName, variant: Name('The variant to give everyone') }),
    effect: 'write',
    access: { permission: 'UPDATE_FEATURE', project: 'projectId or default' },
    async run({ experimentName, variant }, call) {
      const project = projectOf(call);
      const shipped = await call.act((uow) => shipVariant(uow, project, experimentName, variant));
      const link = experimentPage(call, project, experimentName);
      const review =
        shipped.changeRequestId === undefined
          ? ''
          : ` The environment requires review: the change is in your draft change request #${shipped.changeRequestId}.`;
      return {
        text: `Experiment "${experimentName}" shipped ${variant}.${review} ${link}`,
        structured: {
          name: experimentName,
          status: shipped.status,
          shippedVariant: variant,
          changeRequestId: shipped.changeRequestId ?? null,
        },
        link,
      };
    },
  }),
];
