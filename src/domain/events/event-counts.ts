/**
 * Scopes of the exact event counters (table event_counts): the whole log, and each project, event type and
 * creator. A search filtering on exactly one of these reads its total from the counters instead of counting
 * matching rows, which at millions of events would cost hundreds of milliseconds.
 */
export const ALL_EVENTS_SCOPE = '*';
export const projectScope = (project: string) => `project:${project}`;
export const typeScope = (type: string) => `type:${type}`;
export const creatorScope = (userId: number) => `user:${userId}`;

export interface CountedEvent {
  type: string;
  project: string | null;
  createdByUserId: number | null;
}

export function scopesOf(event: CountedEvent): string[] {
  const scopes = [ALL_EVENTS_SCOPE, typeScope(event.type)];
  if (event.project) scopes.push(projectScope(event.project));
  if (event.createdByUserId !== null) scopes.push(creatorScope(event.createdByUserId));
  return scopes;
}

/** Recomputes every counter from the log, after bulk loads (the benchmark's seed, tests that write events directly). */
export const EVENT_COUNT_BACKFILL = [
  `DELETE FROM event_counts`,
  `INSERT INTO event_counts (scope, shard, count) SELECT '${ALL_EVENTS_SCOPE}', 0, count(*) FROM events`,
  `INSERT INTO event_counts (scope, shard, count) SELECT 'type:' || type, 0, count(*) FROM events GROUP BY type`,
  `INSERT INTO event_counts (scope, shard, count)
    SELECT 'project:' || project, 0, count(*) FROM events WHERE project IS NOT NULL GROUP BY project`,
  `INSERT INTO event_counts (scope, shard, count)
    SELECT 'user:' || created_by_user_id, 0, count(*) FROM events WHERE created_by_user_id IS NOT NULL GROUP BY created_by_user_id`,
];
