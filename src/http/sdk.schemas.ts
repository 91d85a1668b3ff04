import { Type } from '@sinclair/typebox';
import { DateTime, Nullable, StrictObject, StringEnum } from './common.schemas.js';
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
        type: Type.Union(
          ['hydration', 'feature-updated', 'feature-removed', 'segment-updated', 'segment-removed'].map((type) => Type.Literal(type)),
        ),
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

/** One flag's outcome in the playground, and why. */
const playgroundFeatureFields = {
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
          Type.Object({
            id: Type.Integer(),
            name: Type.String(),
            result: Type.Boolean(),
            constraints: Type.Array(EvaluatedConstraint),
          }),
        ),
      }),
    ),
  }),
};

export const PlaygroundResponseSchema = Type.Object(
  {
    input: Type.Object({}, { additionalProperties: true }),
    features: Type.Array(Type.Object(playgroundFeatureFields)),
  },
  { $id: 'playgroundResponseSchema' },
);

export const AdvancedPlaygroundResponseSchema = Type.Object(
  {
    input: Type.Object({}, { additionalProperties: true }),
    features: Type.Array(
      Type.Object({
        name: Type.String(),
        projectId: Type.String(),
        environments: Type.Record(
          Type.String(),
          Type.Array(
            Type.Object({
              ...playgroundFeatureFields,
              environment: Type.String(),
              context: Type.Object({}, { additionalProperties: true, description: 'The one combination of context values evaluated' }),
            }),
          ),
          { description: "The flag's outcomes by environment, one per combination of context values" },
        ),
      }),
    ),
  },
  { $id: 'advancedPlaygroundResponseSchema' },
);

/** Unleash's parameters for the applications list: a part of the name, and the page. */
export const ApplicationsQuerySchema = Type.Object({
  query: Type.Optional(Type.String({ maxLength: 100, description: 'Part of the application name, in any case' })),
  offset: Type.Optional(Type.String({ description: 'Applications to skip; default 0' })),
  limit: Type.Optional(Type.String({ description: 'Page size, 1 to 1000; default 100' })),
});

export const ApplicationsSchema = Type.Object(
  {
    applications: Type.Array(
      Type.Object({
        appName: Type.String(),
        strategies: Type.Array(Type.String()),
        environments: Type.Array(Type.String()),
        instances: Type.Integer({ description: 'How many SDK instances of the application Vexil knows' }),
        sdkVersions: Type.Array(Type.String()),
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
    description: Nullable(Type.String()),
    url: Nullable(Type.String()),
    color: Nullable(Type.String()),
    icon: Nullable(Type.String()),
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
    flags: Type.Array(
      Type.Object({
        name: Type.String(),
        project: Type.String(),
        environment: Type.String(),
        yes: Type.Integer(),
        no: Type.Integer(),
        lastHour: Type.String({ format: 'date-time' }),
      }),
      { description: 'The flags it evaluated in the last 7 days, with their counts' },
    ),
    missingFlags: Type.Array(
      Type.Object({ name: Type.String(), environment: Type.String(), lastSeenAt: Type.String({ format: 'date-time' }) }),
      { description: 'Names it evaluated that no flag has' },
    ),
  },
  { $id: 'applicationSchema' },
);

export const CreateApplicationSchema = StrictObject(
  {
    description: Type.Optional(Type.String({ maxLength: 1000 })),
    url: Type.Optional(
      Type.String({ maxLength: 1000, format: 'uri', pattern: '^https?://', errorMessage: 'url must be an http or https address' }),
    ),
    color: Type.Optional(Type.String({ maxLength: 100 })),
    icon: Type.Optional(Type.String({ maxLength: 100 })),
    strategies: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 100 })),
  },
  { $id: 'createApplicationSchema', description: 'What a person says about an application; what is left out stays as it was' },
);

const SdkVersions = Type.Array(Type.String(), { description: '`name:version`, as SDKs register' });

