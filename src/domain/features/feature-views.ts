import { ADMIN_TOKEN_USER_ID, SYSTEM_USER_ID } from '../access/actor.js';
import type { EventTag } from '../events/record-event.js';
import { iso } from '../../shared/dates.js';
import type { Db } from '../../db/database.js';

// Shapes of spec 2.5 (Unleash's featureSchema, featureEnvironmentSchema, featureStrategySchema).

export const CONSTRAINT_OPERATORS = [
  'NOT_IN',
  'IN',
  'STR_ENDS_WITH',
  'STR_STARTS_WITH',
  'STR_CONTAINS',
  'NUM_EQ',
  'NUM_GT',
  'NUM_GTE',
  'NUM_LT',
  'NUM_LTE',
  'DATE_AFTER',
  'DATE_BEFORE',
  'SEMVER_EQ',
  'SEMVER_GT',
  'SEMVER_LT',
  'SEMVER_GTE',
  'SEMVER_LTE',
  'REGEX',
  'IN_CIDR',
] as const;

export interface Constraint {
  contextName: string;
  operator: (typeof CONSTRAINT_OPERATORS)[number];
  caseInsensitive?: boolean;
  inverted?: boolean;
  values?: string[];
  value?: string;
}

export interface VariantPayload {
  type: 'json' | 'csv' | 'string' | 'number';
  value: string;
}

export interface StrategyVariant {
  name: string;
  weight: number;
  weightType: 'variable' | 'fix';
  stickiness: string;
  payload?: VariantPayload;
}

/** A variant as given: weights of `variable` variants are computed, so they may be left out. */
export interface VariantInput {
  name: string;
  weight?: number;
  weightType?: 'variable' | 'fix';
  stickiness?: string;
  payload?: VariantPayload;
  overrides?: Array<{ contextName: string; values: string[] }>;
}

export interface Variant {
  name: string;
  weight: number;
  weightType?: 'variable' | 'fix';
  stickiness?: string;
  payload?: VariantPayload;
  overrides?: Array<{ contextName: string; values: string[] }>;
}

export interface StrategyView {
  id: string;
  name: string;
  title: string | null;
  disabled: boolean;
  featureName: string;
  sortOrder: number;
  segments: number[];
  constraints: Constraint[];
  variants: StrategyVariant[];
  parameters: Record<string, string>;
}

export interface FeatureEnvironmentView {
  name: string;
  environment: string;
  featureName: string;
  type: string;
  enabled: boolean;
  sortOrder: number;
  variantCount: number;
  strategies: StrategyView[];
  variants: Variant[];
  lastSeenAt: string | null;
  hasStrategies: boolean;
  hasEnabledStrategies: boolean;
}

export interface LifecycleView {
  stage: string;
  status: string | null;
  enteredStageAt: string;
}

/** What events carry as a flag's data: its own fields, without the per-environment configuration. */
export interface FeatureMetadata {
  name: string;
  project: string;
  type: string;
  description: string | null;
  impressionData: boolean;
  stale: boolean;
  archived: boolean;
  archivedAt: string | null;
  createdAt: string;
}

/** A link of a flag, as Unleash's `featureSchema` lists it. */
export interface FeatureLinkView {
  id: string;
  url: string;
  title: string | null;
  feature: string;
}

/** The flags' links, oldest first, by flag. */
export async function loadFeatureLinks(db: Db, names: string[]): Promise<Map<string, FeatureLinkView[]>> {
  const byFlag = new Map<string, FeatureLinkView[]>();
  if (names.length === 0) return byFlag;
  const rows = await db.selectFrom('feature_links').selectAll().where('feature_name', 'in', names).orderBy('position').execute();
  for (const row of rows) {
    byFlag.set(row.feature_name, [
      ...(byFlag.get(row.feature_name) ?? []),
      { id: row.id, url: row.url, title: row.title, feature: row.feature_name },
    ]);
  }
  return byFlag;
}

