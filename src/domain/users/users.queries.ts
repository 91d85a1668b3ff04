import type { Db } from '../../db/database.js';
import { NotFoundError } from '../../shared/errors.js';
import type { Actor } from '../../db/unit-of-work.js';
import { adminTokenUserView, toUserView, type UserView } from './user-view.js';

export async function listUsers(db: Db): Promise<UserView[]> {
  // Service accounts are listed on their own page, as Unleash lists them.
  const rows = await db.selectFrom('users').selectAll().where('is_service', '=', false).orderBy('id').execute();
  return rows.map(toUserView);
}

export async function getUser(db: Db, id: number): Promise<UserView> {
  const row = await db.selectFrom('users').selectAll().where('id', '=', id).where('is_service', '=', false).executeTakeFirst();
  if (!row) throw new NotFoundError(`Could not find user ${id}`);
  return toUserView(row);
}

/** The caller as a user: their own record, or the built-in identity of an admin token. */
export async function getActingUser(db: Db, actor: Actor): Promise<UserView> {
  switch (actor.kind) {
    case 'user':
      return getUser(db, actor.userId);
    case 'admin-token':
      return adminTokenUserView(actor.tokenName);
    case 'system':
    case 'identity-provider':
      throw new Error(`The ${actor.kind} actor does not make requests`);
  }
}
