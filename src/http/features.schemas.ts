import { Type } from '@sinclair/typebox';
import { FEATURE_TYPES } from '../domain/features/feature-types.js';
import { CONSTRAINT_OPERATORS } from '../domain/features/feature-views.js';
import { DateTime, Nullable, StrictObject, StringEnum, UrlFriendlyName } from './common.schemas.js';

const FeatureType = StringEnum(FEATURE_TYPES, `type must be one of ${FEATURE_TYPES.join(', ')}`);
const Description = Nullable(Type.String({ maxLength: 2000 }));

export const TagSchema = Type.Object(
  {
    type: Type.String({ minLength: 2, maxLength: 50, errorMessage: 'A tag type is 2 to 50 characters' }),
    value: Type.String({ minLength: 2, maxLength: 50, errorMessage: 'A tag value is 2 to 50 characters' }),
  },
  { $id: 'tagSchema', additionalProperties: false },
);

export const ConstraintSchema = StrictObject(
  {
    contextName: Type.String({ minLength: 1, maxLength: 100 }),
    operator: StringEnum(CONSTRAINT_OPERATORS, `operator must be one of ${CONSTRAINT_OPERATORS.join(', ')}`),
    caseInsensitive: Type.Optional(Type.Boolean()),
    inverted: Type.Optional(Type.Boolean()),
    values: Type.Optional(Type.Array(Type.String({ maxLength: 1000 }), { maxItems: 10_000 })),
    value: Type.Optional(Type.String({ maxLength: 1000 })),
  },
  { $id: 'constraintSchema' },
);

const Payload = StrictObject({
  type: StringEnum(['json', 'csv', 'string', 'number'], 'payload type must be json, csv, string or number'),
  value: Type.String({ maxLength: 100_000 }),
});

const WeightType = StringEnum(['variable', 'fix'], 'weightType must be variable or fix');
const Weight = Type.Integer({ minimum: 0, maximum: 1000, errorMessage: 'weight must be a whole number from 0 to 1000' });

/** What a variant is, of a strategy and of an environment alike. */
const VARIANT_FIELDS = {
  name: Type.String({ minLength: 1, maxLength: 100 }),
  weight: Weight,
  weightType: Type.Optional(WeightType),
  stickiness: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  payload: Type.Optional(Payload),
};

export const StrategyVariantSchema = StrictObject(VARIANT_FIELDS, { $id: 'strategyVariantSchema' });

/** An environment's variant, which may also name who always gets it. */
export const VariantSchema = StrictObject(
  {
    ...VARIANT_FIELDS,
    overrides: Type.Optional(Type.Array(StrictObject({ contextName: Type.String({ minLength: 1 }), values: Type.Array(Type.String()) }))),
  },
  { $id: 'variantSchema' },
);

export const VariantsSchema = Type.Array(Type.Ref(VariantSchema), { $id: 'variantsSchema', maxItems: 100 });

export const FeatureVariantsSchema = Type.Object(
  { version: Type.Literal(1), variants: Type.Array(Type.Ref(VariantSchema)) },
  { $id: 'featureVariantsSchema' },
);

export const FeatureStrategySchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    title: Nullable(Type.String()),
    disabled: Type.Boolean(),
    featureName: Type.String(),
    sortOrder: Type.Integer(),
    segments: Type.Array(Type.Integer()),
    constraints: Type.Array(Type.Ref(ConstraintSchema)),
    variants: Type.Array(Type.Ref(StrategyVariantSchema)),
    parameters: Type.Record(Type.String(), Type.String()),
  },
  { $id: 'featureStrategySchema' },
);