export const ApplicationOverviewSchema = Type.Object(
  {
    projects: Type.Array(Type.String(), { description: 'The projects of the flags it evaluated' }),
    featureCount: Type.Integer(),
    environments: Type.Array(
      Type.Object({
        name: Type.String(),
        instanceCount: Type.Integer({ description: 'Instances that reported in the last day' }),
        sdks: SdkVersions,
        frontendSdks: SdkVersions,
        backendSdks: SdkVersions,
        lastSeen: Nullable(Type.String({ format: 'date-time' })),
        issues: Type.Object({
          missingFeatures: Type.Array(Type.String(), { description: 'Names it evaluated that no flag has' }),
          outdatedSdks: SdkVersions,
        }),
      }),
    ),
    issues: Type.Object({ missingStrategies: Type.Array(Type.String(), { description: 'Strategies it runs that Vexil does not define' }) }),
  },
  { $id: 'applicationOverviewSchema' },
);

export const ApplicationEnvironmentInstancesSchema = Type.Object(
  {
    instances: Type.Array(
      Type.Object({
        instanceId: Type.String(),
        sdkVersion: Nullable(Type.String()),
        clientIp: Nullable(Type.String()),
        lastSeen: Type.String({ format: 'date-time' }),
      }),
    ),
  },
  { $id: 'applicationEnvironmentInstancesSchema' },
);

export const OutdatedSdksSchema = Type.Object(
  { sdks: Type.Array(Type.Object({ sdkVersion: Type.String(), applications: Type.Array(Type.String()) })) },
  { $id: 'outdatedSdksSchema', description: 'SDK versions in use that should be upgraded, with the applications using each' },
);

export const ProjectApplicationsQuerySchema = Type.Object({
  query: Type.Optional(Type.String({ maxLength: 100, description: "Part of an application's name, environment, instance or SDK" })),
  offset: Type.Optional(Type.String({ description: 'Applications to skip; default 0' })),
  limit: Type.Optional(Type.String({ description: 'Page size, 1 to 1000; default 50' })),
  sortBy: Type.Optional(Type.String({ maxLength: 100 })),
  sortOrder: Type.Optional(StringEnum(['asc', 'desc'], 'sortOrder is asc or desc')),
});

export const ProjectApplicationsSchema = Type.Object(
  {
    total: Type.Integer(),
    applications: Type.Array(
      Type.Object({
        name: Type.String(),
        environments: Type.Array(Type.String()),
        instances: Type.Array(Type.String()),
        sdks: Type.Array(Type.Object({ name: Type.String(), versions: Type.Array(Type.String()) })),
      }),
    ),
  },
  { $id: 'projectApplicationsSchema' },
);

/** What SDKs send. */

/** The query filters server-side SDKs send; `project` and `tag` may repeat. */
export const ClientFeaturesQuerySchema = Type.Object({
  project: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 100 })),
  namePrefix: Type.Optional(Type.String({ maxLength: 100 })),
  tag: Type.Optional(Type.Array(Type.String({ pattern: '^[^:]+:.+$', maxLength: 200 }), { maxItems: 100 })),
  inlineSegmentConstraints: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')])),
});

/**
 * SDKs send more than Vexil reads (platform names, versions, yggdrasil versions), so unknown properties are
 * accepted and ignored here, unlike on the admin API: rejecting them would break every Unleash SDK.
 */
export const ClientRegistrationSchema = Type.Object(
  {
    appName: Type.String({ minLength: 1, maxLength: 255 }),
    instanceId: Type.Optional(Type.String({ maxLength: 255 })),
    sdkVersion: Type.Optional(Type.String({ maxLength: 255 })),
    environment: Type.Optional(Type.String({ maxLength: 100 })),
    strategies: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 100 })),
    started: Type.Optional(Type.Union([Type.String({ format: 'date-time' }), Type.Integer({ minimum: 0 })])),
    interval: Type.Optional(Type.Integer({ minimum: 0, maximum: 86_400_000 })),
  },
  { $id: 'clientApplicationSchema' },
);

