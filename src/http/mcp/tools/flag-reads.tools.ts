import { Type } from '@sinclair/typebox';
import { projectsHiddenFrom } from '../../../domain/access/project-visibility.js';
import { codeReferencesOfFlag } from '../../../domain/code-references/code-references.js';
import { removalReadiness } from '../../../domain/code-references/removal-readiness.js';
import { playground, playgroundEnvironments, type PlaygroundEnvironment } from '../../../domain/evaluation/playground.js';
import { getFeature } from '../../../domain/features/features.js';
import { listProjects } from '../../../domain/projects/projects.js';
import { searchFeatures } from '../../../domain/search/feature-search.js';
import { flagUsageSummary } from '../../../domain/usage/usage-over-time.js';
import { NotFoundError } from '../../../shared/errors.js';

import { args, describeFlag, Environment, environmentOf, FeatureName, flagPage, type McpTool, ProjectId, projectOf, tool } from './tool.js';

/** The tools that read flags and projects: lists, a flag's state and usage, flags needing attention, evaluations. */
/** A read of one flag the caller may see, named by its name (and its project, when given). */
const READS_ONE_FLAG = {
  input: args({ projectId: ProjectId, featureName: FeatureName }),
  effect: 'read',
  access: { permission: 'READ', project: 'flag' },
} as const;

