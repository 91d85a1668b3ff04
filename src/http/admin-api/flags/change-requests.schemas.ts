import { Type, type TSchema } from '@sinclair/typebox';
import type { ChangeInput } from '../../../domain/change-requests/change-actions.js';
import { CHANGE_ACTIONS } from '../../../domain/change-requests/change-actions.js';
import { DateTime, Nullable, StrictObject, StringEnum, UrlFriendlyName } from '../../common.schemas.js';
import { CreateDependentFeatureSchema } from './feature-dependencies.schemas.js';
import { CreateFeatureStrategySchema, SetStrategySortOrderSchema, StrategyFields, VariantsSchema } from '../../features.schemas.js';
import { UpsertSegmentFields } from './segments.schemas.js';

export const CHANGE_REQUEST_STATES = ['Draft', 'In review', 'Approved', 'Scheduled', 'Applied', 'Cancelled', 'Rejected'] as const;

const StrategyId = Type.String({ format: 'uuid', errorMessage: 'A strategy id is a UUID' });
const SegmentId = Type.Integer({ minimum: 1, errorMessage: 'A segment id is a positive whole number' });

/** One alternative of `changeRequestCreateSchema`: a flag's change, whose payload is its direct route's body. */
const featureChange = (action: string, payload: TSchema, payloadRequired = true) =>
  StrictObject({
    action: Type.Literal(action),
    feature: UrlFriendlyName,
    payload: payloadRequired ? payload : Type.Optional(payload),
  });

const segmentChange = (action: string, payload: TSchema) => StrictObject({ action: Type.Literal(action), payload });

/**
 * Unleash's `changeRequestCreateSchema`: one change, an alternative per action, each payload validated by the
 * schema of the direct route it stands for. The `action` tag picks the alternative (a `discriminator`), so a
 * bad payload is reported against its own schema only.
 */
export const ChangeRequestCreateSchema = Type.Unsafe<ChangeInput>({
  $id: 'changeRequestCreateSchema',
  type: 'object',
  discriminator: { propertyName: 'action' },
  errorMessage: `A change is an object with "action" (one of ${CHANGE_ACTIONS.join(', ')}), "feature" for a flag's change, and "payload"`,
  oneOf: [
    featureChange('updateEnabled', StrictObject({ enabled: Type.Boolean() })),
    featureChange('addStrategy', Type.Ref(CreateFeatureStrategySchema)),
    featureChange('updateStrategy', StrictObject({ ...StrategyFields, id: StrategyId })),
    featureChange('deleteStrategy', StrictObject({ id: StrategyId })),
    featureChange('reorderStrategy', Type.Ref(SetStrategySortOrderSchema)),
    featureChange('patchVariant', StrictObject({ variants: Type.Ref(VariantsSchema) })),
    featureChange('archiveFeature', StrictObject({}), false),
    featureChange('addDependency', Type.Ref(CreateDependentFeatureSchema)),
    featureChange(
      'deleteDependency',
      StrictObject({ feature: UrlFriendlyName }, { description: 'The parent; all parents when left out' }),
      false,
    ),
    featureChange('addReleasePlan', StrictObject({ templateId: Type.String({ format: 'uuid' }) })),
    featureChange(
      'startMilestone',
      StrictObject({ planId: Type.String({ format: 'uuid' }), milestoneId: Type.String({ format: 'uuid' }) }),
    ),
    featureChange('deleteReleasePlan', StrictObject({ planId: Type.String({ format: 'uuid' }) })),
    segmentChange('updateSegment', StrictObject({ ...UpsertSegmentFields, id: SegmentId })),
    segmentChange('deleteSegment', StrictObject({ id: SegmentId })),
  ],
});

/** Unleash's `changeRequestOneOrManyCreateSchema`: one change, or a list of them added together. */
export const ChangeRequestOneOrManyCreateSchema = Type.Unsafe<ChangeInput | ChangeInput[]>({
  $id: 'changeRequestOneOrManyCreateSchema',
  description: 'One change (changeRequestCreateSchema) or an array of 1 to 100 of them',
  if: { type: 'array' },
  // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then/else, not a promise.
  then: Type.Array(Type.Ref(ChangeRequestCreateSchema), { minItems: 1, maxItems: 100 }),
  else: Type.Ref(ChangeRequestCreateSchema),
});

export const ChangeRequestStateSchema = StrictObject(
  {
    state: StringEnum(CHANGE_REQUEST_STATES, `state must be one of ${CHANGE_REQUEST_STATES.join(', ')}`),
    comment: Type.Optional(Type.String({ minLength: 1, maxLength: 1000, errorMessage: 'A comment is 1 to 1000 characters' })),
    scheduledAt: Type.Optional(Type.String({ format: 'date-time', description: 'With state Scheduled: when to apply it' })),
  },
  { $id: 'changeRequestStateSchema' },
);

export const ChangeRequestUpdateTitleSchema = StrictObject(
  { title: Type.String({ minLength: 1, maxLength: 255, pattern: '\\S', errorMessage: 'A title is 1 to 255 characters, not only spaces' }) },
  { $id: 'changeRequestUpdateTitleSchema' },
);

