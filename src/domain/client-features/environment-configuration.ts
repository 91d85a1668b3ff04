import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import { inReadSnapshot } from '../../db/unit-of-work.js';
import type { Constraint, StrategyVariant, Variant } from '../features/feature-views.js';

/** A flag as server-side SDKs read it (Unleash's clientFeatureSchema), for one environment. */
export interface ClientFeature {
  name: string;
  type: string;
  description: string | null;
  project: string;
  enabled: boolean;
  stale: boolean;
  impressionData: boolean;
  strategies: ClientStrategy[];
  variants: Variant[];
  dependencies?: Array<{ feature: string; enabled: boolean; variants?: string[] }>;
}

export interface ClientStrategy {
  id: string;
  name: string;
  title?: string;
  sortOrder: number;
  constraints: Constraint[];
  parameters: Record<string, string>;
  segments?: number[];
  variants: StrategyVariant[];
}

/** A segment as SDKs read it: its constraints are added to those of every strategy that names it. */
export interface ClientSegment {
  id: number;
  name: string;
  constraints: Constraint[];
}

/** What one environment's SDKs read, as of `revision` (raised by each commit that changes it, in commit order). */
export interface EnvironmentConfiguration {
  environment: string;
  revision: number;
  /** Sorted by name. */
  features: ClientFeature[];
  /** `type:value` of each flag's tags, for the `tag` query filter (not part of what SDKs receive). */
  tags: Map<string, Set<string>>;
  /** Every segment a strategy of the environment uses, by id. */
  segments: Map<number, ClientSegment>;
}

/**
 * Loads one environment's whole client configuration in a fixed number of queries, inside one repeatable-read
 * transaction on PostgreSQL so the revision and the rows are one consistent snapshot. Archived flags and
 * disabled strategies are left out. A flag whose project does not have the environment is served disabled,
 * with no strategies or variants, as Unleash serves it: an SDK then answers `false`, not the application's
 * fallback value.
 */
export async function loadEnvironmentConfiguration(
  db: Db,
  environment: string,
  /** Only these flags (and the segments they use): what a change named, merged into what is held. */
  only?: string[],
  /** Segments to read besides those the flags read use (their definitions changed). */
  alsoSegments: number[] = [],
): Promise<EnvironmentConfiguration> {
  // An empty list selects nothing; `in ()` is not SQL.
  const named = only && only.length === 0 ? [''] : only;
  return inReadSnapshot(db, async (tx) => {
    const revisionRow = await tx.selectFrom('configuration_revision').select('revision').executeTakeFirstOrThrow();
    const features = await tx
      .selectFrom('features as f')
      .leftJoin('project_environments as pe', (join) =>
        join.onRef('pe.project_id', '=', 'f.project').on('pe.environment_name', '=', environment),
      )
      .leftJoin('feature_environments as fe', (join) => join.onRef('fe.feature_name', '=', 'f.name').on('fe.environment', '=', environment))
      .select(['f.name', 'f.type', 'f.description', 'f.project', 'f.stale', 'f.impression_data', 'fe.enabled', 'fe.variants'])
      .select(sql<boolean>`pe.project_id IS NOT NULL`.as('has_environment'))
      .where('f.archived_at', 'is', null)
      .$if(named !== undefined, (query) => query.where('f.name', 'in', named!))
      .orderBy('f.name')
      .execute();
    const strategies = await tx
      .selectFrom('feature_strategies as fs')
      .innerJoin('features as f', 'f.name', 'fs.feature_name')
      .innerJoin('project_environments as pe', (join) =>
        join.onRef('pe.project_id', '=', 'f.project').on('pe.environment_name', '=', environment),
      )
      .select([
        'fs.id',
        'fs.feature_name',
        'fs.strategy_name',
        'fs.title',
        'fs.sort_order',
        'fs.parameters',
        'fs.constraints',
        'fs.variants',
      ])
      .select(
        sql<
          number[] | null
        >`(SELECT array_agg(fss.segment_id ORDER BY fss.segment_id) FROM feature_strategy_segments fss WHERE fss.strategy_id = fs.id)`.as(
          'segment_ids',
        ),
      )
      .where('fs.environment', '=', environment)
      .where('fs.disabled', '=', false)
      .where('f.archived_at', 'is', null)
      .$if(named !== undefined, (query) => query.where('fs.feature_name', 'in', named!))
      .orderBy('fs.sort_order')
      .orderBy('fs.created_at')
      .orderBy('fs.id')
      .execute();
    const dependencies = await tx
      .selectFrom('feature_dependencies as d')
      .innerJoin('features as f', 'f.name', 'd.child')
      .select(['d.child', 'd.parent', 'd.enabled', 'd.variants'])
      .where('f.archived_at', 'is', null)
      .$if(named !== undefined, (query) => query.where('d.child', 'in', named!))
      .orderBy('d.parent')
      .execute();
    const tags = await tx
      .selectFrom('feature_tags as t')
      .innerJoin('features as f', 'f.name', 't.feature_name')
      .select(['t.feature_name', 't.tag_type', 't.tag_value'])
      .where('f.archived_at', 'is', null)
      .$if(named !== undefined, (query) => query.where('t.feature_name', 'in', named!))
      .execute();
    const segmentIds = [...new Set([...strategies.flatMap((s) => s.segment_ids ?? []), ...alsoSegments])];
    const segments =
      segmentIds.length === 0
        ? []
        : await tx.selectFrom('segments').select(['id', 'name', 'constraints']).where('id', 'in', segmentIds).orderBy('id').execute();

    const strategiesByFeature = new Map<string, ClientStrategy[]>();
    for (const row of strategies) {
      const list = strategiesByFeature.get(row.feature_name) ?? [];
      list.push({
        id: row.id,
        name: row.strategy_name,
        ...(row.title ? { title: row.title } : {}),
        sortOrder: row.sort_order,
        constraints: row.constraints as Constraint[],
        parameters: row.parameters as Record<string, string>,
        ...(row.segment_ids && row.segment_ids.length > 0 ? { segments: row.segment_ids } : {}),
        variants: row.variants as StrategyVariant[],
      });
      strategiesByFeature.set(row.feature_name, list);
    }
    const dependenciesByChild = new Map<string, NonNullable<ClientFeature['dependencies']>>();
    for (const row of dependencies) {
      const list = dependenciesByChild.get(row.child) ?? [];
      const variants = row.variants as string[];
      list.push({ feature: row.parent, enabled: row.enabled, ...(variants.length > 0 ? { variants } : {}) });
      dependenciesByChild.set(row.child, list);
    }
    const tagsByFeature = new Map<string, Set<string>>();
    for (const row of tags) {
      const set = tagsByFeature.get(row.feature_name) ?? new Set<string>();
      set.add(`${row.tag_type}:${row.tag_value}`);
      tagsByFeature.set(row.feature_name, set);
    }
    return {
      environment,
      revision: revisionRow.revision,
      features: features.map((row) => {
        const feature: ClientFeature = {
          name: row.name,
          type: row.type,
          description: row.description,
          project: row.project,
          enabled: row.has_environment && (row.enabled ?? false),
          stale: row.stale,
          impressionData: row.impression_data,
          strategies: strategiesByFeature.get(row.name) ?? [],
          variants: row.has_environment ? ((row.variants ?? []) as Variant[]) : [],
        };
        const parents = dependenciesByChild.get(row.name);
        if (parents) feature.dependencies = parents;
        return feature;
      }),
      tags: tagsByFeature,
      segments: new Map(segments.map((s) => [s.id, { id: s.id, name: s.name, constraints: s.constraints as Constraint[] }])),
    };
  });
}
