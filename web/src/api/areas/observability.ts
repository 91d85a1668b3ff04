import { queryOptions } from '@tanstack/react-query';
import { api, ok } from '../client';
import { action, byId, keys, type EventQuery, type JsonBody } from './common';

/** What happened and who reads flags: the event log, SDK applications, the playground, integrations and their deliveries. */
export const observabilityQueries = {
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
};

export const observabilityActions = {
  /** Evaluates every flag for a context, with why: a read, but one the page asks for on demand. */
  playground: action((body: JsonBody<'/api/admin/playground', 'post'>) => ok(api.POST('/api/admin/playground', { body })), []),

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
};
