import { type QueryKey, queryOptions } from '@tanstack/react-query';
import { api, ok } from './client';
import type { paths } from './schema';

export type { Schemas } from './client';

/**
 * The UI's one way to the API. Every query key is made here (`keys`), every read is a query-options factory
 * (`queries`), and every change is an action that names the queries it makes stale by those same keys
 * (`actions`), so pages never spell a path or a key.
 */

type JsonBody<Path extends keyof paths, Method extends keyof paths[Path]> = paths[Path][Method] extends {
  requestBody?: { content: { 'application/json': infer Body } };
}
  ? Body
  : never;
type Query<Path extends keyof paths> = paths[Path] extends { get: { parameters: { query?: infer Q } } } ? NonNullable<Q> : never;

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
  signInOptions: ['sign-in-options'],
  uiConfig: ['ui-config'],
  applications: (query: { query?: string; offset: number; limit: number }) => ['applications', query],
  application: (appName: string) => ['application', appName],
  releaseTemplates: ['release-templates'],
  /** Every flag's release plans; a flag environment's key starts with it. */
  releasePlans: ['release-plans'],
  releasePlansOf: (path: FlagEnvironmentPath) => ['release-plans', path.projectId, path.featureName, path.environment],
  flagUsage: (featureName: string, hoursBack: number) => ['flag-usage', featureName, hoursBack],
  impactMetric: (metricName: string, environment: string, hoursBack: number) => ['impact-metric', metricName, environment, hoursBack],
  groups: ['groups'],
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
  changeRequestConfig: (projectId: string) => ['cr-config', projectId],
  /** Every change-request list and page. */
  changeRequests: ['change-requests'],
  projectChangeRequests: (projectId: string) => ['change-requests', 'project', projectId],
  /** The open requests waiting for the user's review, and those she opened, in every project. */
  openChangeRequests: ['change-requests', 'open'],
  pendingForFlag: (path: FlagPath) => ['change-requests', 'pending', path.projectId, path.featureName],
  changeRequest: (projectId: string, id: string) => ['change-requests', 'one', projectId, id],
} as const;

const byId = (id: string | number) => ({ params: { path: { id: String(id) } } });

