import { setFrontendApiOrigins } from '../domain/settings/frontend-api-origins.js';
import { routesTagged, type RouteModule } from './deps.js';
import { can } from './plugins/access.js';
import { MaintenanceSchema, RecordUiErrorSchema, SetCorsSchema, TelemetrySettingsSchema, UiConfigSchema } from './ui-config.schemas.js';
import { readMaintenanceMode, setMaintenanceMode } from '../domain/settings/maintenance-mode.js';
import { VERSION } from '../shared/version.js';

const route = routesTagged(['Admin UI']);

/** What the admin UI needs to know about the instance, and the frontend API's allowed origins (Unleash's paths). */
export const uiConfigRoutes: RouteModule = async (app, { deps, act }) => {
  app.get('/api/admin/ui-config', route(can('READ'), { ok: UiConfigSchema }), async () => ({
    name: 'Vexil',
    version: VERSION,
    baseUriPath: '',
    frontendApiOrigins: await deps.frontendApiOrigins.allowed(),
    maintenanceMode: await deps.maintenanceMode.enabled(),
  }));

  app.get('/api/admin/maintenance', route(can('READ'), { ok: MaintenanceSchema }), async () => ({
    enabled: await readMaintenanceMode(deps.db),
  }));

  app.post('/api/admin/maintenance', route(can('ADMIN'), { body: MaintenanceSchema }), async (request, reply) => {
    await act(request, (uow) => setMaintenanceMode(uow, request.body.enabled));
    deps.maintenanceMode.invalidate();
    return reply.status(204).send();
  });

  // Vexil sends nothing about the instance or its flags anywhere: both collections are off, and cannot be turned on.
  app.get('/api/admin/telemetry/settings', route(can('READ'), { ok: TelemetrySettingsSchema }), async () => ({
    versionInfoCollectionEnabled: false,
    featureInfoCollectionEnabled: false,
  }));

  // An error the admin UI met in someone's browser, for the operator's log (bounded, so no one can flood it with size).
  app.post('/api/admin/record-ui-error', route(can('READ'), { body: RecordUiErrorSchema }), async (request, reply) => {
    request.log.warn({ uiError: request.body.errorMessage, uiStack: request.body.errorStack }, 'The admin UI met an error in a browser');
    return reply.status(204).send();
  });

  app.post('/api/admin/ui-config/cors', route(can('ADMIN'), { body: SetCorsSchema }), async (request, reply) => {
    const current = await deps.frontendApiOrigins.allowed();
    await act(request, (uow) => setFrontendApiOrigins(uow, request.body.frontendApiOrigins, current));
    deps.frontendApiOrigins.invalidate();
    return reply.status(204).send();
  });
};
