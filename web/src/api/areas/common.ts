import type { QueryKey } from '@tanstack/react-query';
import type { paths } from '../schema';

/**
 * What the areas of the UI's data layer share: the query keys (`keys`, one vocabulary, since a change in one area
 * makes another's queries stale), the request body and query types read from the OpenAPI schema, and `action`.
 */

export type JsonBody<Path extends keyof paths, Method extends keyof paths[Path]> = paths[Path][Method] extends {
  requestBody?: { content: { 'application/json': infer Body } };
}
  ? Body
  : never;
export type Query<Path extends keyof paths> = paths[Path] extends { get: { parameters: { query?: infer Q } } } ? NonNullable<Q> : never;

export type EventQuery = Query<'/api/admin/search/events'>;
export type FeatureSearchQuery = Query<'/api/admin/search/features'>;
/** An export file (Unleash's format) and where to import it. */
export type ImportDocument = JsonBody<'/api/admin/features-batch/import', 'post'>;
export interface FlagPath {
  projectId: string;
  featureName: string;
}
export interface FlagEnvironmentPath extends FlagPath {
  environment: string;
}

export const keys = {
  me: ['me'],
  projects: ['projects'],
  project: (projectId: string) => ['project', projectId],
  environments: ['environments'],
  segments: ['segments'],
  segment: (id: string) => ['segment', id],
  tags: ['tags'],
  tagTypes: ['tag-types'],
  contextFields: ['context-fields'],
  strategyDefinitions: ['strategy-definitions'],
  users: ['users'],
  inviteLinks: ['invite-links'],
  /** Every list of sessions; one user's key starts with it. */
  sessions: ['sessions'],
  sessionsOf: (userId: number | 'me') => ['sessions', userId],
  signOns: (offset: number) => ['signons', offset],
  signInSettings: (provider: 'oidc' | 'saml') => ['sign-in-settings', provider],
  scimToken: ['scim-token'],
  /** The agents holding a token of the signed-in person (MCP). */
  mcpTokens: ['mcp-tokens'],
  signInOptions: ['sign-in-options'],
  uiConfig: ['ui-config'],
  maintenance: ['maintenance'],
  featureTypes: ['feature-types'],
  instanceStatistics: ['instance-statistics'],
  projectStatus: (projectId: string) => ['project-status', projectId],
  /** Under the project's key: a change to the project refreshes them. */
  projectEnvironments: (projectId: string) => ['project', projectId, 'environments'],
  projectContextFields: (projectId: string) => ['context-fields', 'project', projectId],
  projectApiTokens: (projectId: string) => ['api-tokens', 'project', projectId],
  applications: (query: { query?: string; offset: number; limit: number }) => ['applications', query],
  application: (appName: string) => ['application', appName],
  releaseTemplates: ['release-templates'],
  /** Every flag's release plans; a flag environment's key starts with it. */
  releasePlans: ['release-plans'],
  releasePlansOf: (path: FlagEnvironmentPath) => ['release-plans', path.projectId, path.featureName, path.environment],
  flagUsage: (featureName: string, hoursBack: number) => ['flag-usage', featureName, hoursBack],
  impactMetric: (metricName: string, environment: string, hoursBack: number) => ['impact-metric', metricName, environment, hoursBack],
  groups: ['groups'],
  /** Every list of roles and each role; role lists elsewhere (users, project access) follow them too. */
  roles: ['roles'],
  role: (id: number) => ['roles', id],
  permissions: ['permissions'],
  serviceAccounts: ['service-accounts'],
  projectAccess: (projectId: string) => ['project-access', projectId],
  apiTokens: ['api-tokens'],
  addons: ['addons'],
  addon: (id: string) => ['addon', id],
  integrationEvents: (addonId: string) => ['integration-events', addonId],
  /** Every event list (the log, a flag's history): any change adds events. */
  events: ['events'],
  eventCreators: ['event-creators'],
  featureSearch: ['feature-search'],
  /** Every flag page's flag; a flag's key starts with it. */
  flags: ['flag'],
  flag: (path: FlagPath) => ['flag', path.projectId, path.featureName],
  flagParents: (path: FlagPath) => ['flag', path.projectId, path.featureName, 'parents'],
  flagLifecycle: (path: FlagPath) => ['flag', path.projectId, path.featureName, 'lifecycle'],
  flagCodeReferences: (path: FlagPath) => ['flag', path.projectId, path.featureName, 'code-references'],
  flagRemovalReadiness: (path: FlagPath) => ['flag', path.projectId, path.featureName, 'removal-readiness'],
  changeRequestConfig: (projectId: string) => ['cr-config', projectId],
  /** Every change-request list and page. */
  changeRequests: ['change-requests'],
  projectChangeRequests: (projectId: string) => ['change-requests', 'project', projectId],
  /** The open requests waiting for the user's review, and those she opened, in every project. */
  openChangeRequests: ['change-requests', 'open'],
  pendingForFlag: (path: FlagPath) => ['change-requests', 'pending', path.projectId, path.featureName],
  changeRequest: (projectId: string, id: string) => ['change-requests', 'one', projectId, id],
  experimentMetrics: (environment: string) => ['experiment-metrics', environment],
  /** Every experiment list and page of a project; one experiment's key starts with it. */
  experiments: (projectId: string) => ['experiments', projectId],
  experiment: (projectId: string, name: string) => ['experiments', projectId, name],
  experimentResults: (projectId: string, name: string) => ['experiments', projectId, name, 'results'],
} as const;

export const byId = (id: string | number) => ({ params: { path: { id: String(id) } } });
/** The path parameters of a route that names its item `{name}`. */
export const byName = (name: string) => ({ params: { path: { name } } });

/** A change through the API, with the queries it makes stale (given its input). */
export interface Action<Input, Output> {
  run(input: Input): Promise<Output>;
  invalidates(input: Input): readonly QueryKey[];
}

export function action<Input, Output>(
  run: (input: Input) => Promise<Output>,
  invalidates: readonly QueryKey[] | ((input: Input) => readonly QueryKey[]),
): Action<Input, Output> {
  return { run, invalidates: typeof invalidates === 'function' ? invalidates : () => invalidates };
}

/** What a change to a flag makes stale: its page, the lists of flags and events, and its pending change requests. */
export const flagChanged = (path: FlagPath) => [keys.flag(path), keys.featureSearch, keys.events, keys.pendingForFlag(path)];

export type ExperimentBody = JsonBody<'/api/admin/projects/{projectId}/experiments', 'post'>;
export type ExperimentMetricBody = JsonBody<'/api/admin/environments/{environment}/experiment-metrics', 'post'>;

export type SafeguardBody = JsonBody<
  '/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/release_plans/{planId}/safeguards',
  'put'
>;
export type StrategyBody = JsonBody<'/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies', 'post'>;
export type ChangeBody = JsonBody<'/api/admin/projects/{projectId}/environments/{environment}/change-requests', 'post'>;
/** One change of a flag as a change request carries it. */
export type FlagChangeBody = Omit<ChangeBody, 'feature'>;
