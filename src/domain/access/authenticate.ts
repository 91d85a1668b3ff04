import type { Db } from '../../db/database.js';
import type { ApiTokenType } from '../../db/schema.js';
import { hashToken } from '../../shared/secrets.js';
import type { Actor } from '../../db/unit-of-work.js';
import type { RootRoleName } from '../../db/schema.js';
import { accessOf, strongestRootRole } from './permissions.js';

/** A client or frontend token: one environment, and the projects it may see (`*` for all). */
export interface SdkToken {
  id: number;
  type: Exclude<ApiTokenType, 'admin'>;
  environment: string;
  projects: string[] | '*';
  /** When it stops working; a cache may trust it no longer than this. */
  expiresAt: Date | null;
}

/** A credential whose last use is to be stamped (at most once a minute), by the area that owns its table. */
export interface TokenUse {
  kind: 'api-token' | 'personal-access-token' | 'session' | 'scim-token' | 'mcp-token';
  id: number;
}

/**
 * What a credential turned out to be. `apiToken` covers client and frontend tokens, which act on SDK APIs.
 * `lastUse` names a token whose last-seen stamp is due; this module only reads.
 */
export type Credential =
  | {
      kind: 'actor';
      actor: Actor;
      lastUse?: TokenUse;
      /** Set for a token that works on one endpoint only (a token a person granted an MCP client). */
      audience?: 'mcp';
    }
  | { kind: 'apiToken'; token: SdkToken; lastUse?: TokenUse }
  | { kind: 'invalid' };

// Last-seen stamps are refreshed at most once a minute per credential, so a busy client does not write on
// every request.
const SEEN_AT_RESOLUTION_MS = 60_000;

/** `{ lastUse }` when the credential's last-seen stamp is due, else nothing. */
function lastUseOf(seenAt: Date | null, now: Date, use: TokenUse): { lastUse?: TokenUse } {
  return seenAt === null || now.getTime() - seenAt.getTime() > SEEN_AT_RESOLUTION_MS ? { lastUse: use } : {};
}

function isExpired(expiresAt: Date | null, now: Date): boolean {
  return expiresAt !== null && expiresAt.getTime() <= now.getTime();
}

/** Personal access tokens look like `user:<secret>`; everything else is an API token (`project:env.secret`). */
export const PAT_PREFIX = 'user:';
/** Tokens a person granted an MCP client (OAuth) look like `mcp:<secret>`: they work on the MCP endpoint only. */
export const MCP_TOKEN_PREFIX = 'mcp:';

/**
 * A user as an actor: the root roles of their groups strengthen their own, custom root roles (their own and their
 * groups') add their permissions, and their project access comes from their own grants and their groups'. Read on
 * every request, so a change of access applies at once.
 */
export async function userActor(
  db: Db,
  user: { id: number; username: string | null; email: string | null; root_role: RootRoleName; custom_root_role_id: number | null },
): Promise<Actor> {
  const groupIds = db.selectFrom('group_users').select('group_id').where('user_id', '=', user.id);
  const [groupRoles, projectGrants] = await Promise.all([
    db.selectFrom('groups').select(['root_role', 'custom_root_role_id']).where('id', 'in', groupIds).execute(),
    db
      .selectFrom('project_access')
      .select(['project_id', 'role', 'custom_role_id'])
      .where((eb) => eb.or([eb('user_id', '=', user.id), eb('group_id', 'in', groupIds)]))
      .execute(),
  ]);
  const customRootIds = [user.custom_root_role_id, ...groupRoles.map((group) => group.custom_root_role_id)].filter((id) => id !== null);
  const customRoleIds = [
    ...new Set([...customRootIds, ...projectGrants.flatMap((grant) => (grant.custom_role_id === null ? [] : [grant.custom_role_id]))]),
  ];
  // Each custom role with its permissions, a role without any as one row of nulls: its name is still wanted.
  const customRoles =
    customRoleIds.length === 0
      ? []
      : await db
          .selectFrom('roles as r')
          .leftJoin('role_permissions as rp', 'rp.role_id', 'r.id')
          .select(['r.id as role_id', 'r.name', 'rp.permission', 'rp.environment'])
          .where('r.id', 'in', customRoleIds)
          .execute();
  const customGrants = customRoles.flatMap(({ permission, ...grant }) => (permission === null ? [] : [{ ...grant, permission }]));
  const grantsOf = (roleId: number) => customGrants.filter((grant) => grant.role_id === roleId);
  const builtInRoot = strongestRootRole([
    user.root_role,
    ...groupRoles.flatMap((group) => (group.root_role === null ? [] : [group.root_role])),
  ]);
  const ownCustom = customRoles.find((role) => role.role_id === user.custom_root_role_id)?.name;
  return {
    kind: 'user',
    userId: user.id,
    username: (user.username ?? user.email)!,
    rootRole: builtInRoot,
    rootRoleName: ownCustom ?? builtInRoot,
    ...accessOf(
      [builtInRoot],
      customRootIds.flatMap(grantsOf),
      projectGrants.map((grant) => ({
        project: grant.project_id,
        role: grant.role,
        grants: grant.custom_role_id === null ? [] : grantsOf(grant.custom_role_id),
      })),
    ),
  };
}

