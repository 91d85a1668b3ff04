import type { UnitOfWork, Actor } from '../../db/unit-of-work.js';
import { PermissionError } from '../../shared/errors.js';
import { recordFeatureEvent } from './feature-events.js';
import { findFeature } from './feature-lookup.js';

/** Favorites are kept per user; an admin API token has no user to keep them for. */
export function favoritingUser(actor: Actor): number {
  if (actor.kind !== 'user') {
    throw new PermissionError('Favorites belong to users: log in or use a personal access token');
  }
  return actor.userId;
}

/**
 * Marks a flag as a favorite of the calling user. Favoriting it again changes nothing and records nothing. The
 * flag row is locked so it cannot be deleted between the lookup and the insert that references it.
 */
export async function favoriteFeature(uow: UnitOfWork, project: string, name: string): Promise<void> {
  const userId = favoritingUser(uow.actor);
  await findFeature(uow.tx, project, name, { lock: true });
  const inserted = await uow.tx
    .insertInto('favorite_features')
    .values({ user_id: userId, feature_name: name, created_at: uow.now })
    .onConflict((oc) => oc.columns(['user_id', 'feature_name']).doNothing())
    .returning('feature_name')
    .executeTakeFirst();
  if (!inserted) return;
  await recordFeatureEvent(uow, { type: 'feature-favorited', featureName: name, project, data: { feature: name } });
}

/** Removes a flag from the calling user's favorites; a flag that was no favorite changes nothing. */
export async function unfavoriteFeature(uow: UnitOfWork, project: string, name: string): Promise<void> {
  const userId = favoritingUser(uow.actor);
  await findFeature(uow.tx, project, name);
  const deleted = await uow.tx
    .deleteFrom('favorite_features')
    .where('user_id', '=', userId)
    .where('feature_name', '=', name)
    .returning('feature_name')
    .executeTakeFirst();
  if (!deleted) return;
  await recordFeatureEvent(uow, { type: 'feature-unfavorited', featureName: name, project, data: { feature: name } });
}
