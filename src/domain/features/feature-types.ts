/** The kinds of flag, as Unleash names them. */
export const FEATURE_TYPES = ['release', 'experiment', 'operational', 'kill-switch', 'permission'] as const;
export type FeatureType = (typeof FEATURE_TYPES)[number];

export interface FeatureTypeView {
  id: FeatureType;
  name: string;
  description: string;
  /** How long a flag of this kind is expected to live before it is potentially stale; null: it is meant to stay. */
  lifetimeDays: number | null;
}

const DETAILS: Record<FeatureType, Omit<FeatureTypeView, 'id'>> = {
  release: { name: 'Release', description: 'Release feature flags are used to release new features.', lifetimeDays: 40 },
  experiment: {
    name: 'Experiment',
    description: 'Experiment feature flags are used to test and verify multiple different versions of a feature.',
    lifetimeDays: 40,
  },
  operational: { name: 'Operational', description: 'Operational feature flags are used to control aspects of a rollout.', lifetimeDays: 7 },
  'kill-switch': {
    name: 'Kill switch',
    description: 'Kill switch feature flags are used to quickly turn on or off critical functionality in your system.',
    lifetimeDays: null,
  },
  permission: {
    name: 'Permission',
    description: 'Permission feature flags are used to control permissions in your system.',
    lifetimeDays: null,
  },
};

/** Every kind of flag with its name, description and expected lifetime (Unleash's defaults), in Unleash's order. */
export const FEATURE_TYPE_CATALOGUE: readonly FeatureTypeView[] = FEATURE_TYPES.map((id) => ({ id, ...DETAILS[id] }));
