import { sql } from 'kysely';
/** One strategy that uses something (a segment, a context field); a flag and environment may have several. */
export interface FlagUsage {
  featureName: string;
  environment: string;
  archived: boolean;
}

const LISTED = 10;

export function joinWords(items: string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

/**
 * `flag "a" (development, production) and flag "b" (production, archived)`, for conflict messages that must say
 * what to change first. Long lists name the first ten flags and count the rest.
 */
export function describeFlagUsage(usages: FlagUsage[]): string {
  const byFlag = new Map<string, { environments: Set<string>; archived: boolean }>();
  for (const usage of usages) {
    const entry = byFlag.get(usage.featureName) ?? { environments: new Set<string>(), archived: usage.archived };
    entry.environments.add(usage.environment);
    byFlag.set(usage.featureName, entry);
  }
  const names = [...byFlag.keys()].sort();
  const described = names.slice(0, LISTED).map((name) => {
    const { environments, archived } = byFlag.get(name)!;
    const where = [...[...environments].sort(), ...(archived ? ['archived'] : [])].join(', ');
    return `flag "${name}" (${where})`;
  });
  if (names.length > LISTED) described.push(`${names.length - LISTED} more flag${names.length - LISTED > 1 ? 's' : ''}`);
  return joinWords(described);
}

/** A strategy that uses something (a context field, a segment), as the API lists it, from its row. */
export function strategyUse(row: { id: string; feature_name: string; project: string; environment: string; strategy_name: string }) {
  return {
    id: row.id,
    featureName: row.feature_name,
    projectId: row.project,
    environment: row.environment,
    strategyName: row.strategy_name,
  };
}

/** The order usage lists strategies in (over `feature_strategies as fs`): by flag, environment, then their place. */
export const BY_FLAG_AND_PLACE = sql`fs.feature_name, fs.environment, fs.sort_order, fs.id`;