export const ChangeRequestAddCommentSchema = StrictObject(
  {
    text: Type.String({
      minLength: 1,
      maxLength: 1000,
      pattern: '\\S',
      errorMessage: 'A comment is 1 to 1000 characters, not only spaces',
    }),
  },
  { $id: 'changeRequestAddCommentSchema' },
);

export const UpdateChangeRequestEnvironmentConfigSchema = StrictObject(
  {
    changeRequestsEnabled: Type.Boolean(),
    requiredApprovals: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 10, errorMessage: 'requiredApprovals must be a whole number from 1 to 10' }),
    ),
  },
  { $id: 'updateChangeRequestEnvironmentConfigSchema' },
);

export const ChangeRequestEnvironmentConfigSchema = Type.Object(
  { environment: Type.String(), type: Type.String(), changeRequestEnabled: Type.Boolean(), requiredApprovals: Type.Integer() },
  { $id: 'changeRequestEnvironmentConfigSchema' },
);

export const ChangeRequestConfigSchema = Type.Array(Type.Ref(ChangeRequestEnvironmentConfigSchema), { $id: 'changeRequestConfigSchema' });

const UserReference = Type.Object({ id: Type.Integer(), username: Type.String(), imageUrl: Nullable(Type.String()) });

const changeFields = {
  id: Type.Integer(),
  action: Type.String(),
  conflict: Type.Optional(Type.String()),
  payload: Type.Unknown({ description: 'The change as sent: its direct route’s body' }),
  createdBy: UserReference,
  createdAt: DateTime,
};

export const ChangeRequestEventSchema = Type.Object(changeFields, { $id: 'changeRequestEventSchema' });

export const ChangeRequestSegmentChangeSchema = Type.Object(
  { ...changeFields, name: Type.String({ description: 'The current name of the segment' }) },
  { $id: 'changeRequestSegmentChangeSchema' },
);

export const ChangeRequestFeatureSchema = Type.Object(
  {
    name: Type.String(),
    conflict: Type.Optional(Type.String()),
    changes: Type.Array(Type.Ref(ChangeRequestEventSchema)),
    defaultChange: Type.Optional(
      Type.Object(
        { action: Type.String(), payload: Type.Unknown() },
        { description: 'Added in the background when applied, e.g. the default strategy of a flag turned on without any' },
      ),
    ),
  },
  { $id: 'changeRequestFeatureSchema' },
);

const Review = Type.Object({ createdBy: UserReference, createdAt: DateTime });

export const ChangeRequestSchema = Type.Object(
  {
    id: Type.Integer(),
    title: Type.String(),
    environment: Type.String(),
    minApprovals: Type.Integer(),
    project: Type.String(),
    features: Type.Array(Type.Ref(ChangeRequestFeatureSchema)),
    segments: Type.Array(Type.Ref(ChangeRequestSegmentChangeSchema)),
    approvals: Type.Array(Review),
    rejections: Type.Array(Review),
    comments: Type.Array(Type.Object({ id: Type.Integer(), text: Type.String(), createdBy: UserReference, createdAt: DateTime })),
    createdBy: UserReference,
    createdAt: DateTime,
    state: Type.String({ enum: [...CHANGE_REQUEST_STATES] }),
    schedule: Type.Optional(
      Type.Object({
        scheduledAt: DateTime,
        status: Type.String({ enum: ['pending', 'failed'] }),
        failureReason: Type.Optional(Type.String()),
        reason: Type.Optional(Type.String()),
      }),
    ),
    appliedBy: Type.Optional(UserReference),
    appliedAt: Type.Optional(DateTime),
    appliedChanges: Type.Optional(
      Type.Array(
        Type.Object({
          eventId: Type.Integer(),
          type: Type.String(),
          featureName: Type.Union([Type.String(), Type.Null()]),
          preData: Type.Unknown(),
          data: Type.Unknown(),
        }),
        { description: 'Applied requests: what applying it changed, from the events it recorded' },
      ),
    ),
  },
  { $id: 'changeRequestSchema' },
);

export const ChangeRequestsSchema = Type.Array(Type.Ref(ChangeRequestSchema), { $id: 'changeRequestsSchema' });

export const OpenChangeRequestsSchema = Type.Object(
  {
    toReview: Type.Array(Type.Ref(ChangeRequestSchema), {
      description: 'In review, opened by someone else, in a project where the caller may approve, not yet reviewed by the caller',
    }),
    mine: Type.Array(Type.Ref(ChangeRequestSchema), { description: 'Opened by the caller, in any open state' }),
  },
  { $id: 'openChangeRequestsSchema' },
);

export const changeRequestSchemas = [
  ChangeRequestCreateSchema,
  ChangeRequestOneOrManyCreateSchema,
  ChangeRequestStateSchema,
  ChangeRequestUpdateTitleSchema,
  ChangeRequestAddCommentSchema,
  UpdateChangeRequestEnvironmentConfigSchema,
  ChangeRequestEnvironmentConfigSchema,
  ChangeRequestConfigSchema,
  ChangeRequestEventSchema,
  ChangeRequestSegmentChangeSchema,
  ChangeRequestFeatureSchema,
  ChangeRequestSchema,
  ChangeRequestsSchema,
  OpenChangeRequestsSchema,
];
