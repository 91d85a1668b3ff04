import { Type } from '@sinclair/typebox';
import { DateTime, Nullable, StrictObject } from '../../common.schemas.js';
import { CreateFeatureStrategySchema } from '../../features.schemas.js';

/** Release plan templates, plans, milestones and safeguards, in Unleash's shapes. */

const MilestoneStrategies = Type.Array(Type.Ref(CreateFeatureStrategySchema), {
  maxItems: 20,
  errorMessage: 'a milestone has at most 20 strategies',
});
const TransitionCondition = Nullable(
  StrictObject({
    intervalMinutes: Type.Integer({
      minimum: 1,
      maximum: 525_600,
      errorMessage: 'intervalMinutes is a whole number of minutes, 1 to a year',
    }),
  }),
);

export const MilestoneSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    sortOrder: Type.Integer(),
    strategies: Type.Array(Type.Object({}, { additionalProperties: true })),
    transitionCondition: Nullable(Type.Object({ intervalMinutes: Type.Integer() })),
  },
  { $id: 'releasePlanMilestoneSchema' },
);

export const ReleasePlanTemplateSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    description: Nullable(Type.String()),
    milestones: Type.Array(Type.Ref(MilestoneSchema)),
    createdAt: DateTime,
    createdByUserId: Type.Integer(),
    archivedAt: Nullable(DateTime),
  },
  { $id: 'releasePlanTemplateSchema' },
);

export const ReleasePlanTemplatesSchema = Type.Array(Type.Ref(ReleasePlanTemplateSchema), { $id: 'releasePlanTemplatesSchema' });

export const CreateReleasePlanTemplateSchema = StrictObject(
  {
    name: Type.String({
      minLength: 1,
      maxLength: 255,
      pattern: '\\S',
      errorMessage: 'A template name is 1 to 255 characters, not only spaces',
    }),
    description: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
    milestones: Type.Array(
      StrictObject({
        name: Type.String({ minLength: 1, maxLength: 255, pattern: '\\S' }),
        sortOrder: Type.Optional(Type.Integer()),
        id: Type.Optional(Type.String({ maxLength: 100 })),
        strategies: Type.Optional(MilestoneStrategies),
        transitionCondition: Type.Optional(TransitionCondition),
      }),
      { minItems: 1, maxItems: 20, errorMessage: 'A template has 1 to 20 milestones' },
    ),
  },
  { $id: 'createReleasePlanTemplateSchema' },
);

const Safeguard = Type.Object({
  id: Type.String(),
  impactMetric: Type.Object({
    metricName: Type.String(),
    appName: Nullable(Type.String()),
    aggregationMode: Type.String(),
    labelSelectors: Type.Record(Type.String(), Type.Array(Type.String())),
    windowMinutes: Type.Integer(),
  }),
  triggerCondition: Type.Object({ operator: Type.String(), threshold: Type.Number() }),
  action: Type.Object({ id: Type.String(), type: Type.String() }),
  triggeredAt: Nullable(DateTime),
});

export const ReleasePlanSafeguardSchema = Type.Composite([Safeguard], { $id: 'releasePlanSafeguardSchema' });

export const ReleasePlanSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    description: Nullable(Type.String()),
    featureName: Type.String(),
    environment: Type.String(),
    releasePlanTemplateId: Nullable(Type.String()),
    activeMilestoneId: Nullable(Type.String()),
    pausedAt: Nullable(DateTime),
    pausedReason: Nullable(Type.String()),
    createdAt: DateTime,
    createdByUserId: Type.Integer(),
    milestones: Type.Array(
      Type.Composite([
        Type.Omit(MilestoneSchema, []),
        Type.Object({ releasePlanDefinitionId: Type.String(), startedAt: Nullable(DateTime), progressAt: Nullable(DateTime) }),
      ]),
    ),
    safeguards: Type.Array(Type.Ref(ReleasePlanSafeguardSchema)),
  },
  { $id: 'releasePlanSchema' },
);

