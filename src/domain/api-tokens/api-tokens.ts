import type { ApiTokenType, ApiTokensTable } from '../../db/schema.js';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { BadDataError, NotFoundError, PermissionError } from '../../shared/errors.js';
import { actorRootRole } from '../access/actor.js';
import { hashToken, randomSecret } from '../../shared/secrets.js';
import { recordEvent } from '../events/record-event.js';
import type { Selectable } from 'kysely';
import type { Db, Tx } from '../../db/database.js';
import { iso } from '../../shared/dates.js';

export interface CreateApiTokenInput {
  tokenName: string;
  type: ApiTokenType;
  /** `*` (or absent) for admin tokens; an environment name for client and frontend tokens. */
  environment?: string;
  /** `['*']` means every project. */
  projects: string[];
  expiresAt?: Date;
}

/** Unleash's secret format: `<project>:<environment>.<random>`, `[]` standing for several projects. */
function formatSecret(projects: string[], environment: string): string {
  return `${secretProjectPart(projects)}:${environment}.${randomSecret()}`;
}

function validateScope(input: CreateApiTokenInput): { environment: string | null; projects: string[] } {
  const allProjects = input.projects.includes(ALL);
  if (allProjects && input.projects.length > 1) {
    throw new BadDataError('A token spans either every project ("*") or a list of projects, not both', [
      { path: '/body/projects', message: `"*" cannot be combined with project names (got ${JSON.stringify(input.projects)})` },
    ]);
  }
  if (input.type === 'admin') {
    const details = [];
    if (input.environment !== undefined && input.environment !== ALL) {
      details.push({
        path: '/body/environment',
        message: `An admin token spans every environment: leave environment out or set it to "*" (got "${input.environment}")`,
      });
    }
    if (!allProjects) {
      details.push({
        path: '/body/projects',
        message: `An admin token spans every project: leave projects out or set them to "*" (got ${JSON.stringify(input.projects)})`,
      });
    }
    if (details.length > 0) throw new BadDataError('Admin tokens span every project and environment', details);
    return { environment: null, projects: [] };
  }
  if (input.environment === ALL) {
    throw new BadDataError(`A ${input.type} token belongs to one environment`, [
      { path: '/body/environment', message: 'Name one environment (got "*")' },
    ]);
  }
  return { environment: input.environment ?? 'development', projects: allProjects ? [] : [...new Set(input.projects)] };
}

/** Creates a token and returns it with its secret: the only time the secret is ever shown. */
export async function createApiToken(uow: UnitOfWork, input: CreateApiTokenInput): Promise<ApiTokenView & { secret: string }> {
  if (input.type === 'admin') assertMayHoldAdminTokens(uow);
  if (input.expiresAt && input.expiresAt.getTime() <= uow.now.getTime()) {
    throw new BadDataError('The expiry date must be in the future', [
      { path: '/body/expiresAt', message: `expiresAt must be later than now (got ${input.expiresAt.toISOString()})` },
    ]);
  }
  const scope = validateScope(input);
  const secret = formatSecret(scope.projects.length === 0 ? [ALL] : scope.projects, scope.environment ?? ALL);
  return { ...(await insertApiToken(uow, input, scope, secret)), secret };
}

/**
 * An admin token acts as an Admin: only an Admin may make one or change when one expires. A custom root role
 * given CREATE_API_TOKEN (for SDK tokens) would otherwise mint itself every permission.
 */
function assertMayHoldAdminTokens(uow: UnitOfWork): void {
  if (actorRootRole(uow.actor) === 'Admin') return;
  throw new PermissionError('Only an Admin may create or extend admin tokens, which act as an Admin', ['ADMIN']);
}

/** Unleash's project part of a secret for a scope: the one project, `*` for every project, `[]` for several. */
export function secretProjectPart(projects: string[]): string {
  return projects.length === 1 ? projects[0]! : projects.length === 0 || projects.includes(ALL) ? ALL : '[]';
}

