import type { Db } from '../../db/database.js';
import { NotFoundError } from '../../shared/errors.js';
import type { Actor } from '../../db/unit-of-work.js';
import { loadFeatureViews, type FeatureView } from './feature-views.js';

const viewerOf = (actor: Actor) => (actor.kind === 'user' ? actor.userId : null);

/** The project's flags (archived ones only when asked), oldest first. */
export async function listProjectFeatures(db: Db, project: string, actor: Actor, archived = false): Promise<FeatureView[]> {
  const exists = await db.selectFrom('projects').select('id').where('id', '=', project).executeTakeFirst();
  if (!exists) throw new NotFoundError(`Could not find project "${project}"`);
  const rows = await db
    .selectFrom('features')
    .selectAll()
    .where('project', '=', project)
    .where('archived_at', archived ? 'is not' : 'is', null)
    .orderBy('created_at')
    .orderBy('name')
    .execute();
  return loadFeatureViews(db, rows, viewerOf(actor));
}

export async function getFeature(db: Db, project: string, name: string, actor: Actor): Promise<FeatureView> {
  const row = await db.selectFrom('features').selectAll().where('name', '=', name).where('project', '=', project).executeTakeFirst();
  if (!row) throw new NotFoundError(`Could not find flag "${name}" in project "${project}"`);
  const [view] = await loadFeatureViews(db, [row], viewerOf(actor));
  return view!;
}