export const ReleasePlansSchema = Type.Array(Type.Ref(ReleasePlanSchema), { $id: 'releasePlansSchema' });

export const CreateReleasePlanSchema = StrictObject(
  { templateId: Type.String({ format: 'uuid', errorMessage: 'templateId is the id (a UUID) of a release plan template' }) },
  { $id: 'createReleasePlanSchema' },
);

export const CreateSafeguardSchema = StrictObject(
  {
    impactMetric: StrictObject({
      metricName: Type.String({ minLength: 1, maxLength: 200 }),
      appName: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
      aggregationMode: Type.Union([Type.Literal('count'), Type.Literal('rps'), Type.Literal('avg'), Type.Literal('sum')], {
        errorMessage:
          'aggregationMode is count or rps (counters), avg or sum (gauges); p50, p95 and p99 need histogram buckets, which Vexil does not keep',
      }),
      labelSelectors: Type.Optional(
        Type.Record(Type.String({ maxLength: 100 }), Type.Array(Type.String({ maxLength: 200 }), { maxItems: 20 }), { maxProperties: 10 }),
      ),
      timeRange: Type.Optional(
        Type.Union([Type.Literal('hour'), Type.Literal('day'), Type.Literal('week'), Type.Literal('month')], {
          errorMessage: 'timeRange is hour, day, week or month',
        }),
      ),
      windowMinutes: Type.Optional(Type.Integer({ minimum: 1, maximum: 1440, errorMessage: 'windowMinutes is 1 to 1440' })),
    }),
    triggerCondition: StrictObject({
      operator: Type.Union([Type.Literal('>'), Type.Literal('<')], { errorMessage: 'operator is > or <' }),
      threshold: Type.Number({ minimum: -1e15, maximum: 1e15 }),
    }),
    action: Type.Optional(
      StrictObject({
        type: Type.Union([Type.Literal('pause'), Type.Literal('pauseAndRollback')], {
          errorMessage: 'action type is pause or pauseAndRollback',
        }),
      }),
    ),
  },
  { $id: 'createSafeguardSchema' },
);

export const ImpactMetricPointsSchema = Type.Object(
  {
    metricName: Type.String(),
    environment: Type.String(),
    points: Type.Array(Type.Object({ minute: DateTime, value: Type.Number() })),
  },
  { $id: 'impactMetricPointsSchema' },
);

export const AvailableImpactMetricsSchema = Type.Object(
  {
    metrics: Type.Array(
      Type.Object({
        name: Type.String(),
        type: Type.String(),
        appName: Type.String(),
        help: Nullable(Type.String()),
        series: Type.Integer(),
      }),
    ),
  },
  { $id: 'availableImpactMetricsSchema' },
);

/** Unleash's milestone progression: from this milestone to the next, after some minutes. */
export const ChangeMilestoneProgressionSchema = StrictObject(
  {
    targetMilestone: Type.String({ format: 'uuid', errorMessage: 'targetMilestone is the id of the milestone after this one' }),
    transitionCondition: StrictObject({
      intervalMinutes: Type.Integer({ minimum: 1, maximum: 525_600, errorMessage: 'intervalMinutes is a whole number from 1 to 525600' }),
    }),
  },
  { $id: 'changeMilestoneProgressionSchema' },
);

export const releasePlanSchemas = [
  ChangeMilestoneProgressionSchema,
  MilestoneSchema,
  ReleasePlanTemplateSchema,
  ReleasePlanTemplatesSchema,
  CreateReleasePlanTemplateSchema,
  ReleasePlanSafeguardSchema,
  ReleasePlanSchema,
  ReleasePlansSchema,
  CreateReleasePlanSchema,
  CreateSafeguardSchema,
  ImpactMetricPointsSchema,
  AvailableImpactMetricsSchema,
];