/** Whether a token with this secret exists. */
export async function tokenExists(db: Db, secret: string): Promise<boolean> {
  return (await db.selectFrom('api_tokens').select('id').where('secret_hash', '=', hashToken(secret)).executeTakeFirst()) !== undefined;
}

/** Creates a client token with a secret the caller derived (an edge client's); its scope is checked as any token's. */
export async function createDerivedClientToken(
  uow: UnitOfWork,
  input: { tokenName: string; environment: string; projects: string[] },
  secret: string,
): Promise<void> {
  await insertApiToken(uow, { tokenName: input.tokenName, type: 'client' }, validateScope({ ...input, type: 'client' }), secret);
}

async function insertApiToken(
  uow: UnitOfWork,
  input: Pick<CreateApiTokenInput, 'tokenName' | 'type' | 'expiresAt'>,
  scope: { environment: string | null; projects: string[] },
  secret: string,
): Promise<ApiTokenView> {
  const row = await uow.tx
    .insertInto('api_tokens')
    .values({
      secret_hash: hashToken(secret),
      token_name: input.tokenName,
      type: input.type,
      environment: scope.environment,
      expires_at: input.expiresAt ?? null,
      created_at: uow.now,
      seen_at: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  if (scope.projects.length > 0) {
    await uow.tx
      .insertInto('api_token_projects')
      .values(scope.projects.map((project) => ({ token_id: row.id, project_id: project })))
      .execute();
  }
  const token = toApiTokenView(row, scope.projects);
  await recordEvent(uow, {
    type: 'api-token-created',
    environment: scope.environment,
    project: scope.projects.length === 1 ? scope.projects[0] : null,
    data: token,
  });
  return token;
}

/**
 * Creates the admin tokens named in INIT_ADMIN_API_TOKENS that do not exist yet (compared by hash), so every
 * start with the same configuration converges on the same tokens.
 */
export async function ensureAdminTokens(uow: UnitOfWork, secrets: string[]): Promise<number> {
  let created = 0;
  for (const secret of secrets) {
    const exists = await uow.tx.selectFrom('api_tokens').select('id').where('secret_hash', '=', hashToken(secret)).executeTakeFirst();
    if (exists) continue;
    await insertApiToken(uow, { tokenName: 'admin', type: 'admin' }, { environment: null, projects: [] }, secret);
    created += 1;
  }
  return created;
}

/** `reference` is the token's secret (as Unleash's path takes it) or its numeric id. */
export async function deleteApiToken(uow: UnitOfWork, reference: string): Promise<void> {
  const token = await findApiTokenForUpdate(uow.tx, reference);
  if (!token) throw new NotFoundError('Could not find that API token');
  await uow.tx.deleteFrom('api_tokens').where('id', '=', token.id).execute();
  await recordEvent(uow, { type: 'api-token-deleted', ...eventScopeOf(token), preData: token });
}

async function assertProjectExists(db: Db, project: string): Promise<void> {
  const found = await db.selectFrom('projects').select('id').where('id', '=', project).executeTakeFirst();
  if (!found) throw new NotFoundError(`Could not find project "${project}"`);
}

/**
 * The SDK tokens of one project: those whose projects name it. Tokens of every project ("*") and admin tokens are
 * the instance's, listed in API access; Unleash lists every token here to an admin token, which shows a project's
 * members tokens they did not make.
 */
export async function listProjectApiTokens(db: Db, project: string): Promise<ApiTokenView[]> {
  await assertProjectExists(db, project);
  const rows = await db
    .selectFrom('api_tokens as t')
    .selectAll('t')
    .where('t.type', '!=', 'admin')
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('api_token_projects as tp')
          .select('tp.token_id')
          .whereRef('tp.token_id', '=', 't.id')
          .where('tp.project_id', '=', project),
      ),
    )
    .orderBy('t.id')
    .execute();
  const projects = await projectsByToken(
    db,
    rows.map((row) => row.id),
  );
  return rows.map((row) => toApiTokenView(row, projects.get(row.id) ?? []));
}

