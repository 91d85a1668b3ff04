import type { UnitOfWork } from '../../db/unit-of-work.js';
import { NotFoundError } from '../../shared/errors.js';
import { recordEvent } from '../events/record-event.js';
import { favoritingUser } from '../features/favorites.js';

/**
 * The project must exist. The row is held with a key-share lock, enough to keep it from being deleted before
 * the favorite that references it commits, without holding up changes to the project.
 */
async function assertProject(uow: UnitOfWork, project: string): Promise<void> {
  const row = await uow.tx.selectFrom('projects').select('id').where('id', '=', project).forKeyShare().executeTakeFirst();
  if (!row) throw new NotFoundError(`Could not find project "${project}"`);
}

/** Marks a project as a favorite of the calling user; favoriting it again changes nothing and records nothing. */
export async function favoriteProject(uow: UnitOfWork, project: string): Promise<void> {
  const userId = favoritingUser(uow.actor);
  await assertProject(uow, project);
  const inserted = await uow.tx
    .insertInto('favorite_projects')
    .values({ user_id: userId, project, created_at: uow.now })
    .onConflict((oc) => oc.columns(['user_id', 'project']).doNothing())
    .returning('project')
    .executeTakeFirst();
  if (!inserted) return;
  await recordEvent(uow, { type: 'project-favorited', project, data: { project } });
}

/** Removes a project from the calling user's favorites; a project that was no favorite changes nothing. */
export async function unfavoriteProject(uow: UnitOfWork, project: string): Promise<void> {
  const userId = favoritingUser(uow.actor);
  await assertProject(uow, project);
  const deleted = await uow.tx
    .deleteFrom('favorite_projects')
    .where('user_id', '=', userId)
    .where('project', '=', project)
    .returning('project')
    .executeTakeFirst();
  if (!deleted) return;
  await recordEvent(uow, { type: 'project-unfavorited', project, data: { project } });
}
