import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import { NotFoundError } from '../../shared/errors.js';
import type { NormalizedStrategy, StrategyInput } from './strategies.js';

/**
 * A project's environments as its flags see them: the default strategy each gives a flag turned on without strategies
 * (set by projects/default-strategies.ts), and how Unleash lists them for one project.
 */

/** What turning a flag on without strategies adds where its project sets no default: a 100% flexible rollout. */
export const DEFAULT_STRATEGY: StrategyInput = { name: 'flexibleRollout', parameters: { rollout: '100', stickiness: 'default' } };

/** A project's default strategy in one environment, as stored: a normalized strategy whose groupId '' is the flag's name. */
export type ProjectDefaultStrategy = NormalizedStrategy & { title: string };

/** The strategy a flag gets from a default: the flag's name as its groupId where the default names none. */
export function defaultStrategyOf(stored: ProjectDefaultStrategy | null | undefined, featureName: string): StrategyInput {
  if (!stored) return DEFAULT_STRATEGY;
  return { ...stored, parameters: { ...stored.parameters, groupId: stored.parameters.groupId || featureName } };
}

/** The project's default strategies by environment (unset ones left out). */
export async function projectDefaultStrategies(db: Db, project: string): Promise<Map<string, ProjectDefaultStrategy>> {
  const rows = await db
    .selectFrom('project_environments')
    .select(['environment_name', 'default_strategy'])
    .where('project_id', '=', project)
    .where('default_strategy', 'is not', null)
    .execute();
  return new Map(rows.map((row) => [row.environment_name, row.default_strategy as ProjectDefaultStrategy]));
}

/**
 * What turning `featureName` on without strategies adds in the project's environment: the project's default there, or
 * Vexil's. Segments deleted since the default was set are left out.
 */
export async function defaultStrategyFor(
  db: Db,
  target: { project: string; environment: string; featureName: string },
): Promise<StrategyInput> {
  const row = await db
    .selectFrom('project_environments')
    .select('default_strategy')
    .where('project_id', '=', target.project)
    .where('environment_name', '=', target.environment)
    .executeTakeFirst();
  const stored = row?.default_strategy as ProjectDefaultStrategy | null | undefined;
  if (!stored || stored.segments.length === 0) return defaultStrategyOf(stored, target.featureName);
  const existing = await db.selectFrom('segments').select('id').where('id', 'in', stored.segments).execute();
  const kept = new Set(existing.map((segment) => segment.id));
  return defaultStrategyOf({ ...stored, segments: stored.segments.filter((id) => kept.has(id)) }, target.featureName);
}

/** An environment as Unleash's `environmentProjectSchema` shows it for one project. */
export interface ProjectEnvironmentView {
  name: string;
  type: string;
  enabled: boolean;
  /** Unleash's built-in environments cannot be deleted; none of Vexil's is held back so. */
  protected: false;
  sortOrder: number;
  /** Client and frontend tokens of this environment that reach the project. */
  projectApiTokenCount: number;
  /** The project's flags turned on here. */
  projectEnabledToggleCount: number;
  defaultStrategy?: ProjectDefaultStrategy;
  /** Whether the project has the environment: its flags can be turned on there. */
  visible: boolean;
}

/**
 * Every environment as one project sees it (Unleash's `GET /api/admin/environments/project/:projectId`, which
 * Terraform's provider reads). Unleash answers any project id; an unknown one is a 404 here.
 */
export async function listProjectEnvironments(db: Db, project: string): Promise<ProjectEnvironmentView[]> {
  const exists = await db.selectFrom('projects').select('id').where('id', '=', project).executeTakeFirst();
  if (!exists) throw new NotFoundError(`Could not find project "${project}"`);
  const rows = await db
    .selectFrom('environments as e')
    .leftJoin('project_environments as pe', (join) => join.onRef('pe.environment_name', '=', 'e.name').on('pe.project_id', '=', project))
    .select(['e.name', 'e.type', 'e.enabled', 'e.sort_order', 'pe.project_id', 'pe.default_strategy'])
    .select((eb) => [
      eb
        .selectFrom('api_tokens as t')
        .select(sql<number>`count(*)::int`.as('n'))
        .whereRef('t.environment', '=', 'e.name')
        .where((inner) =>
          inner.or([
            inner.exists(
              inner
                .selectFrom('api_token_projects as tp')
                .select('tp.token_id')
                .whereRef('tp.token_id', '=', 't.id')
                .where('tp.project_id', '=', project),
            ),
            inner.not(
              inner.exists(inner.selectFrom('api_token_projects as tp').select('tp.token_id').whereRef('tp.token_id', '=', 't.id')),
            ),
          ]),
        )
        .as('token_count'),
      eb
        .selectFrom('feature_environments as fe')
        .innerJoin('features as f', 'f.name', 'fe.feature_name')
        .select(sql<number>`count(*)::int`.as('n'))
        .whereRef('fe.environment', '=', 'e.name')
        .where('fe.enabled', '=', true)
        .where('f.project', '=', project)
        .where('f.archived_at', 'is', null)
        .as('enabled_count'),
    ])
    .orderBy('e.sort_order')
    .orderBy('e.name')
    .execute();
  return rows.map((row) => ({
    name: row.name,
    type: row.type,
    enabled: row.enabled,
    protected: false,
    sortOrder: row.sort_order,
    projectApiTokenCount: row.token_count ?? 0,
    projectEnabledToggleCount: row.enabled_count ?? 0,
    ...(row.default_strategy ? { defaultStrategy: row.default_strategy as ProjectDefaultStrategy } : {}),
    visible: row.project_id !== null,
  }));
}
