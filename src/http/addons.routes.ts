import { Type } from '@sinclair/typebox';
import { inUnitOfWork } from '../db/unit-of-work.js';
import {
  assertAddonUrlsAllowed,
  createAddon,
  deleteAddon,
  redeliverIntegrationEvent,
  rotateAddonSigningSecret,
  updateAddon,
  validateAddonInput,
  type AddonInput,
} from '../domain/addons/addons.commands.js';
import { getAddonWithDeliveries, listAddons } from '../domain/addons/addons.queries.js';
import { listIntegrationEvents } from '../domain/addons/integration-events.queries.js';
import { ADDON_PROVIDERS } from '../domain/addons/providers/index.js';
import {
  AddonCreatedSchema,
  AddonCreateUpdateSchema,
  AddonParams,
  AddonRedeliverySchema,
  AddonSchema,
  AddonsSchema,
  AddonSigningSecretSchema,
  AddonWithDeliveriesSchema,
  IntegrationEventParams,
  IntegrationEventsQuery,
  IntegrationEventsSchema,
} from './addons.schemas.js';
import { routesTagged, type AppDeps, type RouteModule } from './deps.js';
import { actorOf, can } from './plugins/access.js';

const route = routesTagged(['Addons']);
const ADDONS = '/api/admin/addons';

/** Checks that need no transaction, DNS included, done before the unit of work opens. */
async function checkAddonInput(deps: AppDeps, input: AddonInput): Promise<void> {
  validateAddonInput(input);
  await assertAddonUrlsAllowed(input, deps.config.integrations.allowPrivateNetworks);
}

// Paths, fields and status codes are Unleash's. Reading configurations is open to every role, as in Unleash
// (secrets are masked); changing them is Admin-only; integration events and redelivery are Admin-only.
export const addonRoutes: RouteModule = async (app, { deps }) => {
  app.get(ADDONS, route(can('READ'), { response: { 200: Type.Ref(AddonsSchema) } }), async () => ({
    addons: await listAddons(deps.db),
    providers: [...ADDON_PROVIDERS.values()].map((provider) => provider.definition),
  }));

  app.post(
    ADDONS,
    route(can('CREATE_ADDON'), { body: Type.Ref(AddonCreateUpdateSchema), response: { 201: Type.Ref(AddonCreatedSchema) } }),
    async (request, reply) => {
      await checkAddonInput(deps, request.body);
      const addon = await inUnitOfWork(deps, actorOf(request), (uow) => createAddon(uow, request.body));
      return reply.status(201).send(addon);
    },
  );

  app.get(
    `${ADDONS}/:id`,
    route(can('READ'), { params: AddonParams, response: { 200: Type.Ref(AddonWithDeliveriesSchema) } }),
    async (request) => getAddonWithDeliveries(deps.db, Number(request.params.id)),
  );

  app.put(
    `${ADDONS}/:id`,
    route(can('UPDATE_ADDON'), { params: AddonParams, body: Type.Ref(AddonCreateUpdateSchema), response: { 200: Type.Ref(AddonSchema) } }),
    async (request) => {
      await checkAddonInput(deps, request.body);
      return inUnitOfWork(deps, actorOf(request), (uow) => updateAddon(uow, Number(request.params.id), request.body));
    },
  );

  app.post(
    `${ADDONS}/:id/signing-secret`,
    route(can('UPDATE_ADDON'), { params: AddonParams, response: { 200: Type.Ref(AddonSigningSecretSchema) } }),
    async (request) => inUnitOfWork(deps, actorOf(request), (uow) => rotateAddonSigningSecret(uow, Number(request.params.id))),
  );

  app.delete(`${ADDONS}/:id`, route(can('DELETE_ADDON'), { params: AddonParams }), async (request, reply) => {
    await inUnitOfWork(deps, actorOf(request), (uow) => deleteAddon(uow, Number(request.params.id)));
    return reply.status(200).send();
  });

  app.get(
    `${ADDONS}/:id/events`,
    route(can('ADMIN'), { params: AddonParams, querystring: IntegrationEventsQuery, response: { 200: Type.Ref(IntegrationEventsSchema) } }),
    async (request) => ({
      integrationEvents: await listIntegrationEvents(deps.db, Number(request.params.id), request.query),
    }),
  );

  app.post(
    `${ADDONS}/:id/events/:integrationEventId/redeliver`,
    route(can('ADMIN'), { params: IntegrationEventParams, response: { 202: Type.Ref(AddonRedeliverySchema) } }),
    async (request, reply) => {
      const { id, integrationEventId } = request.params;
      const redelivery = await inUnitOfWork(deps, actorOf(request), (uow) =>
        redeliverIntegrationEvent(uow, Number(id), integrationEventId),
      );
      return reply.status(202).send(redelivery);
    },
  );
};
