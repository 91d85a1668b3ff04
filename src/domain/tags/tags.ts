import type { Selectable } from 'kysely';
import type { TagTypesTable } from '../../db/schema.js';
import { NameExistsError, NotFoundError } from '../../shared/errors.js';
import type { EventTag } from '../events/record-event.js';
import { loadFeatureTags } from '../features/feature-views.js';
import type { Db, LockingHandle } from '../../db/database.js';

/** A tag type as Unleash's `tagTypeSchema` shows it. */
export interface TagTypeView {
  name: string;
  description: string | null;
  icon: string | null;
}

export function toTagTypeView(row: Pick<Selectable<TagTypesTable>, 'name' | 'description' | 'icon'>): TagTypeView {
  return { name: row.name, description: row.description, icon: row.icon };
}

export async function listTagTypes(db: Db): Promise<TagTypeView[]> {
  const rows = await db.selectFrom('tag_types').select(['name', 'description', 'icon']).orderBy('name').execute();
  return rows.map(toTagTypeView);
}

/** The tag type `name`, locked for the caller's transaction when asked. */
export async function findTagType<Lock extends boolean = false>(db: LockingHandle<Lock>, name: string, lock?: Lock): Promise<TagTypeView> {
  let query = db.selectFrom('tag_types').select(['name', 'description', 'icon']).where('name', '=', name);
  if (lock) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  if (!row) throw new NotFoundError(`Could not find tag type "${name}"`);
  return toTagTypeView(row);
}

/** A 409 when the name is taken: what Unleash's create form checks before creating. */
export async function assertTagTypeNameFree(db: Db, name: string): Promise<void> {
  const row = await db.selectFrom('tag_types').select('name').where('name', '=', name).executeTakeFirst();
  if (row) throw new NameExistsError(`A tag type named "${name}" already exists`);
}

/** Throws one 404 naming every type of `types` that does not exist. */
export async function assertTagTypesExist(db: Db, types: string[]): Promise<void> {
  const wanted = [...new Set(types)];
  if (wanted.length === 0) return;
  const rows = await db.selectFrom('tag_types').select('name').where('name', 'in', wanted).execute();
  const known = new Set(rows.map((row) => row.name));
  const unknown = wanted.filter((type) => !known.has(type));
  if (unknown.length > 0) {
    throw new NotFoundError(`Could not find tag type${unknown.length > 1 ? 's' : ''} ${unknown.map((t) => `"${t}"`).join(', ')}`);
  }
}

/**
 * The flag `name` in whichever project it is: tag paths name the flag only, as in Unleash. Archived flags keep
 * their tags and may be tagged, as in Unleash, so they are found too.
 */
export async function findFlagByName<Lock extends boolean = false>(
  db: LockingHandle<Lock>,
  name: string,
  lock?: Lock,
): Promise<{ name: string; project: string }> {
  let query = db.selectFrom('features').select(['name', 'project']).where('name', '=', name);
  if (lock) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  if (!row) throw new NotFoundError(`Could not find flag "${name}"`);
  return row;
}

export async function listFeatureTags(db: Db, featureName: string): Promise<EventTag[]> {
  await findFlagByName(db, featureName);
  return (await loadFeatureTags(db, [featureName])).get(featureName) ?? [];
}

/**
 * The distinct tags flags carry (archived flags included), optionally of one type. An unknown type is a 404
 * rather than an empty list, so a misspelt type is not mistaken for an unused one.
 */
export async function listTags(db: Db, type?: string): Promise<EventTag[]> {
  if (type !== undefined) await findTagType(db, type);
  const carried = db
    .selectFrom('feature_tags')
    .select(['tag_type as type', 'tag_value as value'])
    .$if(type !== undefined, (query) => query.where('tag_type', '=', type!));
  const made = db
    .selectFrom('tags')
    .select(['type', 'value'])
    .$if(type !== undefined, (query) => query.where('type', '=', type!));
  // union drops duplicates: a tag made on its own and carried by flags is listed once.
  const rows = await carried.union(made).orderBy('type').orderBy('value').execute();
  return rows.map((row) => ({ type: row.type, value: row.value }));
}

export async function getTag(db: Db, type: string, rawValue: string): Promise<EventTag> {
  await findTagType(db, type);
  // Stored values are trimmed, so the value in the path is too.
  const value = rawValue.trim();
  const carried = await db
    .selectFrom('feature_tags')
    .select('tag_value')
    .where('tag_type', '=', type)
    .where('tag_value', '=', value)
    .limit(1)
    .executeTakeFirst();
  const made = carried
    ? undefined
    : await db.selectFrom('tags').select('value').where('type', '=', type).where('value', '=', value).executeTakeFirst();
  if (!carried && !made) throw new NotFoundError(`There is no tag "${type}:${value}"`);
  return { type, value };
}