/** The fields of a strategy's create and update bodies, shared with change requests' strategy payloads. */
export const StrategyFields = {
  name: Type.String({ minLength: 1, maxLength: 100 }),
  title: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
  disabled: Type.Optional(Nullable(Type.Boolean())),
  sortOrder: Type.Optional(Type.Integer({ minimum: -1_000_000, maximum: 1_000_000 })),
  constraints: Type.Optional(Type.Array(Type.Ref(ConstraintSchema), { maxItems: 100 })),
  variants: Type.Optional(Type.Array(Type.Ref(StrategyVariantSchema), { maxItems: 100 })),
  parameters: Type.Optional(
    Type.Record(Type.String({ maxLength: 100 }), Type.Union([Type.String({ maxLength: 10_000 }), Type.Number()]), {
      errorMessage: 'parameters maps names to strings',
    }),
  ),
  segments: Type.Optional(Type.Array(Type.Integer({ minimum: 1 }), { maxItems: 100 })),
};

export const CreateFeatureStrategySchema = StrictObject(StrategyFields, { $id: 'createFeatureStrategySchema' });

export const UpdateFeatureStrategySchema = StrictObject(
  { ...StrategyFields, id: Type.Optional(Type.String()), featureName: Type.Optional(Type.String()) },
  { $id: 'updateFeatureStrategySchema' },
);

export const SetStrategySortOrderSchema = Type.Array(
  StrictObject({ id: Type.String({ format: 'uuid' }), sortOrder: Type.Integer({ minimum: -1_000_000, maximum: 1_000_000 }) }),
  { $id: 'setStrategySortOrderSchema', minItems: 1, maxItems: 1000 },
);

export const FeatureEnvironmentSchema = Type.Object(
  {
    name: Type.String(),
    environment: Type.String(),
    featureName: Type.String(),
    type: Type.String(),
    enabled: Type.Boolean(),
    sortOrder: Type.Integer(),
    variantCount: Type.Integer(),
    strategies: Type.Array(Type.Ref(FeatureStrategySchema)),
    variants: Type.Array(Type.Ref(VariantSchema)),
    lastSeenAt: Nullable(DateTime),
    hasStrategies: Type.Boolean(),
    hasEnabledStrategies: Type.Boolean(),
  },
  { $id: 'featureEnvironmentSchema' },
);

export const FeatureSchema = Type.Object(
  {
    name: Type.String(),
    project: Type.String(),
    type: Type.String(),
    description: Nullable(Type.String()),
    impressionData: Type.Boolean(),
    stale: Type.Boolean(),
    archived: Type.Boolean(),
    archivedAt: Nullable(DateTime),
    createdAt: DateTime,
    lastSeenAt: Nullable(DateTime),
    favorite: Type.Boolean(),
    environments: Type.Array(Type.Ref(FeatureEnvironmentSchema)),
    tags: Type.Array(Type.Ref(TagSchema)),
    dependencies: Type.Array(Type.Object({ feature: Type.String(), enabled: Type.Boolean(), variants: Type.Array(Type.String()) })),
    children: Type.Array(Type.String()),
    lifecycle: Nullable(Type.Object({ stage: Type.String(), status: Nullable(Type.String()), enteredStageAt: DateTime })),
    createdBy: Type.Object({ id: Type.Integer(), name: Type.String(), imageUrl: Type.String() }),
    links: Type.Array(Type.Object({ id: Type.String(), url: Type.String(), title: Nullable(Type.String()), feature: Type.String() })),
  },
  { $id: 'featureSchema' },
);

export const FeatureLinkSchema = StrictObject(
  {
    url: Type.String({ minLength: 1, maxLength: 2000 }),
    title: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
  },
  { $id: 'linkSchema' },
);

export const FeaturesSchema = Type.Object(
  { version: Type.Literal(1), features: Type.Array(Type.Ref(FeatureSchema)) },
  { $id: 'featuresSchema' },
);

export const CreateFeatureSchema = StrictObject(
  {
    name: UrlFriendlyName,
    type: Type.Optional(FeatureType),
    description: Type.Optional(Description),
    impressionData: Type.Optional(Type.Boolean()),
  },
  { $id: 'createFeatureSchema' },
);

export const UpdateFeatureSchema = StrictObject(
  {
    name: Type.Optional(Type.String()),
    type: Type.Optional(FeatureType),
    description: Type.Optional(Description),
    impressionData: Type.Optional(Type.Boolean()),
    stale: Type.Optional(Type.Boolean()),
    archived: Type.Optional(Type.Boolean()),
  },
  { $id: 'updateFeatureSchema' },
);