/** Creates an SDK token of one project (Unleash's project API access): client or frontend, for one environment. */
export async function createProjectApiToken(
  uow: UnitOfWork,
  project: string,
  input: Omit<CreateApiTokenInput, 'projects'>,
): Promise<ApiTokenView & { secret: string }> {
  await assertProjectExists(uow.tx, project);
  return createApiToken(uow, { ...input, projects: [project] });
}

/**
 * Deletes an SDK token of the project; one that reaches other projects too is deleted where all its projects are
 * seen (API access), as Unleash refuses it here (400).
 */
export async function deleteProjectApiToken(uow: UnitOfWork, project: string, reference: string): Promise<void> {
  await assertProjectExists(uow.tx, project);
  const token = await findApiTokenForUpdate(uow.tx, reference);
  if (!token || token.type === 'admin' || !token.projects.includes(project)) {
    throw new NotFoundError(`Project "${project}" has no such API token`);
  }
  if (token.projects.length > 1) {
    throw new BadDataError(`The token also reaches ${token.projects.filter((p) => p !== project).join(', ')}; delete it in API access`, [
      { path: '/params/token', message: `The token reaches ${token.projects.length} projects, not only "${project}"` },
    ]);
  }
  await uow.tx.deleteFrom('api_tokens').where('id', '=', token.id).execute();
  await recordEvent(uow, { type: 'api-token-deleted', ...eventScopeOf(token), preData: token });
}

/** Moves a token's expiry (`reference` as for deleting); a time already past ends it at once. */
export async function setApiTokenExpiry(uow: UnitOfWork, reference: string, expiresAt: Date): Promise<void> {
  const before = await findApiTokenForUpdate(uow.tx, reference);
  if (!before) throw new NotFoundError('Could not find that API token');
  if (before.type === 'admin') assertMayHoldAdminTokens(uow);
  await uow.tx.updateTable('api_tokens').set({ expires_at: expiresAt }).where('id', '=', before.id).execute();
  const after = (await findApiTokenForUpdate(uow.tx, String(before.id)))!;
  await recordEvent(uow, { type: 'api-token-updated', ...eventScopeOf(before), data: after, preData: before });
}

/** Where an event about a stored token belongs: its environment and its one project, when it has just one. */
function eventScopeOf(token: ApiTokenView): { environment: string | null; project: string | null } {
  return {
    environment: token.environment === ALL ? null : token.environment,
    project: token.projects.length === 1 && token.projects[0] !== ALL ? token.projects[0]! : null,
  };
}

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

/** Every token, or those named `tokenName` (names are not unique). */
export async function listApiTokens(db: Db, tokenName?: string): Promise<ApiTokenView[]> {
  let query = db.selectFrom('api_tokens').selectAll().orderBy('id');
  if (tokenName !== undefined) query = query.where('token_name', '=', tokenName);
  const rows = await query.execute();
  const projects = await projectsByToken(
    db,
    rows.map((row) => row.id),
  );
  return rows.map((row) => toApiTokenView(row, projects.get(row.id) ?? []));
}

/** Finds a token by its full secret or its id, locking the row for the caller's transaction. */
export async function findApiTokenForUpdate(tx: Tx, reference: string): Promise<ApiTokenView | undefined> {
  const query = tx.selectFrom('api_tokens').selectAll().forUpdate();
  const row = await (/^[0-9]{1,9}$/.test(reference)
    ? query.where('id', '=', Number(reference))
    : query.where('secret_hash', '=', hashToken(reference))
  ).executeTakeFirst();
  if (!row) return undefined;
  const projects = await projectsByToken(tx, [row.id]);
  return toApiTokenView(row, projects.get(row.id) ?? []);
}

/** Stamps when an API token was last used (authentication says when one is due). */
export async function stampApiTokenUse(db: Db, id: number, now: Date): Promise<void> {
  await db.updateTable('api_tokens').set({ seen_at: now }).where('id', '=', id).execute();
}
