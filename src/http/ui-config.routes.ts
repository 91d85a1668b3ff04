import { Type } from '@sinclair/typebox';
import { inUnitOfWork } from '../db/unit-of-work.js';
import { setFrontendApiOrigins } from '../domain/settings/frontend-api-origins.js';
import { routesTagged, type RouteModule } from './deps.js';
import { actorOf, can } from './plugins/access.js';
import { SetCorsSchema, UiConfigSchema } from './ui-config.schemas.js';
import { VERSION } from '../shared/version.js';

const route = routesTagged(['Admin UI']);

/** What the admin UI needs to know about the instance, and the frontend API's allowed origins (Unleash's paths). */
export const uiConfigRoutes: RouteModule = async (app, { deps }) => {
  app.get('/api/admin/ui-config', route(can('READ'), { response: { 200: Type.Ref(UiConfigSchema) } }), async () => ({
    name: 'Vexil',
    version: VERSION,
    baseUriPath: '',
    frontendApiOrigins: await deps.frontendApiOrigins.allowed(),
  }));

  app.post('/api/admin/ui-config/cors', route(can('ADMIN'), { body: Type.Ref(SetCorsSchema) }), async (request, reply) => {
    const current = await deps.frontendApiOrigins.allowed();
    await inUnitOfWork(deps, actorOf(request), (uow) => setFrontendApiOrigins(uow, request.body.frontendApiOrigins, current));
    deps.frontendApiOrigins.invalidate();
    return reply.status(204).send();
  });
};
