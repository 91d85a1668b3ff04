import { Type } from '@sinclair/typebox';
import { DateTime, Nullable, StrictObject, UrlFriendlyName } from '../../common.schemas.js';
import { ConstraintSchema } from '../../features.schemas.js';

const SegmentName = Type.String({
  minLength: 1,
  maxLength: 255,
  pattern: '\\S',
  errorMessage: 'A segment name is 1 to 255 characters, not only spaces',
});

const segmentFields = {
  id: Type.Integer(),
  name: Type.String(),
  description: Nullable(Type.String()),
  project: Nullable(Type.String()),
  constraints: Type.Array(Type.Ref(ConstraintSchema)),
  createdAt: DateTime,
  createdBy: Nullable(Type.String()),
};

export const SegmentSchema = Type.Object(segmentFields, { $id: 'segmentSchema' });

export const AdminSegmentSchema = Type.Object(
  {
    ...segmentFields,
    usedInFeatures: Type.Integer({ description: 'Flags whose strategies use the segment, archived ones included' }),
    usedInProjects: Type.Integer({ description: 'Projects of those flags' }),
  },
  { $id: 'adminSegmentSchema' },
);

export const SegmentsSchema = Type.Object({ segments: Type.Array(Type.Ref(AdminSegmentSchema)) }, { $id: 'segmentsSchema' });

/** The fields of a segment's create and update bodies, shared with change requests' segment payloads. */
export const UpsertSegmentFields = {
  name: SegmentName,
  description: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
  project: Type.Optional(Nullable(UrlFriendlyName)),
  constraints: Type.Array(Type.Ref(ConstraintSchema), { maxItems: 100 }),
};

export const UpsertSegmentSchema = StrictObject(UpsertSegmentFields, { $id: 'upsertSegmentSchema' });

/** A strategy that uses a segment or a context field, as both usage listings show it. */
export const StrategyUsage = Type.Object({
  id: Type.String({ format: 'uuid' }),
  featureName: Type.String(),
  projectId: Type.String(),
  environment: Type.String(),
  strategyName: Type.String(),
});

export const SegmentStrategiesSchema = Type.Object({ strategies: Type.Array(StrategyUsage) }, { $id: 'segmentStrategiesSchema' });

export const NameSchema = StrictObject({ name: SegmentName }, { $id: 'nameSchema' });

export const UpdateStrategySegmentsSchema = StrictObject(
  {
    projectId: UrlFriendlyName,
    environmentId: UrlFriendlyName,
    strategyId: Type.String({ format: 'uuid', errorMessage: 'strategyId must be a UUID' }),
    segmentIds: Type.Array(Type.Integer({ minimum: 1 }), {
      maxItems: 100,
      description: 'Every segment the strategy is to use; the others are taken off',
    }),
  },
  { $id: 'updateFeatureStrategySegmentsSchema' },
);

export const segmentSchemas = [
  UpdateStrategySegmentsSchema,
  SegmentSchema,
  AdminSegmentSchema,
  SegmentsSchema,
  UpsertSegmentSchema,
  SegmentStrategiesSchema,
  NameSchema,
];
