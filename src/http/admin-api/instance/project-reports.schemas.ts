import { Type, type TSchema } from '@sinclair/typebox';
import { DateTime, Nullable } from '../../common.schemas.js';
import { FeatureSchema } from '../../features.schemas.js';
import { ProjectDefaultStrategySchema } from './projects.schemas.js';

const Count = Type.Integer({ minimum: 0 });
const Rating = Type.Integer({ description: 'Per cent: 100 less the share of stale and potentially stale flags (health)' });

export const ProjectStatsSchema = Type.Object(
  {
    avgTimeToProdCurrentWindow: Type.Number({ description: 'Mean days to production of the flags made in the last 30 days' }),
    createdCurrentWindow: Count,
    createdPastWindow: Count,
    archivedCurrentWindow: Count,
    archivedPastWindow: Count,
    projectActivityCurrentWindow: Count,
    projectActivityPastWindow: Count,
    projectMembersAddedCurrentWindow: Count,
  },
  { $id: 'projectStatsSchema', description: 'The last 30 days (current window) beside the 30 before them (past window)' },
);

const FeatureTypeCounts = Type.Array(Type.Object({ type: Type.String(), count: Count }));
export const OnboardingStatus = Type.Union([
  Type.Object({ status: Type.Union([Type.Literal('onboarding-started'), Type.Literal('onboarded')]) }),
  Type.Object({ status: Type.Literal('first-flag-created'), feature: Type.String() }),
]);

/** The fields the overview and the health report share. */
const summary = {
  version: Type.Literal(1),
  name: Type.String(),
  description: Nullable(Type.String()),
  mode: Type.String(),
  defaultStickiness: Type.String(),
  featureLimit: Type.Null(),
  featureNaming: Type.Object({ pattern: Type.Null(), example: Type.Null(), description: Type.Null() }),
  health: Rating,
  technicalDebt: Type.Integer(),
  members: Count,
  favorite: Type.Boolean(),
  environments: Type.Array(
    Type.Object({
      environment: Type.String(),
      changeRequestsEnabled: Type.Boolean(),
      defaultStrategy: Type.Optional(Type.Ref(ProjectDefaultStrategySchema)),
    }),
  ),
  createdAt: DateTime,
  updatedAt: Nullable(DateTime),
  stats: Type.Ref(ProjectStatsSchema),
} satisfies Record<string, TSchema>;

export const ProjectOverviewSchema = Type.Object(
  { ...summary, linkTemplates: Type.Array(Type.Never()), featureTypeCounts: FeatureTypeCounts, onboardingStatus: OnboardingStatus },
  { $id: 'projectOverviewSchema' },
);

export const HealthReportSchema = Type.Object(
  {
    ...summary,
    features: Type.Array(Type.Ref(FeatureSchema)),
    activeCount: Count,
    potentiallyStaleCount: Count,
    staleCount: Count,
  },
  { $id: 'healthReportSchema' },
);

const StageSummary = Type.Object({ averageDays: Nullable(Type.Number()), currentFlags: Count });

export const ProjectStatusSchema = Type.Object(
  {
    resources: Type.Object({ members: Count, apiTokens: Count, segments: Count }),
    activityCountByDate: Type.Array(Type.Object({ date: Type.String({ format: 'date' }), count: Count })),
    health: Type.Object({ current: Rating }),
    technicalDebt: Type.Object({ current: Type.Integer() }),
    lifecycleSummary: Type.Object({
      initial: StageSummary,
      preLive: StageSummary,
      live: StageSummary,
      completed: StageSummary,
      archived: Type.Object({ currentFlags: Count, last30Days: Count }),
    }),
    staleFlags: Type.Object({ total: Count }),
  },
  { $id: 'projectStatusSchema' },
);

export const ProjectDoraSchema = Type.Object(
  {
    features: Type.Array(Type.Object({ name: Type.String(), timeToProduction: Type.Number({ description: 'Whole days' }) })),
    projectAverage: Type.Number(),
  },
  { $id: 'projectDoraMetricsSchema', description: "Each flag's days from creation to its first enabling in production" },
);

const HealthCounts = { activeCount: Count, potentiallyStaleCount: Count, staleCount: Count };

export const ProjectInsightsSchema = Type.Object(
  {
    stats: Type.Ref(ProjectStatsSchema),
    featureTypeCounts: FeatureTypeCounts,
    technicalDebt: Type.Object({ rating: Type.Integer(), ...HealthCounts }),
    health: Type.Object({ rating: Rating, ...HealthCounts }),
    leadTime: Type.Ref(ProjectDoraSchema),
    members: Type.Object({ currentMembers: Count, change: Count }),
  },
  { $id: 'projectInsightsSchema' },
);

const UserOwner = Type.Object({
  ownerType: Type.Literal('user'),
  name: Type.String(),
  imageUrl: Nullable(Type.String()),
  email: Nullable(Type.String({ description: 'Shown to Admins only' })),
});

export const PersonalDashboardSchema = Type.Object(
  {
    admins: Type.Array(
      Type.Object({
        id: Type.Integer(),
        name: Type.String(),
        username: Type.Optional(Type.String()),
        imageUrl: Type.Optional(Type.String()),
        email: Type.Optional(Type.String({ description: 'Shown to Admins only' })),
      }),
    ),
    projectOwners: Type.Array(UserOwner),
    projects: Type.Array(
      Type.Object({
        id: Type.String(),
        name: Type.String(),
        health: Rating,
        technicalDebt: Type.Integer({ minimum: 0, maximum: 100 }),
        memberCount: Count,
        featureCount: Count,
      }),
      { description: "The projects where the person holds a role, their own or a group's" },
    ),
    flags: Type.Array(Type.Object({ name: Type.String(), project: Type.String(), type: Type.String() }), {
      description: 'The flags the person made or marked as a favourite',
    }),
  },
  { $id: 'personalDashboardSchema' },
);

export const PersonalDashboardProjectDetailsSchema = Type.Object(
  {
    insights: Type.Object({
      avgHealthCurrentWindow: Type.Null({ description: 'Vexil keeps no history of health' }),
      avgHealthPastWindow: Type.Null(),
      totalFlags: Count,
      activeFlags: Type.Integer({ minimum: 0, description: 'Neither stale nor potentially stale' }),
      staleFlags: Count,
      potentiallyStaleFlags: Count,
      health: Rating,
      technicalDebt: Type.Integer({ minimum: 0, maximum: 100 }),
    }),
    onboardingStatus: OnboardingStatus,
    latestEvents: Type.Array(
      Type.Object({
        id: Type.Integer(),
        summary: Nullable(Type.String({ description: 'Markdown' })),
        createdBy: Type.String(),
        createdByImageUrl: Type.String(),
        createdAt: DateTime,
      }),
    ),
    owners: Type.Array(
      Type.Union([
        UserOwner,
        Type.Object({ ownerType: Type.Literal('group'), name: Type.String() }),
        Type.Object({ ownerType: Type.Literal('system') }),
      ]),
      { description: "The project's owners; `system` alone when it has none" },
    ),
    roles: Type.Array(
      Type.Object({ id: Type.Integer(), name: Type.String(), type: Type.Union([Type.Literal('project'), Type.Literal('custom')]) }),
    ),
  },
  { $id: 'personalDashboardProjectDetailsSchema' },
);

export const projectReportSchemas = [
  PersonalDashboardSchema,
  PersonalDashboardProjectDetailsSchema,
  ProjectStatsSchema,
  ProjectOverviewSchema,
  HealthReportSchema,
  ProjectStatusSchema,
  ProjectDoraSchema,
  ProjectInsightsSchema,
];
