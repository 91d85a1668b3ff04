import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { OPERATIONS } from '../../src/http/operations.js';
import { expectError, expectStatus, getOk } from '../helpers/assertions.js';
import {
  addStrategyDirectly,
  createProjectWithFlags,
  enableChangeRequests,
  featurePath,
  projectPath,
  strategiesPath,
  useTeamTestApp,
} from '../helpers/change-requests.js';
import { eventsSince, lastEventId } from '../helpers/events.js';
import { uniqueName } from '../helpers/fixtures.js';
import type { Client } from '../helpers/test-app.js';

// Every operation that changes something is in one table: either it is guarded (the request is made, as an Editor
// holding every project permission, against a flag whose production requires change requests, and must change
// nothing live), or it says why it changes no flag's configuration. An operation added without a line here fails
// the first test, so a new route cannot forget the guard.

const { ctx, team } = useTeamTestApp();

const P = '/api/admin/projects/:projectId';
const F = `${P}/features/:featureName`;
const FE = `${F}/environments/:environment`;
const PLAN = `${FE}/release_plans/:planId`;

/** A protected project's flag with everything a change can reach set up before production started requiring change requests. */
interface Setting {
  project: string;
  /** A project without change requests. */
  open: string;
  flag: string;
  parent: string;
  strategyId: string;
  segmentId: number;
  planId: string;
  milestoneIds: string[];
  safeguardId: string;
  templateId: string;
  signalEndpoint: string;
  signalToken: string;
  exported: unknown;
}

type Request = (s: Setting, client: Client) => Promise<LightMyRequestResponse>;
/** refused: a 403 naming SKIP_CHANGE_REQUEST. conflict: a 409 (moving a flag). proposed: the change lands in a change request. */
type Guarded = { outcome: 'refused' | 'conflict' | 'proposed' | 'signal-fails'; request: Request };
type Entry = Guarded | { unguarded: string };

const refused = (request: Request): Guarded => ({ outcome: 'refused', request });
const env = (s: Setting) => `${featurePath(s.project, s.flag)}/environments/production`;
const plan = (s: Setting) => `${env(s)}/release_plans/${s.planId}`;

const PEOPLE = 'signs in, or changes people, groups, roles, tokens or sign-in settings; no flag';
const READS = 'reads or evaluates; changes nothing';
const SDKS = 'what SDKs report about themselves; no flag';
const EXPERIMENTS = "an experiment's definition, lifecycle or sources: it reads a flag's variants and changes no strategy";
const AUTOMATION = 'configures an automation; what it later does to flags is guarded when it runs (the signal below)';
const DEFINITIONS = 'changes what strategies, context fields or tags may be, not any stored strategy, constraint or rollout';
const METADATA = "changes a flag's name, description, type, tags, lifecycle, favourite or stale mark, as Unleash lets through too";
const OWN_WORKFLOW = "the change-request workflow itself: applying runs each change through the guard with the request's scope";
const NEW_THINGS = 'creates what no SDK yet reads (a project, an environment, a segment, a flag off everywhere)';
const OUTSIDE = 'a deleted archived flag, an empty project, or configuration no SDK reads';

