import type { TestApp } from './test-app.js';

export interface StoredEvent {
  id: number;
  type: string;
  createdBy: string;
  createdByUserId: number | null;
  project: string | null;
  environment: string | null;
  featureName: string | null;
  data: unknown;
  preData: unknown;
  tags: unknown;
  createdAt: Date;
  /** The agent a change came through (MCP); absent on every other change. */
  via?: string;
}

/** The events written after `afterId`, oldest first: what a change under test recorded. */
export async function eventsSince(ctx: Pick<TestApp, 'db'>, afterId: number): Promise<StoredEvent[]> {
  const rows = await ctx.db.selectFrom('events').selectAll().where('id', '>', afterId).orderBy('id').execute();
  return rows.map((row) => ({
    id: row.id,
    type: row.type,
    createdBy: row.created_by,
    createdByUserId: row.created_by_user_id,
    project: row.project,
    environment: row.environment,
    featureName: row.feature_name,
    data: row.data,
    preData: row.pre_data,
    tags: row.tags,
    createdAt: row.created_at,
    ...(row.via === null ? {} : { via: row.via }),
  }));
}

export async function lastEventId(ctx: Pick<TestApp, 'db'>): Promise<number> {
  const row = await ctx.db
    .selectFrom('events')
    .select((eb) => eb.fn.max('id').as('id'))
    .executeTakeFirst();
  return Number(row?.id ?? 0);
}

/** The events with only the fields a test asserts, in order. */
export function eventFields<K extends keyof StoredEvent>(events: StoredEvent[], ...fields: K[]): Array<Pick<StoredEvent, K>> {
  return events.map((event) => Object.fromEntries(fields.map((field) => [field, event[field]])) as Pick<StoredEvent, K>);
}