export const queries = {
  me: () => queryOptions({ queryKey: keys.me, queryFn: () => ok(api.GET('/api/admin/user')), staleTime: 60_000 }),
  projects: () => queryOptions({ queryKey: keys.projects, queryFn: () => ok(api.GET('/api/admin/projects')) }),
  project: (projectId: string) =>
    queryOptions({
      queryKey: keys.project(projectId),
      queryFn: () => ok(api.GET('/api/admin/projects/{projectId}', { params: { path: { projectId } } })),
    }),
  environments: () => queryOptions({ queryKey: keys.environments, queryFn: () => ok(api.GET('/api/admin/environments')) }),
  segments: () => queryOptions({ queryKey: keys.segments, queryFn: () => ok(api.GET('/api/admin/segments')) }),
  segment: (id: string) => queryOptions({ queryKey: keys.segment(id), queryFn: () => ok(api.GET('/api/admin/segments/{id}', byId(id))) }),
  tags: () => queryOptions({ queryKey: keys.tags, queryFn: () => ok(api.GET('/api/admin/tags')) }),
  tagTypes: () => queryOptions({ queryKey: keys.tagTypes, queryFn: () => ok(api.GET('/api/admin/tag-types')) }),
  contextFields: () => queryOptions({ queryKey: keys.contextFields, queryFn: () => ok(api.GET('/api/admin/context')) }),
  strategyDefinitions: () => queryOptions({ queryKey: keys.strategyDefinitions, queryFn: () => ok(api.GET('/api/admin/strategies')) }),
  users: () => queryOptions({ queryKey: keys.users, queryFn: () => ok(api.GET('/api/admin/user-admin')) }),
  releaseTemplates: () =>
    queryOptions({ queryKey: keys.releaseTemplates, queryFn: () => ok(api.GET('/api/admin/release-plan-templates')) }),
  releasePlans: (path: FlagEnvironmentPath) =>
    queryOptions({
      queryKey: keys.releasePlansOf(path),
      queryFn: () =>
        ok(
          api.GET('/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/release_plans', { params: { path } }),
        ),
    }),
  flagUsage: (featureName: string, hoursBack: number) =>
    queryOptions({
      queryKey: keys.flagUsage(featureName, hoursBack),
      queryFn: () =>
        ok(api.GET('/api/admin/client-metrics/features/{name}/raw', { params: { path: { name: featureName }, query: { hoursBack } } })),
      refetchInterval: 60_000,
    }),
  impactMetric: (metricName: string, environment: string, hoursBack: number) =>
    queryOptions({
      queryKey: keys.impactMetric(metricName, environment, hoursBack),
      queryFn: () =>
        ok(api.GET('/api/admin/impact-metrics/{metricName}', { params: { path: { metricName }, query: { environment, hoursBack } } })),
      refetchInterval: 30_000,
    }),
  applications: (query: { query?: string; offset: number; limit: number }) =>
    queryOptions({
      queryKey: keys.applications(query),
      queryFn: () =>
        ok(
          api.GET('/api/admin/metrics/applications', {
            params: { query: { ...(query.query ? { query: query.query } : {}), offset: String(query.offset), limit: String(query.limit) } },
          }),
        ),
      placeholderData: (previous) => previous,
    }),
  application: (appName: string) =>
    queryOptions({
      queryKey: keys.application(appName),
      queryFn: () => ok(api.GET('/api/admin/metrics/applications/{appName}', { params: { path: { appName } } })),
      refetchInterval: 30_000,
    }),
  uiConfig: () => queryOptions({ queryKey: keys.uiConfig, queryFn: () => ok(api.GET('/api/admin/ui-config')) }),
  signInOptions: () => queryOptions({ queryKey: keys.signInOptions, queryFn: () => ok(api.GET('/auth/options')), staleTime: 300_000 }),
  groups: () => queryOptions({ queryKey: keys.groups, queryFn: () => ok(api.GET('/api/admin/groups')) }),
  serviceAccounts: () => queryOptions({ queryKey: keys.serviceAccounts, queryFn: () => ok(api.GET('/api/admin/service-account')) }),
  projectAccess: (projectId: string) =>
    queryOptions({
      queryKey: keys.projectAccess(projectId),
      queryFn: () => ok(api.GET('/api/admin/projects/{projectId}/access', { params: { path: { projectId } } })),
    }),
  apiTokens: () => queryOptions({ queryKey: keys.apiTokens, queryFn: () => ok(api.GET('/api/admin/api-tokens')) }),
  addons: () => queryOptions({ queryKey: keys.addons, queryFn: () => ok(api.GET('/api/admin/addons')) }),
  addon: (id: string) => queryOptions({ queryKey: keys.addon(id), queryFn: () => ok(api.GET('/api/admin/addons/{id}', byId(id))) }),
  integrationEvents: (addonId: string, page: { offset: number; limit: number }) =>
    queryOptions({
      queryKey: [...keys.integrationEvents(addonId), page],
      queryFn: () =>
        ok(
          api.GET('/api/admin/addons/{id}/events', {
            params: { path: { id: addonId }, query: { offset: String(page.offset), limit: String(page.limit) } },
          }),
        ),
    }),
  events: (query: EventQuery) =>
    queryOptions({
      queryKey: [...keys.events, query],
      queryFn: ({ signal }) => ok(api.GET('/api/admin/search/events', { params: { query }, signal })),
    }),
  eventCreators: () => queryOptions({ queryKey: keys.eventCreators, queryFn: () => ok(api.GET('/api/admin/event-creators')) }),
  featureSearch: (query: FeatureSearchQuery) =>
    queryOptions({
      queryKey: [...keys.featureSearch, query],
      queryFn: ({ signal }) => ok(api.GET('/api/admin/search/features', { params: { query }, signal })),
    }),
  flag: (path: FlagPath) =>
    queryOptions({
      queryKey: keys.flag(path),
      queryFn: () => ok(api.GET('/api/admin/projects/{projectId}/features/{featureName}', { params: { path } })),
    }),
  flagParents: (path: FlagPath) =>
    queryOptions({
      queryKey: keys.flagParents(path),
      queryFn: () => ok(api.GET('/api/admin/projects/{projectId}/features/{featureName}/parents', { params: { path } })),
    }),
  flagLifecycle: (path: FlagPath) =>
    queryOptions({
      queryKey: keys.flagLifecycle(path),
      queryFn: () => ok(api.GET('/api/admin/projects/{projectId}/features/{featureName}/lifecycle', { params: { path } })),
    }),
  changeRequestConfig: (projectId: string) =>
    queryOptions({
      queryKey: keys.changeRequestConfig(projectId),
      queryFn: () => ok(api.GET('/api/admin/projects/{projectId}/change-requests/config', { params: { path: { projectId } } })),
    }),
  projectChangeRequests: (projectId: string, page: { offset: number; limit: number }) =>
    queryOptions({
      queryKey: [...keys.projectChangeRequests(projectId), page],
      queryFn: () =>
        ok(
          api.GET('/api/admin/projects/{projectId}/change-requests', {
            params: { path: { projectId }, query: { offset: String(page.offset), limit: String(page.limit) } },
          }),
        ),
    }),
  openChangeRequests: () =>
    queryOptions({
      queryKey: keys.openChangeRequests,
      queryFn: () => ok(api.GET('/api/admin/change-requests/open')),
    }),
  pendingForFlag: (path: FlagPath) =>
    queryOptions({
      queryKey: keys.pendingForFlag(path),
      queryFn: () => ok(api.GET('/api/admin/projects/{projectId}/change-requests/pending/{featureName}', { params: { path } })),
    }),
  changeRequest: (projectId: string, id: string) =>
    queryOptions({
      queryKey: keys.changeRequest(projectId, id),
      queryFn: () => ok(api.GET('/api/admin/projects/{projectId}/change-requests/{id}', { params: { path: { projectId, id } } })),
    }),
};

