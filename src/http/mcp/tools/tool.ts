import type { Db } from '../../../db/database.js';
import type { Permission } from '../../../domain/access/permissions.js';
import { type Static, type TObject, Type } from '@sinclair/typebox';
import { inUnitOfWork, type Actor, type UnitOfWork } from '../../../db/unit-of-work.js';
import { authorize } from '../../../domain/access/authorize.js';
import { changeOrPropose } from '../../../domain/change-requests/change-or-propose.js';
import type { FeatureChange } from '../../../domain/change-requests/change-actions.js';
import { projectOfFlag } from '../../../domain/features/feature-lookup.js';
import type { FeatureView } from '../../../domain/features/feature-views.js';
import { NotFoundError } from '../../../shared/errors.js';
import type { RouteDeps } from '../../deps.js';

/** What a tool call runs with: the app's services, the caller (with the agent it came through), and links into the UI. */
export interface ToolCall {
  deps: RouteDeps;
  actor: Actor;
  /** The project the tool acts in, as its declaration says where it comes from (resolved and authorized before it runs). */
  project: string | undefined;
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

/**
 * Who may call a tool, declared as a route declares it and decided by the same `authorize()` before the tool runs: the
 * permission (which may depend on what the call asks, as archiving does), where the project it acts in comes from, and
 * whether it acts in the environment its `environment` argument names. A tool holds no check of its own.
 */
export interface ToolAccess<A> {
  permission: Permission | ((args: A) => Permission);
  /**
   * `flag`: the project of the flag its `featureName` (or `flagName`) names, which must exist (and be in `projectId` when
   * that is given); `flag if named`: that when a flag is named, else `projectId`; `projectId`: the project it names, when
   * it names one; `projectId or default`: that, or the default project.
   */
  project?: 'flag' | 'flag if named' | 'projectId' | 'projectId or default';
  inEnvironment?: boolean;
}

export interface McpTool<S extends TObject = TObject> {
  name: string;
  title: string;
  description: string;
  input: S;
  /** Reads nothing but changes nothing (readOnlyHint), or may remove something (destructiveHint). */
  effect: 'read' | 'write' | 'destructive';
  access: ToolAccess<Static<S>>;
  run(args: Static<S>, call: ToolCall): Promise<ToolAnswer>;
}

export const tool = <S extends TObject>(definition: McpTool<S>): McpTool => definition as unknown as McpTool;

export const Name = (description: string) => Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9~_.\\-]+$', description });
export const ProjectId = Type.Optional(Name('Project id; the project of the flag when a flag is named, else "default"'));
export const FeatureName = Name('Feature flag name');
export const Environment = Name('Environment name, such as development or production');
export const Files = Type.Optional(Type.Array(Type.String({ maxLength: 500 }), { maxItems: 200, description: 'Files the change touches' }));
export const CodeContext = Type.Optional(
  Type.String({ maxLength: 20_000, description: 'Code around the change, to find flags it already uses' }),
);
export const StrategyVariant = Type.Object(
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
export const Constraint = Type.Object(
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

export const args = <P extends Parameters<typeof Type.Object>[0]>(properties: P) =>
  Type.Object(properties, { additionalProperties: false });

type ToolArgs = { featureName?: string; flagName?: string; projectId?: string; environment?: string };

/** The project of a named flag, which must exist (and be in `projectId` when given). */
async function flagProject(db: Db, featureName: string, projectId: string | undefined): Promise<string> {
  const project = await projectOfFlag(db, featureName);
  if (project === undefined || (projectId !== undefined && projectId !== project)) {
    throw new NotFoundError(`Could not find flag "${featureName}"${projectId ? ` in project "${projectId}"` : ''}`);
  }
  return project;
}

/** Where a call acts, from its arguments, as its tool's declaration says. */
async function placeOf(access: ToolAccess<unknown>, args: ToolArgs, db: Db): Promise<{ project?: string; environment?: string }> {
  const flag = args.featureName ?? args.flagName;
  const project =
    access.project === 'flag' || (access.project === 'flag if named' && flag !== undefined)
      ? await flagProject(db, flag!, args.projectId)
      : access.project === 'projectId or default'
        ? (args.projectId ?? 'default')
        : access.project === undefined
          ? undefined
          : args.projectId;
  return { ...(project === undefined ? {} : { project }), ...(access.inEnvironment ? { environment: args.environment } : {}) };
}

/**
 * Decides a call as the routes' declarations are decided (`authorize()`: a project the caller may not see is a
 * NotFound, then a missing permission), and answers the project the tool acts in.
 */
export async function authorizeToolCall(tool: McpTool, args: object, db: Db, actor: Actor): Promise<string | undefined> {
  const place = await placeOf(tool.access as ToolAccess<unknown>, args as ToolArgs, db);
  const { permission } = tool.access;
  await authorize(db, actor, { permission: typeof permission === 'function' ? permission(args as never) : permission, ...place });
  return place.project;
}

/** The project a tool that declares one acts in. */
export function projectOf(call: ToolCall): string {
  if (call.project === undefined) throw new Error('The tool declared no project, or its call named none');
  return call.project;
}

export const flagPage = (call: ToolCall, project: string, flag: string) =>
  call.link(`/projects/${encodeURIComponent(project)}/flags/${encodeURIComponent(flag)}`);
export const changeRequestPage = (call: ToolCall, project: string, id: number) =>
  call.link(`/projects/${encodeURIComponent(project)}/change-requests/${id}`);

/**
 * Makes a change to a flag in an environment, or adds it to the caller's draft change request where the environment
 * requires one (`changeOrPropose`), and tells the agent which: done, or waiting for review, with the page to see.
 */
export async function changeFlag(
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

export function environmentOf(view: FeatureView, environment: string) {
  const found = view.environments.find((env) => env.name === environment);
  if (!found)
    throw new NotFoundError(
      `Flag "${view.name}" has no environment "${environment}" (its project has ${view.environments.map((env) => env.name).join(', ')})`,
    );
  return found;
}

export function describeFlag(view: FeatureView): string {
  const environments = view.environments
    .map(
      (env) =>
        `${env.name}: ${env.enabled ? 'on' : 'off'}${env.strategies.length ? ` (${env.strategies.map((s) => s.title || s.name).join(', ')})` : ''}`,
    )
    .join('; ');
  return `${view.name} (${view.type}${view.stale ? ', stale' : ''}) in project ${view.project}. ${environments || 'No environments.'}`;
}

/** A unit of work for a tool call, as `act` gives routes (refused in maintenance mode, as every unit of work is). */
export function toolUnitOfWork(deps: RouteDeps, actor: Actor) {
  return <T>(work: (uow: UnitOfWork) => Promise<T>): Promise<T> => inUnitOfWork(deps, actor, work);
}