const ROUTES: Record<string, Entry> = {
  // Flags in one environment.
  [`POST ${FE}/on`]: refused((s, c) => c.post(`${env(s)}/on`)),
  [`POST ${FE}/off`]: refused((s, c) => c.post(`${env(s)}/off`)),
  [`POST ${P}/bulk_features/environments/:environment/on`]: refused((s, c) =>
    c.post(`${projectPath(s.project)}/bulk_features/environments/production/on`, { features: [s.flag] }),
  ),
  [`POST ${P}/bulk_features/environments/:environment/off`]: refused((s, c) =>
    c.post(`${projectPath(s.project)}/bulk_features/environments/production/off`, { features: [s.flag] }),
  ),
  [`POST ${FE}/strategies`]: refused((s, c) => c.post(strategiesPath(s.project, s.flag), { name: 'default' })),
  [`PUT ${FE}/strategies/:strategyId`]: refused((s, c) =>
    c.put(`${strategiesPath(s.project, s.flag)}/${s.strategyId}`, { name: 'default', title: 'edited' }),
  ),
  [`PATCH ${FE}/strategies/:strategyId`]: refused((s, c) =>
    c.patch(`${strategiesPath(s.project, s.flag)}/${s.strategyId}`, [{ op: 'replace', path: '/title', value: 'patched' }]),
  ),
  [`POST ${FE}/strategies/set-sort-order`]: refused((s, c) =>
    c.post(`${strategiesPath(s.project, s.flag)}/set-sort-order`, [{ id: s.strategyId, sortOrder: 5 }]),
  ),
  [`DELETE ${FE}/strategies/:strategyId`]: refused((s, c) => c.delete(`${strategiesPath(s.project, s.flag)}/${s.strategyId}`)),
  [`PUT ${FE}/variants`]: refused((s, c) => c.put(`${env(s)}/variants`, [{ name: 'v', weight: 1000 }])),
  [`PATCH ${FE}/variants`]: refused((s, c) =>
    c.patch(`${env(s)}/variants`, [{ op: 'add', path: '/0', value: { name: 'w', weight: 1000 } }]),
  ),
  [`PUT ${F}/variants-batch`]: refused((s, c) =>
    c.put(`${featurePath(s.project, s.flag)}/variants-batch`, { variants: [{ name: 'v', weight: 1000 }], environments: ['production'] }),
  ),
  // Release plans, their safeguards and progressions.
  [`POST ${FE}/release_plans`]: refused((s, c) => c.post(`${env(s)}/release_plans`, { templateId: s.templateId })),
  [`DELETE ${PLAN}`]: refused((s, c) => c.delete(plan(s))),
  [`POST ${PLAN}/milestones/:milestoneId/start`]: refused((s, c) => c.post(`${plan(s)}/milestones/${s.milestoneIds[1]}/start`)),
  [`POST ${PLAN}/resume`]: refused((s, c) => c.post(`${plan(s)}/resume`)),
  [`PUT ${PLAN}/safeguards`]: refused((s, c) =>
    c.put(`${plan(s)}/safeguards`, {
      impactMetric: { metricName: 'errors', aggregationMode: 'count', windowMinutes: 5 },
      triggerCondition: { operator: '>', threshold: 1000 },
      action: { type: 'pause' },
    }),
  ),
  [`DELETE ${PLAN}/safeguards/:safeguardId`]: refused((s, c) => c.delete(`${plan(s)}/safeguards/${s.safeguardId}`)),
  [`PUT ${FE}/progressions/:milestoneId`]: refused((s, c) =>
    c.put(`${env(s)}/progressions/${s.milestoneIds[0]}`, {
      targetMilestone: s.milestoneIds[1],
      transitionCondition: { intervalMinutes: 5 },
    }),
  ),
  [`DELETE ${FE}/progressions/:milestoneId`]: refused((s, c) => c.delete(`${env(s)}/progressions/${s.milestoneIds[0]}`)),
  [`POST ${FE}/progressions/:milestoneId/resume`]: refused((s, c) => c.post(`${env(s)}/progressions/${s.planId}/resume`)),
  // A flag as a whole, which reaches every environment of its project.
  [`DELETE ${F}`]: refused((s, c) => c.delete(featurePath(s.project, s.flag))),
  [`POST ${P}/archive`]: refused((s, c) => c.post(`${projectPath(s.project)}/archive`, { features: [s.flag] })),
  [`POST ${F}/clone`]: refused((s, c) => c.post(`${featurePath(s.project, s.flag)}/clone`, { name: uniqueName('copy') })),
  [`POST ${F}/dependencies`]: refused((s, c) =>
    c.post(`${featurePath(s.project, s.flag)}/dependencies`, { feature: s.parent, enabled: false }),
  ),
  [`DELETE ${F}/dependencies/:parent`]: refused((s, c) => c.delete(`${featurePath(s.project, s.flag)}/dependencies/${s.parent}`)),
  [`DELETE ${F}/dependencies`]: refused((s, c) => c.delete(`${featurePath(s.project, s.flag)}/dependencies`)),
  [`POST ${F}/changeProject`]: {
    outcome: 'conflict',
    request: (s, c) => c.post(`${featurePath(s.project, s.flag)}/changeProject`, { newProjectId: s.open }),
  },
  // Reviving is tested on its own below: it goes through, and turns the flag off everywhere.
  [`POST ${P}/revive`]: { unguarded: 'revives the flag turned off in every environment (tested below)' },
  'POST /api/admin/archive/revive/:featureName': { unguarded: 'revives the flag turned off in every environment (tested below)' },
  // Segments in use in the protected environment.
  'POST /api/admin/segments/strategies': refused((s, c) =>
    c.post('/api/admin/segments/strategies', {
      projectId: s.project,
      environmentId: 'production',
      strategyId: s.strategyId,
      segmentIds: [],
    }),
  ),
  'PUT /api/admin/segments/:id': refused((s, c) =>
    c.put(`/api/admin/segments/${s.segmentId}`, { name: `${s.project}-seg`, description: 'edited', constraints: [] }),
  ),
  'DELETE /api/admin/segments/:id': refused((s, c) => c.delete(`/api/admin/segments/${s.segmentId}`)),
  // Environments of the project, and environments as a whole.
  [`DELETE ${P}/environments/:environment`]: refused((s, c) => c.delete(`${projectPath(s.project)}/environments/production`)),
  // What flags turned on there without strategies get.
  [`POST ${P}/environments/:environment/default-strategy`]: refused((s, c) =>
    c.post(`${projectPath(s.project)}/environments/production/default-strategy`, {
      name: 'flexibleRollout',
      parameters: { rollout: '10' },
    }),
  ),
  [`POST ${P}/environments`]: refused(async (s, c) => {
    // Adding it back is guarded too: the flags' stored configuration there would be served again. An Admin
    // removes it (a recorded bypass), the Editor tries to add it, and the Admin adds it back.
    const environments = `${projectPath(s.project)}/environments`;
    expectStatus(await team.admin.client.delete(`${environments}/production`), 200);
    const attempt = await c.post(environments, { environment: 'production' });
    expectStatus(await team.admin.client.post(environments, { environment: 'production' }), 200);
    return attempt;
  }),
  'DELETE /api/admin/environments/:name': { unguarded: 'Admin only; guarded for the review-bypassed record (tested below)' },
  // Documents applied through the ordinary commands: a protected environment's part becomes a change request.
  // Applying a flags file takes an Admin, whose file still proposes rather than bypasses.
  'POST /api/admin/flags-file/apply': {
    outcome: 'proposed',
    request: (s) =>
      team.admin.client.post('/api/admin/flags-file/apply', {
        version: 1,
        projects: [
          { id: s.project, flags: [{ name: s.flag, environments: { production: { enabled: true, strategies: [{ name: 'default' }] } } }] },
        ],
      }),
  },
  'POST /api/admin/features-batch/import': {
    outcome: 'proposed',
    request: (s, c) => c.post('/api/admin/features-batch/import', { project: s.project, environment: 'production', data: s.exported }),
  },
  // A signal runs its action sets as their service account, through the same guard.
  'POST /api/signal-endpoint/:name': {
    outcome: 'signal-fails',
    request: (s) => ctx.as(`Bearer ${s.signalToken}`).post(`/api/signal-endpoint/${s.signalEndpoint}`, { event: 'deploy' }),
  },

  'POST /auth/simple/login': { unguarded: PEOPLE },
  'POST /logout': { unguarded: PEOPLE },
  'POST /auth/saml/callback': { unguarded: PEOPLE },
  'POST /api/admin/user-admin': { unguarded: PEOPLE },
  'PUT /api/admin/user-admin/:id': { unguarded: PEOPLE },
  'DELETE /api/admin/user-admin/:id': { unguarded: PEOPLE },
  'POST /api/admin/user-admin/:id/change-password': { unguarded: PEOPLE },
  'POST /api/admin/groups': { unguarded: PEOPLE },
  'PUT /api/admin/groups/:groupId': { unguarded: PEOPLE },
  'DELETE /api/admin/groups/:groupId': { unguarded: PEOPLE },
  [`POST ${P}/access`]: { unguarded: PEOPLE },
  [`PUT ${P}/users/:userId/roles`]: { unguarded: PEOPLE },
  [`DELETE ${P}/users/:userId/roles`]: { unguarded: PEOPLE },
  [`PUT ${P}/groups/:groupId/roles`]: { unguarded: PEOPLE },
  [`DELETE ${P}/groups/:groupId/roles`]: { unguarded: PEOPLE },
  'POST /api/admin/service-account': { unguarded: PEOPLE },
  'PUT /api/admin/service-account/:id': { unguarded: PEOPLE },
  'DELETE /api/admin/service-account/:id': { unguarded: PEOPLE },
  'POST /api/admin/service-account/:id/token': { unguarded: PEOPLE },
  'DELETE /api/admin/service-account/:id/token/:tokenId': { unguarded: PEOPLE },
  'POST /api/admin/user/change-password': { unguarded: PEOPLE },
  'POST /api/admin/user/tokens': { unguarded: PEOPLE },
  'DELETE /api/admin/user/tokens/:id': { unguarded: PEOPLE },
  'DELETE /api/admin/user/sessions/:sessionId': { unguarded: PEOPLE },
  'DELETE /api/admin/user/sessions': { unguarded: PEOPLE },
  'DELETE /api/admin/user-admin/:id/sessions/:sessionId': { unguarded: PEOPLE },
  'DELETE /api/admin/user-admin/:id/sessions': { unguarded: PEOPLE },
  'POST /api/admin/auth/oidc/settings': { unguarded: PEOPLE },
  'POST /api/admin/auth/saml/settings': { unguarded: PEOPLE },
  'POST /api/admin/roles': { unguarded: PEOPLE },
  'PUT /api/admin/roles/:id': { unguarded: PEOPLE },
  'DELETE /api/admin/roles/:id': { unguarded: PEOPLE },
  'POST /api/admin/roles/validate': { unguarded: READS },
  'POST /api/admin/scim/token': { unguarded: PEOPLE },
  'DELETE /api/admin/scim/token': { unguarded: PEOPLE },
  'POST /scim/v2/Users': { unguarded: PEOPLE },
  'PUT /scim/v2/Users/:id': { unguarded: PEOPLE },
  'PATCH /scim/v2/Users/:id': { unguarded: PEOPLE },
  'DELETE /scim/v2/Users/:id': { unguarded: PEOPLE },
  'POST /scim/v2/Groups': { unguarded: PEOPLE },
  'PUT /scim/v2/Groups/:id': { unguarded: PEOPLE },
  'PATCH /scim/v2/Groups/:id': { unguarded: PEOPLE },
  'DELETE /scim/v2/Groups/:id': { unguarded: PEOPLE },
  'POST /api/admin/api-tokens': { unguarded: PEOPLE },
  'PUT /api/admin/api-tokens/:token': { unguarded: PEOPLE },
  'DELETE /api/admin/api-tokens/:token': { unguarded: PEOPLE },
  'POST /api/admin/feedback': { unguarded: PEOPLE },
  'PUT /api/admin/feedback/:id': { unguarded: PEOPLE },
  'POST /api/admin/splash/:id': { unguarded: PEOPLE },
  [`POST ${P}/api-tokens`]: { unguarded: PEOPLE },
  [`DELETE ${P}/api-tokens/:token`]: { unguarded: PEOPLE },
  'POST /api/admin/ui-config/cors': { unguarded: PEOPLE },
  'POST /api/admin/release-plan-templates': { unguarded: DEFINITIONS },
  'POST /api/admin/environments/:environment/experiment-metrics': { unguarded: EXPERIMENTS },
  'PUT /api/admin/environments/:environment/experiment-metrics/:metricName': { unguarded: EXPERIMENTS },
  'DELETE /api/admin/environments/:environment/experiment-metrics/:metricName': { unguarded: EXPERIMENTS },
  'POST /api/admin/code-references': { unguarded: 'records where code reads flags (vexil refs push); changes no flag' },
  'POST /api/admin/experiment-data-sources': { unguarded: EXPERIMENTS },
  'DELETE /api/admin/experiment-data-sources/:dataSourceName': { unguarded: EXPERIMENTS },
  'POST /api/admin/experiment-data-sources/:dataSourceName/test': { unguarded: READS },
  [`POST ${P}/experiments`]: { unguarded: EXPERIMENTS },
  [`PUT ${P}/experiments/:experimentName`]: { unguarded: EXPERIMENTS },
  [`DELETE ${P}/experiments/:experimentName`]: { unguarded: EXPERIMENTS },
  [`POST ${P}/experiments/:experimentName/start`]: { unguarded: EXPERIMENTS },
  [`POST ${P}/experiments/:experimentName/stop`]: { unguarded: EXPERIMENTS },
  [`POST ${P}/experiments/:experimentName/results`]: { unguarded: READS },
  [`POST ${P}/experiments/:experimentName/ship`]: {
    unguarded: 'changes the strategy through changeOrPropose: a change request in a protected environment (test/api/experiments.test.ts)',
  },
  'PUT /api/admin/release-plan-templates/:id': { unguarded: DEFINITIONS },
  'DELETE /api/admin/release-plan-templates/:id': { unguarded: DEFINITIONS },
  'POST /api/admin/release-plan-templates/archive/:id': { unguarded: DEFINITIONS },
  'POST /api/admin/signal-endpoints': { unguarded: AUTOMATION },
  'PUT /api/admin/signal-endpoints/:id': { unguarded: AUTOMATION },
  'DELETE /api/admin/signal-endpoints/:id': { unguarded: AUTOMATION },
  'POST /api/admin/signal-endpoints/:id/tokens': { unguarded: AUTOMATION },
  'DELETE /api/admin/signal-endpoints/:id/tokens/:tokenId': { unguarded: AUTOMATION },
  'POST /api/admin/signal-endpoints/:id/on': { unguarded: AUTOMATION },
  'POST /api/admin/signal-endpoints/:id/off': { unguarded: AUTOMATION },
  [`POST ${P}/actions`]: { unguarded: AUTOMATION },
  [`PUT ${P}/actions/:actionSetId`]: { unguarded: AUTOMATION },
  [`DELETE ${P}/actions/:actionSetId`]: { unguarded: AUTOMATION },
  [`POST ${P}/actions/:actionSetId/on`]: { unguarded: AUTOMATION },
  [`POST ${P}/actions/:actionSetId/off`]: { unguarded: AUTOMATION },
  'POST /api/admin/addons': { unguarded: AUTOMATION },
  'PUT /api/admin/addons/:id': { unguarded: AUTOMATION },
  'DELETE /api/admin/addons/:id': { unguarded: AUTOMATION },
  'POST /api/admin/addons/:id/signing-secret': { unguarded: AUTOMATION },
  'POST /api/admin/addons/:id/events/:integrationEventId/redeliver': { unguarded: AUTOMATION },
  'POST /api/admin/projects': { unguarded: NEW_THINGS },
  [`PUT ${P}`]: { unguarded: METADATA },
  [`DELETE ${P}`]: { unguarded: OUTSIDE },
  'POST /api/admin/environments': { unguarded: NEW_THINGS },
  'PUT /api/admin/environments/sort-order': { unguarded: METADATA },
  'PUT /api/admin/environments/:name': { unguarded: METADATA },
  'POST /api/admin/environments/:name/on': { unguarded: 'shows or hides the environment in the admin UI; SDKs are served the same' },
  'POST /api/admin/environments/:name/off': { unguarded: 'shows or hides the environment in the admin UI; SDKs are served the same' },
  'POST /api/admin/features/validate': { unguarded: READS },
  [`POST ${P}/features`]: { unguarded: NEW_THINGS },
  [`PUT ${F}`]: { unguarded: METADATA },
  [`PATCH ${F}`]: { unguarded: METADATA },
  'DELETE /api/admin/archive/:featureName': { unguarded: OUTSIDE },
  [`POST ${P}/stale`]: { unguarded: METADATA },
  'POST /api/admin/constraints/validate': { unguarded: READS },
  'POST /api/admin/strategies': { unguarded: DEFINITIONS },
  'PUT /api/admin/strategies/:name': { unguarded: DEFINITIONS },
  'DELETE /api/admin/strategies/:name': { unguarded: DEFINITIONS },
  'POST /api/admin/strategies/:name/deprecate': { unguarded: DEFINITIONS },
  'POST /api/admin/strategies/:name/reactivate': { unguarded: DEFINITIONS },
  'POST /api/admin/tag-types': { unguarded: DEFINITIONS },
  'POST /api/admin/tag-types/validate': { unguarded: READS },
  'PUT /api/admin/tag-types/:name': { unguarded: DEFINITIONS },
  'DELETE /api/admin/tag-types/:name': { unguarded: DEFINITIONS },
  'POST /api/admin/features/:featureName/tags': { unguarded: METADATA },
  'PUT /api/admin/features/:featureName/tags': { unguarded: METADATA },
  'DELETE /api/admin/features/:featureName/tags/:type/:value': { unguarded: METADATA },
  'POST /api/admin/tags': { unguarded: METADATA },
  [`POST ${P}/delete`]: { unguarded: OUTSIDE },
  [`POST ${P}/archive/validate`]: { unguarded: 'reads what archiving would do; changes nothing' },
  'POST /api/admin/metrics/applications/:appName': { unguarded: SDKS },
  'DELETE /api/admin/metrics/applications/:appName': { unguarded: SDKS },
  'POST /api/admin/record-ui-error': { unguarded: 'writes to the log only' },
  'PUT /api/admin/feature-types/:id/lifetime': { unguarded: 'how long a type of flag is expected to live; no flag configuration' },
  'POST /api/admin/invite-link/tokens': { unguarded: PEOPLE },
  'PUT /api/admin/invite-link/tokens/:token': { unguarded: PEOPLE },
  'POST /invite/:token/signup': { unguarded: PEOPLE },
  'POST /edge/issue-token': { unguarded: PEOPLE },
  'POST /api/admin/edge-clients': { unguarded: PEOPLE },
  'DELETE /api/admin/edge-clients/:clientId': { unguarded: PEOPLE },
  'POST /api/admin/maintenance': { unguarded: 'refuses every change while on; no flag' },
  'POST /api/admin/user-admin/validate-password': { unguarded: PEOPLE },
  'POST /auth/reset/validate-password': { unguarded: PEOPLE },
  'POST /api/admin/user-admin/reset-password': { unguarded: PEOPLE },
  'POST /auth/reset/password': { unguarded: PEOPLE },
  'POST /auth/reset/password-email': { unguarded: PEOPLE },
  'POST /api/admin/user-admin/inactive/delete': { unguarded: PEOPLE },
  'DELETE /api/admin/user-admin/scim-users': { unguarded: PEOPLE },
  'DELETE /api/admin/tags/:type/:value': { unguarded: METADATA },
  [`PUT ${P}/tags`]: { unguarded: METADATA },
  'POST /api/admin/features-batch/export': { unguarded: READS },
  'POST /api/admin/features-batch/validate': { unguarded: READS },
  'POST /ofrep/v1/evaluate/flags/:key': { unguarded: READS },
  'POST /ofrep/v1/evaluate/flags': { unguarded: READS },
  'POST /api/admin/segments': { unguarded: NEW_THINGS },
  'POST /api/admin/segments/validate': { unguarded: READS },
  'POST /api/admin/context': { unguarded: DEFINITIONS },
  'POST /api/admin/context/validate': { unguarded: READS },
  'PUT /api/admin/context/:name': { unguarded: DEFINITIONS },
  'POST /api/admin/context/:name/legal-values': { unguarded: DEFINITIONS },
  'DELETE /api/admin/context/:name/legal-values/:value': { unguarded: DEFINITIONS },
  'DELETE /api/admin/context/:name': { unguarded: DEFINITIONS },
  [`POST ${P}/context`]: { unguarded: DEFINITIONS },
  [`POST ${P}/context/validate`]: { unguarded: READS },
  [`PUT ${P}/context/:name`]: { unguarded: DEFINITIONS },
  [`POST ${P}/context/:name/legal-values`]: { unguarded: DEFINITIONS },
  [`DELETE ${P}/context/:name/legal-values/:value`]: { unguarded: DEFINITIONS },
  [`DELETE ${P}/context/:name`]: { unguarded: DEFINITIONS },
  [`POST ${F}/favorites`]: { unguarded: METADATA },
  [`DELETE ${F}/favorites`]: { unguarded: METADATA },
  [`POST ${P}/favorites`]: { unguarded: METADATA },
  [`DELETE ${P}/favorites`]: { unguarded: METADATA },
  [`POST ${F}/lifecycle/complete`]: { unguarded: METADATA },
  [`POST ${F}/link`]: { unguarded: METADATA },
  [`PUT ${F}/link/:linkId`]: { unguarded: METADATA },
  [`DELETE ${F}/link/:linkId`]: { unguarded: METADATA },
  [`POST ${F}/lifecycle/uncomplete`]: { unguarded: METADATA },
  'POST /api/admin/events/search': { unguarded: READS },
  [`PUT ${P}/environments/:environment/change-requests/config`]: { unguarded: OWN_WORKFLOW },
  [`POST ${P}/environments/:environment/change-requests`]: { unguarded: OWN_WORKFLOW },
  [`DELETE ${P}/change-requests/:id`]: { unguarded: OWN_WORKFLOW },
  [`PUT ${P}/change-requests/:id/changes/:changeId`]: { unguarded: OWN_WORKFLOW },
  [`DELETE ${P}/change-requests/:id/changes/:changeId`]: { unguarded: OWN_WORKFLOW },
  [`PUT ${P}/change-requests/:id/title`]: { unguarded: OWN_WORKFLOW },
  [`POST ${P}/change-requests/:id/comments`]: { unguarded: OWN_WORKFLOW },
  [`PUT ${P}/change-requests/:id/state`]: { unguarded: OWN_WORKFLOW },
  'POST /api/client/register': { unguarded: SDKS },
  'POST /api/client/metrics': { unguarded: SDKS },
  'POST /api/client/exposures': { unguarded: SDKS },
  'POST /api/client/track': { unguarded: SDKS },
  'POST /api/frontend/exposures': { unguarded: SDKS },
  'POST /api/frontend/track': { unguarded: SDKS },
  'POST /api/client/metrics/bulk': { unguarded: SDKS },
  'POST /edge/validate': { unguarded: READS },
  'POST /api/frontend': { unguarded: READS },
  'POST /api/frontend/all': { unguarded: READS },
  'POST /api/proxy': { unguarded: READS },
  'POST /api/proxy/all': { unguarded: READS },
  'POST /api/proxy/client/metrics': { unguarded: SDKS },
  'POST /api/proxy/client/register': { unguarded: SDKS },
  'POST /api/frontend/client/metrics': { unguarded: SDKS },
  'POST /api/frontend/client/register': { unguarded: SDKS },
  'POST /api/admin/playground/advanced': { unguarded: READS },
  'POST /api/admin/playground': { unguarded: READS },
  'POST /api/admin/mcp': {
    unguarded:
      "an agent's messages: each tool runs the ordinary commands, so a protected environment's change becomes a draft change request (mcp.test.ts)",
  },
  'DELETE /api/admin/mcp': { unguarded: "ends an agent's session; no flag" },
  'POST /oauth/register': { unguarded: 'an MCP client registers itself; it may act only once a person grants it access' },
  'POST /oauth/token': { unguarded: PEOPLE },
  'POST /api/admin/oauth/authorization': { unguarded: PEOPLE },
  'DELETE /api/admin/user/mcp-tokens/:id': { unguarded: PEOPLE },
};