/** A change through the API, with the queries it makes stale (given its input). */
export interface Action<Input, Output> {
  run(input: Input): Promise<Output>;
  invalidates(input: Input): readonly QueryKey[];
}

function action<Input, Output>(
  run: (input: Input) => Promise<Output>,
  invalidates: readonly QueryKey[] | ((input: Input) => readonly QueryKey[]),
): Action<Input, Output> {
  return { run, invalidates: typeof invalidates === 'function' ? invalidates : () => invalidates };
}

/** What a change to a flag makes stale: its page, the lists of flags and events, and its pending change requests. */
const flagChanged = (path: FlagPath) => [keys.flag(path), keys.featureSearch, keys.events, keys.pendingForFlag(path)];

type SafeguardBody = JsonBody<
  '/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/release_plans/{planId}/safeguards',
  'put'
>;
type StrategyBody = JsonBody<'/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies', 'post'>;
type ChangeBody = JsonBody<'/api/admin/projects/{projectId}/environments/{environment}/change-requests', 'post'>;
/** One change of a flag as a change request carries it. */
export type FlagChangeBody = Omit<ChangeBody, 'feature'>;

export const actions = {
  signIn: action((body: JsonBody<'/auth/simple/login', 'post'>) => ok(api.POST('/auth/simple/login', { body })), []),
  changeOwnPassword: action(
    (body: JsonBody<'/api/admin/user/change-password', 'post'>) => ok(api.POST('/api/admin/user/change-password', { body })),
    [keys.events],
  ),

  createProject: action(
    (body: JsonBody<'/api/admin/projects', 'post'>) => ok(api.POST('/api/admin/projects', { body })),
    [keys.projects, keys.events],
  ),
  updateProject: action(
    ({ projectId, ...body }: { projectId: string } & JsonBody<'/api/admin/projects/{projectId}', 'put'>) =>
      ok(api.PUT('/api/admin/projects/{projectId}', { params: { path: { projectId } }, body })),
    ({ projectId }) => [keys.project(projectId), keys.projects, keys.events],
  ),
  deleteProject: action(
    (projectId: string) => ok(api.DELETE('/api/admin/projects/{projectId}', { params: { path: { projectId } } })),
    [keys.projects, keys.events],
  ),
  addProjectEnvironment: action(
    ({ projectId, environment }: { projectId: string; environment: string }) =>
      ok(api.POST('/api/admin/projects/{projectId}/environments', { params: { path: { projectId } }, body: { environment } })),
    ({ projectId }) => [keys.project(projectId), keys.changeRequestConfig(projectId), keys.events],
  ),
  removeProjectEnvironment: action(
    (path: { projectId: string; environment: string }) =>
      ok(api.DELETE('/api/admin/projects/{projectId}/environments/{environment}', { params: { path } })),
    ({ projectId }) => [keys.project(projectId), keys.changeRequestConfig(projectId), keys.events],
  ),
  setChangeRequestConfig: action(
    ({
      projectId,
      environment,
      ...body
    }: { projectId: string; environment: string } & JsonBody<
      '/api/admin/projects/{projectId}/environments/{environment}/change-requests/config',
      'put'
    >) =>
      ok(
        api.PUT('/api/admin/projects/{projectId}/environments/{environment}/change-requests/config', {
          params: { path: { projectId, environment } },
          body,
        }),
      ),
    ({ projectId }) => [keys.changeRequestConfig(projectId), keys.events],
  ),

  createEnvironment: action(
    (body: JsonBody<'/api/admin/environments', 'post'>) => ok(api.POST('/api/admin/environments', { body })),
    [keys.environments, keys.events],
  ),
  setEnvironmentEnabled: action(
    ({ name, enabled }: { name: string; enabled: boolean }) =>
      ok(
        enabled
          ? api.POST('/api/admin/environments/{name}/on', { params: { path: { name } } })
          : api.POST('/api/admin/environments/{name}/off', { params: { path: { name } } }),
      ),
    [keys.environments, keys.events],
  ),
  updateEnvironment: action(
    ({ name, ...body }: { name: string } & JsonBody<'/api/admin/environments/{name}', 'put'>) =>
      ok(api.PUT('/api/admin/environments/{name}', { params: { path: { name } }, body })),
    [keys.environments, keys.events],
  ),
  deleteEnvironment: action(
    (name: string) => ok(api.DELETE('/api/admin/environments/{name}', { params: { path: { name } } })),
    [keys.environments, keys.events],
  ),

  createApiToken: action(
    (body: JsonBody<'/api/admin/api-tokens', 'post'>) => ok(api.POST('/api/admin/api-tokens', { body })),
    [keys.apiTokens, keys.events],
  ),
  deleteApiToken: action(
    (token: string) => ok(api.DELETE('/api/admin/api-tokens/{token}', { params: { path: { token } } })),
    [keys.apiTokens, keys.events],
  ),

  createUser: action(
    (body: JsonBody<'/api/admin/user-admin', 'post'>) => ok(api.POST('/api/admin/user-admin', { body })),
    [keys.users, keys.events],
  ),
  updateUser: action(
    ({ id, ...body }: { id: number } & JsonBody<'/api/admin/user-admin/{id}', 'put'>) =>
      ok(api.PUT('/api/admin/user-admin/{id}', { ...byId(id), body })),
    [keys.users, keys.events],
  ),
  deleteUser: action((id: number) => ok(api.DELETE('/api/admin/user-admin/{id}', byId(id))), [keys.users, keys.events]),
  setUserPassword: action(
    ({ id, password }: { id: number; password: string }) =>
      ok(api.POST('/api/admin/user-admin/{id}/change-password', { ...byId(id), body: { password } })),
    [keys.users, keys.events],
  ),

  /** Evaluates every flag for a context, with why: a read, but one the page asks for on demand. */
  playground: action((body: JsonBody<'/api/admin/playground', 'post'>) => ok(api.POST('/api/admin/playground', { body })), []),

  setFrontendApiOrigins: action(
    (frontendApiOrigins: string[]) => ok(api.POST('/api/admin/ui-config/cors', { body: { frontendApiOrigins } })),
    [keys.uiConfig, keys.events],
  ),

  createStrategyDefinition: action(
    (body: JsonBody<'/api/admin/strategies', 'post'>) => ok(api.POST('/api/admin/strategies', { body })),
    [keys.strategyDefinitions, keys.events],
  ),
  updateStrategyDefinition: action(
    ({ name, ...body }: { name: string } & JsonBody<'/api/admin/strategies/{name}', 'put'>) =>
      ok(api.PUT('/api/admin/strategies/{name}', { params: { path: { name } }, body })),
    [keys.strategyDefinitions, keys.events],
  ),
  setStrategyDeprecated: action(
    ({ name, deprecated }: { name: string; deprecated: boolean }) =>
      deprecated
        ? ok(api.POST('/api/admin/strategies/{name}/deprecate', { params: { path: { name } } }))
        : ok(api.POST('/api/admin/strategies/{name}/reactivate', { params: { path: { name } } })),
    [keys.strategyDefinitions, keys.events],
  ),
  deleteStrategyDefinition: action(
    (name: string) => ok(api.DELETE('/api/admin/strategies/{name}', { params: { path: { name } } })),
    [keys.strategyDefinitions, keys.events],
  ),

  createReleaseTemplate: action(
    (body: JsonBody<'/api/admin/release-plan-templates', 'post'>) => ok(api.POST('/api/admin/release-plan-templates', { body })),
    [keys.releaseTemplates, keys.events],
  ),
  archiveReleaseTemplate: action(
    (id: string) => ok(api.POST('/api/admin/release-plan-templates/archive/{id}', byId(id))),
    [keys.releaseTemplates, keys.events],
  ),
  addReleasePlan: action(
    ({ templateId, ...path }: FlagEnvironmentPath & { templateId: string }) =>
      ok(
        api.POST('/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/release_plans', {
          params: { path },
          body: { templateId },
        }),
      ),
    (path) => [keys.releasePlansOf(path), ...flagChanged(path)],
  ),
  removeReleasePlan: action(
    ({ planId, ...path }: FlagEnvironmentPath & { planId: string }) =>
      ok(
        api.DELETE('/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/release_plans/{planId}', {
          params: { path: { ...path, planId } },
        }),
      ),
    (path) => [keys.releasePlansOf(path), ...flagChanged(path)],
  ),
  startMilestone: action(
    ({ planId, milestoneId, ...path }: FlagEnvironmentPath & { planId: string; milestoneId: string }) =>
      ok(
        api.POST(
          '/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/release_plans/{planId}/milestones/{milestoneId}/start',
          { params: { path: { ...path, planId, milestoneId } } },
        ),
      ),
    (path) => [keys.releasePlansOf(path), ...flagChanged(path)],
  ),
  resumeReleasePlan: action(
    ({ planId, ...path }: FlagEnvironmentPath & { planId: string }) =>
      ok(
        api.POST('/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/release_plans/{planId}/resume', {
          params: { path: { ...path, planId } },
        }),
      ),
    (path) => [keys.releasePlansOf(path), ...flagChanged(path)],
  ),
  setSafeguard: action(
    ({ planId, body, ...path }: FlagEnvironmentPath & { planId: string; body: SafeguardBody }) =>
      ok(
        api.PUT('/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/release_plans/{planId}/safeguards', {
          params: { path: { ...path, planId } },
          body,
        }),
      ),
    (path) => [keys.releasePlansOf(path), keys.events],
  ),

  createGroup: action(
    (body: JsonBody<'/api/admin/groups', 'post'>) => ok(api.POST('/api/admin/groups', { body })),
    [keys.groups, keys.events],
  ),
  updateGroup: action(
    ({ id, ...body }: { id: number } & JsonBody<'/api/admin/groups/{groupId}', 'put'>) =>
      ok(api.PUT('/api/admin/groups/{groupId}', { params: { path: { groupId: String(id) } }, body })),
    [keys.groups, keys.events, keys.me],
  ),
  deleteGroup: action(
    (id: number) => ok(api.DELETE('/api/admin/groups/{groupId}', { params: { path: { groupId: String(id) } } })),
    [keys.groups, keys.events, keys.me],
  ),

  addProjectAccess: action(
    ({ projectId, ...body }: { projectId: string } & JsonBody<'/api/admin/projects/{projectId}/access', 'post'>) =>
      ok(api.POST('/api/admin/projects/{projectId}/access', { params: { path: { projectId } }, body })),
    ({ projectId }) => [keys.projectAccess(projectId), keys.events, keys.me],
  ),
  setProjectRoles: action(
    ({ projectId, holder, id, roles }: { projectId: string; holder: 'user' | 'group'; id: number; roles: number[] }) =>
      holder === 'user'
        ? ok(
            api.PUT('/api/admin/projects/{projectId}/users/{userId}/roles', {
              params: { path: { projectId, userId: String(id) } },
              body: { roles },
            }),
          )
        : ok(
            api.PUT('/api/admin/projects/{projectId}/groups/{groupId}/roles', {
              params: { path: { projectId, groupId: String(id) } },
              body: { roles },
            }),
          ),
    ({ projectId }) => [keys.projectAccess(projectId), keys.events, keys.me],
  ),
  removeProjectAccess: action(
    ({ projectId, holder, id }: { projectId: string; holder: 'user' | 'group'; id: number }) =>
      holder === 'user'
        ? ok(api.DELETE('/api/admin/projects/{projectId}/users/{userId}/roles', { params: { path: { projectId, userId: String(id) } } }))
        : ok(
            api.DELETE('/api/admin/projects/{projectId}/groups/{groupId}/roles', { params: { path: { projectId, groupId: String(id) } } }),
          ),
    ({ projectId }) => [keys.projectAccess(projectId), keys.events, keys.me],
  ),

  createServiceAccount: action(
    (body: JsonBody<'/api/admin/service-account', 'post'>) => ok(api.POST('/api/admin/service-account', { body })),
    [keys.serviceAccounts, keys.events],
  ),
  updateServiceAccount: action(
    ({ id, ...body }: { id: number } & JsonBody<'/api/admin/service-account/{id}', 'put'>) =>
      ok(api.PUT('/api/admin/service-account/{id}', { ...byId(id), body })),
    [keys.serviceAccounts, keys.events],
  ),
  deleteServiceAccount: action(
    (id: number) => ok(api.DELETE('/api/admin/service-account/{id}', byId(id))),
    [keys.serviceAccounts, keys.events],
  ),
  createServiceAccountToken: action(
    ({ id, ...body }: { id: number } & JsonBody<'/api/admin/service-account/{id}/token', 'post'>) =>
      ok(api.POST('/api/admin/service-account/{id}/token', { ...byId(id), body })),
    [keys.serviceAccounts, keys.events],
  ),
  deleteServiceAccountToken: action(
    ({ id, tokenId }: { id: number; tokenId: number }) =>
      ok(api.DELETE('/api/admin/service-account/{id}/token/{tokenId}', { params: { path: { id: String(id), tokenId: String(tokenId) } } })),
    [keys.serviceAccounts, keys.events],
  ),

  createTagType: action(
    (body: JsonBody<'/api/admin/tag-types', 'post'>) => ok(api.POST('/api/admin/tag-types', { body })),
    [keys.tagTypes, keys.events],
  ),
  updateTagType: action(
    ({ name, description }: { name: string; description: string }) =>
      ok(api.PUT('/api/admin/tag-types/{name}', { params: { path: { name } }, body: { description } })),
    [keys.tagTypes, keys.events],
  ),
  deleteTagType: action(
    (name: string) => ok(api.DELETE('/api/admin/tag-types/{name}', { params: { path: { name } } })),
    [keys.tagTypes, keys.events],
  ),

  saveContextField: action(
    ({ existing, body }: { existing?: string; body: JsonBody<'/api/admin/context', 'post'> }) =>
      ok(
        existing
          ? api.PUT('/api/admin/context/{name}', {
              params: { path: { name: existing } },
              // The name stays: strategies refer to it.
              body: { description: body.description, legalValues: body.legalValues, stickiness: body.stickiness },
            })
          : api.POST('/api/admin/context', { body }),
      ),
    [keys.contextFields, keys.events],
  ),
  deleteContextField: action(
    (name: string) => ok(api.DELETE('/api/admin/context/{name}', { params: { path: { name } } })),
    [keys.contextFields, keys.events],
  ),

  saveSegment: action(
    ({ existing, body }: { existing?: number; body: JsonBody<'/api/admin/segments', 'post'> }) =>
      ok(
        existing === undefined
          ? api.POST('/api/admin/segments', { body })
          : api.PUT('/api/admin/segments/{id}', { ...byId(existing), body }),
      ),
    [keys.segments, keys.events],
  ),
  deleteSegment: action((id: number) => ok(api.DELETE('/api/admin/segments/{id}', byId(id))), [keys.segments, keys.events]),

  createAddon: action(
    (body: JsonBody<'/api/admin/addons', 'post'>) => ok(api.POST('/api/admin/addons', { body })),
    [keys.addons, keys.events],
  ),
  updateAddon: action(
    ({ id, body }: { id: string; body: JsonBody<'/api/admin/addons/{id}', 'put'> }) =>
      ok(api.PUT('/api/admin/addons/{id}', { ...byId(id), body })),
    ({ id }) => [keys.addons, keys.addon(id), keys.events],
  ),
  deleteAddon: action((id: string) => ok(api.DELETE('/api/admin/addons/{id}', byId(id))), [keys.addons, keys.events]),
  rotateSigningSecret: action(
    (id: string) => ok(api.POST('/api/admin/addons/{id}/signing-secret', byId(id))),
    (id) => [keys.addon(id), keys.events],
  ),
  redeliver: action(
    ({ id, integrationEventId }: { id: string; integrationEventId: string }) =>
      ok(api.POST('/api/admin/addons/{id}/events/{integrationEventId}/redeliver', { params: { path: { id, integrationEventId } } })),
    ({ id }) => [keys.integrationEvents(id), keys.addon(id)],
  ),

  createFlag: action(
    ({ projectId, ...body }: { projectId: string } & JsonBody<'/api/admin/projects/{projectId}/features', 'post'>) =>
      ok(api.POST('/api/admin/projects/{projectId}/features', { params: { path: { projectId } }, body })),
    [keys.featureSearch, keys.events],
  ),
  setFavorite: action(
    ({ favorite, ...path }: FlagPath & { favorite: boolean }) =>
      ok(
        favorite
          ? api.POST('/api/admin/projects/{projectId}/features/{featureName}/favorites', { params: { path } })
          : api.DELETE('/api/admin/projects/{projectId}/features/{featureName}/favorites', { params: { path } }),
      ),
    (path) => [keys.flag(path), keys.featureSearch],
  ),
  updateFlag: action(
    ({ path, body }: { path: FlagPath; body: JsonBody<'/api/admin/projects/{projectId}/features/{featureName}', 'put'> }) =>
      ok(api.PUT('/api/admin/projects/{projectId}/features/{featureName}', { params: { path }, body })),
    ({ path }) => flagChanged(path),
  ),
  setStale: action(
    ({ path, stale }: { path: FlagPath; stale: boolean }) =>
      ok(
        api.PATCH('/api/admin/projects/{projectId}/features/{featureName}', {
          params: { path },
          body: [{ op: 'replace', path: '/stale', value: stale }],
        }),
      ),
    ({ path }) => flagChanged(path),
  ),
  archiveFlag: action(
    (path: FlagPath) => flagRequests.archive(path),
    (path) => flagChanged(path),
  ),
  reviveFlag: action(
    (path: FlagPath) =>
      ok(
        api.POST('/api/admin/projects/{projectId}/revive', {
          params: { path: { projectId: path.projectId } },
          body: { features: [path.featureName] },
        }),
      ),
    (path) => flagChanged(path),
  ),
  addTag: action(
    ({ featureName, tag }: FlagPath & { tag: { type: string; value: string } }) =>
      ok(api.POST('/api/admin/features/{featureName}/tags', { params: { path: { featureName } }, body: tag })),
    (path) => [...flagChanged(path), keys.tags],
  ),
  removeTag: action(
    ({ featureName, tag }: FlagPath & { tag: { type: string; value: string } }) =>
      ok(api.DELETE('/api/admin/features/{featureName}/tags/{type}/{value}', { params: { path: { featureName, ...tag } } })),
    (path) => flagChanged(path),
  ),
  completeLifecycle: action(
    ({ path, status }: { path: FlagPath; status: 'kept' | 'discarded' }) =>
      ok(api.POST('/api/admin/projects/{projectId}/features/{featureName}/lifecycle/complete', { params: { path }, body: { status } })),
    ({ path }) => [...flagChanged(path), keys.flagLifecycle(path)],
  ),
  uncompleteLifecycle: action(
    (path: FlagPath) => ok(api.POST('/api/admin/projects/{projectId}/features/{featureName}/lifecycle/uncomplete', { params: { path } })),
    (path) => [...flagChanged(path), keys.flagLifecycle(path)],
  ),

  /**
   * A change of a flag, made directly or, where the environment requires change requests, added to the user's
   * draft change request there (`proposeIn`): the API refuses the direct change in such an environment.
   */
  changeFlag: action(
    async ({
      path,
      proposeIn,
      change,
      direct,
    }: {
      path: FlagPath;
      proposeIn: string | null;
      change: FlagChangeBody;
      direct: () => Promise<unknown>;
    }): Promise<{ proposedIn: string; changeRequestId: number } | undefined> => {
      if (proposeIn === null) {
        await direct();
        return undefined;
      }
      const changeRequest = await ok(
        api.POST('/api/admin/projects/{projectId}/environments/{environment}/change-requests', {
          params: { path: { projectId: path.projectId, environment: proposeIn } },
          body: { feature: path.featureName, ...change } as ChangeBody,
        }),
      );
      return { proposedIn: proposeIn, changeRequestId: (changeRequest as { id: number }).id };
    },
    ({ path }) => flagChanged(path),
  ),
  /** A segment change proposed in a change request of one protected environment that uses it. */
  proposeSegmentChange: action(
    async ({
      projectId,
      environment,
      segmentId,
      body,
    }: {
      projectId: string;
      environment: string;
      segmentId: number;
      body: JsonBody<'/api/admin/segments', 'post'>;
    }) => {
      const changeRequest = await ok(
        api.POST('/api/admin/projects/{projectId}/environments/{environment}/change-requests', {
          params: { path: { projectId, environment } },
          body: { action: 'updateSegment', payload: { id: segmentId, ...body } } as ChangeBody,
        }),
      );
      return { project: projectId, id: (changeRequest as { id: number }).id };
    },
    [keys.changeRequests, keys.events],
  ),

  setChangeRequestState: action(
    ({
      projectId,
      id,
      body,
    }: {
      projectId: string;
      id: string;
      body: JsonBody<'/api/admin/projects/{projectId}/change-requests/{id}/state', 'put'>;
    }) => ok(api.PUT('/api/admin/projects/{projectId}/change-requests/{id}/state', { params: { path: { projectId, id } }, body })),
    [keys.changeRequests, keys.flags, keys.featureSearch, keys.events],
  ),
  commentOnChangeRequest: action(
    ({ projectId, id, text }: { projectId: string; id: string; text: string }) =>
      ok(
        api.POST('/api/admin/projects/{projectId}/change-requests/{id}/comments', { params: { path: { projectId, id } }, body: { text } }),
      ),
    [keys.changeRequests, keys.events],
  ),
  removeChangeFromRequest: action(
    ({ projectId, id, changeId }: { projectId: string; id: string; changeId: string }) =>
      ok(
        api.DELETE('/api/admin/projects/{projectId}/change-requests/{id}/changes/{changeId}', {
          params: { path: { projectId, id, changeId } },
        }),
      ),
    [keys.changeRequests, keys.events],
  ),
  renameChangeRequest: action(
    ({ projectId, id, title }: { projectId: string; id: string; title: string }) =>
      ok(api.PUT('/api/admin/projects/{projectId}/change-requests/{id}/title', { params: { path: { projectId, id } }, body: { title } })),
    [keys.changeRequests, keys.events],
  ),
  exportFlags: action(
    (body: JsonBody<'/api/admin/features-batch/export', 'post'>) => ok(api.POST('/api/admin/features-batch/export', { body })),
    [keys.events],
  ),
  validateImport: action((body: ImportDocument) => ok(api.POST('/api/admin/features-batch/validate', { body })), []),
  /** A dry run reports what the import would change and makes nothing stale. */
  importFlags: action(
    ({ document, dryRun }: { document: ImportDocument; dryRun: boolean }) =>
      ok(api.POST('/api/admin/features-batch/import', { body: document, params: { query: { dryRun } } })),
    ({ dryRun }) =>
      dryRun ? [] : [keys.flags, keys.featureSearch, keys.events, keys.changeRequests, keys.tags, keys.tagTypes, keys.contextFields],
  ),
};

