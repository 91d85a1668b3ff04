import { setFrontendApiOrigins } from '../../../domain/settings/frontend-api-origins.js';
import { routesTagged, type RouteModule } from '../../deps.js';
import { can } from '../../plugins/access.js';
import {
  InstanceAdminStatsSchema,
  MaintenanceSchema,
  RecordUiErrorSchema,
  SetCorsSchema,
  TelemetrySettingsSchema,
  UiConfigSchema,
} from './ui-config.schemas.js';
import { instanceStatistics } from '../../../domain/insights/instance-statistics.js';
import { stringify } from 'csv-stringify/sync';
import { Type } from '@sinclair/typebox';
import { maintenanceModeIn } from '../../../db/maintenance-gate.js';
import { setMaintenanceMode } from '../../../domain/settings/maintenance-mode.js';
import { VERSION } from '../../../shared/version.js';

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
    enabled: await maintenanceModeIn(deps.db),
  }));

  app.post('/api/admin/maintenance', route(can('ADMIN'), { body: MaintenanceSchema }), async (request, reply) => {
    await act(request, (uow) => setMaintenanceMode(uow, request.body.enabled), { inMaintenance: 'the maintenance switch' });
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

  const statistics = () =>
    instanceStatistics(
      deps.db,
      { oidc: deps.oidc !== undefined, saml: deps.saml !== undefined, password: deps.config.passwordSignIn },
      deps.clock.now(),
    );

  app.get('/api/admin/instance-admin/statistics', route(can('ADMIN'), { ok: InstanceAdminStatsSchema }), statistics);

  // One header row and one row of figures; nested figures as JSON, as Unleash writes them.
  app.get(
    '/api/admin/instance-admin/statistics/csv',
    route(can('ADMIN'), {
      response: { 200: { description: 'The statistics as CSV', content: { 'text/csv': { schema: Type.String() } } } },
    }),
    async (_request, reply) => {
      const figures = await statistics();
      const cells = Object.values(figures).map((value) => (typeof value === 'object' ? JSON.stringify(value) : value));
      reply
        .header('content-disposition', `attachment; filename="vexil-${figures.instanceId}-${Date.parse(figures.timestamp)}.csv"`)
        .type('text/csv; charset=utf-8');
      return stringify([Object.keys(figures), cells], { escape_formulas: true });
    },
  );
};
