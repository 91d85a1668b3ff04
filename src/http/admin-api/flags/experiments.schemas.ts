import { Type } from '@sinclair/typebox';
import { DateTime, Nullable, StrictObject, StringEnum, UrlFriendlyName } from '../../common.schemas.js';

/** Experiments, the metrics they measure, and their results. */

const EventName = Type.String({
  minLength: 1,
  maxLength: 100,
  pattern: '^[A-Za-z0-9_.:\\-]+$',
  errorMessage: 'An event name is 1 to 100 letters, digits, "_", ".", ":" and "-"',
});
const AggregationEnum = StringEnum(['sum', 'count'] as const, 'sum (of the values) or count (of the events)');

export const CreateExperimentMetricSchema = StrictObject(
  {
    name: UrlFriendlyName,
    description: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
    kind: StringEnum(['proportion', 'mean', 'ratio'] as const, 'proportion, mean or ratio'),
    event: EventName,
    aggregation: Type.Optional(AggregationEnum),
    denominatorEvent: Type.Optional(Nullable(EventName)),
    denominatorAggregation: Type.Optional(Nullable(AggregationEnum)),
    windowHours: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 8760, errorMessage: 'windowHours is 1 to 8,760 (a year)' }))),
    cap: Type.Optional(Nullable(Type.Number({ exclusiveMinimum: 0, errorMessage: 'a cap is a number above 0' }))),
    lowerIsBetter: Type.Optional(Type.Boolean()),
  },
  { $id: 'createExperimentMetricSchema' },
);

export const ExperimentMetricSchema = Type.Object(
  {
    id: Type.Integer(),
    environment: Type.String(),
    name: Type.String(),
    description: Nullable(Type.String()),
    kind: Type.String(),
    event: Type.String(),
    aggregation: Type.String(),
    denominatorEvent: Nullable(Type.String()),
    denominatorAggregation: Nullable(Type.String()),
    windowHours: Nullable(Type.Integer()),
    cap: Nullable(Type.Number()),
    lowerIsBetter: Type.Boolean(),
    createdAt: DateTime,
  },
  { $id: 'experimentMetricSchema' },
);

export const ExperimentMetricsSchema = Type.Object(
  {
    metrics: Type.Array(Type.Ref(ExperimentMetricSchema)),
    /** Event names SDKs tracked that no metric measures: dropped, and counted here. */
    unknownEvents: Type.Array(Type.Object({ event: Type.String(), dropped: Type.Integer(), lastSeenAt: DateTime })),
  },
  { $id: 'experimentMetricsSchema' },
);

export const CreateExperimentSchema = StrictObject(
  {
    name: UrlFriendlyName,
    hypothesis: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
    featureName: UrlFriendlyName,
    environment: UrlFriendlyName,
    strategyId: Type.String({ format: 'uuid', errorMessage: 'strategyId is the id (a UUID) of the strategy whose variants are compared' }),
    metrics: Type.Array(
      StrictObject({
        metric: UrlFriendlyName,
        role: StringEnum(['goal', 'guardrail', 'secondary'] as const, 'goal, guardrail or secondary'),
      }),
      { maxItems: 20, errorMessage: 'an experiment measures at most 20 metrics' },
    ),
    engine: Type.Optional(StringEnum(['bayesian', 'frequentist'] as const, 'bayesian or frequentist')),
    difference: Type.Optional(StringEnum(['relative', 'absolute'] as const, 'relative or absolute')),
    alpha: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 0.2, errorMessage: 'alpha is above 0 and at most 0.2' })),
    sequential: Type.Optional(
      Nullable(
        StrictObject({ tuning: Type.Integer({ minimum: 100, maximum: 100_000_000, errorMessage: 'tuning is 100 to 100,000,000 units' }) }),
      ),
    ),
    cuped: Type.Optional(
      Nullable(StrictObject({ lookbackDays: Type.Integer({ minimum: 1, maximum: 60, errorMessage: 'lookbackDays is 1 to 60' }) })),
    ),
    correction: Type.Optional(StringEnum(['none', 'holm', 'benjamini-hochberg'] as const, 'none, holm or benjamini-hochberg')),
    dataSource: Type.Optional(
      Nullable(
        StrictObject({
          name: UrlFriendlyName,
          experimentKey: Type.String({
            minLength: 1,
            maxLength: 255,
            errorMessage: "experimentKey is the key the warehouse's assignments carry for this experiment",
          }),
        }),
      ),
    ),
  },
  { $id: 'createExperimentSchema' },
);

const PhaseSchema = Type.Object({
  phase: Type.Integer(),
  startedAt: DateTime,
  endedAt: Nullable(DateTime),
  groupId: Type.String(),
  stickiness: Type.String(),
  variants: Type.Array(Type.Object({ name: Type.String(), weight: Type.Number() })),
  variantMismatches: Type.Integer(),
});

