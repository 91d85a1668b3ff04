import { isDeepStrictEqual } from 'node:util';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { BadDataError, type ErrorDetail } from '../../shared/errors.js';
import type { EventTag } from '../events/record-event.js';
import { recordFeatureEvent } from '../features/feature-events.js';
import { assertTagTypesExist, findFlagByName, listFeatureTags } from './tags.js';

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
