export type { Schemas } from './client';
export type { Action, EventQuery, FeatureSearchQuery, FlagChangeBody, FlagEnvironmentPath, FlagPath, ImportDocument } from './areas/common';
export { keys } from './areas/common';
export type { McpAuthorizationQuery } from './areas/access';
export { flagRequests } from './areas/flags';
import { accessActions, accessQueries } from './areas/access';
import { changeRequestsActions, changeRequestsQueries } from './areas/change-requests';
import { configurationActions, configurationQueries } from './areas/configuration';
import { flagsActions, flagsQueries } from './areas/flags';
import { observabilityActions, observabilityQueries } from './areas/observability';
import { releasePlansActions, releasePlansQueries } from './areas/release-plans';
import { experimentsActions, experimentsQueries } from './areas/experiments';

/**
 * The UI's one way to the API, split by area in ./areas and joined here. Every query key is made in one place
 * (`keys`), every read is a query-options factory (`queries`), and every change is an action that names the
 * queries it makes stale by those same keys (`actions`), so pages never spell a path or a key.
 */
export const queries = {
  ...accessQueries,
  ...configurationQueries,
  ...flagsQueries,
  ...changeRequestsQueries,
  ...releasePlansQueries,
  ...experimentsQueries,
  ...observabilityQueries,
};

export const actions = {
  ...accessActions,
  ...configurationActions,
  ...flagsActions,
  ...changeRequestsActions,
  ...releasePlansActions,
  ...experimentsActions,
  ...observabilityActions,
};
