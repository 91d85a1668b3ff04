import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import { parseWholeNumber } from '../search/filters.js';

export interface ApplicationsQuery {
  /** Part of the application's name, in any case. */
  query?: string;
  offset?: string;
  limit?: string;
}

/** The applications SDKs registered, by name, one page of them with the total that match. */
export async function listApplications(db: Db, parameters: ApplicationsQuery) {
  const limit = parseWholeNumber('limit', parameters.limit, 100, 1, 1000);
  const offset = parseWholeNumber('offset', parameters.offset, 0, 0, Number.MAX_SAFE_INTEGER);
  const text = parameters.query?.trim();
  // LIKE's own wildcards in the text are matched as characters.
  const pattern = text ? `%${text.replace(/[\\%_]/g, (character) => `\\${character}`)}%` : undefined;
  let matching = db.selectFrom('client_applications as a');
  if (pattern) matching = matching.where(sql<boolean>`a.app_name ILIKE ${pattern}`);
  const [rows, total] = await Promise.all([
    matching
      .select(['a.app_name', 'a.strategies', 'a.created_at', 'a.seen_at'])
      .select((eb) =>
        eb
          .selectFrom('client_instances as i')
          .select((inner) => inner.fn.agg<string[]>('array_agg', ['i.environment']).distinct().as('environments'))
          .whereRef('i.app_name', '=', 'a.app_name')
          .as('environments'),
      )
      .orderBy('a.app_name')
      .limit(limit)
      .offset(offset)
      .execute(),
    matching.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return {
    applications: rows.map((row) => ({
      appName: row.app_name,
      strategies: row.strategies,
      environments: [...(row.environments ?? [])].sort(),
      createdAt: row.created_at.toISOString(),
      seenAt: row.seen_at.toISOString(),
    })),
    total: Number(total.total),
  };
}
