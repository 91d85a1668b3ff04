import { isDeepStrictEqual } from 'node:util';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { BadDataError, type ErrorDetail, NameExistsError, NotFoundError } from '../../shared/errors.js';
import { type EventTag, recordEvent } from '../events/record-event.js';
import { recordFeatureEvent } from '../features/feature-events.js';
import { assertTagTypesExist, findFlagByName, findTagType, getTag, listFeatureTags } from './tags.js';

const MIN_LENGTH = 2;
const MAX_LENGTH = 50;

/**
 * Tag values are stored trimmed; the trimmed value must still be 2 to 50 characters (spec 2.2). `valuePath` is
 * where each tag's value was sent, for the error details.
 */
function normalizeTags(tags: Array<{ tag: EventTag; valuePath: string }>): EventTag[] {
  const details: ErrorDetail[] = [];
  const normalized = tags.map(({ tag, valuePath }) => {
    const value = tag.value.trim();
    if (value.length < MIN_LENGTH || value.length > MAX_LENGTH) {
      details.push({
        path: valuePath,
        message: `A tag value is ${MIN_LENGTH} to ${MAX_LENGTH} characters without surrounding spaces (got ${JSON.stringify(tag.value)})`,
      });
    }
    return { type: tag.type, value };
  });
  if (details.length > 0) throw new BadDataError('A tag value is invalid', details);
  return normalized;
}

const inList = (tags: EventTag[], path: string) => tags.map((tag, index) => ({ tag, valuePath: `${path}/${index}/value` }));

function distinct(tags: EventTag[]): EventTag[] {
  return tags.filter((tag, index) => tags.findIndex((other) => isDeepStrictEqual(other, tag)) === index);
}

type Flag = { name: string; project: string };

/** Adds a tag the flag does not have yet; returns whether it was added. An unknown tag type fails on its FK. */
async function insertTag(uow: UnitOfWork, flag: Flag, tag: EventTag): Promise<boolean> {
  const inserted = await uow.tx
    .insertInto('feature_tags')
    .values({ feature_name: flag.name, tag_type: tag.type, tag_value: tag.value, created_at: uow.now })
    .onConflict((oc) => oc.columns(['feature_name', 'tag_type', 'tag_value']).doNothing())
    .returning('tag_value')
    .executeTakeFirst();
  if (!inserted) return false;
  await recordFeatureEvent(uow, { type: 'feature-tagged', featureName: flag.name, project: flag.project, data: tag });
  return true;
}

async function deleteTag(uow: UnitOfWork, flag: Flag, tag: EventTag): Promise<void> {
  const deleted = await uow.tx
    .deleteFrom('feature_tags')
    .where('feature_name', '=', flag.name)
    .where('tag_type', '=', tag.type)
    .where('tag_value', '=', tag.value)
    .returning('tag_value')
    .executeTakeFirst();
  if (!deleted) return;
  await recordFeatureEvent(uow, { type: 'feature-untagged', featureName: flag.name, project: flag.project, preData: tag });
}

/**
 * Tags a flag. A tag the flag already has is left as it is and records nothing (`added: false`), so re-running a
 * script is harmless; Unleash, too, never duplicates a tag. The flag is locked so each event's tag list is the
 * flag's tags right after that change.
 */
export async function addFeatureTag(uow: UnitOfWork, featureName: string, tag: EventTag): Promise<{ tag: EventTag; added: boolean }> {
  const [normalized] = normalizeTags([{ tag, valuePath: '/body/value' }]);
  const flag = await findFlagByName(uow.tx, featureName, true);
  const added = await insertTag(uow, flag, normalized!);
  return { tag: normalized!, added };
}

/**
 * Adds and removes tags in one change, as Unleash's PUT does: a tag in both lists ends up removed. Tags the flag
 * already has (added) or lacks (removed) are skipped without an event; an unknown tag type in either list
 * refuses the whole request.
 */