export const PatchSchema = StrictObject(
  {
    op: StringEnum(['add', 'remove', 'replace', 'move', 'copy', 'test'], 'op must be add, remove, replace, move, copy or test'),
    path: Type.String({ pattern: '^(/[^/]*)*$', errorMessage: 'path must be a JSON Pointer such as /description' }),
    from: Type.Optional(Type.String({ pattern: '^(/[^/]*)*$' })),
    value: Type.Optional(Type.Unknown()),
  },
  { $id: 'patchSchema' },
);

export const PatchesSchema = Type.Array(Type.Ref(PatchSchema), { $id: 'patchesSchema', maxItems: 100 });

export const BatchFeaturesSchema = StrictObject(
  { features: Type.Array(UrlFriendlyName, { minItems: 1, maxItems: 1000 }) },
  { $id: 'batchFeaturesSchema' },
);

export const BatchStaleSchema = StrictObject(
  { features: Type.Array(UrlFriendlyName, { minItems: 1, maxItems: 1000 }), stale: Type.Boolean() },
  { $id: 'batchStaleSchema' },
);

export const ChangeProjectSchema = StrictObject({ newProjectId: UrlFriendlyName }, { $id: 'changeProjectSchema' });

export const FeatureTypeSchema = Type.Object(
  {
    id: FeatureType,
    name: Type.String(),
    description: Type.String(),
    lifetimeDays: Nullable(Type.Integer({ minimum: 0, description: 'Days until a flag of this type is potentially stale; null: never' })),
  },
  { $id: 'featureTypeSchema' },
);

export const FeatureTypesSchema = Type.Object(
  { version: Type.Literal(1), types: Type.Array(Type.Ref(FeatureTypeSchema)) },
  { $id: 'featureTypesSchema' },
);

export const UpdateFeatureTypeLifetimeSchema = StrictObject(
  {
    lifetimeDays: Nullable(
      Type.Integer({
        minimum: 0,
        maximum: 2147483647,
        description: 'Days until a flag of this type is potentially stale; 0 or null: never',
      }),
    ),
  },
  { $id: 'updateFeatureTypeLifetimeSchema' },
);

export const ValidateFeatureSchema = StrictObject(
  {
    name: UrlFriendlyName,
    projectId: Type.Optional(Nullable(UrlFriendlyName)),
  },
  { $id: 'validateFeatureSchema', description: 'A name to check before creating a flag with it (in a project, when given)' },
);

export const CloneFeatureSchema = StrictObject(
  {
    name: UrlFriendlyName,
    replaceGroupId: Type.Optional(Type.Boolean({ description: "Whether strategies' groupId becomes the new name; true unless false" })),
  },
  { $id: 'cloneFeatureSchema' },
);

export const PushVariantsSchema = StrictObject(
  {
    variants: Type.Ref(VariantsSchema),
    environments: Type.Array(UrlFriendlyName, { minItems: 1, maxItems: 100, uniqueItems: true }),
  },
  { $id: 'pushVariantsSchema', description: 'The same variants written to each of several environments' },
);

export const featureSchemas = [
  TagSchema,
  FeatureLinkSchema,
  ConstraintSchema,
  StrategyVariantSchema,
  VariantSchema,
  VariantsSchema,
  FeatureVariantsSchema,
  FeatureStrategySchema,
  CreateFeatureStrategySchema,
  UpdateFeatureStrategySchema,
  SetStrategySortOrderSchema,
  FeatureEnvironmentSchema,
  FeatureSchema,
  FeaturesSchema,
  CreateFeatureSchema,
  UpdateFeatureSchema,
  PatchSchema,
  PatchesSchema,
  BatchFeaturesSchema,
  BatchStaleSchema,
  ChangeProjectSchema,
  FeatureTypeSchema,
  FeatureTypesSchema,
  UpdateFeatureTypeLifetimeSchema,
  ValidateFeatureSchema,
  CloneFeatureSchema,
  PushVariantsSchema,
];