const Count = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER });

/**
 * SDKs send more than Vexil reads (platform, versions, connection ids), so unknown properties are accepted
 * and ignored here, unlike on the admin API: rejecting them would break every Unleash SDK.
 */
const MetricLabels = Type.Record(Type.String({ maxLength: 100 }), Type.String({ maxLength: 200 }), {
  maxProperties: 20,
  errorMessage: 'labels are at most 20 names of up to 100 characters, each with a string value of up to 200',
});
const FiniteNumber = Type.Number({ minimum: -1e15, maximum: 1e15 });

/**
 * What the Node SDK's impact metrics API sends with a usage report: counters and gauges (a value per label
 * set) and histograms (count, sum and buckets). Checked strictly and bounded, as Vexil keeps them.
 */
export const ImpactMetricsSchema = Type.Array(
  Type.Object({
    name: Type.String({
      minLength: 1,
      maxLength: 200,
      pattern: '^[a-zA-Z_:][a-zA-Z0-9_:]*$',
      errorMessage: 'a metric name is letters, digits, _ and : (not starting with a digit), at most 200 characters',
    }),
    help: Type.Optional(Type.String({ maxLength: 500 })),
    type: Type.Union([Type.Literal('counter'), Type.Literal('gauge'), Type.Literal('histogram')], {
      errorMessage: 'type must be counter, gauge or histogram',
    }),
    samples: Type.Array(
      Type.Object({
        labels: Type.Optional(MetricLabels),
        value: Type.Optional(FiniteNumber),
        count: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
        sum: Type.Optional(FiniteNumber),
        buckets: Type.Optional(
          Type.Array(Type.Object({ le: Type.Union([Type.Number(), Type.Literal('+Inf')]), count: Type.Integer({ minimum: 0 }) }), {
            maxItems: 50,
          }),
        ),
      }),
      { maxItems: 200, errorMessage: 'a metric carries at most 200 samples' },
    ),
  }),
  { maxItems: 100, errorMessage: 'a report carries at most 100 impact metrics' },
);

/** A flag's evaluations per hour, environment and application (Unleash's raw feature metrics). */
export const FeatureUsageOverTimeSchema = Type.Object(
  {
    version: Type.Integer(),
    maturity: Type.String(),
    featureName: Type.String(),
    hoursBack: Type.Integer(),
    lastHourUsage: Type.Array(
      Type.Object({
        environment: Type.String(),
        appName: Type.String(),
        timestamp: DateTime,
        yes: Type.Integer(),
        no: Type.Integer(),
        variants: Type.Record(Type.String(), Type.Integer()),
      }),
    ),
  },
  { $id: 'featureUsageOverTimeSchema' },
);

export const FeatureUsageSummarySchema = Type.Object(
  {
    version: Type.Integer(),
    maturity: Type.String(),
    featureName: Type.String(),
    lastHourUsage: Type.Array(
      Type.Object({
        featureName: Type.String(),
        environment: Type.String(),
        appName: Type.String(),
        timestamp: DateTime,
        yes: Type.Integer(),
        no: Type.Integer(),
      }),
    ),
    seenApplications: Type.Array(Type.String()),
  },
  { $id: 'featureUsageSchema' },
);

export const UnknownFlagsSchema = Type.Object(
  {
    unknownFlags: Type.Array(
      Type.Object({
        name: Type.String(),
        lastSeenAt: DateTime,
        lastEventAt: Nullable(DateTime),
        reports: Type.Array(
          Type.Object({
            appName: Type.String(),
            environments: Type.Array(Type.Object({ environment: Type.String(), seenAt: DateTime })),
          }),
        ),
      }),
    ),
  },
  { $id: 'unknownFlagsResponseSchema' },
);