/** Requests a flag change makes when it is made directly (see `actions.changeFlag`). */
export const flagRequests = {
  setEnabled: (path: FlagEnvironmentPath, enabled: boolean) =>
    ok(
      enabled
        ? api.POST('/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/on', { params: { path } })
        : api.POST('/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/off', { params: { path } }),
    ),
  addStrategy: (path: FlagEnvironmentPath, body: StrategyBody) =>
    ok(
      api.POST('/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies', { params: { path }, body }),
    ),
  updateStrategy: (path: FlagEnvironmentPath & { strategyId: string }, body: StrategyBody) =>
    ok(
      api.PUT('/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/{strategyId}', {
        params: { path },
        body,
      }),
    ),
  deleteStrategy: (path: FlagEnvironmentPath & { strategyId: string }) =>
    ok(
      api.DELETE('/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/{strategyId}', {
        params: { path },
      }),
    ),
  reorderStrategies: (
    path: FlagEnvironmentPath,
    body: JsonBody<'/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/set-sort-order', 'post'>,
  ) =>
    ok(
      api.POST('/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/set-sort-order', {
        params: { path },
        body,
      }),
    ),
  setVariants: (
    path: FlagEnvironmentPath,
    body: JsonBody<'/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/variants', 'put'>,
  ) =>
    ok(api.PUT('/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/variants', { params: { path }, body })),
  archive: (path: FlagPath) => ok(api.DELETE('/api/admin/projects/{projectId}/features/{featureName}', { params: { path } })),
  addDependency: (path: FlagPath, body: JsonBody<'/api/admin/projects/{projectId}/features/{featureName}/dependencies', 'post'>) =>
    ok(api.POST('/api/admin/projects/{projectId}/features/{featureName}/dependencies', { params: { path }, body })),
  removeDependency: (path: FlagPath & { parent: string }) =>
    ok(api.DELETE('/api/admin/projects/{projectId}/features/{featureName}/dependencies/{parent}', { params: { path } })),
};