export const FLAG_READ_TOOLS: McpTool[] = [
  tool({
    name: 'list_projects',
    title: 'List projects',
    description: 'The projects you may see, with their environments. Use a project id from here when creating flags.',
    input: args({}),
    effect: 'read',
    access: { permission: 'READ' },
    async run(_args, call) {
      const hidden = await projectsHiddenFrom(call.deps.db, call.actor);
      const projects = (await listProjects(call.deps.db))
        .filter((project) => !hidden.has(project.id))
        .map(({ id, name, description, environments }) => ({ id, name, description, environments }));
      return {
        text:
          projects.map((p) => `${p.id}${p.name !== p.id ? ` (${p.name})` : ''}: ${p.environments.join(', ')}`).join('\n') || 'No projects.',
        structured: { projects },
        link: call.link('/projects'),
      };
    },
  }),
  tool({
    name: 'list_flags',
    title: 'List flags',
    description: 'Flags matching a text (name, description, tags), optionally in one project; newest first, at most 100.',
    input: args({
      projectId: ProjectId,
      query: Type.Optional(Type.String({ maxLength: 200, description: 'Text to look for in names, descriptions and tags' })),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'At most this many flags; 25 unless given' })),
    }),
    effect: 'read',
    access: { permission: 'READ', project: 'projectId' },
    async run({ projectId, query, limit }, call) {
      const { features, total } = await searchFeatures(
        call.deps.db,
        { ...(query ? { query } : {}), ...(projectId ? { project: `IS:${projectId}` } : {}), limit: String(limit ?? 25) },
        call.actor,
        call.deps.clock.now(),
      );
      const flags = features.map((f) => ({
        name: f.name,
        project: f.project,
        type: f.type,
        description: f.description,
        stale: f.stale,
        environments: f.environments.map((env) => ({ name: env.name, enabled: env.enabled })),
      }));
      const lines = flags.map(
        (f) => `${f.name} [${f.project}, ${f.type}] ${f.environments.map((e) => `${e.name}:${e.enabled ? 'on' : 'off'}`).join(' ')}`,
      );
      return {
        text: `${total} flags match${total > flags.length ? ` (first ${flags.length})` : ''}.\n${lines.join('\n')}`,
        structured: { total, flags },
        link: call.link('/flags'),
      };
    },
  }),
  tool({
    name: 'get_flag_state',
    title: 'Get a flag',
    description: "A flag's type, state in each environment and strategies (with their ids, for update_flag_strategy).",
    input: args({ projectId: ProjectId, featureName: FeatureName, environment: Type.Optional(Environment) }),
    effect: 'read',
    access: { permission: 'READ', project: 'flag' },
    async run({ featureName, environment }, call) {
      const project = projectOf(call);
      const view = await getFeature(call.deps.db, project, featureName, call.actor);
      const environments = (environment ? [environmentOf(view, environment)] : view.environments).map((env) => ({
        name: env.name,
        enabled: env.enabled,
        strategies: env.strategies.map(({ id, name, title, disabled, parameters, constraints, segments, variants }) => ({
          id,
          name,
          title,
          disabled,
          parameters,
          constraints,
          segments,
          variants,
        })),
        variants: env.variants,
        lastSeenAt: env.lastSeenAt,
      }));
      const { name, type, description, stale, archived, createdAt, lastSeenAt, lifecycle } = view;
      return {
        text: describeFlag({ ...view, environments: view.environments.filter((env) => environments.some((e) => e.name === env.name)) }),
        structured: { name, project, type, description, stale, archived, createdAt, lastSeenAt, lifecycle, environments },
        link: flagPage(call, project, featureName),
      };
    },
  }),
  tool({
    name: 'get_flag_code_references',
    title: 'Where does code read a flag?',
    description:
      "The places in the pushed repositories' code that read a flag (file, line, the call, the lines around it, a link), by repository and branch; or the commit its last reference left the code in.",
    ...READS_ONE_FLAG,
    async run({ featureName }, call) {
      const project = projectOf(call);
      const { references, total, removedFromCode } = await codeReferencesOfFlag(call.deps.db, project, featureName, 100);
      const lines = references.map((r) => `${r.repository} (${r.branch}) ${r.file}:${r.line} ${r.call}(${r.expression})`);
      const text =
        references.length > 0
          ? `${total} references to ${featureName}${total > references.length ? ` (first ${references.length})` : ''}:\n${lines.join('\n')}`
          : removedFromCode
            ? `No code reads ${featureName} any more: its last reference left in commit ${removedFromCode.commit} of ${removedFromCode.repository} (${removedFromCode.branch}).`
            : `No pushed repository reads ${featureName} (vexil refs push sends where code reads flags).`;
      return { text, structured: { total, references, removedFromCode }, link: flagPage(call, project, featureName) };
    },
  }),
  tool({
    name: 'get_removal_readiness',
    title: 'Can a flag leave the code?',
    description:
      'Per production environment: keep, ready to remove (keep the on branch / the off branch) or ready to archive, with the reasons (type, how long production has served everyone the same, last evaluation, code references, dependent flags, open change requests, release plans).',
    ...READS_ONE_FLAG,
    async run({ featureName }, call) {
      const project = projectOf(call);
      const readiness = await removalReadiness(call.deps.db, call.actor, project, featureName, call.deps.clock.now());
      const text =
        readiness.environments.map((env) => `${env.environment}: ${env.verdict} (${env.reasons.join('; ')})`).join('\n') ||
        `${featureName}'s project has no production environment to judge it in.`;
      return { text, structured: { ...readiness }, link: flagPage(call, project, featureName) };
    },
  }),
  tool({
    name: 'flag_usage',
    title: 'Is a flag evaluated?',
    description:
      "Where a flag is evaluated: the last hour's evaluations by environment and application, the applications that reported it, and when it was last seen.",
    ...READS_ONE_FLAG,
    async run({ featureName }, call) {
      const project = projectOf(call);
      const view = await getFeature(call.deps.db, project, featureName, call.actor);
      const { lastHourUsage, seenApplications } = await flagUsageSummary(call.deps.db, featureName, call.deps.clock.now());
      const usage = lastHourUsage.map(({ environment, appName, yes, no }) => ({ environment, appName, yes, no }));
      const lastSeen = view.environments.map((env) => ({ environment: env.name, lastSeenAt: env.lastSeenAt }));
      const text =
        seenApplications.length === 0
          ? `No SDK has reported evaluating "${featureName}".`
          : `"${featureName}" is evaluated by ${seenApplications.join(', ')}. Last hour: ${usage.map((u) => `${u.appName}@${u.environment} ${u.yes} on / ${u.no} off`).join('; ') || 'none'}. Last seen: ${lastSeen.map((s) => `${s.environment} ${s.lastSeenAt ?? 'never'}`).join(', ')}.`;
      return {
        text,
        structured: { featureName, project, seenApplications, lastHourUsage: usage, lastSeen },
        link: flagPage(call, project, featureName),
      };
    },
  }),
  tool({
    name: 'stale_flags',
    title: 'Flags that need attention',
    description:
      'Flags marked stale or past their expected lifetime, never seen, unused in production, or ready to remove: candidates for cleanup_flag.',
    input: args({ projectId: ProjectId, limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: '25 unless given' })) }),
    effect: 'read',
    access: { permission: 'READ', project: 'projectId' },
    async run({ projectId, limit }, call) {
      const search = (filter: Record<string, string>) =>
        searchFeatures(
          call.deps.db,
          { ...filter, ...(projectId ? { project: `IS:${projectId}` } : {}), limit: String(limit ?? 25) },
          call.actor,
          call.deps.clock.now(),
        );
      const [stale, unhealthy] = [
        await search({ state: 'IS_ANY_OF:stale,potentially-stale' }),
        await search({ health: 'IS_ANY_OF:never-seen,unused-in-production,ready-to-remove' }),
      ];
      const flags = [
        ...new Map(
          [...stale.features, ...unhealthy.features].map((f) => [
            f.name,
            { name: f.name, project: f.project, type: f.type, stale: f.stale, createdAt: f.createdAt, lastSeenAt: f.lastSeenAt },
          ]),
        ).values(),
      ];
      return {
        text:
          flags.length === 0
            ? 'No flag needs attention.'
            : `Flags that need attention:\n${flags.map((f) => `${f.name} [${f.project}]${f.stale ? ' stale' : ''}, last seen ${f.lastSeenAt ?? 'never'}`).join('\n')}`,
        structured: { flags },
        link: call.link('/flag-health'),
      };
    },
  }),
  tool({
    name: 'evaluate',
    title: 'Evaluate flags for a context',
    description:
      'The playground: whether each flag is on for a context in an environment, with the strategy and constraint results that decided it.',
    input: args({
      environment: Environment,
      context: Type.Record(Type.String({ maxLength: 100 }), Type.String({ maxLength: 1000 }), {
        description: 'userId, sessionId, remoteAddress, appName, or any context field',
        maxProperties: 50,
      }),
      projectId: ProjectId,
      featureName: Type.Optional(FeatureName),
    }),
    effect: 'read',
    access: { permission: 'READ', project: 'projectId' },
    async run({ environment, context, projectId, featureName }, call) {
      const [{ features, configuration }] = (await playgroundEnvironments(
        call.deps,
        call.actor,
        [environment],
        projectId ? [projectId] : '*',
      )) as [PlaygroundEnvironment];
      const results = playground(featureName ? features.filter((f) => f.name === featureName) : features, configuration, {
        ...context,
        environment,
      }).slice(0, 100);
      if (featureName && results.length === 0) throw new NotFoundError(`Could not find flag "${featureName}" in ${environment}`);
      const explained = results.map((r) => ({
        name: r.name,
        project: r.projectId,
        enabled: r.isEnabled,
        variant: r.variant.name,
        strategies: r.strategies.data.map((s) => ({
          name: s.name,
          title: s.title,
          result: s.result.enabled,
          constraints: s.constraints.map((c) => ({ contextName: c.contextName, operator: c.operator, result: c.result })),
        })),
      }));
      return {
        text: explained
          .map(
            (r) =>
              `${r.name}: ${r.enabled ? 'on' : 'off'}${r.variant !== 'disabled' ? ` (variant ${r.variant})` : ''}${r.strategies.length ? ` — ${r.strategies.map((s) => `${s.title || s.name} ${s.result}`).join(', ')}` : ''}`,
          )
          .join('\n'),
        structured: { environment, results: explained },
        link: call.link('/playground'),
      };
    },
  }),
];
