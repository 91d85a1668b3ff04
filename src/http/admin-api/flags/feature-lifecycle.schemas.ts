import { Type } from '@sinclair/typebox';
import { COMPLETION_STATUSES, type Completion } from '../../../domain/features/lifecycle.js';
import { LIFECYCLE_STAGES } from '../../../domain/features/feature-views.js';
import { DateTime, StrictObject } from '../../common.schemas.js';

export const FeatureLifecycleSchema = Type.Array(
  Type.Object(
    {
      stage: Type.Union(LIFECYCLE_STAGES.map((stage) => Type.Literal(stage))),
      status: Type.Optional(Type.String({ description: 'Detail of the stage: kept or discarded for completed' })),
      enteredStageAt: DateTime,
    },
    { additionalProperties: false },
  ),
  { $id: 'featureLifecycleSchema', description: 'The lifecycle stages the flag has reached, in stage order' },
);

export const FeatureLifecycleCompletedSchema = StrictObject(
  {
    // One `enum` keyword rather than a union of literals, so a wrong value is one problem, not one per literal.
    status: Type.Unsafe<Completion['status']>({
      type: 'string',
      enum: [...COMPLETION_STATUSES],
      errorMessage: `status must be ${COMPLETION_STATUSES.join(' or ')}`,
    }),
    statusValue: Type.Optional(Type.String({ maxLength: 255, description: 'e.g. the variant that was kept' })),
  },
  { $id: 'featureLifecycleCompletedSchema' },
);

export const FeatureLifecycleCountSchema = Type.Object(
  { initial: Type.Integer(), preLive: Type.Integer(), live: Type.Integer(), completed: Type.Integer(), archived: Type.Integer() },
  { $id: 'featureLifecycleCountSchema', description: 'Flags by the last stage of their lifecycle they reached' },
);

export const lifecycleSchemas = [FeatureLifecycleSchema, FeatureLifecycleCompletedSchema, FeatureLifecycleCountSchema];
