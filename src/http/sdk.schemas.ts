import { Type } from '@sinclair/typebox';
import { Nullable } from './common.schemas.js';
import { ConstraintSchema, StrategyVariantSchema, VariantSchema } from './features.schemas.js';

/**
 * What SDKs read, as Unleash's components name them. The client API writes these bodies itself (serialised once
 * per revision); the schemas document them.
 */
export const ClientSegmentSchema = Type.Object(
  { id: Type.Integer(), name: Type.String(), constraints: Type.Array(Type.Ref(ConstraintSchema)) },
  { $id: 'clientSegmentSchema' },
);

export const ClientFeatureSchema = Type.Object(
  {
    name: Type.String(),
    type: Type.String(),
    description: Nullable(Type.String()),
    project: Type.String(),
    enabled: Type.Boolean(),
    stale: Type.Boolean(),
    impressionData: Type.Boolean(),
    strategies: Type.Array(
      Type.Object({
        id: Type.String(),
        name: Type.String(),
        title: Type.Optional(Type.String()),
        sortOrder: Type.Integer(),
        constraints: Type.Array(Type.Ref(ConstraintSchema)),
        parameters: Type.Record(Type.String(), Type.String()),
        segments: Type.Optional(Type.Array(Type.Integer())),
        variants: Type.Array(Type.Ref(StrategyVariantSchema)),
      }),
    ),
    variants: Type.Array(Type.Ref(VariantSchema)),
    dependencies: Type.Optional(
      Type.Array(Type.Object({ feature: Type.String(), enabled: Type.Boolean(), variants: Type.Optional(Type.Array(Type.String())) })),
    ),
  },
  { $id: 'clientFeatureSchema' },
);

export const ClientFeaturesSchema = Type.Object(
  {
    version: Type.Literal(2),
    features: Type.Array(Type.Ref(ClientFeatureSchema)),
    segments: Type.Array(Type.Ref(ClientSegmentSchema)),
    query: Type.Object({}, { additionalProperties: true }),
    meta: Type.Object({ revisionId: Type.Integer(), etag: Type.Null(), queryHash: Type.Null() }),
  },
  { $id: 'clientFeaturesSchema' },
);

export const ClientFeaturesDeltaSchema = Type.Object(
  {
    events: Type.Array(
      Type.Object({
        type: Type.Union(['hydration', 'feature-updated', 'feature-removed', 'segment-updated', 'segment-removed'].map((type) => Type.Literal(type))),
        eventId: Type.Integer(),
        features: Type.Optional(Type.Array(Type.Ref(ClientFeatureSchema))),
        segments: Type.Optional(Type.Array(Type.Ref(ClientSegmentSchema))),
        feature: Type.Optional(Type.Ref(ClientFeatureSchema)),
        featureName: Type.Optional(Type.String()),
        project: Type.Optional(Type.String()),
        segment: Type.Optional(Type.Ref(ClientSegmentSchema)),
        segmentId: Type.Optional(Type.Integer()),
      }),
    ),
  },
  { $id: 'clientFeaturesDeltaSchema' },
);

/** Server-Sent Events: `unleash-connected` with a hydration, then `unleash-updated` with each delta. */
export const ClientStreamingResponse = {
  description: 'A text/event-stream of `unleash-connected` (a hydration) and `unleash-updated` (deltas) events',
  content: { 'text/event-stream': { schema: { type: 'string' } } },
};

const PayloadSchema = Type.Object({ type: Type.String(), value: Type.String() });

export const FrontendApiFeaturesSchema = Type.Object(
  {
    toggles: Type.Array(
      Type.Object({
        name: Type.String(),
        enabled: Type.Boolean(),
        impressionData: Type.Boolean(),
        variant: Type.Object({
          name: Type.String(),
          enabled: Type.Boolean(),
          payload: Type.Optional(PayloadSchema),
          feature_enabled: Type.Boolean(),
          featureEnabled: Type.Boolean(),
        }),
      }),
    ),
  },
  { $id: 'frontendApiFeaturesSchema' },
);

const EvaluatedConstraint = Type.Intersect([Type.Ref(ConstraintSchema), Type.Object({ result: Type.Boolean() })]);

export const PlaygroundResponseSchema = Type.Object(
  {
    input: Type.Object({}, { additionalProperties: true }),
    features: Type.Array(
      Type.Object({
        name: Type.String(),
        projectId: Type.String(),
        isEnabled: Type.Boolean(),
        isEnabledInCurrentEnvironment: Type.Boolean(),
        hasUnsatisfiedDependency: Type.Boolean(),
        variant: Type.Object({ name: Type.String(), enabled: Type.Boolean(), payload: Type.Optional(PayloadSchema) }),
        variants: Type.Array(Type.Ref(VariantSchema)),
        strategies: Type.Object({
          result: Type.Union([Type.Boolean(), Type.Literal('unknown')]),
          data: Type.Array(
            Type.Object({
              id: Type.String(),
              name: Type.String(),
              title: Type.Optional(Type.String()),
              disabled: Type.Boolean(),
              parameters: Type.Record(Type.String(), Type.String()),
              result: Type.Object({
                enabled: Type.Union([Type.Boolean(), Type.Literal('unknown')]),
                evaluationStatus: Type.Union([Type.Literal('complete'), Type.Literal('incomplete')]),
              }),
              constraints: Type.Array(EvaluatedConstraint),
              segments: Type.Array(
                Type.Object({ id: Type.Integer(), name: Type.String(), result: Type.Boolean(), constraints: Type.Array(EvaluatedConstraint) }),
              ),
            }),
          ),
        }),
      }),
    ),
  },
  { $id: 'playgroundResponseSchema' },
);

export const ApplicationsSchema = Type.Object(
  {
    applications: Type.Array(
      Type.Object({
        appName: Type.String(),
        strategies: Type.Array(Type.String()),
        environments: Type.Array(Type.String()),
        createdAt: Type.String({ format: 'date-time' }),
        seenAt: Type.String({ format: 'date-time' }),
      }),
    ),
    total: Type.Integer(),
  },
  { $id: 'applicationsSchema' },
);

export const ApplicationSchema = Type.Object(
  {
    appName: Type.String(),
    strategies: Type.Array(Type.String()),
    createdAt: Type.String({ format: 'date-time' }),
    seenAt: Type.String({ format: 'date-time' }),
    instances: Type.Array(
      Type.Object({
        instanceId: Type.String(),
        environment: Type.String(),
        sdkVersion: Nullable(Type.String()),
        clientIp: Nullable(Type.String()),
        started: Nullable(Type.String({ format: 'date-time' })),
        interval: Nullable(Type.Integer()),
        lastSeen: Type.String({ format: 'date-time' }),
      }),
    ),
  },
  { $id: 'applicationSchema' },
);

export const sdkSchemas = [
  ClientSegmentSchema,
  ClientFeatureSchema,
  ClientFeaturesSchema,
  ClientFeaturesDeltaSchema,
  FrontendApiFeaturesSchema,
  PlaygroundResponseSchema,
  ApplicationsSchema,
  ApplicationSchema,
];
