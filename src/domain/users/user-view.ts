import type { Selectable } from 'kysely';
import type { UsersTable } from '../../db/schema.js';
import { ADMIN_TOKEN_USER_ID } from '../access/actor.js';
import { ROOT_ROLE_IDS } from '../access/permissions.js';
import { iso } from '../../shared/dates.js';

/** A user as the API shows it (Unleash's `userSchema`); never carries the password hash. */
export interface UserView {
  id: number;
  name: string | null;
  email: string | null;
  username: string | null;
  imageUrl: string | null;
  rootRole: number;
  createdAt: string | null;
  seenAt: string | null;
  loginAttempts: number;
  isAPI: boolean;
  accountType: 'User' | 'Service Account';
  /** The id an identity provider manages the person by over SCIM (their Vexil id), or null when none does. */
  scimId: string | null;
  /** When the person was deactivated (they can neither sign in nor use a token), or null while active. */
  deactivatedAt: string | null;
}

export function toUserView(row: Selectable<UsersTable>): UserView {
  return {
    id: row.id,
    name: row.name,
    email: row.email,
    username: row.username,
    imageUrl: row.image_url,
    rootRole: row.custom_root_role_id ?? ROOT_ROLE_IDS[row.root_role],
    createdAt: iso(row.created_at),
    seenAt: iso(row.seen_at),
    loginAttempts: row.login_attempts,
    isAPI: false,
    accountType: row.is_service ? 'Service Account' : 'User',
    scimId: row.scim_managed ? String(row.id) : null,
    deactivatedAt: iso(row.deactivated_at),
  };
}

/** The built-in identity an admin token acts as, shown by `GET /api/admin/user`. */
export function adminTokenUserView(tokenName: string): UserView {
  return {
    id: ADMIN_TOKEN_USER_ID,
    name: tokenName,
    email: null,
    username: 'admin-token',
    imageUrl: null,
    rootRole: ROOT_ROLE_IDS.Admin,
    createdAt: null,
    seenAt: null,
    loginAttempts: 0,
    isAPI: true,
    accountType: 'User',
    scimId: null,
    deactivatedAt: null,
  };
}
