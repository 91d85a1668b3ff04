import { queryOptions } from '@tanstack/react-query';
import { api, ok } from '../client';
import { action, byId, byName, keys, type JsonBody } from './common';

/** The instance set-up flags refer to: projects, environments, segments, tags, context fields, strategy definitions. */
export const configurationQueries = {
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
  uiConfig: () => queryOptions({ queryKey: keys.uiConfig, queryFn: () => ok(api.GET('/api/admin/ui-config')) }),
  projectStatus: (projectId: string) =>
    queryOptions({
      queryKey: keys.projectStatus(projectId),
      queryFn: () => ok(api.GET('/api/admin/projects/{projectId}/status', { params: { path: { projectId } } })),
    }),
  projectEnvironments: (projectId: string) =>
    queryOptions({
      queryKey: keys.projectEnvironments(projectId),
      queryFn: () => ok(api.GET('/api/admin/environments/project/{projectId}', { params: { path: { projectId } } })),
    }),
  projectContextFields: (projectId: string) =>
    queryOptions({
      queryKey: keys.projectContextFields(projectId),
      queryFn: () => ok(api.GET('/api/admin/projects/{projectId}/context', { params: { path: { projectId } } })),
    }),
  maintenance: () => queryOptions({ queryKey: keys.maintenance, queryFn: () => ok(api.GET('/api/admin/maintenance')) }),
  featureTypes: () => queryOptions({ queryKey: keys.featureTypes, queryFn: () => ok(api.GET('/api/admin/feature-types')) }),
  instanceStatistics: () =>
    queryOptions({ queryKey: keys.instanceStatistics, queryFn: () => ok(api.GET('/api/admin/instance-admin/statistics')) }),
};

export const configurationActions = {
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
  createEnvironment: action(
    (body: JsonBody<'/api/admin/environments', 'post'>) => ok(api.POST('/api/admin/environments', { body })),
    [keys.environments, keys.events],
  ),
  setEnvironmentEnabled: action(
    ({ name, enabled }: { name: string; enabled: boolean }) =>
      ok(
        enabled
          ? api.POST('/api/admin/environments/{name}/on', byName(name))
          : api.POST('/api/admin/environments/{name}/off', byName(name)),
      ),
    [keys.environments, keys.events],
  ),
  updateEnvironment: action(
    ({ name, ...body }: { name: string } & JsonBody<'/api/admin/environments/{name}', 'put'>) =>
      ok(api.PUT('/api/admin/environments/{name}', { params: { path: { name } }, body })),
    [keys.environments, keys.events],
  ),
  deleteEnvironment: action(
    (name: string) => ok(api.DELETE('/api/admin/environments/{name}', byName(name))),
    [keys.environments, keys.events],
  ),

  setProjectDefaultStrategy: action(
    ({
      projectId,
      environment,
      ...body
    }: { projectId: string; environment: string } & JsonBody<
      '/api/admin/projects/{projectId}/environments/{environment}/default-strategy',
      'post'
    >) =>
      ok(
        api.POST('/api/admin/projects/{projectId}/environments/{environment}/default-strategy', {
          params: { path: { projectId, environment } },
          body,
        }),
      ),
    ({ projectId }) => [keys.projectEnvironments(projectId), keys.events],
  ),
  createProjectContextField: action(
    ({ projectId, ...body }: { projectId: string } & JsonBody<'/api/admin/projects/{projectId}/context', 'post'>) =>
      ok(api.POST('/api/admin/projects/{projectId}/context', { params: { path: { projectId } }, body })),
    [keys.contextFields, keys.events],
  ),
  deleteProjectContextField: action(
    ({ projectId, name }: { projectId: string; name: string }) =>
      ok(api.DELETE('/api/admin/projects/{projectId}/context/{name}', { params: { path: { projectId, name } } })),
    [keys.contextFields, keys.events],
  ),
  setMaintenance: action(
    (enabled: boolean) => ok(api.POST('/api/admin/maintenance', { body: { enabled } })),
    [keys.maintenance, keys.uiConfig, keys.events],
  ),
  setFeatureTypeLifetime: action(
    ({ id, lifetimeDays }: { id: string; lifetimeDays: number | null }) =>
      ok(api.PUT('/api/admin/feature-types/{id}/lifetime', { params: { path: { id } }, body: { lifetimeDays } })),
    [keys.featureTypes, keys.featureSearch, keys.events],
  ),
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
        ? ok(api.POST('/api/admin/strategies/{name}/deprecate', byName(name)))
        : ok(api.POST('/api/admin/strategies/{name}/reactivate', byName(name))),
    [keys.strategyDefinitions, keys.events],
  ),
  deleteStrategyDefinition: action(
    (name: string) => ok(api.DELETE('/api/admin/strategies/{name}', byName(name))),
    [keys.strategyDefinitions, keys.events],
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
  deleteTagType: action((name: string) => ok(api.DELETE('/api/admin/tag-types/{name}', byName(name))), [keys.tagTypes, keys.events]),

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
    (name: string) => ok(api.DELETE('/api/admin/context/{name}', byName(name))),
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
};
