import type { UnitOfWork } from '../../db/unit-of-work.js';
import { recordEvent } from '../events/record-event.js';
import { recordFeatureEvent } from '../features/feature-events.js';
import { findTagType, toTagTypeView, type TagTypeView } from './tags.js';

export interface CreateTagTypeInput {
  name: string;
  description?: string | null;
  icon?: string | null;
}

export async function createTagType(uow: UnitOfWork, input: CreateTagTypeInput): Promise<TagTypeView> {
  const row = await uow.tx
    .insertInto('tag_types')
    .values({ name: input.name, description: input.description ?? null, icon: input.icon ?? null, created_at: uow.now })
    .returning(['name', 'description', 'icon'])
    .executeTakeFirstOrThrow();
  const tagType = toTagTypeView(row);
  await recordEvent(uow, { type: 'tag-type-created', data: tagType });
  return tagType;
}

/**
 * Creates the tag type unless one of that name exists (which is then left as it is), as Unleash does for the
 * tag types an integration reads, such as Slack's `slack`.
 */
export async function ensureTagType(uow: UnitOfWork, input: CreateTagTypeInput): Promise<void> {
  const row = await uow.tx
    .insertInto('tag_types')
    .values({ name: input.name, description: input.description ?? null, icon: input.icon ?? null, created_at: uow.now })
    .onConflict((oc) => oc.column('name').doNothing())
    .returning(['name', 'description', 'icon'])
    .executeTakeFirst();
  if (row) await recordEvent(uow, { type: 'tag-type-created', data: toTagTypeView(row) });
}

/** Fields left out keep their value; `null` clears one. Unchanged values record nothing. */
export async function updateTagType(
  uow: UnitOfWork,
  name: string,
  changes: { description?: string | null; icon?: string | null },
): Promise<TagTypeView> {
  const before = await findTagType(uow.tx, name, true);
  const description = changes.description === undefined ? before.description : changes.description;
  const icon = changes.icon === undefined ? before.icon : changes.icon;
  if (description === before.description && icon === before.icon) return before;
  const row = await uow.tx
    .updateTable('tag_types')
    .set({ description, icon })
    .where('name', '=', name)
    .returning(['name', 'description', 'icon'])
    .executeTakeFirstOrThrow();
  const after = toTagTypeView(row);
  await recordEvent(uow, { type: 'tag-type-updated', data: after, preData: before });
  return after;
}

/**
 * Deletes a tag type and, with it, every tag of that type on flags. Each removed flag tag records
 * `feature-untagged` (Unleash's cascade leaves no trace in the flags' history). The tag type is locked first so
 * no tag of it can be added between collecting the tags and deleting the type.
 */
export async function deleteTagType(uow: UnitOfWork, name: string): Promise<void> {
  const before = await findTagType(uow.tx, name, true);
  const removed = await uow.tx.deleteFrom('feature_tags').where('tag_type', '=', name).returning(['feature_name', 'tag_value']).execute();
  await uow.tx.deleteFrom('tag_types').where('name', '=', name).execute();

  const flags =
    removed.length === 0
      ? []
      : await uow.tx
          .selectFrom('features')
          .select(['name', 'project'])
          .where('name', 'in', [...new Set(removed.map((row) => row.feature_name))])
          .execute();
  const projectOf = new Map(flags.map((flag) => [flag.name, flag.project]));
  const ordered = [...removed].sort((a, b) => a.feature_name.localeCompare(b.feature_name) || a.tag_value.localeCompare(b.tag_value));
  for (const row of ordered) {
    await recordFeatureEvent(uow, {
      type: 'feature-untagged',
      featureName: row.feature_name,
      project: projectOf.get(row.feature_name)!,
      preData: { type: name, value: row.tag_value },
    });
  }
  await recordEvent(uow, { type: 'tag-type-deleted', preData: before });
}
