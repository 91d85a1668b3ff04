import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { MaintenanceMode } from '../../domain/settings/maintenance-mode.js';
import { ServiceUnavailableError } from '../../shared/errors.js';

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Admin POSTs that change nothing: checks of what a change would do, searches, evaluations and exports. Unleash refuses
 * them in maintenance mode too; here they keep answering, as reads do.
 */
const READS_BY_POST = [
  /\/validate$/,
  /^\/api\/admin\/playground(\/|$)/,
  /^\/api\/admin\/events\/search$/,
  /^\/api\/admin\/features-batch\/export$/,
  // MCP's messages: its tools refuse changes in maintenance mode themselves, and keep answering reads.
  /^\/api\/admin\/mcp$/,
];

function refusedInMaintenance(request: FastifyRequest): boolean {
  if (!WRITES.has(request.method)) return false;
  const route = request.routeOptions.url ?? request.url.split('?')[0]!;
  if (!route.startsWith('/api/admin/') || route.startsWith('/api/admin/maintenance')) return false;
  return !(request.method === 'POST' && READS_BY_POST.some((pattern) => pattern.test(route)));
}

/**
 * Unleash's maintenance mode: while an Admin has it on, changes through the admin API are refused with a 503, and what
 * SDKs read and report (client, frontend, OFREP, edge paths) goes on, as do sign-in and the switch itself. Checked after
 * authentication, so an unknown caller still gets a 401, and before the body is checked.
 */
export function registerMaintenanceMode(scope: FastifyInstance, deps: { maintenanceMode: MaintenanceMode }): void {
  scope.addHook('preValidation', async (request) => {
    if (!refusedInMaintenance(request)) return;
    if (await deps.maintenanceMode.enabled()) {
      throw new ServiceUnavailableError(
        'Vexil is in maintenance mode: changes are refused until an Admin turns it off (POST /api/admin/maintenance)',
      );
    }
  });
}
