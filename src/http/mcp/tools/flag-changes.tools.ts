import { Type } from '@sinclair/typebox';
import { cleanupSteps } from '../../../domain/agents/code-guidance.js';
import type { FeatureChange } from '../../../domain/change-requests/change-actions.js';
import { FEATURE_TYPES } from '../../../domain/features/feature-types.js';
import { createFeature, getFeature, validateFeatureName } from '../../../domain/features/features.js';
import type { StrategyInput } from '../../../domain/features/strategies.js';
import { protectedEnvironmentsOf } from '../../../domain/protected-environments/protection.js';
import { NotFoundError } from '../../../shared/errors.js';

import {
  args,
  changeFlag,
  Constraint,
  Environment,
  environmentOf,
  FeatureName,
  Files,
  flagPage,
  type McpTool,
  ProjectId,
  projectOf,
  StrategyVariant,
  tool,
} from './tool.js';

/** The tools that change flags: create, roll out, switch, change or remove a strategy, clean up; in a protected environment each goes into the caller's draft change request. */
export const FLAG_CHANGE_TOOLS: McpTool[] = [
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
    access: { permission: 'CREATE_FEATURE', project: 'projectId or default' },
    async run({ name, type, description, impressionData }, call) {
      const project = projectOf(call);
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
    // Adding a rollout is what every call may do; updating the one there is checked by the change itself.
    access: { permission: 'CREATE_FEATURE_STRATEGY', project: 'flag', inEnvironment: true },
    async run({ featureName, environment, rolloutPercentage, groupId, stickiness, title, disabled, variants }, call) {
      const project = projectOf(call);
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
    access: { permission: 'UPDATE_FEATURE_ENVIRONMENT', project: 'flag', inEnvironment: true },
    async run({ featureName, environment, enabled }, call) {
      const project = projectOf(call);
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
    access: { permission: 'UPDATE_FEATURE_STRATEGY', project: 'flag', inEnvironment: true },
    async run({ projectId, featureName, environment, strategyId, ...fields }, call) {
      const project = projectOf(call);
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
    access: { permission: 'DELETE_FEATURE_STRATEGY', project: 'flag', inEnvironment: true },
    async run({ featureName, environment, strategyId }, call) {
      const project = projectOf(call);
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
    access: { permission: ({ archive }: { archive?: boolean }) => (archive ? 'DELETE_FEATURE' : 'READ'), project: 'flag' },
    async run({ flagName, preservePath, files, archive }, call) {
      const project = projectOf(call);
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
];
