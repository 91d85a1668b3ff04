/**
 * Every operation's OpenAPI name and summary, keyed by method and route path: one list where the names of the
 * whole API can be read and kept consistent. Names are Unleash's `operationId`s where Unleash has the operation,
 * so clients generated from either document call things alike. A route missing here stops start-up.
 *
 * `status` is the success status of an answer without a body; routes with a body declare theirs in their schema.
 */
export interface Operation {
  id: string;
  summary: string;
  status?: 200 | 202 | 204 | 302;
  /** Error statuses beyond those its inputs and access imply (see `documentOperation`). */
  errors?: number[];
}

const op = (id: string, summary: string, status?: Operation['status']): Operation => ({ id, summary, ...(status ? { status } : {}) });
/** Searches run as bounded reads: a 503 when one runs too long. */
const BOUNDED: Pick<Operation, 'errors'> = { errors: [503] };

const PROJECT = '/api/admin/projects/:projectId';
const FEATURE = `${PROJECT}/features/:featureName`;
const FEATURE_ENV = `${FEATURE}/environments/:environment`;
const CHANGE_REQUEST = `${PROJECT}/change-requests/:id`;

export const OPERATIONS: Record<string, Operation> = {
  'GET /health': op('getHealth', 'Liveness: the process answers, without touching the database'),
  'GET /api/admin/events/export': { ...op('exportEvents', 'Export the event log as NDJSON or CSV, streamed'), errors: [503] },
  'GET /health/ready': { ...op('getReady', 'Readiness: the database answers'), errors: [503] },
  'GET /internal-backstage/prometheus': op('getPrometheusMetrics', 'Metrics in the Prometheus text format'),
  'POST /auth/simple/login': { ...op('login', 'Log in with a username or email and password'), errors: [401, 429] },
  'POST /logout': op('logout', 'Log out, ending the session', 204),
  'GET /auth/options': op('getSignInOptions', 'How people may sign in: password, and the OpenID Connect provider if one is configured'),
  'GET /auth/oidc/login': op('startOidcSignIn', 'Start signing in with the OpenID Connect provider (redirects there)', 302),
  'GET /auth/oidc/callback': op(
    'finishOidcSignIn',
    "The provider's redirect back: signs in and redirects into the app, or to the sign-in page with the reason it was refused",
    302,
  ),

  'GET /api/admin/user-admin': op('getUsers', 'List users with their root roles'),
  'POST /api/admin/user-admin': op('createUser', 'Create a user'),
  'GET /api/admin/user-admin/:id': op('getUser', 'Get a user'),
  'PUT /api/admin/user-admin/:id': op('updateUser', 'Update a user'),
  'DELETE /api/admin/user-admin/:id': op('deleteUser', 'Delete a user', 200),
  'POST /api/admin/user-admin/:id/change-password': op('changeUserPassword', "Set a user's password", 200),
  'GET /api/admin/groups': op('getGroups', 'List groups with their members and root roles'),
  'POST /api/admin/groups': op('createGroup', 'Create a group'),
  'GET /api/admin/groups/:groupId': op('getGroup', 'Get a group'),
  'PUT /api/admin/groups/:groupId': op('updateGroup', 'Update a group: its name, SSO mappings, root role and the members it manages'),
  'DELETE /api/admin/groups/:groupId': op('deleteGroup', 'Delete a group', 200),
  [`GET ${PROJECT}/access`]: op('getProjectAccess', 'List the users and groups with a role in the project'),
  [`POST ${PROJECT}/access`]: op('addAccessToProject', 'Give users and groups roles in the project', 200),
  [`PUT ${PROJECT}/users/:userId/roles`]: op('setUserRoles', "Set a user's roles in the project", 200),
  [`DELETE ${PROJECT}/users/:userId/roles`]: op('removeUserAccess', "Remove a user's roles in the project", 200),
  [`PUT ${PROJECT}/groups/:groupId/roles`]: op('setGroupRoles', "Set a group's roles in the project", 200),
  [`DELETE ${PROJECT}/groups/:groupId/roles`]: op('removeGroupAccess', "Remove a group's roles in the project", 200),
  'GET /api/admin/service-account': op('getServiceAccounts', 'List service accounts with their tokens and last use'),
  'POST /api/admin/service-account': op('createServiceAccount', 'Create a service account'),
  'GET /api/admin/service-account/:id': op('getServiceAccount', 'Get a service account'),
  'PUT /api/admin/service-account/:id': op('updateServiceAccount', "Update a service account's name or root role"),
  'DELETE /api/admin/service-account/:id': op('deleteServiceAccount', 'Delete a service account and its tokens', 200),
  'GET /api/admin/service-account/:id/token': op('getServiceAccountTokens', "List a service account's tokens"),
  'POST /api/admin/service-account/:id/token': op(
    'createServiceAccountToken',
    'Create a token for a service account (its secret is shown once)',
  ),
  'DELETE /api/admin/service-account/:id/token/:tokenId': op('deleteServiceAccountToken', "Delete a service account's token", 200),
  'POST /api/admin/user/change-password': op('changeMyPassword', 'Change your own password (a signed-in user; needs the current one)', 200),
  'GET /api/admin/user': op('getMe', 'Get your own user and permissions'),
  'GET /api/admin/user/tokens': op('getPats', 'List your personal access tokens'),
  'POST /api/admin/user/tokens': op('createPat', 'Create a personal access token (its secret is shown once)'),
  'DELETE /api/admin/user/tokens/:id': op('deletePat', 'Delete one of your personal access tokens', 200),

  'GET /api/admin/api-tokens': op('getAllApiTokens', 'List API tokens (without secrets)'),
  'POST /api/admin/api-tokens': op('createApiToken', 'Create an API token (its secret is shown once)'),
  'DELETE /api/admin/api-tokens/:token': op('deleteApiToken', 'Delete an API token', 200),

  'GET /api/admin/projects': op('getProjects', 'List projects'),
  'POST /api/admin/projects': op('createProject', 'Create a project'),
  [`GET ${PROJECT}`]: op('getProject', 'Get a project'),
  [`PUT ${PROJECT}`]: op('updateProject', 'Update a project'),
  [`DELETE ${PROJECT}`]: op('deleteProject', 'Delete a project without flags', 200),
  [`POST ${PROJECT}/environments`]: op('addEnvironmentToProject', 'Enable an environment in a project', 200),
  [`DELETE ${PROJECT}/environments/:environment`]: op('removeEnvironmentFromProject', 'Disable an environment in a project', 200),

  'GET /api/admin/environments': op('getAllEnvironments', 'List environments'),
  'POST /api/admin/environments': op('createEnvironment', 'Create an environment'),
  'GET /api/admin/environments/:name': op('getEnvironment', 'Get an environment'),
  'PUT /api/admin/environments/:name': op('updateEnvironment', 'Update an environment'),
  'DELETE /api/admin/environments/:name': op('removeEnvironment', 'Delete an environment', 200),
  'POST /api/admin/environments/:name/on': op('toggleEnvironmentOn', 'Enable an environment', 204),
  'POST /api/admin/environments/:name/off': op('toggleEnvironmentOff', 'Disable an environment', 204),

  [`GET ${PROJECT}/features`]: op('getFeatures', "List a project's flags"),
  [`POST ${PROJECT}/features`]: op('createFeature', 'Create a flag'),
  [`GET ${FEATURE}`]: op('getFeature', 'Get a flag with its environments and strategies'),
  [`PUT ${FEATURE}`]: op('updateFeature', "Update a flag's metadata"),
  [`PATCH ${FEATURE}`]: op('patchFeature', "Change a flag's metadata with JSON Patch"),
  [`DELETE ${FEATURE}`]: op('archiveFeature', 'Archive a flag', 202),
  'GET /api/admin/archive/features/:projectId': op('getArchivedFeaturesByProjectId', "List a project's archived flags"),
  [`POST ${PROJECT}/archive`]: op('archiveFeatures', 'Archive several flags', 202),
  [`POST ${PROJECT}/revive`]: op('reviveFeatures', 'Revive several archived flags', 200),
  'DELETE /api/admin/archive/:featureName': op('deleteFeature', 'Delete an archived flag for good', 200),
  [`POST ${PROJECT}/stale`]: op('staleFeatures', 'Mark several flags stale or not stale', 202),
  [`POST ${FEATURE}/changeProject`]: op('changeProject', 'Move a flag to another project', 200),
  [`POST ${FEATURE_ENV}/on`]: op('toggleFeatureEnvironmentOn', 'Turn a flag on in an environment', 200),
  [`POST ${FEATURE_ENV}/off`]: op('toggleFeatureEnvironmentOff', 'Turn a flag off in an environment', 200),
  [`GET ${FEATURE_ENV}/variants`]: op('getEnvironmentFeatureVariants', "Get a flag's variants in an environment"),
  [`PUT ${FEATURE_ENV}/variants`]: op('overwriteEnvironmentFeatureVariants', "Replace a flag's variants in an environment"),
  [`PATCH ${FEATURE_ENV}/variants`]: op('patchEnvironmentsFeatureVariants', "Change a flag's variants in an environment with JSON Patch"),

  [`GET ${FEATURE_ENV}/strategies`]: op('getFeatureStrategies', "List a flag's strategies in an environment"),
  [`POST ${FEATURE_ENV}/strategies`]: op('addFeatureStrategy', 'Add a strategy to a flag in an environment'),
  [`POST ${FEATURE_ENV}/strategies/set-sort-order`]: op('setStrategySortOrder', "Set the order of a flag's strategies", 200),
  [`GET ${FEATURE_ENV}/strategies/:strategyId`]: op('getFeatureStrategy', 'Get one strategy of a flag'),
  [`PUT ${FEATURE_ENV}/strategies/:strategyId`]: op('updateFeatureStrategy', 'Replace a strategy of a flag'),
  [`PATCH ${FEATURE_ENV}/strategies/:strategyId`]: op('patchFeatureStrategy', 'Change a strategy of a flag with JSON Patch'),
  [`DELETE ${FEATURE_ENV}/strategies/:strategyId`]: op('deleteFeatureStrategy', 'Remove a strategy from a flag', 200),

  'GET /api/admin/strategies': op('getAllStrategies', 'List strategy definitions, built-in and custom'),
  'POST /api/admin/strategies': op('createStrategy', 'Define a custom strategy'),
  'GET /api/admin/strategies/:name': op('getStrategy', 'Get a strategy definition'),
  'PUT /api/admin/strategies/:name': op('updateStrategy', 'Update a custom strategy definition'),
  'DELETE /api/admin/strategies/:name': op('removeStrategy', 'Delete a custom strategy no flag uses', 200),
  'POST /api/admin/strategies/:name/deprecate': op('deprecateStrategy', 'Deprecate a strategy: no new uses', 200),
  'POST /api/admin/strategies/:name/reactivate': op('reactivateStrategy', 'Reactivate a deprecated strategy', 200),

  'GET /api/admin/tag-types': op('getTagTypes', 'List tag types'),
  'POST /api/admin/tag-types': op('createTagType', 'Create a tag type'),
  'POST /api/admin/tag-types/validate': op('validateTagType', 'Check a tag type before creating it'),
  'GET /api/admin/tag-types/:name': op('getTagType', 'Get a tag type'),
  'PUT /api/admin/tag-types/:name': op('updateTagType', 'Update a tag type'),
  'DELETE /api/admin/tag-types/:name': op('deleteTagType', 'Delete a tag type', 200),
  'GET /api/admin/tags': op('getTags', 'List tags'),
  'GET /api/admin/tags/:type': op('getTagsByType', 'List the tags of one type'),
  'GET /api/admin/tags/:type/:value': op('getTag', 'Get a tag'),
  'GET /api/admin/features/:featureName/tags': op('listTags', "List a flag's tags"),
  'POST /api/admin/features/:featureName/tags': op('addTag', 'Tag a flag'),
  'PUT /api/admin/features/:featureName/tags': op('updateTags', "Add and remove a flag's tags"),
  'DELETE /api/admin/features/:featureName/tags/:type/:value': op('removeTag', 'Remove a tag from a flag', 200),

  'GET /api/admin/flags-file': op('exportFlagsFile', 'The configuration as a flags file (a project, or all), for apply on any instance'),
  'POST /api/admin/flags-file/apply': op(
    'applyFlagsFile',
    'Make the configuration what a flags file says, in one transaction (dryRun: report without changing)',
  ),
  'POST /api/admin/features-batch/export': op('exportFeatures', "Export flags of one environment in Unleash's file format"),
  'POST /api/admin/features-batch/validate': op('validateImport', 'Check an export file against this instance before importing it'),
  'POST /api/admin/features-batch/import': op(
    'importToggles',
    "Import an export file into a project's environment, in one transaction (a protected environment gets a change request)",
  ),
  'POST /ofrep/v1/evaluate/flags/:key': { ...op('evaluateFlag', 'OpenFeature (OFREP): evaluate one flag for a context'), errors: [404] },
  'GET /ofrep/v1/events': op('ofrepEvents', 'OpenFeature (OFREP): server-sent refetchEvaluation notices when the flags of a scope change'),
  'POST /ofrep/v1/evaluate/flags': op('evaluateFlagsBulk', "OpenFeature (OFREP): evaluate every flag of the token's scope for a context"),
  'GET /api/admin/segments': op('getSegments', 'List segments'),
  'POST /api/admin/segments': op('createSegment', 'Create a segment'),
  'POST /api/admin/segments/validate': op('validateSegment', 'Check that a segment name is free', 204),
  'GET /api/admin/segments/:id': op('getSegment', 'Get a segment'),
  'PUT /api/admin/segments/:id': op('updateSegment', 'Update a segment', 204),
  'DELETE /api/admin/segments/:id': op('removeSegment', 'Delete a segment no strategy uses', 204),
  'GET /api/admin/segments/:id/strategies': op('getStrategiesBySegmentId', 'List the strategies that use a segment'),

  'GET /api/admin/context': op('getContextFields', 'List context fields'),
  'POST /api/admin/context': op('createContextField', 'Create a context field'),
  'POST /api/admin/context/validate': op('validateContextFieldName', 'Check that a context field name is free', 200),
  'GET /api/admin/context/:name': op('getContextField', 'Get a context field'),
  'PUT /api/admin/context/:name': op('updateContextField', 'Update a context field'),
  'DELETE /api/admin/context/:name': op('deleteContextField', 'Delete a context field no constraint uses', 200),
  'GET /api/admin/context/:name/strategies': op('getStrategiesByContextField', 'List the strategies whose constraints use a context field'),

  [`POST ${FEATURE}/favorites`]: op('addFavoriteFeature', 'Add a flag to your favorites', 200),
  [`DELETE ${FEATURE}/favorites`]: op('removeFavoriteFeature', 'Remove a flag from your favorites', 200),
  [`POST ${PROJECT}/favorites`]: op('addFavoriteProject', 'Add a project to your favorites', 200),
  [`DELETE ${PROJECT}/favorites`]: op('removeFavoriteProject', 'Remove a project from your favorites', 200),

  [`POST ${FEATURE}/dependencies`]: op('addFeatureDependency', 'Make a flag depend on a parent flag', 200),
  [`DELETE ${FEATURE}/dependencies`]: op('deleteFeatureDependencies', "Remove all of a flag's dependencies", 200),
  [`DELETE ${FEATURE}/dependencies/:parent`]: op('deleteFeatureDependency', 'Remove one dependency of a flag', 200),
  [`GET ${FEATURE}/parents`]: op('listParentOptions', 'List the flags this flag may depend on'),
  [`GET ${FEATURE}/parent-variants`]: op('listParentVariantOptions', "List a parent flag's variants"),
  [`GET ${FEATURE}/lifecycle`]: op('getFeatureLifecycle', "Get a flag's lifecycle stages"),
  [`POST ${FEATURE}/lifecycle/complete`]: op('complete', 'Mark a flag completed', 200),
  [`POST ${FEATURE}/lifecycle/uncomplete`]: op('uncomplete', 'Mark a flag not completed', 200),

  'GET /api/admin/events': op('getEvents', 'List the newest events'),
  'GET /api/admin/events/:featureName': op('getEventsForToggle', 'List the events of one flag'),
  'GET /api/admin/search/events': { ...op('searchEvents', 'Search the event log'), ...BOUNDED },
  'POST /api/admin/events/search': { ...op('searchEventsWithPost', 'Search the event log with a JSON body (older clients)'), ...BOUNDED },
  'GET /api/admin/event-creators': op('getEventCreators', 'List who has recorded events'),
  'GET /api/admin/search/features': { ...op('searchFeatures', 'Search, filter, sort and page flags'), ...BOUNDED },

  [`GET ${PROJECT}/change-requests/config`]: op('getProjectChangeRequestConfig', "Get a project's change request settings per environment"),
  [`PUT ${PROJECT}/environments/:environment/change-requests/config`]: op(
    'updateProjectChangeRequestConfig',
    'Require change requests in an environment, and how many approvals',
    204,
  ),
  [`POST ${PROJECT}/environments/:environment/change-requests`]: op('createChangeRequest', 'Propose changes to a protected environment'),
  [`GET ${PROJECT}/change-requests/pending`]: op('getPendingChangeRequests', 'List your open change requests in a project'),
  [`GET ${PROJECT}/change-requests/pending/:featureName`]: op(
    'getPendingChangeRequestsForFeature',
    'List open change requests that touch a flag',
  ),
  [`GET ${PROJECT}/change-requests`]: op('getChangeRequests', "List a project's change requests"),
  [`GET ${CHANGE_REQUEST}`]: op('getChangeRequest', 'Get a change request with its changes, reviews and conflicts'),
  [`DELETE ${CHANGE_REQUEST}`]: op('deleteChangeRequest', 'Delete a draft change request', 200),
  [`PUT ${CHANGE_REQUEST}/changes/:changeId`]: op('updateChange', 'Edit one change of a change request'),
  [`DELETE ${CHANGE_REQUEST}/changes/:changeId`]: op('deleteChange', 'Discard one change of a change request', 200),
  [`PUT ${CHANGE_REQUEST}/title`]: op('updateChangeRequestTitle', 'Rename a change request', 204),
  [`POST ${CHANGE_REQUEST}/comments`]: op('addChangeRequestComment', 'Comment on a change request', 200),
  [`PUT ${CHANGE_REQUEST}/state`]: op('updateChangeRequestState', 'Send to review, approve, reject, apply, schedule or cancel'),

  'GET /api/admin/addons': op('getAddons', 'List integrations and the providers available'),
  'POST /api/admin/addons': op('createAddon', 'Create an integration'),
  'GET /api/admin/addons/:id': op('getAddon', 'Get an integration (secrets masked)'),
  'PUT /api/admin/addons/:id': op('updateAddon', 'Update an integration'),
  'DELETE /api/admin/addons/:id': op('deleteAddon', 'Delete an integration', 200),
  'POST /api/admin/addons/:id/signing-secret': op(
    'rotateAddonSigningSecret',
    'Replace the webhook signing secret (the new one is shown once)',
  ),
  'GET /api/admin/addons/:id/events': op('getIntegrationEvents', "List an integration's delivery attempts"),
  'POST /api/admin/addons/:id/events/:integrationEventId/redeliver': op('redeliverIntegrationEvent', 'Send a delivery again'),

  'GET /api/client/features': op('getAllClientFeatures', "The flags of the token's projects and environment, for server-side SDKs"),
  'GET /api/client/features/:featureName': op('getClientFeature', 'One flag, for server-side SDKs'),
  'GET /api/client/delta': op('getDelta', 'What changed since a revision, for server-side SDKs'),
  'GET /api/client/streaming': op('streamClientFeatures', 'Server-Sent Events: a hydration, then every change'),
  'POST /api/client/register': op('registerClientApplication', 'Register an SDK instance', 202),
  'POST /api/client/metrics': op('registerClientMetrics', 'Report flag usage from an SDK', 202),
  'POST /api/client/metrics/bulk': op('clientBulkMetrics', 'Report usage and registrations in bulk (Unleash Edge)', 202),
  'GET /api/frontend': op('getFrontendFeatures', 'The enabled flags for a context, for browser and mobile SDKs'),
  'POST /api/frontend': op('getFrontendApiFeaturesWithPost', 'The enabled flags for a context given as JSON'),
  'POST /api/frontend/client/metrics': op('registerFrontendMetrics', 'Report flag usage from a frontend SDK', 202),
  'POST /api/frontend/client/register': op('registerFrontendClient', 'Register a frontend SDK', 202),
  'POST /api/admin/playground': op('getPlayground', 'Evaluate every flag for a context, with the reasons'),
  'GET /api/admin/metrics/applications': op('getApplications', 'List the applications SDKs registered'),
  'GET /api/admin/metrics/applications/:appName': op('getApplication', 'Get an application with its instances'),
  'GET /api/admin/ui-config': op('getUiConfig', "The instance's name, version and frontend API origins"),
  'POST /api/admin/ui-config/cors': op('setCors', 'Set the origins allowed to call the frontend API', 204),
};
