import { Type } from '@sinclair/typebox';
import { projectsHiddenFrom } from '../../../domain/access/project-visibility.js';
import { codeReferencesOfFlag } from '../../../domain/code-references/code-references.js';
import { cleanUpFlagOffThread } from '../../../domain/code-references/code-reading/cleanup-thread.js';
import { removalReadiness, settledBranch } from '../../../domain/code-references/removal-readiness.js';
import { playground, playgroundEnvironments, type PlaygroundEnvironment } from '../../../domain/evaluation/playground.js';
import { getFeature } from '../../../domain/features/features.js';
import { listProjects } from '../../../domain/projects/projects.js';
import { searchFeatures } from '../../../domain/search/feature-search.js';
import { flagUsageSummary } from '../../../domain/usage/usage-over-time.js';
import { BadDataError, NotFoundError } from '../../../shared/errors.js';

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
    name: 'get_flag_cleanup_patch',
    title: 'The patch that removes a flag from code',
    description:
      'Send the files that read a flag (TypeScript, JavaScript, Python; other languages get the places to change) and get a unified diff that removes its checks, keeping the branch production settled on (from get_removal_readiness, or `keep`), with the readiness reasons and what is left for a person. It changes nothing in Vexil: archive with cleanup_flag only once the cleaned branch is pushed and shows no references.',
    input: args({
      projectId: ProjectId,
      featureName: FeatureName,
      files: Type.Array(
        Type.Object(
          {
            path: Type.String({ minLength: 1, maxLength: 500, description: 'The path from the repository root, with forward slashes' }),
            content: Type.String({ maxLength: 256 * 1024 }),
          },
          { additionalProperties: false },
        ),
        { minItems: 1, maxItems: 200, description: 'The files to clean up, as they are in the working tree' },
      ),
      keep: Type.Optional(
        Type.Union([Type.Literal('on'), Type.Literal('off')], {
          description: 'The branch to keep; the readiness verdict decides when not given',
        }),
      ),
      environment: Type.Optional(Environment),
      wrappers: Type.Optional(
        Type.Array(Type.String({ pattern: '^[A-Za-z_$][\\w$]*[?!]?$', maxLength: 100 }), {
          maxItems: 50,
          description: "The project's own functions that take a flag's name first",
        }),
      ),
    }),
    effect: 'read',
    access: { permission: 'READ', project: 'flag' },
    async run({ featureName, files, keep, environment, wrappers }, call) {
      const project = projectOf(call);
      const paths = new Set<string>();
      for (const { path } of files) {
        if (path.startsWith('/') || path.includes('\\') || path.split('/').some((part) => part === '..' || part === '' || part === '.')) {
          throw new BadDataError(`files: "${path}" is not a path inside the repository (relative, forward slashes, no . or ..)`);
        }
        if (paths.has(path)) throw new BadDataError(`files: "${path}" is sent twice`);
        paths.add(path);
      }
      const readiness = await removalReadiness(call.deps.db, call.actor, project, featureName, call.deps.clock.now());
      const judged = environment ? readiness.environments.filter((env) => env.environment === environment) : readiness.environments;
      if (environment && judged.length === 0) {
        const production = readiness.environments.map((env) => env.environment).join(', ') || 'none';
        throw new BadDataError(`environment: ${environment} is not a production environment of ${project} (those are: ${production})`);
      }
      const verdicts = judged.map((env) => `${env.environment}: ${env.verdict} (${env.reasons.join('; ')})`);
      const branch = keep ?? settledBranch(judged);
      const facts = { featureName, project, readiness: judged };
      if (!branch) {
        return {
          text: [
            ...verdicts,
            `Production has not settled on one branch of "${featureName}", so no patch was written. Once the team has decided, call again with keep: "on" or "off".`,
          ].join('\n'),
          structured: { ...facts, keep: null, patch: null, changedFiles: [], leftForPerson: [] },
          link: flagPage(call, project, featureName),
        };
      }
      const sources = files.map(({ path, content }) => ({ file: path, text: content }));
      const cleanup = await cleanUpFlagOffThread(sources, featureName, branch === 'on', wrappers ?? []);
      const changedFiles = cleanup.changed.map((changed) => changed.file);
      const text = [
        ...verdicts,
        `Keeping the ${branch} branch${keep ? ' (as asked)' : ' (as production settled)'}.`,
        changedFiles.length > 0
          ? `The patch changes ${changedFiles.join(', ')}:\n${cleanup.patch}`
          : 'None of the files has a check of the flag the patch could take out.',
        ...(cleanup.leftForPerson.length > 0
          ? ['Left for a person:', ...cleanup.leftForPerson.map((place) => `  ${place.file}:${place.line} ${place.call}: ${place.reason}`)]
          : []),
        `Do not archive "${featureName}" yet: once the cleaned branch is pushed (vexil refs push) and shows no references left, call cleanup_flag with archive: true.`,
      ].join('\n');
      return {
        text,
        structured: { ...facts, keep: branch, patch: cleanup.patch, changedFiles, leftForPerson: cleanup.leftForPerson },
        link: flagPage(call, project, featureName),
      };
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