export const ClientMetricsSchema = Type.Object(
  {
    appName: Type.String({ minLength: 1, maxLength: 255 }),
    impactMetrics: Type.Optional(ImpactMetricsSchema),
    instanceId: Type.Optional(Type.String({ maxLength: 255 })),
    environment: Type.Optional(Type.String()),
    bucket: Type.Object({
      start: DateTime,
      stop: DateTime,
      toggles: Type.Record(
        Type.String({ minLength: 1, maxLength: 100 }),
        Type.Object({
          yes: Count,
          no: Count,
          variants: Type.Optional(Type.Record(Type.String({ maxLength: 100 }), Count, { maxProperties: 100 })),
        }),
        { maxProperties: 10_000 },
      ),
    }),
  },
  { $id: 'clientMetricsSchema' },
);

/** What Unleash Edge forwards: registrations and per-flag counts of many SDKs at once. */
export const BulkMetricsSchema = Type.Object(
  {
    applications: Type.Optional(Type.Array(Type.Ref(ClientRegistrationSchema), { maxItems: 1000 })),
    metrics: Type.Array(
      Type.Object({
        featureName: Type.String({ minLength: 1, maxLength: 100 }),
        appName: Type.String({ minLength: 1, maxLength: 255 }),
        environment: Type.String({ minLength: 1, maxLength: 100 }),
        timestamp: DateTime,
        yes: Count,
        no: Count,
        variants: Type.Optional(Type.Record(Type.String(), Count)),
      }),
      { maxItems: 10_000 },
    ),
  },
  { $id: 'bulkMetricsSchema' },
);

const ContextValue = Type.String({ maxLength: 1000 });
/** The context of Unleash's SDKs: well-known fields and free `properties` (the frontend API and the playground). */
export const FrontendContextSchema = Type.Object(
  {
    appName: Type.Optional(ContextValue),
    environment: Type.Optional(ContextValue),
    userId: Type.Optional(ContextValue),
    sessionId: Type.Optional(ContextValue),
    remoteAddress: Type.Optional(ContextValue),
    currentTime: Type.Optional(Type.String({ format: 'date-time' })),
    properties: Type.Optional(Type.Record(Type.String({ maxLength: 100 }), ContextValue, { maxProperties: 100 })),
  },
  { additionalProperties: ContextValue, maxProperties: 120 },
);

export const FrontendApiBodySchema = Type.Object({ context: Type.Optional(FrontendContextSchema) }, { $id: 'frontendApiRequestSchema' });

export const PlaygroundRequestSchema = Type.Object(
  {
    environment: Type.String({ minLength: 1, maxLength: 100 }),
    projects: Type.Optional(Type.Union([Type.Literal('*'), Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 100 })])),
    context: FrontendContextSchema,
  },
  { $id: 'playgroundRequestSchema', additionalProperties: false },
);

export const AdvancedPlaygroundRequestSchema = Type.Object(
  {
    environments: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { minItems: 1, maxItems: 50, uniqueItems: true }),
    projects: Type.Optional(Type.Union([Type.Literal('*'), Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 100 })])),
    context: FrontendContextSchema,
  },
  {
    $id: 'advancedPlaygroundRequestSchema',
    additionalProperties: false,
    description: 'Several environments at once; a text context value is a comma-separated list of alternatives, each combination evaluated',
  },
);

export const sdkSchemas = [
  AdvancedPlaygroundRequestSchema,
  AdvancedPlaygroundResponseSchema,
  ClientRegistrationSchema,
  ClientMetricsSchema,
  FeatureUsageOverTimeSchema,
  FeatureUsageSummarySchema,
  UnknownFlagsSchema,
  BulkMetricsSchema,
  FrontendApiBodySchema,
  PlaygroundRequestSchema,
  ClientSegmentSchema,
  ClientFeatureSchema,
  ClientFeaturesSchema,
  ClientFeaturesDeltaSchema,
  FrontendApiFeaturesSchema,
  PlaygroundResponseSchema,
  ApplicationsSchema,
  ApplicationSchema,
  CreateApplicationSchema,
  ApplicationOverviewSchema,
  ApplicationEnvironmentInstancesSchema,
  OutdatedSdksSchema,
  ProjectApplicationsSchema,
];
