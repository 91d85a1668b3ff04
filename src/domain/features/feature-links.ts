import { randomUUID } from 'node:crypto';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { BadDataError, ConflictError, NotFoundError } from '../../shared/errors.js';
import { recordFeatureEvent } from './feature-events.js';
import { findFeature } from './feature-lookup.js';
import type { FeatureLinkView } from './feature-views.js';

/** Links one flag may have, as in Unleash. */
export const MAX_LINKS_PER_FLAG = 10;

/**
 * A link's address: http or https only (a `javascript:` or `data:` address would run in the browser of whoever clicks
 * it), `https://` taken when none is given, as Unleash does.
 */
export function linkUrl(raw: string): string {
  const given = raw.trim();
  const withScheme = /^[a-z][a-z0-9+.-]*:/i.test(given) ? given : `https://${given}`;
  let parsed: URL;
  try {
    parsed = new URL(withScheme);
  } catch {
    throw new BadDataError('The link is not an address', [
      { path: '/body/url', message: `Give an http or https address (got ${JSON.stringify(raw)})` },
    ]);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    throw new BadDataError('A link is an http or https address', [
      { path: '/body/url', message: `Only http and https links are kept (got ${parsed.protocol})` },
    ]);
  }
  return parsed.toString();
}

const title = (raw: string | null | undefined) => (raw?.trim() ? raw.trim() : null);

/** Adds a link to the flag (at most MAX_LINKS_PER_FLAG); `feature-link-added` records it. */
export async function addFeatureLink(
  uow: UnitOfWork,
  target: { project: string; featureName: string },
  input: { url: string; title?: string | null },
): Promise<FeatureLinkView> {
  await findFeature(uow.tx, target.project, target.featureName, { lock: true });
  const { n } = await uow.tx
    .selectFrom('feature_links')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('feature_name', '=', target.featureName)
    .executeTakeFirstOrThrow();
  if (Number(n) >= MAX_LINKS_PER_FLAG) {
    throw new ConflictError(
      `Flag "${target.featureName}" already has ${MAX_LINKS_PER_FLAG} links, as many as a flag may have; remove one first`,
    );
  }
  const link = { id: randomUUID(), url: linkUrl(input.url), title: title(input.title), feature: target.featureName };
  await uow.tx
    .insertInto('feature_links')
    .values({ id: link.id, feature_name: link.feature, url: link.url, title: link.title, created_at: uow.now })
    .execute();
  await recordFeatureEvent(uow, { type: 'feature-link-added', ...target, data: { url: link.url, title: link.title } });
  return link;
}

/** A link of the flag in the path: Unleash finds links by id alone, so one project's editors could reach another's. */
async function linkOf(uow: UnitOfWork, target: { project: string; featureName: string }, id: string) {
  await findFeature(uow.tx, target.project, target.featureName, { lock: true });
  const row = await uow.tx
    .selectFrom('feature_links')
    .selectAll()
    .where('id', '=', id)
    .where('feature_name', '=', target.featureName)
    .forUpdate()
    .executeTakeFirst();
  if (!row) throw new NotFoundError(`Flag "${target.featureName}" has no link ${id}`);
  return row;
}

export async function updateFeatureLink(
  uow: UnitOfWork,
  target: { project: string; featureName: string },
  id: string,
  input: { url: string; title?: string | null },
): Promise<FeatureLinkView> {
  const before = await linkOf(uow, target, id);
  const link = { id, url: linkUrl(input.url), title: title(input.title), feature: target.featureName };
  await uow.tx.updateTable('feature_links').set({ url: link.url, title: link.title }).where('id', '=', id).execute();
  await recordFeatureEvent(uow, {
    type: 'feature-link-updated',
    ...target,
    data: { url: link.url, title: link.title },
    preData: { url: before.url, title: before.title },
  });
  return link;
}

export async function removeFeatureLink(uow: UnitOfWork, target: { project: string; featureName: string }, id: string): Promise<void> {
  const before = await linkOf(uow, target, id);
  await uow.tx.deleteFrom('feature_links').where('id', '=', id).execute();
  await recordFeatureEvent(uow, { type: 'feature-link-removed', ...target, preData: { url: before.url, title: before.title } });
}