export interface FeatureView extends FeatureMetadata {
  lastSeenAt: string | null;
  favorite: boolean;
  environments: FeatureEnvironmentView[];
  tags: EventTag[];
  dependencies: Array<{ feature: string; enabled: boolean; variants: string[] }>;
  children: string[];
  lifecycle: LifecycleView | null;
  createdBy: { id: number; name: string; imageUrl: string };
  links: FeatureLinkView[];
}

/** Ordering of lifecycle stages, so the current stage is the latest one entered. */
export const LIFECYCLE_STAGES = ['initial', 'pre-live', 'live', 'completed', 'archived'] as const;

export interface FeatureRow {
  name: string;
  project: string;
  type: string;
  description: string | null;
  impression_data: boolean;
  stale: boolean;
  created_at: Date;
  created_by_user_id: number | null;
  created_by: string;
  archived_at: Date | null;
}

export function toFeatureMetadata(row: FeatureRow): FeatureMetadata {
  return {
    name: row.name,
    project: row.project,
    type: row.type,
    description: row.description,
    impressionData: row.impression_data,
    stale: row.stale,
    archived: row.archived_at !== null,
    archivedAt: iso(row.archived_at),
    createdAt: row.created_at.toISOString(),
  };
}

function groupBy<T, K>(items: T[], key: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) {
    const k = key(item);
    const group = groups.get(k);
    if (group) group.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}

export async function loadStrategies(
  tx: Db,
  featureNames: string[],
  strategyId?: string,
): Promise<Array<StrategyView & { environment: string }>> {
  if (featureNames.length === 0) return [];
  let query = tx
    .selectFrom('feature_strategies')
    .selectAll()
    .where('feature_name', 'in', featureNames)
    .orderBy('sort_order')
    .orderBy('created_at')
    .orderBy('id');
  if (strategyId) query = query.where('id', '=', strategyId);
  const rows = await query.execute();
  const segmentRows =
    rows.length === 0
      ? []
      : await tx
          .selectFrom('feature_strategy_segments')
          .selectAll()
          .where(
            'strategy_id',
            'in',
            rows.map((row) => row.id),
          )
          .orderBy('segment_id')
          .execute();
  const segmentsByStrategy = groupBy(segmentRows, (row) => row.strategy_id);
  return rows.map((row) => ({
    id: row.id,
    name: row.strategy_name,
    title: row.title,
    disabled: row.disabled,
    featureName: row.feature_name,
    sortOrder: row.sort_order,
    segments: (segmentsByStrategy.get(row.id) ?? []).map((s) => s.segment_id),
    constraints: row.constraints as Constraint[],
    variants: row.variants as StrategyVariant[],
    parameters: row.parameters as Record<string, string>,
    environment: row.environment,
  }));
}

export async function loadFeatureTags(tx: Db, featureNames: string[]): Promise<Map<string, EventTag[]>> {
  if (featureNames.length === 0) return new Map();
  const rows = await tx
    .selectFrom('feature_tags')
    .select(['feature_name', 'tag_type', 'tag_value'])
    .where('feature_name', 'in', featureNames)
    .orderBy('tag_type')
    .orderBy('tag_value')
    .execute();
  const tags = groupBy(rows, (row) => row.feature_name);
  return new Map([...tags].map(([name, list]) => [name, list.map((t) => ({ type: t.tag_type, value: t.tag_value }))]));
}

function creatorOf(row: FeatureRow, userNames: Map<number, { name: string; imageUrl: string | null }>) {
  const id = row.created_by_user_id ?? SYSTEM_USER_ID;
  const user = userNames.get(id);
  const fallback = id === ADMIN_TOKEN_USER_ID ? 'admin-token' : row.created_by;
  return { id, name: user?.name ?? fallback, imageUrl: user?.imageUrl ?? '' };
}

/**
 * Full views of the given flags in a fixed number of queries whatever their count: rows, environments of
 * their projects, per-environment state, strategies, tags, dependencies, lifecycle and the caller's favorites.
 */
