import { sql } from 'kysely';
import type { DatabaseHandle, Db } from '../../db/database.js';
import { CHANGE_REQUEST_STATES } from '../../db/schema.js';
import type { DatabaseFigures, MetricsSources } from '../../shared/metrics.js';

/** What the `vexil_db_*` gauges read: the audit log's totals, the integrations' outbox and change requests by state. */
export async function readDatabaseFigures(db: Db): Promise<DatabaseFigures> {
  // event_counts holds exact per-type totals (a few rows per type), so this never counts the log itself.
  const [events, backlog, changeRequests] = await Promise.all([
    sql<{ scope: string; count: number }>`
      SELECT scope, sum(count)::int8 AS count FROM event_counts WHERE scope LIKE 'type:%' GROUP BY scope`.execute(db),
    sql<{ integration: number; provider: string; pending: number; oldest_seconds: number }>`
      SELECT a.id AS integration, a.provider, count(d.id)::int8 AS pending,
             coalesce(extract(epoch FROM now() - min(d.created_at)), 0)::float8 AS oldest_seconds
      FROM addons a LEFT JOIN addon_deliveries d ON d.addon_id = a.id
      GROUP BY a.id, a.provider`.execute(db),
    sql<{ state: string; count: number }>`SELECT state, count(*)::int8 AS count FROM change_requests GROUP BY state`.execute(db),
  ]);
  const byState = new Map(changeRequests.rows.map((row) => [row.state, Number(row.count)]));
  return {
    eventsByType: events.rows.map((row) => ({ type: row.scope.slice('type:'.length), count: Number(row.count) })),
    backlog: backlog.rows.map((row) => ({
      integration: String(row.integration),
      provider: row.provider,
      pending: Number(row.pending),
      oldestSeconds: Math.max(0, Number(row.oldest_seconds)),
    })),
    changeRequests: CHANGE_REQUEST_STATES.map((state) => ({ state, count: byState.get(state) ?? 0 })),
  };
}

/** The metrics' sources for a database handle. */
export function metricsSourcesOf(handle: Pick<DatabaseHandle, 'db' | 'poolUse' | 'databaseUp'>): MetricsSources {
  return {
    readDatabaseFigures: () => readDatabaseFigures(handle.db),
    ...(handle.poolUse ? { poolUse: handle.poolUse } : {}),
    ...(handle.databaseUp ? { databaseUp: handle.databaseUp } : {}),
  };
}