export async function updateFeatureTags(
  uow: UnitOfWork,
  featureName: string,
  input: { addedTags: EventTag[]; removedTags: EventTag[] },
): Promise<EventTag[]> {
  const normalized = normalizeTags([...inList(input.addedTags, '/body/addedTags'), ...inList(input.removedTags, '/body/removedTags')]);
  const added = normalized.slice(0, input.addedTags.length);
  const removed = distinct(normalized.slice(input.addedTags.length));
  const flag = await findFlagByName(uow.tx, featureName, true);
  await assertTagTypesExist(
    uow.tx,
    [...added, ...removed].map((tag) => tag.type),
  );

  const toAdd = distinct(added).filter((tag) => !removed.some((other) => isDeepStrictEqual(other, tag)));
  for (const tag of toAdd) await insertTag(uow, flag, tag);
  for (const tag of removed) await deleteTag(uow, flag, tag);
  return listFeatureTags(uow.tx, featureName);
}

/** Removes a tag from a flag; removing a tag the flag does not have changes nothing and records nothing. */
export async function removeFeatureTag(uow: UnitOfWork, featureName: string, tag: EventTag): Promise<void> {
  const flag = await findFlagByName(uow.tx, featureName, true);
  await assertTagTypesExist(uow.tx, [tag.type]);
  await deleteTag(uow, flag, { type: tag.type, value: tag.value.trim() });
}

/** Makes a tag on its own, before any flag carries it (Unleash's `POST /api/admin/tags`); `tag-created` records it. */
export async function createTag(uow: UnitOfWork, tag: EventTag): Promise<EventTag> {
  const [normalized] = normalizeTags([{ tag, valuePath: '/body/value' }]);
  await findTagType(uow.tx, normalized!.type, true);
  const { type, value } = normalized!;
  const exists = await uow.tx
    .selectNoFrom((eb) => [
      eb
        .or([
          eb.exists(eb.selectFrom('tags').select('value').where('type', '=', type).where('value', '=', value)),
          eb.exists(eb.selectFrom('feature_tags').select('tag_value').where('tag_type', '=', type).where('tag_value', '=', value)),
        ])
        .as('exists'),
    ])
    .executeTakeFirstOrThrow();
  if (exists.exists) throw new NameExistsError(`The tag "${normalized!.type}:${normalized!.value}" already exists`);
  await uow.tx.insertInto('tags').values({ type: normalized!.type, value: normalized!.value, created_at: uow.now }).execute();
  await recordEvent(uow, { type: 'tag-created', data: normalized });
  return normalized!;
}

/**
 * Deletes a tag everywhere: made on its own, and from every flag that carries it (each flag's `feature-untagged`, since
 * SDKs filtering by tag see it go), then `tag-deleted`. A tag nobody has is a 404.
 */
export async function deleteTagEverywhere(uow: UnitOfWork, tag: EventTag): Promise<void> {
  const value = tag.value.trim();
  await getTag(uow.tx, tag.type, value);
  const carriers = await uow.tx
    .selectFrom('feature_tags as ft')
    .innerJoin('features as f', 'f.name', 'ft.feature_name')
    .select(['f.name', 'f.project'])
    .where('ft.tag_type', '=', tag.type)
    .where('ft.tag_value', '=', value)
    .orderBy('f.name')
    .forUpdate()
    .execute();
  for (const flag of carriers) await deleteTag(uow, flag, { type: tag.type, value });
  await uow.tx.deleteFrom('tags').where('type', '=', tag.type).where('value', '=', value).execute();
  await recordEvent(uow, { type: 'tag-deleted', preData: { type: tag.type, value } });
}

/** Adds and removes tags on flags of one project at once (Unleash's `PUT /api/admin/projects/:id/tags`), all or none. */
export async function updateProjectFeatureTags(
  uow: UnitOfWork,
  project: string,
  features: string[],
  tags: { addedTags: EventTag[]; removedTags: EventTag[] },
): Promise<void> {
  const names = [...new Set(features)];
  const found =
    names.length === 0 ? [] : await uow.tx.selectFrom('features').select(['name', 'project']).where('name', 'in', names).execute();
  const outside = names.filter((name) => !found.some((flag) => flag.name === name && flag.project === project));
  if (outside.length > 0) throw new NotFoundError(`Project "${project}" has no flag ${outside.map((name) => `"${name}"`).join(', ')}`);
  for (const name of names) await updateFeatureTags(uow, name, tags);
}