async function created<T>(response: LightMyRequestResponse, status = 201): Promise<T> {
  expectStatus(response, status);
  return response.json() as T;
}

async function protectedSetting(): Promise<Setting> {
  const { project, flags } = await createProjectWithFlags(ctx, 2);
  const [flag, parent] = flags as [string, string];
  const open = (await createProjectWithFlags(ctx, 0)).project;
  const segment = await created<{ id: number }>(await ctx.admin.post('/api/admin/segments', { name: `${project}-seg`, constraints: [] }));
  const strategy = await addStrategyDirectly(ctx.admin, project, flag, { name: 'default', segments: [segment.id] });
  await addStrategyDirectly(ctx.admin, project, flag, { name: 'default' }, 'development');
  expectStatus(await ctx.admin.post(`${featurePath(project, flag)}/environments/development/on`), 200);
  expectStatus(await ctx.admin.post(`${featurePath(project, flag)}/dependencies`, { feature: parent }), 200);
  const template = await created<{ id: string }>(
    await ctx.admin.post('/api/admin/release-plan-templates', {
      name: uniqueName('plan'),
      milestones: [
        { name: 'Staff', strategies: [{ name: 'default' }] },
        { name: 'Everyone', strategies: [{ name: 'default' }] },
      ],
    }),
  );
  const environmentPath = `${featurePath(project, flag)}/environments/production`;
  const addedPlan = await created<{ id: string; milestones: Array<{ id: string }> }>(
    await ctx.admin.post(`${environmentPath}/release_plans`, { templateId: template.id }),
  );
  const safeguard = await created<{ id: string }>(
    await ctx.admin.put(`${environmentPath}/release_plans/${addedPlan.id}/safeguards`, {
      impactMetric: { metricName: 'errors', aggregationMode: 'count', windowMinutes: 5 },
      triggerCondition: { operator: '>', threshold: 100 },
      action: { type: 'pause' },
    }),
    200,
  );
  const exported = await created<unknown>(
    await ctx.admin.post('/api/admin/features-batch/export', { environment: 'development', features: [flag] }),
    200,
  );
  // A deploy signal turns the flag on in production, as an Editor's service account.
  const endpoint = await created<{ id: number; name: string }>(
    await ctx.admin.post('/api/admin/signal-endpoints', { name: uniqueName('ci') }),
  );
  const signalToken = (
    await created<{ token: string }>(await ctx.admin.post(`/api/admin/signal-endpoints/${endpoint.id}/tokens`, { name: 'ci' }))
  ).token;
  const account = await created<{ id: number }>(
    await ctx.admin.post('/api/admin/service-account', { username: uniqueName('ci'), rootRole: 2 }),
  );
  await created(
    await ctx.admin.post(`${projectPath(project)}/actions`, {
      name: 'Release on deploy',
      actorId: account.id,
      match: { source: 'signal-endpoint', sourceId: endpoint.id, payload: { event: 'deploy' } },
      actions: [{ action: 'TOGGLE_FEATURE_ON', sortOrder: 1, executionParams: { project, environment: 'production', featureName: flag } }],
    }),
  );
  await enableChangeRequests(ctx, project);
  return {
    project,
    open,
    flag,
    parent,
    strategyId: strategy.id,
    segmentId: segment.id,
    planId: addedPlan.id,
    milestoneIds: addedPlan.milestones.map((milestone) => milestone.id),
    safeguardId: safeguard.id,
    templateId: template.id,
    signalEndpoint: endpoint.name,
    signalToken,
    exported,
  };
}