/** What `userActor` reads of the user a token or session belongs to (joined as `u`). */
const ACTING_USER_COLUMNS = ['u.id as user_id', 'u.username', 'u.email', 'u.root_role', 'u.custom_root_role_id'] as const;

/** A token or session of a person, read with the person (`u`), as that person; an expired one is refused. */
async function personCredential(
  db: Db,
  row: ({ id: number; expires_at: Date | null; seen_at: Date | null; user_id: number } & Parameters<typeof userActor>[1]) | undefined,
  now: Date,
  kind: 'personal-access-token' | 'session' | 'mcp-token',
): Promise<Credential> {
  if (!row || isExpired(row.expires_at, now)) return { kind: 'invalid' };
  return { kind: 'actor', actor: await userActor(db, { ...row, id: row.user_id }), ...lastUseOf(row.seen_at, now, { kind, id: row.id }) };
}

async function authenticatePat(db: Db, secretHash: string, now: Date): Promise<Credential> {
  const row = await db
    .selectFrom('personal_access_tokens as pat')
    .innerJoin('users as u', 'u.id', 'pat.user_id')
    .select(['pat.id', 'pat.expires_at', 'pat.seen_at', ...ACTING_USER_COLUMNS])
    .where('pat.secret_hash', '=', secretHash)
    .where('u.deactivated_at', 'is', null)
    .executeTakeFirst();
  return personCredential(db, row, now, 'personal-access-token');
}

/** An API token by the hash it is stored under (what `hashToken` makes of its secret). */
export async function authenticateApiToken(db: Db, secretHash: string, now: Date): Promise<Credential> {
  const row = await db
    .selectFrom('api_tokens')
    .select(['id', 'type', 'token_name', 'environment', 'expires_at', 'seen_at'])
    .where('secret_hash', '=', secretHash)
    .executeTakeFirst();
  if (!row || isExpired(row.expires_at, now)) return { kind: 'invalid' };
  const lastUse = lastUseOf(row.seen_at, now, { kind: 'api-token', id: row.id });
  if (row.type === 'admin') {
    return { kind: 'actor', actor: { kind: 'admin-token', tokenId: row.id, tokenName: row.token_name }, ...lastUse };
  }
  const projects = await db.selectFrom('api_token_projects').select('project_id').where('token_id', '=', row.id).execute();
  return {
    kind: 'apiToken',
    token: {
      id: row.id,
      type: row.type,
      environment: row.environment!,
      projects: projects.length === 0 ? '*' : projects.map((p) => p.project_id),
      expiresAt: row.expires_at,
    },
    ...lastUse,
  };
}

/** A token a person granted an MCP client: that person, on the MCP endpoint only. */
async function authenticateMcpToken(db: Db, secretHash: string, now: Date): Promise<Credential> {
  const row = await db
    .selectFrom('oauth_access_tokens as t')
    .innerJoin('users as u', 'u.id', 't.user_id')
    .innerJoin('oauth_clients as c', 'c.id', 't.client_id')
    .select(['t.id', 't.expires_at', 't.seen_at', 'c.name as client_name', 'c.client_id as oauth_client_id', ...ACTING_USER_COLUMNS])
    .where('t.secret_hash', '=', secretHash)
    .where('u.deactivated_at', 'is', null)
    .executeTakeFirst();
  const credential = await personCredential(db, row, now, 'mcp-token');
  if (credential.kind !== 'actor' || credential.actor.kind !== 'user') return credential;
  const grantedTo = `"${row!.client_name}" ${row!.oauth_client_id}`;
  return { ...credential, actor: { ...credential.actor, grantedTo }, audience: 'mcp' };
}

