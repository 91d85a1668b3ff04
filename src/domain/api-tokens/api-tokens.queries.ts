import type { Selectable } from 'kysely';
import type { Db } from '../../db/database.js';
import type { ApiTokensTable } from '../../db/schema.js';
import { hashToken } from '../../shared/secrets.js';
import { iso } from '../../shared/dates.js';

export const ALL = '*';

/** A token as listed (Unleash's `apiTokenSchema` without the secret, which is shown only at creation). */
export interface ApiTokenView {
  id: number;
  tokenName: string;
  type: string;
  environment: string;
  project: string;
  projects: string[];
  expiresAt: string | null;
  createdAt: string;
  seenAt: string | null;
}

export function toApiTokenView(row: Selectable<ApiTokensTable>, projects: string[]): ApiTokenView {
  const scopedProjects = projects.length === 0 ? [ALL] : [...projects].sort();
  return {
    id: row.id,
    tokenName: row.token_name,
    type: row.type,
    environment: row.environment ?? ALL,
    project: scopedProjects.length === 1 ? scopedProjects[0]! : '[]',
    projects: scopedProjects,
    expiresAt: iso(row.expires_at),
    createdAt: row.created_at.toISOString(),
    seenAt: iso(row.seen_at),
  };
}

async function projectsByToken(db: Db, tokenIds: number[]): Promise<Map<number, string[]>> {
  const byToken = new Map<number, string[]>();
  if (tokenIds.length === 0) return byToken;
  const rows = await db.selectFrom('api_token_projects').selectAll().where('token_id', 'in', tokenIds).execute();
  for (const row of rows) byToken.set(row.token_id, [...(byToken.get(row.token_id) ?? []), row.project_id]);
  return byToken;
}

export async function listApiTokens(db: Db): Promise<ApiTokenView[]> {
  const rows = await db.selectFrom('api_tokens').selectAll().orderBy('id').execute();
  const projects = await projectsByToken(
    db,
    rows.map((row) => row.id),
  );
  return rows.map((row) => toApiTokenView(row, projects.get(row.id) ?? []));
}

/** Finds a token by its full secret or its id, locking the row for the caller's transaction. */
export async function findApiTokenForUpdate(tx: Db, reference: string): Promise<ApiTokenView | undefined> {
  const query = tx.selectFrom('api_tokens').selectAll().forUpdate();
  const row = await (/^[0-9]{1,9}$/.test(reference)
    ? query.where('id', '=', Number(reference))
    : query.where('secret_hash', '=', hashToken(reference))
  ).executeTakeFirst();
  if (!row) return undefined;
  const projects = await projectsByToken(tx, [row.id]);
  return toApiTokenView(row, projects.get(row.id) ?? []);
}