export const ExperimentSchema = Type.Object(
  {
    name: Type.String(),
    project: Type.String(),
    hypothesis: Nullable(Type.String()),
    featureName: Type.String(),
    environment: Type.String(),
    strategyId: Nullable(Type.String()),
    engine: Type.String(),
    difference: Type.String(),
    alpha: Type.Number(),
    sequential: Nullable(Type.Object({ tuning: Type.Integer() })),
    cuped: Nullable(Type.Object({ lookbackDays: Type.Integer() })),
    correction: Type.String(),
    status: Type.String(),
    shippedVariant: Nullable(Type.String()),
    createdAt: DateTime,
    startedAt: Nullable(DateTime),
    stoppedAt: Nullable(DateTime),
    metrics: Type.Array(Type.Object({ ...ExperimentMetricSchema.properties, role: Type.String() })),
    phases: Type.Array(PhaseSchema),
    dataSource: Nullable(Type.Object({ name: Type.String(), experimentKey: Type.String() })),
    /** When shipping went to review: the change request it was added to. */
    changeRequestId: Type.Optional(Type.Integer()),
  },
  { $id: 'experimentSchema' },
);

export const ExperimentsSchema = Type.Object({ experiments: Type.Array(Type.Ref(ExperimentSchema)) }, { $id: 'experimentsSchema' });

export const ShipVariantSchema = StrictObject(
  { variant: Type.String({ minLength: 1, maxLength: 100 }) },
  { $id: 'shipExperimentVariantSchema' },
);

const ComparisonSchema = Type.Object({
  estimate: Type.Number(),
  interval: Type.Array(Nullable(Type.Number()), { minItems: 2, maxItems: 2 }),
  chanceToWin: Type.Optional(Type.Number()),
  risk: Type.Optional(Type.Array(Type.Number(), { minItems: 2, maxItems: 2 })),
  pValue: Type.Optional(Type.Number()),
  adjustedPValue: Type.Optional(Type.Number()),
  decided: Type.Boolean(),
});

export const ExperimentResultsSchema = Type.Object(
  {
    experiment: Type.String(),
    phase: Type.Integer(),
    engine: Type.String(),
    difference: Type.String(),
    computedAt: DateTime,
    exposures: Type.Array(Type.Object({ variant: Type.String(), units: Type.Integer(), weight: Type.Number() })),
    multipleExposures: Type.Integer(),
    variantMismatches: Type.Integer(),
    sampleRatio: Type.Object({ pValue: Type.Number(), alarm: Type.Boolean() }),
    warnings: Type.Array(Type.String()),
    metrics: Type.Array(
      Type.Object({
        name: Type.String(),
        role: Type.String(),
        kind: Type.String(),
        lowerIsBetter: Type.Boolean(),
        variants: Type.Array(
          Type.Object({
            variant: Type.String(),
            units: Type.Integer(),
            value: Type.Number(),
            comparison: Type.Optional(ComparisonSchema),
            problem: Type.Optional(Type.String()),
          }),
        ),
      }),
    ),
    summary: Type.String(),
  },
  { $id: 'experimentResultsSchema' },
);

export const ExperimentResultsHistorySchema = Type.Object(
  {
    /** The results of each analysis of the phase, oldest first: the cumulative chart. */
    snapshots: Type.Array(Type.Object({ takenAt: DateTime, results: Type.Ref(ExperimentResultsSchema) })),
  },
  { $id: 'experimentResultsHistorySchema' },
);

const Query = Type.String({ minLength: 1, maxLength: 20_000, errorMessage: 'a query is 1 to 20,000 characters of SQL' });

export const CreateDataSourceSchema = StrictObject(
  {
    name: UrlFriendlyName,
    url: Type.String({
      minLength: 1,
      maxLength: 2000,
      description: 'postgres://user:password@host:5432/database, with read-only credentials',
    }),
    assignmentQuery: Query,
    eventsQuery: Query,
  },
  { $id: 'createExperimentDataSourceSchema' },
);

export const DataSourceSchema = Type.Object(
  {
    name: Type.String(),
    kind: Type.String(),
    address: Type.String({ description: 'user@host:port/database: never the password' }),
    assignmentQuery: Type.String(),
    eventsQuery: Type.String(),
    createdAt: DateTime,
  },
  { $id: 'experimentDataSourceSchema' },
);

export const DataSourcesSchema = Type.Object(
  { dataSources: Type.Array(Type.Ref(DataSourceSchema)) },
  { $id: 'experimentDataSourcesSchema' },
);

export const DataSourceTestSchema = Type.Object(
  { assignmentColumns: Type.Array(Type.String()), eventColumns: Type.Array(Type.String()) },
  { $id: 'experimentDataSourceTestSchema' },
);

export const DataSourceParams = Type.Object({ dataSourceName: UrlFriendlyName });

export const ExperimentParams = Type.Object({ projectId: UrlFriendlyName, experimentName: UrlFriendlyName });
export const MetricEnvironmentParams = Type.Object({ environment: UrlFriendlyName });
export const MetricParams = Type.Object({ environment: UrlFriendlyName, metricName: UrlFriendlyName });
export const ResultsQuerySchema = Type.Object({
  phase: Type.Optional(Type.Integer({ minimum: 1, errorMessage: 'phase is a whole number from 1' })),
});

export const experimentSchemas = [
  CreateExperimentMetricSchema,
  ExperimentMetricSchema,
  ExperimentMetricsSchema,
  CreateExperimentSchema,
  ExperimentSchema,
  ExperimentsSchema,
  ShipVariantSchema,
  ExperimentResultsSchema,
  ExperimentResultsHistorySchema,
  CreateDataSourceSchema,
  DataSourceSchema,
  DataSourcesSchema,
  DataSourceTestSchema,
];
