import { queryOptions } from '@tanstack/react-query';
import { api, ok } from '../client';
import { action, byId, flagChanged, keys, type FlagEnvironmentPath, type JsonBody, type SafeguardBody } from './common';

/** Progressive delivery: release templates, a flag's release plans, safeguards and the impact metrics they read. */
export const releasePlansQueries = {
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
  impactMetric: (metricName: string, environment: string, hoursBack: number) =>
    queryOptions({
      queryKey: keys.impactMetric(metricName, environment, hoursBack),
      queryFn: () =>
        ok(api.GET('/api/admin/impact-metrics/{metricName}', { params: { path: { metricName }, query: { environment, hoursBack } } })),
      refetchInterval: 30_000,
    }),
};

export const releasePlansActions = {
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
};