export async function loadFeatureViews(tx: Db, rows: FeatureRow[], viewerUserId: number | null): Promise<FeatureView[]> {
  if (rows.length === 0) return [];
  const names = rows.map((row) => row.name);
  const projects = [...new Set(rows.map((row) => row.project))];
  const [projectEnvironments, featureEnvironments, strategies, tags, dependencies, lifecycles, favorites, users, links] = await Promise.all(
    [
      tx
        .selectFrom('project_environments as pe')
        .innerJoin('environments as e', 'e.name', 'pe.environment_name')
        .select(['pe.project_id', 'e.name', 'e.type', 'e.sort_order'])
        .where('pe.project_id', 'in', projects)
        .orderBy('e.sort_order')
        .orderBy('e.name')
        .execute(),
      tx.selectFrom('feature_environments').selectAll().where('feature_name', 'in', names).execute(),
      loadStrategies(tx, names),
      loadFeatureTags(tx, names),
      tx
        .selectFrom('feature_dependencies')
        .selectAll()
        .where((eb) => eb.or([eb('child', 'in', names), eb('parent', 'in', names)]))
        .orderBy('parent')
        .orderBy('child')
        .execute(),
      tx.selectFrom('feature_lifecycles').selectAll().where('feature_name', 'in', names).execute(),
      viewerUserId === null
        ? Promise.resolve([])
        : tx
            .selectFrom('favorite_features')
            .select('feature_name')
            .where('user_id', '=', viewerUserId)
            .where('feature_name', 'in', names)
            .execute(),
      tx
        .selectFrom('users')
        .select(['id', 'name', 'username', 'email', 'image_url'])
        .where('id', 'in', [...new Set(rows.map((row) => row.created_by_user_id ?? SYSTEM_USER_ID))])
        .execute(),
      loadFeatureLinks(tx, names),
    ],
  );

  const environmentsByProject = groupBy(projectEnvironments, (row) => row.project_id);
  const stateByKey = new Map(featureEnvironments.map((row) => [`${row.feature_name}\u0000${row.environment}`, row]));
  const strategiesByKey = groupBy(strategies, (s) => `${s.featureName}\u0000${s.environment}`);
  const favoriteNames = new Set(favorites.map((row) => row.feature_name));
  const lifecycleByFeature = groupBy(lifecycles, (row) => row.feature_name);
  const userNames = new Map(users.map((u) => [u.id, { name: (u.name ?? u.username ?? u.email)!, imageUrl: u.image_url }]));

  return rows.map((row) => {
    const environments = (environmentsByProject.get(row.project) ?? []).map((env): FeatureEnvironmentView => {
      const key = `${row.name}\u0000${env.name}`;
      const state = stateByKey.get(key);
      const envStrategies = (strategiesByKey.get(key) ?? []).map(({ environment: _environment, ...strategy }) => strategy);
      const variants = (state?.variants ?? []) as Variant[];
      return {
        name: env.name,
        environment: env.name,
        featureName: row.name,
        type: env.type,
        enabled: state?.enabled ?? false,
        sortOrder: env.sort_order,
        variantCount: variants.length,
        strategies: envStrategies,
        variants,
        lastSeenAt: null,
        hasStrategies: envStrategies.length > 0,
        hasEnabledStrategies: envStrategies.some((strategy) => !strategy.disabled),
      };
    });
    const stages = (lifecycleByFeature.get(row.name) ?? []).sort(
      (a, b) =>
        LIFECYCLE_STAGES.indexOf(a.stage as (typeof LIFECYCLE_STAGES)[number]) -
        LIFECYCLE_STAGES.indexOf(b.stage as (typeof LIFECYCLE_STAGES)[number]),
    );
    const current = stages.at(-1);
    return {
      ...toFeatureMetadata(row),
      lastSeenAt: null,
      favorite: favoriteNames.has(row.name),
      environments,
      tags: tags.get(row.name) ?? [],
      dependencies: dependencies
        .filter((d) => d.child === row.name)
        .map((d) => ({ feature: d.parent, enabled: d.enabled, variants: d.variants as string[] })),
      children: dependencies.filter((d) => d.parent === row.name).map((d) => d.child),
      lifecycle: current ? { stage: current.stage, status: current.status, enteredStageAt: current.created_at.toISOString() } : null,
      createdBy: creatorOf(row, userNames),
      links: links.get(row.name) ?? [],
    };
  });
}
