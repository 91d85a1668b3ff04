import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MCP_TOOLS } from '../../src/http/mcp/mcp-tools.js';
import { getOk } from '../helpers/assertions.js';
import { useTestApp } from '../helpers/test-app.js';

// Each MCP tool declares its access as a route does, and is decided by the same function. This holds each tool's
// declared permission to the REST operation of the same action, as the OpenAPI document states it (`x-permission`):
// a tool that asks less than its route, or more, fails here.

const ctx = useTestApp();

/** The REST operation each tool does, with the arguments that choose it where a tool does more than one thing. */
const SAME_ACTION: Record<string, { operation: string | null; args?: Record<string, unknown> }> = {
  list_projects: { operation: 'GET /api/admin/projects' },
  list_flags: { operation: 'GET /api/admin/search/features' },
  get_flag_state: { operation: 'GET /api/admin/projects/{projectId}/features/{featureName}' },
  create_flag: { operation: 'POST /api/admin/projects/{projectId}/features' },
  set_flag_rollout: { operation: 'POST /api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies' },
  toggle_flag_environment: { operation: 'POST /api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/on' },
  update_flag_strategy: {
    operation: 'PUT /api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/{strategyId}',
  },
  remove_flag_strategy: {
    operation: 'DELETE /api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/{strategyId}',
  },
  cleanup_flag: { operation: 'DELETE /api/admin/projects/{projectId}/features/{featureName}', args: { archive: true } },
  flag_usage: { operation: 'GET /api/admin/client-metrics/features/{name}' },
  get_flag_code_references: { operation: 'GET /api/admin/projects/{projectId}/features/{featureName}/code-references' },
  get_removal_readiness: { operation: 'GET /api/admin/projects/{projectId}/features/{featureName}/removal-readiness' },
  // The patch is worked out from the caller's files; what it reads of Vexil is the readiness.
  get_flag_cleanup_patch: { operation: 'GET /api/admin/projects/{projectId}/features/{featureName}/removal-readiness' },
  stale_flags: { operation: 'GET /api/admin/search/features' },
  evaluate: { operation: 'POST /api/admin/playground' },
  search_events: { operation: 'GET /api/admin/search/events' },
  open_change_request: { operation: 'PUT /api/admin/projects/{projectId}/change-requests/{id}/state' },
  change_request_status: { operation: 'GET /api/admin/projects/{projectId}/change-requests/{id}' },
  create_experiment: { operation: 'POST /api/admin/projects/{projectId}/experiments' },
  get_experiment_results: { operation: 'GET /api/admin/projects/{projectId}/experiments/{experimentName}/results' },
  ship_experiment_variant: { operation: 'POST /api/admin/projects/{projectId}/experiments/{experimentName}/ship' },
  // Guidance for a coding agent: no route of the API does it, and it reads only flags the caller may see.
  detect_flag: { operation: null },
  evaluate_change: { operation: null },
  wrap_change: { operation: null },
};

test('every MCP tool asks the permission the REST operation of the same action asks, in the project that operation acts in', async () => {
  const document = await getOk<{ paths: Record<string, Record<string, { 'x-permission'?: string }>> }>(ctx.admin, '/docs/json');
  assert.deepEqual(MCP_TOOLS.map((tool) => tool.name).sort(), Object.keys(SAME_ACTION).sort(), 'a new tool says which route it matches');
  const differ: string[] = [];
  for (const tool of MCP_TOOLS) {
    const { operation, args = {} } = SAME_ACTION[tool.name]!;
    const { permission } = tool.access;
    const declared = typeof permission === 'function' ? permission(args as never) : permission;
    if (operation === null) {
      if (declared !== 'READ' || tool.effect !== 'read') differ.push(`${tool.name}: guidance reads only, yet asks ${declared}`);
      continue;
    }
    const [method, path] = operation.split(' ') as [string, string];
    const routePermission = document.paths[path]?.[method.toLowerCase()]?.['x-permission'];
    assert.ok(routePermission, `${operation} is an operation of the API`);
    if (declared !== routePermission) differ.push(`${tool.name} asks ${declared}; ${operation} asks ${routePermission}`);
    // A route acting in a project's flags names the project; the tool then says where its project comes from.
    if (path.includes('{projectId}') && tool.access.project === undefined) differ.push(`${tool.name} declares no project`);
    if (path.includes('{environment}') && !tool.access.inEnvironment) differ.push(`${tool.name} declares no environment`);
  }
  assert.deepEqual(differ, []);
});