export function authenticateToken(db: Db, token: string, now: Date): Promise<Credential> {
  const secretHash = hashToken(token);
  if (token.startsWith(PAT_PREFIX)) return authenticatePat(db, secretHash, now);
  if (token.startsWith(MCP_TOKEN_PREFIX)) return authenticateMcpToken(db, secretHash, now);
  return authenticateApiToken(db, secretHash, now);
}

export async function authenticateSession(db: Db, sessionId: string, now: Date): Promise<Credential> {
  const row = await db
    .selectFrom('user_sessions as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .select(['s.id', 's.expires_at', 's.seen_at', ...ACTING_USER_COLUMNS])
    .where('s.id_hash', '=', hashToken(sessionId))
    .where('u.deactivated_at', 'is', null)
    .executeTakeFirst();
  return personCredential(db, row, now, 'session');
}

/** Who changes made over SCIM are recorded as: the identity provider that provisions. */
export const SCIM_PROVIDER: Actor = { kind: 'identity-provider', name: 'scim' };

/** The SCIM token an Admin made (only one is valid at a time), as the identity provider that provisions. */
export async function authenticateScimToken(db: Db, token: string, now: Date): Promise<Credential> {
  const row = await db.selectFrom('scim_tokens').select(['id', 'seen_at']).where('secret_hash', '=', hashToken(token)).executeTakeFirst();
  if (!row) return { kind: 'invalid' };
  return { kind: 'actor', actor: SCIM_PROVIDER, ...lastUseOf(row.seen_at, now, { kind: 'scim-token', id: row.id }) };
}

/** The sender of a signal: the endpoint it is for and which of the endpoint's tokens it came with. */
export interface SignalSource {
  endpointId: number;
  tokenId: number;
}

/**
 * A signal endpoint's own token for the endpoint named `name`, which must exist and be enabled. An unknown name
 * and a wrong token give the same undefined, so names cannot be listed without a token.
 */
export async function authenticateSignalToken(db: Db, name: string, token: string): Promise<SignalSource | undefined> {
  const row = await db
    .selectFrom('signal_endpoints as e')
    .innerJoin('signal_endpoint_tokens as t', 't.signal_endpoint_id', 'e.id')
    .select(['e.id as endpointId', 't.id as tokenId'])
    .where('e.name', '=', name)
    .where('e.enabled', '=', true)
    .where('t.secret_hash', '=', hashToken(token))
    .executeTakeFirst();
  return row;
}

/** A client or frontend token with its secret, as an edge asks for it. */
export interface ValidatedSdkToken extends Omit<SdkToken, 'id' | 'expiresAt'> {
  token: string;
}

/**
 * Which of `tokens` are valid client or frontend tokens, with their environment and projects (what an edge asks
 * before it serves a token it has not seen). Admin tokens and personal access tokens are never confirmed here.
 */
export async function validSdkTokens(db: Db, tokens: string[], now: Date): Promise<ValidatedSdkToken[]> {
  const byHash = new Map(
    tokens
      .filter((token) => !token.startsWith(PAT_PREFIX) && !token.startsWith(MCP_TOKEN_PREFIX))
      .map((token) => [hashToken(token), token]),
  );
  if (byHash.size === 0) return [];
  const rows = await db
    .selectFrom('api_tokens')
    .select(['id', 'type', 'environment', 'expires_at', 'secret_hash'])
    .where('secret_hash', 'in', [...byHash.keys()])
    .where('type', '!=', 'admin')
    .execute();
  const live = rows.filter((row) => !isExpired(row.expires_at, now));
  if (live.length === 0) return [];
  const projectRows = await db
    .selectFrom('api_token_projects')
    .select(['token_id', 'project_id'])
    .where(
      'token_id',
      'in',
      live.map((row) => row.id),
    )
    .execute();
  return live.map((row) => {
    const projects = projectRows.filter((project) => project.token_id === row.id).map((project) => project.project_id);
    return {
      token: byHash.get(row.secret_hash)!,
      type: row.type as SdkToken['type'],
      environment: row.environment!,
      projects: projects.length === 0 ? '*' : projects,
    };
  });
}
