import { type Static, type TObject, Type } from '@sinclair/typebox';
import { inUnitOfWork, type Actor, type UnitOfWork } from '../db/unit-of-work.js';
import { authorize } from '../domain/access/authorize.js';
import { projectsHiddenFrom } from '../domain/access/project-visibility.js';
import {
  assessChange,
  cleanupSteps,
  languageOfFile,
  RISK_LEVELS,
  WRAP_LANGUAGES,
  wrapSnippet,
  type WrapLanguage,
} from '../domain/agents/code-guidance.js';
import { changeOrPropose } from '../domain/change-requests/change-or-propose.js';
import type { FeatureChange } from '../domain/change-requests/change-actions.js';
import { updateTitle } from '../domain/change-requests/change-request-contents.js';
import { changeChangeRequestState } from '../domain/change-requests/change-request-states.js';
import { getChangeRequest, listPendingChangeRequests } from '../domain/change-requests/change-request-views.js';
import { playground, playgroundEnvironments, type PlaygroundEnvironment } from '../domain/evaluation/playground.js';
import { searchEvents } from '../domain/events/event-log.js';
import { FEATURE_TYPES } from '../domain/features/feature-types.js';
import { projectOfFlag } from '../domain/features/feature-lookup.js';
import { createFeature, getFeature, validateFeatureName } from '../domain/features/features.js';
import type { FeatureView } from '../domain/features/feature-views.js';
import type { StrategyInput } from '../domain/features/strategies.js';
import { protectedEnvironmentsOf } from '../domain/protected-environments/protection.js';
import { listProjects } from '../domain/projects/projects.js';
import { searchFeatures } from '../domain/search/feature-search.js';
import { flagUsageSummary } from '../domain/usage/usage-over-time.js';
import { BadDataError, NotFoundError } from '../shared/errors.js';
import type { RouteDeps } from './deps.js';

/** What a tool call runs with: the app's services, the caller (with the agent it came through), and links into the UI. */
export interface ToolCall {
  deps: RouteDeps;
  actor: Actor;
  /** A unit of work of the caller, refused while maintenance mode is on, as the admin API's writes are. */
  act<T>(work: (uow: UnitOfWork) => Promise<T>): Promise<T>;
  /** The admin UI's page at `path`, as an absolute address. */
  link(path: string): string;
}

/** A tool's answer: a short text for the model, the same facts as structured content, and the page in Vexil's UI. */
export interface ToolAnswer {
  text: string;
  structured: Record<string, unknown>;
  link?: string;
}

export interface McpTool<S extends TObject = TObject> {
  name: string;
  title: string;
  description: string;
  input: S;
  /** Reads nothing but changes nothing (readOnlyHint), or may remove something (destructiveHint). */
  effect: 'read' | 'write' | 'destructive';
  run(args: Static<S>, call: ToolCall): Promise<ToolAnswer>;
}

const tool = <S extends TObject>(definition: McpTool<S>): McpTool => definition as unknown as McpTool;

