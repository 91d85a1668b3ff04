import { queryOptions } from '@tanstack/react-query';
import { api, ok } from '../client';
import {
  action,
  flagChanged,
  keys,
  type ChangeBody,
  type FeatureSearchQuery,
  type FlagChangeBody,
  type FlagEnvironmentPath,
  type FlagPath,
  type ImportDocument,
  type JsonBody,
  type StrategyBody,
} from './common';

/** Flags: search, a flag and its parents and lifecycle, its usage, and every change to it; import and export. */
export const flagsQueries = {
  flagUsage: (featureName: string, hoursBack: number) =>
    queryOptions({
      queryKey: keys.flagUsage(featureName, hoursBack),
      queryFn: () =>
        ok(api.GET('/api/admin/client-metrics/features/{name}/raw', { params: { path: { name: featureName }, query: { hoursBack } } })),
      refetchInterval: 60_000,
    }),
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
  flagCodeReferences: (path: FlagPath) =>
    queryOptions({
      queryKey: keys.flagCodeReferences(path),
      queryFn: () => ok(api.GET('/api/admin/projects/{projectId}/features/{featureName}/code-references', { params: { path } })),
    }),
  flagRemovalReadiness: (path: FlagPath) =>
    queryOptions({
      queryKey: keys.flagRemovalReadiness(path),
      queryFn: () => ok(api.GET('/api/admin/projects/{projectId}/features/{featureName}/removal-readiness', { params: { path } })),
    }),
};

export const flagsActions = {
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
  /** A new flag made from this one; the answer is the copy. */
  cloneFlag: action(
    ({ path, name }: { path: FlagPath; name: string }) =>
      ok(api.POST('/api/admin/projects/{projectId}/features/{featureName}/clone', { params: { path }, body: { name } })),
    () => [keys.featureSearch, keys.events],
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
  addLink: action(
    ({ link, ...path }: FlagPath & { link: { url: string; title: string | null } }) =>
      ok(api.POST('/api/admin/projects/{projectId}/features/{featureName}/link', { params: { path }, body: link })),
    (path) => flagChanged(path),
  ),
  removeLink: action(
    ({ linkId, ...path }: FlagPath & { linkId: string }) =>
      ok(api.DELETE('/api/admin/projects/{projectId}/features/{featureName}/link/{linkId}', { params: { path: { ...path, linkId } } })),
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
