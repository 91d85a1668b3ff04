import type { FastifyInstance, FastifyRequest } from 'fastify';
import { MAINTENANCE_MESSAGE } from '../../db/maintenance-gate.js';
import type { MaintenanceMode } from '../../domain/settings/maintenance-mode.js';
import { ServiceUnavailableError } from '../../shared/errors.js';

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The routes that take a write method and still answer while maintenance mode is on, each with its reason; every
 * other one (admin, SCIM, signals, invites, OAuth, the edge's token issuing) answers 503 at once. Those listed that
 * may write (a flags-file apply that is no dry run, an MCP tool that changes a flag) meet the unit of work's own
 * refusal, which is where maintenance mode is enforced; this list only lets the rest answer as they should.
 */
const OPEN_IN_MAINTENANCE: ReadonlyArray<{ route: RegExp; why: string }> = [
  { route: /^\/api\/admin\/maintenance$/, why: 'the switch itself' },
  { route: /\/validate(-password)?$/, why: 'checks of what a change would do' },
  { route: /^\/api\/admin\/playground(\/|$)/, why: 'evaluations' },
  { route: /^\/api\/admin\/(events\/search|features-batch\/export)$/, why: 'searches and exports' },
  { route: /^\/api\/admin\/flags-file\/apply$/, why: 'a dry run answers; an apply meets the unit of work' },
  { route: /^\/api\/admin\/mcp$/, why: "MCP's messages: its reading tools answer, its writing ones meet the unit of work" },
  { route: /^\/api\/(frontend|proxy)(\/all)?$/, why: 'what SDKs read' },
  { route: /^\/ofrep\/v1\/evaluate\//, why: 'what SDKs read' },
  { route: /^\/api\/(client|frontend|proxy)(\/client)?\/(register|metrics(\/bulk)?)$/, why: 'what SDKs report' },
  { route: /^\/api\/(client|frontend)\/(exposures|track)$/, why: 'what SDKs report for experiments' },
  { route: /^\/(auth\/simple\/login|auth\/saml\/callback|logout)$/, why: 'signing in and out' },
];

/** Why a route answers in maintenance mode, or undefined when it is refused there. */
export function openInMaintenance(method: string, route: string): string | undefined {
  if (!WRITES.has(method)) return 'reads';
  return OPEN_IN_MAINTENANCE.find((open) => open.route.test(route))?.why;
}

function refusedInMaintenance(request: FastifyRequest): boolean {
  return openInMaintenance(request.method, request.routeOptions.url ?? request.url.split('?')[0]!) === undefined;
}

/**
 * Unleash's maintenance mode at the door: while an Admin has it on, a write route answers 503 before its body is
 * read (after authentication, so an unknown caller still gets a 401). What SDKs read and report goes on, as do
 * sign-in and the switch. The unit of work refuses every write of every door and worker as well.
 */
export function registerMaintenanceMode(scope: FastifyInstance, deps: { maintenanceMode: MaintenanceMode }): void {
  scope.addHook('preValidation', async (request) => {
    if (!refusedInMaintenance(request)) return;
    if (await deps.maintenanceMode.enabled()) throw new ServiceUnavailableError(MAINTENANCE_MESSAGE);
  });
}