/** Everything a change to the flag could touch, as an Admin reads it. */
async function liveState(s: Setting) {
  return {
    flag: await getOk(ctx.admin, featurePath(s.project, s.flag)),
    plan: await getOk(ctx.admin, `${env(s)}/release_plans/${s.planId}`),
    segment: await getOk(ctx.admin, `/api/admin/segments/${s.segmentId}`),
    environments: await getOk(ctx.admin, projectPath(s.project)),
  };
}

describe('the route table of change-request guards', () => {
  test('lists every operation that changes something, and nothing else', () => {
    const changing = Object.keys(OPERATIONS)
      .filter((key) => !key.startsWith('GET '))
      .sort();
    assert.deepEqual(Object.keys(ROUTES).sort(), changing);
  });

  test('each guarded operation, by an Editor in a protected environment, changes nothing live', async () => {
    const s = await protectedSetting();
    const before = await liveState(s);
    for (const [operation, entry] of Object.entries(ROUTES)) {
      if ('unguarded' in entry) continue;
      const since = await lastEventId(ctx);
      const response = await entry.request(s, team.author.client).catch((error: unknown) => {
        throw new Error(`${operation}: ${error}`);
      });
      const events = (await eventsSince(ctx, since)).map((event) => event.type);
      if (entry.outcome === 'refused') {
        const error = expectError(response, 403, 'PermissionError');
        assert.deepEqual(error.permissions, ['SKIP_CHANGE_REQUEST'], operation);
        assert.match(error.message, /change requests/i, operation);
        // The Admin's removal and return of the environment around the Editor's attempt are recorded as bypasses.
        const admins = ['review-bypassed', 'project-environment-removed', 'project-environment-added'];
        assert.deepEqual(
          events.filter((type) => !admins.includes(type)),
          [],
          `${operation} records nothing`,
        );
      } else if (entry.outcome === 'conflict') {
        const error = expectError(response, 409, 'ConflictError');
        assert.equal(
          error.message,
          `Flag "${s.flag}" cannot move while change requests are enabled for environment "production" of project "${s.project}"`,
        );
        assert.deepEqual(events, [], `${operation} records nothing`);
      } else if (entry.outcome === 'proposed') {
        expectStatus(response, 200);
        const report = response.json() as { changeRequests: Array<{ project: string; environment: string }> };
        assert.deepEqual(
          report.changeRequests.map((request) => [request.project, request.environment]),
          [[s.project, 'production']],
          operation,
        );
        assert.ok(
          events.every((type) => type.startsWith('change-') || type === 'features-imported'),
          `${operation} records only its change request: ${events}`,
        );
      } else {
        expectStatus(response, 202);
        const [outcome] = (response.json() as { actionSets: Array<{ state: string; message: string }> }).actionSets;
        assert.equal(outcome?.state, 'failed', operation);
        assert.match(outcome?.message ?? '', /Change requests are enabled for environment "production"/);
        assert.deepEqual(events, [], `${operation} records nothing`);
      }
    }
    assert.deepEqual(await liveState(s), before);
  });

  test('an Admin moving a flag out of a protected project is refused as well, and the flag moves once neither project has them', async () => {
    const s = await protectedSetting();
    const move = (to: string) => team.admin.client.post(`${featurePath(s.project, s.flag)}/changeProject`, { newProjectId: to });
    expectError(await move(s.open), 409, 'ConflictError');
    // Into a protected project neither: the flag would arrive there unreviewed.
    const into = await createProjectWithFlags(ctx, 1);
    await enableChangeRequests(ctx, into.project);
    const movedIn = expectError(
      await team.admin.client.post(`${featurePath(into.project, into.flags[0]!)}/changeProject`, { newProjectId: s.project }),
      409,
      'ConflictError',
    );
    assert.match(movedIn.message, /environment "production" of project "/);
    expectStatus(
      await ctx.admin.put(`${projectPath(s.project)}/environments/production/change-requests/config`, { changeRequestsEnabled: false }),
      204,
    );
    expectStatus(await ctx.admin.delete(`${featurePath(s.project, s.flag)}/dependencies`), 200);
    expectStatus(await move(s.open), 200);
  });

  test('a revived flag comes back off in every environment, each turned off with its event', async () => {
    const { project, flags } = await createProjectWithFlags(ctx, 1);
    const flag = flags[0]!;
    for (const environment of ['development', 'production']) {
      await addStrategyDirectly(ctx.admin, project, flag, { name: 'default' }, environment);
      expectStatus(await ctx.admin.post(`${featurePath(project, flag)}/environments/${environment}/on`), 200);
    }
    expectStatus(await ctx.admin.delete(featurePath(project, flag)), 202);
    await enableChangeRequests(ctx, project);
    const since = await lastEventId(ctx);
    expectStatus(await team.author.client.post(`/api/admin/archive/revive/${flag}`), 200);
    const events = await eventsSince(ctx, since);
    assert.deepEqual(
      events.map((event) => [event.type, event.environment, event.data, event.createdBy]),
      [
        ['feature-revived', null, events[0]!.data, team.author.username],
        ['feature-environment-disabled', 'development', { enabled: false }, team.author.username],
        ['feature-environment-disabled', 'production', { enabled: false }, team.author.username],
      ],
    );
    const revived = await getOk<{ archived: boolean; environments: Array<{ name: string; enabled: boolean; strategies: unknown[] }> }>(
      ctx.admin,
      featurePath(project, flag),
    );
    assert.equal(revived.archived, false);
    assert.deepEqual(
      revived.environments.map((environment) => [environment.name, environment.enabled, environment.strategies.length]),
      [
        ['development', false, 1],
        ['production', false, 1],
      ],
    );
    // Turning it back on in production is a change like any other.
    expectError(await team.author.client.post(`${featurePath(project, flag)}/environments/production/on`), 403, 'PermissionError');
  });

  test('deleting an environment some project protects is refused to custom roles without the bypass, and recorded for Admins', async () => {
    const environment = uniqueName('env');
    expectStatus(await ctx.admin.post('/api/admin/environments', { name: environment, type: 'production' }), 201);
    const { project } = await createProjectWithFlags(ctx, 1);
    expectStatus(await ctx.admin.post(`${projectPath(project)}/environments`, { environment }), 200);
    await enableChangeRequests(ctx, project, 1, environment);
    const since = await lastEventId(ctx);
    expectStatus(await team.admin.client.delete(`/api/admin/environments/${environment}`), 200);
    const events = await eventsSince(ctx, since);
    assert.deepEqual(
      events.slice(0, 1).map((event) => [event.type, event.project, event.environment, event.data]),
      [['review-bypassed', project, environment, { protectedEnvironments: [{ project, environment }] }]],
    );
  });
});