const Name = (description: string) => Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9~_.\\-]+$', description });
const ProjectId = Type.Optional(Name('Project id; the project of the flag when a flag is named, else "default"'));
const FeatureName = Name('Feature flag name');
const Environment = Name('Environment name, such as development or production');
const Files = Type.Optional(Type.Array(Type.String({ maxLength: 500 }), { maxItems: 200, description: 'Files the change touches' }));
const CodeContext = Type.Optional(Type.String({ maxLength: 20_000, description: 'Code around the change, to find flags it already uses' }));
const StrategyVariant = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100, description: 'Variant name (unique within the strategy)' }),
    weight: Type.Integer({ minimum: 0, maximum: 1000, description: 'Weight from 0 to 1000' }),
    weightType: Type.Optional(Type.Union([Type.Literal('variable'), Type.Literal('fix')])),
    stickiness: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    payload: Type.Optional(
      Type.Object(
        {
          type: Type.Union([Type.Literal('json'), Type.Literal('csv'), Type.Literal('string'), Type.Literal('number')]),
          value: Type.String({ maxLength: 100_000 }),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
const Constraint = Type.Object(
  {
    contextName: Type.String({ minLength: 1, maxLength: 100, description: 'Context field, such as userId or region' }),
    operator: Type.String({ minLength: 1, maxLength: 30, description: 'IN, NOT_IN, STR_CONTAINS, NUM_GT, SEMVER_EQ, DATE_AFTER, …' }),
    values: Type.Optional(Type.Array(Type.String({ maxLength: 1000 }), { maxItems: 1000 })),
    value: Type.Optional(Type.String({ maxLength: 1000 })),
    inverted: Type.Optional(Type.Boolean()),
    caseInsensitive: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

const args = <P extends Parameters<typeof Type.Object>[0]>(properties: P) => Type.Object(properties, { additionalProperties: false });

/** The project of a named flag (which must exist and be visible to the caller), or the project given. */
async function flagProject(call: ToolCall, featureName: string, projectId?: string): Promise<string> {
  const project = (await projectOfFlag(call.deps.db, featureName)) ?? projectId;
  if (project === undefined || (projectId !== undefined && projectId !== project)) {
    throw new NotFoundError(`Could not find flag "${featureName}"${projectId ? ` in project "${projectId}"` : ''}`);
  }
  await authorize(call.deps.db, call.actor, { permission: 'READ', project: project });
  return project;
}

const flagPage = (call: ToolCall, project: string, flag: string) =>
  call.link(`/projects/${encodeURIComponent(project)}/flags/${encodeURIComponent(flag)}`);
const changeRequestPage = (call: ToolCall, project: string, id: number) =>
  call.link(`/projects/${encodeURIComponent(project)}/change-requests/${id}`);

/**
 * Makes a change to a flag in an environment, or adds it to the caller's draft change request where the environment
 * requires one (`changeOrPropose`), and tells the agent which: done, or waiting for review, with the page to see.
 */
async function changeFlag(
  call: ToolCall,
  project: string,
  environment: string,
  change: FeatureChange,
  done: string,
  facts: Record<string, unknown>,
): Promise<ToolAnswer> {
  const outcome = await call.act((uow) => changeOrPropose(uow, { project, environment }, change));
  if (outcome.kind === 'applied')
    return { text: done, structured: { ...facts, applied: true }, link: flagPage(call, project, change.feature) };
  const link = changeRequestPage(call, project, outcome.changeRequestId);
  return {
    text: `The environment requires change requests, so nothing changed yet: the change was added to your draft change request #${outcome.changeRequestId}. Send it for review with open_change_request; it applies once approved. ${link}`,
    structured: { ...facts, applied: false, changeRequestId: outcome.changeRequestId, changeRequestUrl: link },
    link,
  };
}

function environmentOf(view: FeatureView, environment: string) {
  const found = view.environments.find((env) => env.name === environment);
  if (!found)
    throw new NotFoundError(
      `Flag "${view.name}" has no environment "${environment}" (its project has ${view.environments.map((env) => env.name).join(', ')})`,
    );
  return found;
}

function describeFlag(view: FeatureView): string {
  const environments = view.environments
    .map(
      (env) =>
        `${env.name}: ${env.enabled ? 'on' : 'off'}${env.strategies.length ? ` (${env.strategies.map((s) => s.title || s.name).join(', ')})` : ''}`,
    )
    .join('; ');
  return `${view.name} (${view.type}${view.stale ? ', stale' : ''}) in project ${view.project}. ${environments || 'No environments.'}`;
}

/** Flag names a code excerpt checks: isEnabled('x'), useFlag("x"), getBooleanValue('x', …), is_enabled("x"), IsEnabled("x"). */
function flagNamesIn(code: string): string[] {
  const names = [
    ...code.matchAll(
      /(?:isEnabled|useFlag|useVariant|getVariant|getBooleanValue|getStringValue|getNumberValue|getObjectValue|is_enabled|IsEnabled)\s*\(\s*["'`]([A-Za-z0-9~_.-]{1,100})["'`]/g,
    ),
  ];
  return [...new Set(names.map((match) => match[1]!))].slice(0, 20);
}

/** Flags an excerpt of code or a description points at that exist and the caller may see. */
async function existingFlags(call: ToolCall, description: string, codeContext: string | undefined) {
  const named = codeContext ? flagNamesIn(codeContext) : [];
  const found = new Map<string, { name: string; project: string; description: string | null; matchedBy: string }>();
  if (named.length > 0) {
    const { features } = await searchFeatures(call.deps.db, { query: named.join(' '), limit: '50' }, call.actor, call.deps.clock.now());
    for (const feature of features.filter((f) => named.includes(f.name))) {
      found.set(feature.name, { name: feature.name, project: feature.project, description: feature.description, matchedBy: 'code' });
    }
  }
  const words = description
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word.length > 3)
    .slice(0, 5);
  for (const word of words) {
    const { features } = await searchFeatures(call.deps.db, { query: word, limit: '5' }, call.actor, call.deps.clock.now());
    for (const feature of features) {
      if (!found.has(feature.name)) {
        found.set(feature.name, { name: feature.name, project: feature.project, description: feature.description, matchedBy: `"${word}"` });
      }
    }
  }
  return [...found.values()].slice(0, 10);
}

export const MCP_TOOLS: McpTool[] = [
  tool({
    name: 'list_projects',
    title: 'List projects',
    description: 'The projects you may see, with their environments. Use a project id from here when creating flags.',
    input: args({}),
    effect: 'read',
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
    async run({ projectId, query, limit }, call) {
      if (projectId) await authorize(call.deps.db, call.actor, { permission: 'READ', project: projectId });
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
    async run({ projectId, featureName, environment }, call) {
      const project = await flagProject(call, featureName, projectId);
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
    name: 'create_flag',
    title: 'Create a flag',
    description:
      'Creates a flag, off in every environment. Call detect_flag first so you do not make a duplicate; choose the type with evaluate_change.',
    input: args({
      projectId: ProjectId,
      name: FeatureName,
      type: Type.Union(
        FEATURE_TYPES.map((type) => Type.Literal(type)),
        { description: 'release (gradual rollout), experiment (A/B), operational, kill-switch, permission, sunset' },
      ),
      description: Type.String({ minLength: 1, maxLength: 2000, description: 'What the flag controls and why it exists' }),
      impressionData: Type.Optional(Type.Boolean({ description: 'Emit impression events from SDKs' })),
    }),
    effect: 'write',
    async run({ projectId, name, type, description, impressionData }, call) {
      const project = projectId ?? 'default';
      await authorize(call.deps.db, call.actor, { permission: 'CREATE_FEATURE', project });
      await validateFeatureName(call.deps.db, name, project);
      await call.act((uow) =>
        createFeature(uow, { project, name, type, description, ...(impressionData === undefined ? {} : { impressionData }) }),
      );
      const link = flagPage(call, project, name);
      return {
        text: `Created ${type} flag "${name}" in project ${project}, off everywhere. Next: wrap_change for the code, then set_flag_rollout or toggle_flag_environment. ${link}`,
        structured: { name, project, type, description },
        link,
      };
    },
  }),
  tool({
    name: 'detect_flag',
    title: 'Find existing flags',
    description:
      'Before creating a flag: flags that already exist for this change, found by name, description, or the flag checks in the code around it.',
    input: args({
      description: Type.String({ minLength: 1, maxLength: 2000, description: 'The change or feature to find flags for' }),
      files: Files,
      codeContext: CodeContext,
    }),
    effect: 'read',
    async run({ description, codeContext }, call) {
      const candidates = await existingFlags(call, description, codeContext);
      return {
        text:
          candidates.length === 0
            ? 'No existing flag matches: create one with create_flag.'
            : `Existing flags that may cover this change (reuse one rather than creating a duplicate):\n${candidates.map((c) => `${c.name} [${c.project}] matched by ${c.matchedBy}${c.description ? `: ${c.description}` : ''}`).join('\n')}`,
        structured: { candidates },
      };
    },
  }),
  tool({
    name: 'evaluate_change',
    title: 'Should this change be behind a flag?',
    description: 'Judges whether a code change belongs behind a flag and which type, and names flags the code around it already uses.',
    input: args({
      repository: Type.Optional(Type.String({ maxLength: 500 })),
      branch: Type.Optional(Type.String({ maxLength: 500 })),
      files: Files,
      description: Type.Optional(Type.String({ maxLength: 2000, description: 'What the change does' })),
      riskLevel: Type.Optional(
        Type.Union(
          RISK_LEVELS.map((level) => Type.Literal(level)),
          { description: 'Your judgement of its risk' },
        ),
      ),
      codeContext: CodeContext,
    }),
    effect: 'read',
    async run({ files, description, riskLevel, codeContext }, call) {
      const assessment = assessChange({ description: description ?? '', ...(files ? { files } : {}), ...(riskLevel ? { riskLevel } : {}) });
      const parentFlags = codeContext ? await existingFlags(call, '', codeContext) : [];
      const next = assessment.needsFlag
        ? `Recommended: a ${assessment.flagType} flag${assessment.suggestedName ? ` such as "${assessment.suggestedName}"` : ''}. Next: detect_flag, then create_flag, then wrap_change.`
        : 'No flag needed.';
      const parents = parentFlags.length
        ? ` The code already checks ${parentFlags.map((f) => f.name).join(', ')}: consider reusing it.`
        : '';
      return { text: `${assessment.reasons.join('; ')}. ${next}${parents}`, structured: { ...assessment, parentFlags } };
    },
  }),
  tool({
    name: 'wrap_change',
    title: 'Code to wrap a change in a flag',
    description: 'The code that checks a flag in your language and SDK (Node, React, Python, Go, Java, OpenFeature), with what to install.',
    input: args({
      flagName: FeatureName,
      language: Type.Optional(
        Type.Union(
          WRAP_LANGUAGES.map((language) => Type.Literal(language)),
          { description: 'Found from fileName when not given' },
        ),
      ),
      fileName: Type.Optional(Type.String({ maxLength: 500 })),
      codeContext: CodeContext,
      frameworkHint: Type.Optional(Type.String({ maxLength: 100, description: 'openfeature to use the OpenFeature SDK' })),
    }),
    effect: 'read',
    async run({ flagName, language, fileName, frameworkHint }, _call) {
      const chosen: WrapLanguage =
        language ??
        (frameworkHint?.toLowerCase().includes('openfeature') ? 'openfeature' : undefined) ??
        (fileName ? languageOfFile(fileName) : undefined) ??
        'node';
      const { install, code } = wrapSnippet(flagName, chosen);
      return { text: `Install: ${install}\n\n${code}`, structured: { flagName, language: chosen, install, code } };
    },
  }),
  tool({
    name: 'set_flag_rollout',
    title: 'Roll a flag out to a share of users',
    description:
      "Sets a gradual rollout (flexibleRollout) in an environment: updates the flag's rollout strategy there or adds one. In an environment that requires change requests it goes into your draft change request instead.",
    input: args({
      projectId: ProjectId,
      featureName: FeatureName,
      environment: Environment,
      rolloutPercentage: Type.Integer({ minimum: 0, maximum: 100, description: 'Share of users, 0 to 100' }),
      groupId: Type.Optional(Type.String({ maxLength: 100, description: 'Bucketing group; the flag name unless given' })),
      stickiness: Type.Optional(Type.String({ maxLength: 100, description: 'Context field users stick by; "default" unless given' })),
      title: Type.Optional(Type.String({ maxLength: 255 })),
      disabled: Type.Optional(Type.Boolean()),
      variants: Type.Optional(Type.Array(StrategyVariant, { maxItems: 100 })),
    }),
    effect: 'write',
    async run({ projectId, featureName, environment, rolloutPercentage, groupId, stickiness, title, disabled, variants }, call) {
      const project = await flagProject(call, featureName, projectId);
      const view = await getFeature(call.deps.db, project, featureName, call.actor);
      const existing = environmentOf(view, environment).strategies.find((strategy) => strategy.name === 'flexibleRollout');
      const strategy = {
        name: 'flexibleRollout',
        parameters: { rollout: String(rolloutPercentage), stickiness: stickiness ?? 'default', groupId: groupId ?? featureName },
        constraints: existing?.constraints ?? [],
        ...(title === undefined ? {} : { title }),
        ...(disabled === undefined ? {} : { disabled }),
        ...(variants ? { variants } : existing ? { variants: existing.variants } : {}),
      };
      const change: FeatureChange = existing
        ? { action: 'updateStrategy', feature: featureName, payload: { ...strategy, id: existing.id } }
        : { action: 'addStrategy', feature: featureName, payload: strategy };
      return changeFlag(
        call,
        project,
        environment,
        change,
        `"${featureName}" now rolls out to ${rolloutPercentage}% in ${environment}${environmentOf(view, environment).enabled ? '' : ' (the flag is off there: turn it on with toggle_flag_environment)'}.`,
        { featureName, project, environment, rolloutPercentage },
      );
    },
  }),
  tool({
    name: 'toggle_flag_environment',
    title: 'Turn a flag on or off in an environment',
    description:
      'Turns a flag on or off in one environment. In an environment that requires change requests it goes into your draft change request instead.',
    input: args({
      projectId: ProjectId,
      featureName: FeatureName,
      environment: Environment,
      enabled: Type.Boolean({ description: 'true to turn it on, false to turn it off' }),
    }),
    effect: 'write',
    async run({ projectId, featureName, environment, enabled }, call) {
      const project = await flagProject(call, featureName, projectId);
      const change: FeatureChange = { action: 'updateEnabled', feature: featureName, payload: { enabled } };
      return changeFlag(call, project, environment, change, `"${featureName}" is ${enabled ? 'on' : 'off'} in ${environment}.`, {
        featureName,
        project,
        environment,
        enabled,
      });
    },
  }),
  tool({
    name: 'update_flag_strategy',
    title: "Change a flag's strategy",
    description: 'Changes one strategy of a flag in an environment (its id from get_flag_state); fields not given keep their value.',
    input: args({
      projectId: ProjectId,
      featureName: FeatureName,
      environment: Environment,
      strategyId: Type.String({ format: 'uuid', description: 'The strategy id, from get_flag_state' }),
      parameters: Type.Optional(
        Type.Record(Type.String({ maxLength: 100 }), Type.String({ maxLength: 10_000 }), { description: 'Parameters, such as rollout' }),
      ),
      constraints: Type.Optional(Type.Array(Constraint, { maxItems: 100 })),
      title: Type.Optional(Type.String({ maxLength: 255 })),
      disabled: Type.Optional(Type.Boolean()),
      segments: Type.Optional(Type.Array(Type.Integer({ minimum: 1 }), { maxItems: 100 })),
      variants: Type.Optional(Type.Array(StrategyVariant, { maxItems: 100 })),
    }),
    effect: 'write',
    async run({ projectId, featureName, environment, strategyId, ...fields }, call) {
      const project = await flagProject(call, featureName, projectId);
      const view = await getFeature(call.deps.db, project, featureName, call.actor);
      const current = environmentOf(view, environment).strategies.find((strategy) => strategy.id === strategyId);
      if (!current) throw new NotFoundError(`Flag "${featureName}" has no strategy ${strategyId} in ${environment}`);
      const { name, title, disabled, parameters, constraints, segments, variants } = current;
      const payload = { id: strategyId, name, title, disabled, parameters, constraints, segments, variants, ...fields } as StrategyInput & {
        id: string;
      };
      const change: FeatureChange = { action: 'updateStrategy', feature: featureName, payload };
      return changeFlag(call, project, environment, change, `Strategy ${strategyId} of "${featureName}" in ${environment} is updated.`, {
        featureName,
        project,
        environment,
        strategyId,
      });
    },
  }),
  tool({
    name: 'remove_flag_strategy',
    title: "Remove a flag's strategy",
    description:
      'Removes one strategy of a flag in an environment (its id from get_flag_state). A flag on with no strategy left is on for everyone.',
    input: args({
      projectId: ProjectId,
      featureName: FeatureName,
      environment: Environment,
      strategyId: Type.String({ format: 'uuid', description: 'The strategy id, from get_flag_state' }),
    }),
    effect: 'destructive',
    async run({ projectId, featureName, environment, strategyId }, call) {
      const project = await flagProject(call, featureName, projectId);
      const change: FeatureChange = { action: 'deleteStrategy', feature: featureName, payload: { id: strategyId } };
      return changeFlag(call, project, environment, change, `Strategy ${strategyId} of "${featureName}" in ${environment} is removed.`, {
        featureName,
        project,
        environment,
        strategyId,
      });
    },
  }),
  tool({
    name: 'cleanup_flag',
    title: 'Remove a flag from the code, then archive it',
    description:
      "Steps to remove a flag's code paths, keeping the one that won. With archive: true (only once the code is gone) it archives the flag, through a change request where an environment requires one.",
    input: args({
      flagName: FeatureName,
      preservePath: Type.Optional(
        Type.Union([Type.Literal('enabled'), Type.Literal('disabled')], { description: 'The code path to keep' }),
      ),
      files: Files,
      language: Type.Optional(Type.String({ maxLength: 50 })),
      archive: Type.Optional(Type.Boolean({ description: 'Archive the flag now: only when no code checks it any more' })),
    }),
    effect: 'destructive',
    async run({ flagName, preservePath, files, archive }, call) {
      const project = await flagProject(call, flagName);
      const view = await getFeature(call.deps.db, project, flagName, call.actor);
      const steps = cleanupSteps(flagName, preservePath, files ?? []);
      const facts = { flagName, project, steps, environments: view.environments.map((env) => ({ name: env.name, enabled: env.enabled })) };
      if (!archive)
        return {
          text: steps.map((step, index) => `${index + 1}. ${step}`).join('\n'),
          structured: { ...facts, archived: false },
          link: flagPage(call, project, flagName),
        };
      const [guarded] = (await protectedEnvironmentsOf(call.deps.db, [project])).filter((row) =>
        view.environments.some((env) => env.name === row.environment),
      );
      const environment = guarded?.environment ?? view.environments[0]?.environment ?? 'development';
      return changeFlag(
        call,
        project,
        environment,
        { action: 'archiveFeature', feature: flagName },
        `"${flagName}" is archived: SDKs no longer receive it. It can be revived from the archive.`,
        { ...facts, archived: true },
      );
    },
  }),
  tool({
    name: 'flag_usage',
    title: 'Is a flag evaluated?',
    description:
      "Where a flag is evaluated: the last hour's evaluations by environment and application, the applications that reported it, and when it was last seen.",
    input: args({ projectId: ProjectId, featureName: FeatureName }),
    effect: 'read',
    async run({ projectId, featureName }, call) {
      const project = await flagProject(call, featureName, projectId);
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
    async run({ projectId, limit }, call) {
      if (projectId) await authorize(call.deps.db, call.actor, { permission: 'READ', project: projectId });
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
    async run({ environment, context, projectId, featureName }, call) {
      if (projectId) await authorize(call.deps.db, call.actor, { permission: 'READ', project: projectId });
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
  tool({
    name: 'search_events',
    title: 'Who changed what',
    description:
      'The event log (by flag, project, type or agent): the events of flags and projects the caller can see; the whole log for Admins.',
    input: args({
      featureName: Type.Optional(FeatureName),
      projectId: ProjectId,
      type: Type.Optional(Type.String({ maxLength: 100, description: 'An event type, such as feature-environment-enabled' })),
      via: Type.Optional(Type.String({ maxLength: 100, description: 'Only changes made through this agent, such as "Claude Code"' })),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: '20 unless given' })),
    }),
    effect: 'read',
    async run({ featureName, projectId, type, via, limit }, call) {
      if (featureName) await flagProject(call, featureName, projectId);
      else if (projectId) await authorize(call.deps.db, call.actor, { permission: 'READ', project: projectId });
      const { events, total } = await searchEvents(call.deps.db, call.actor, {
        ...(featureName ? { feature: `IS:${featureName}` } : {}),
        ...(projectId ? { project: `IS:${projectId}` } : {}),
        ...(type ? { type: `IS:${type}` } : {}),
        ...(via ? { via } : {}),
        limit: String(limit ?? 20),
      });
      const listed = events.map(
        ({ id, createdAt, type: eventType, createdBy, via: agent, project, environment, featureName: flag, label }) => ({
          id,
          createdAt,
          type: eventType,
          createdBy,
          via: agent ?? null,
          project,
          environment,
          featureName: flag,
          label,
        }),
      );
      return {
        text: `${total} events${total > listed.length ? ` (newest ${listed.length})` : ''}:\n${listed.map((e) => `${e.createdAt} ${e.type}${e.featureName ? ` ${e.featureName}` : ''}${e.environment ? ` in ${e.environment}` : ''} by ${e.createdBy}${e.via ? ` via ${e.via}` : ''}`).join('\n')}`,
        structured: { total, events: listed },
        link: call.link('/events'),
      };
    },
  }),
  tool({
    name: 'open_change_request',
    title: 'Send your draft change request for review',
    description: 'Sends your draft change request of a project environment (where protected changes went) for review, with a title.',
    input: args({
      projectId: Name('Project id'),
      environment: Environment,
      title: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    }),
    effect: 'write',
    async run({ projectId, environment, title }, call) {
      await authorize(call.deps.db, call.actor, { permission: 'READ', project: projectId });
      const draft = (await listPendingChangeRequests(call.deps.db, projectId, call.actor)).find(
        (cr) => cr.environment === environment && cr.state === 'Draft',
      );
      if (!draft)
        throw new BadDataError(
          `You have no draft change request in ${projectId}/${environment}: a change to a protected environment starts one`,
        );
      await call.act(async (uow) => {
        if (title) await updateTitle(uow, projectId, draft.id, title);
        await changeChangeRequestState(uow, projectId, draft.id, { state: 'In review' });
      });
      const link = changeRequestPage(call, projectId, draft.id);
      return {
        text: `Change request #${draft.id} is in review; it needs ${draft.minApprovals} approval(s) from someone else. ${link}`,
        structured: { id: draft.id, project: projectId, environment, state: 'In review' },
        link,
      };
    },
  }),
  tool({
    name: 'change_request_status',
    title: 'A change request and its reviews',
    description: "A change request's state, its changes, approvals and comments.",
    input: args({ projectId: Name('Project id'), id: Type.Integer({ minimum: 1, description: 'The change request number' }) }),
    effect: 'read',
    async run({ projectId, id }, call) {
      await authorize(call.deps.db, call.actor, { permission: 'READ', project: projectId });
      const view = await getChangeRequest(call.deps.db, projectId, id);
      const changes = view.features.flatMap((feature) =>
        feature.changes.map((change) => ({ feature: feature.name, action: change.action })),
      );
      const structured = {
        id,
        project: projectId,
        environment: view.environment,
        title: view.title,
        state: view.state,
        minApprovals: view.minApprovals,
        approvals: view.approvals.map((a) => a.createdBy.username),
        changes,
      };
      return {
        text: `#${id} "${view.title}" in ${view.environment}: ${view.state}, ${view.approvals.length}/${view.minApprovals} approvals. Changes: ${changes.map((c) => `${c.action} ${c.feature}`).join(', ') || 'none'}.`,
        structured,
        link: changeRequestPage(call, projectId, id),
      };
    },
  }),
];

/** A unit of work for a tool call, as `act` gives routes (refused in maintenance mode, as every unit of work is). */
export function toolUnitOfWork(deps: RouteDeps, actor: Actor) {
  return <T>(work: (uow: UnitOfWork) => Promise<T>): Promise<T> => inUnitOfWork(deps, actor, work);
}
