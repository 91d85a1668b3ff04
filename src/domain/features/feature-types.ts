import type { Db } from '../../db/database.js';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { NotFoundError } from '../../shared/errors.js';
import { recordEvent } from '../events/record-event.js';

/** The kinds of flag, as Unleash names them. */
export const FEATURE_TYPES = ['release', 'experiment', 'operational', 'kill-switch', 'permission', 'sunset'] as const;
export type FeatureType = (typeof FEATURE_TYPES)[number];

export interface FeatureTypeView {
  id: FeatureType;
  name: string;
  description: string;
  /** How long a flag of this kind is expected to live before it is potentially stale; null: it is meant to stay. */
  lifetimeDays: number | null;
}

const DETAILS: Record<FeatureType, Pick<FeatureTypeView, 'name' | 'description'>> = {
  release: { name: 'Release', description: 'Release feature flags are used to release new features.' },
  experiment: {
    name: 'Experiment',
    description: 'Experiment feature flags are used to test and verify multiple different versions of a feature.',
  },
  operational: { name: 'Operational', description: 'Operational feature flags are used to control aspects of a rollout.' },
  'kill-switch': {
    name: 'Kill switch',
    description: 'Kill switch feature flags are used to quickly turn on or off critical functionality in your system.',
  },
  permission: { name: 'Permission', description: 'Permission feature flags are used to control permissions in your system.' },
  sunset: { name: 'Sunset', description: 'Sunset feature flags coordinate the planned removal of an existing feature.' },
};

const isFeatureType = (id: string): id is FeatureType => (FEATURE_TYPES as readonly string[]).includes(id);

/** Every kind of flag with its name, description and expected lifetime (an Admin's, or Unleash's default), in Unleash's order. */
export async function listFeatureTypes(db: Db): Promise<FeatureTypeView[]> {
  const rows = await db.selectFrom('feature_type_lifetimes').select(['type', 'lifetime_days']).execute();
  const lifetimes = new Map(rows.map((row) => [row.type, row.lifetime_days]));
  return FEATURE_TYPES.map((id) => ({ id, ...DETAILS[id], lifetimeDays: lifetimes.get(id) ?? null }));
}

/**
 * Sets how many days a flag of a type lives before it is potentially stale; 0 or null: never, as Unleash reads them.
 * Records `feature-type-updated`. The staleness every search and report computes follows at once, for it reads this.
 */
export async function setFeatureTypeLifetime(uow: UnitOfWork, id: string, lifetimeDays: number | null): Promise<FeatureTypeView> {
  if (!isFeatureType(id)) throw new NotFoundError(`The feature type you tried to update ("${id}") does not exist.`);
  const before = (await listFeatureTypes(uow.tx)).find((type) => type.id === id)!;
  const lifetime = lifetimeDays === 0 ? null : lifetimeDays;
  await uow.tx
    .insertInto('feature_type_lifetimes')
    .values({ type: id, lifetime_days: lifetime })
    .onConflict((oc) => oc.column('type').doUpdateSet({ lifetime_days: lifetime }))
    .execute();
  const after = { ...before, lifetimeDays: lifetime };
  await recordEvent(uow, { type: 'feature-type-updated', data: after, preData: before });
  return after;
}
