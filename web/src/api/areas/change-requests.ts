import { queryOptions } from '@tanstack/react-query';
import { api, ok } from '../client';
import { action, keys, type ChangeBody, type FlagPath, type JsonBody } from './common';

/** Change requests: each project environment's configuration, the requests, and their review. */
export const changeRequestsQueries = {
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

export const changeRequestsActions = {
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
};
