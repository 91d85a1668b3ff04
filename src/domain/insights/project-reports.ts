import type { Db } from '../../db/database.js';
import type { Actor } from '../../db/unit-of-work.js';
import { listProjectEnvironments, type ProjectDefaultStrategy } from '../features/project-environments.js';
import { listProjectFeatures } from '../features/features.js';
import type { FeatureView } from '../features/feature-views.js';
import { getProject, type ProjectView } from '../projects/projects.js';
import {
  activityByDate,
  featureTypeCounts,
  flagHealth,
  lifecycleSummary,
  projectMembers,
  projectResources,
  projectStats,
  staleFlagCount,
  timeToProduction,
  type FlagHealth,
  type LeadTime,
  type LifecycleSummary,
  type ProjectStats,
} from './project-insights.js';
import { onboardingStatus } from './onboarding.js';

// Unleash's project reports (overview, status, health report, insights, DORA), each assembled from the measures in
// project-insights.ts for the project's page in Unleash's admin UI and for the scripts that read them.

interface OverviewEnvironment {
  environment: string;
  changeRequestsEnabled: boolean;
  defaultStrategy?: ProjectDefaultStrategy;
}

/** The project's environments in display order, with whether changes there need a change request. */
async function overviewEnvironments(db: Db, project: string): Promise<OverviewEnvironment[]> {
  const [environments, guarded] = await Promise.all([
    listProjectEnvironments(db, project),
    db.selectFrom('change_request_settings').select('environment').where('project', '=', project).where('enabled', '=', true).execute(),
  ]);
  const protectedEnvironments = new Set(guarded.map((row) => row.environment));
  return environments
    .filter((environment) => environment.visible)
    .map((environment) => ({
      environment: environment.name,
      changeRequestsEnabled: protectedEnvironments.has(environment.name),
      ...(environment.defaultStrategy ? { defaultStrategy: environment.defaultStrategy } : {}),
    }));
}

async function isFavorite(db: Db, project: string, actor: Actor): Promise<boolean> {
  if (actor.kind !== 'user') return false;
  const row = await db
    .selectFrom('favorite_projects')
    .select('project')
    .where('project', '=', project)
    .where('user_id', '=', actor.userId)
    .executeTakeFirst();
  return row !== undefined;
}

/** What Unleash's project header shows besides the flags. */
interface ProjectSummary {
  version: 1;
  name: string;
  description: string | null;
  mode: string;
  defaultStickiness: string;
  /** Vexil sets no limit on a project's flags, nor a naming pattern: Unleash's fields, empty. */
  featureLimit: null;
  featureNaming: { pattern: null; example: null; description: null };
  health: number;
  technicalDebt: number;
  members: number;
  favorite: boolean;
  environments: OverviewEnvironment[];
  createdAt: string;
  updatedAt: string | null;
  stats: ProjectStats;
}

/** The project's summary, with the flag health it was computed from (the health report shows its counts too). */
async function projectSummary(
  db: Db,
  project: ProjectView,
  actor: Actor,
  now: Date,
): Promise<{ summary: ProjectSummary; health: FlagHealth }> {
  const [health, members, favorite, environments, stats] = await Promise.all([
    flagHealth(db, project.id, now),
    projectMembers(db, project.id, now),
    isFavorite(db, project.id, actor),
    overviewEnvironments(db, project.id),
    projectStats(db, project.id, now),
  ]);
  const summary: ProjectSummary = {
    version: 1,
    name: project.name,
    description: project.description,
    mode: project.mode,
    defaultStickiness: project.defaultStickiness,
    featureLimit: null,
    featureNaming: { pattern: null, example: null, description: null },
    health: health.rating,
    technicalDebt: 100 - health.rating,
    members: members.currentMembers,
    favorite,
    environments,
    createdAt: project.createdAt,
    updatedAt: project.updatedAt,
    stats,
  };
  return { summary, health };
}

/** `GET …/projects/:id/overview`: the project, its health and its last 30 days. */
export async function projectOverview(db: Db, id: string, actor: Actor, now: Date) {
  const project = await getProject(db, id);
  const [{ summary }, typeCounts, onboarding] = await Promise.all([
    projectSummary(db, project, actor, now),
    featureTypeCounts(db, id),
    onboardingStatus(db, id),
  ]);
  return { ...summary, linkTemplates: [], featureTypeCounts: typeCounts, onboardingStatus: onboarding };
}

/** `GET …/projects/:id/health-report` (deprecated in Unleash, read by stale-flag reports): the overview with every flag. */
export async function projectHealthReport(db: Db, id: string, actor: Actor, now: Date) {
  const project = await getProject(db, id);
  const [{ summary, health }, features] = await Promise.all([projectSummary(db, project, actor, now), listProjectFeatures(db, id, actor)]);
  return {
    ...summary,
    features: features satisfies FeatureView[],
    activeCount: health.activeCount,
    potentiallyStaleCount: health.potentiallyStaleCount,
    staleCount: health.staleCount,
  };
}

export interface ProjectStatus {
  resources: { members: number; apiTokens: number; segments: number };
  activityCountByDate: Array<{ date: string; count: number }>;
  health: { current: number };
  technicalDebt: { current: number };
  lifecycleSummary: LifecycleSummary;
  staleFlags: { total: number };
}

/** `GET …/projects/:id/status`: what the project holds, how busy it was this year, where its flags stand. */
export async function projectStatus(db: Db, id: string, now: Date): Promise<ProjectStatus> {
  await getProject(db, id);
  const [resources, activity, health, lifecycle, stale] = await Promise.all([
    projectResources(db, id),
    activityByDate(db, id, now),
    flagHealth(db, id, now),
    lifecycleSummary(db, id, now),
    staleFlagCount(db, id, now),
  ]);
  return {
    resources,
    activityCountByDate: activity,
    health: { current: health.rating },
    technicalDebt: { current: 100 - health.rating },
    lifecycleSummary: lifecycle,
    staleFlags: { total: stale },
  };
}

/** `GET …/projects/:id/insights`. */
export async function projectInsights(db: Db, id: string, now: Date) {
  await getProject(db, id);
  const [stats, typeCounts, health, leadTime, members] = await Promise.all([
    projectStats(db, id, now),
    featureTypeCounts(db, id),
    flagHealth(db, id, now),
    timeToProduction(db, id),
    projectMembers(db, id, now),
  ]);
  const counts = { activeCount: health.activeCount, potentiallyStaleCount: health.potentiallyStaleCount, staleCount: health.staleCount };
  return {
    stats,
    featureTypeCounts: typeCounts,
    technicalDebt: { rating: 100 - health.rating, ...counts },
    health: { rating: health.rating, ...counts },
    leadTime,
    members,
  };
}

/** `GET …/projects/:id/dora` (deprecated in Unleash): each flag's days from creation to production. */
export async function projectLeadTime(db: Db, id: string): Promise<LeadTime> {
  await getProject(db, id);
  return timeToProduction(db, id);
}
