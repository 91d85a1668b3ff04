import { Type } from '@sinclair/typebox';
import {
  assertAddonUrlsAllowed,
  createAddon,
  deleteAddon,
  rotateAddonSigningSecret,
  updateAddon,
  validateAddonInput,
  type AddonInput,
  getAddonWithDeliveries,
  listAddons,
} from '../../../domain/addons/addons.js';
import { listIntegrationEvents, redeliverIntegrationEvent } from '../../../domain/addons/integration-events.js';
import { ADDON_PROVIDERS } from '../../../domain/addons/providers/index.js';
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
import { routesTagged, type AppDeps, type RouteModule } from '../../deps.js';
import { can } from '../../plugins/access.js';

const route = routesTagged(['Addons']);
const ADDONS = '/api/admin/addons';

/** Checks that need no transaction, DNS included, done before the unit of work opens. */
async function checkAddonInput(deps: AppDeps, input: AddonInput): Promise<void> {
  validateAddonInput(input);
  await assertAddonUrlsAllowed(input, deps.config.integrations.allowPrivateNetworks);
}

// Paths, fields and status codes are Unleash's. Reading configurations is open to every role, as in Unleash
// (secrets are masked); changing them is Admin-only; integration events and redelivery are Admin-only.
export const addonRoutes: RouteModule = async (app, { deps, act }) => {
  app.get(ADDONS, route(can('READ'), { ok: AddonsSchema }), async () => ({
    addons: await listAddons(deps.db),
    providers: [...ADDON_PROVIDERS.values()].map((provider) => provider.definition),
  }));

  app.post(ADDONS, route(can('CREATE_ADDON'), { body: AddonCreateUpdateSchema, created: AddonCreatedSchema }), async (request, reply) => {
    await checkAddonInput(deps, request.body);
    const addon = await act(request, (uow) => createAddon(uow, request.body));
    return reply.status(201).send(addon);
  });

  app.get(`${ADDONS}/:id`, route(can('READ'), { params: AddonParams, ok: AddonWithDeliveriesSchema }), async (request) =>
    getAddonWithDeliveries(deps.db, Number(request.params.id)),
  );

  app.put(
    `${ADDONS}/:id`,
    route(can('UPDATE_ADDON'), { params: AddonParams, body: AddonCreateUpdateSchema, ok: AddonSchema }),
    async (request) => {
      await checkAddonInput(deps, request.body);
      return act(request, (uow) => updateAddon(uow, Number(request.params.id), request.body));
    },
  );

  app.post(
    `${ADDONS}/:id/signing-secret`,
    route(can('UPDATE_ADDON'), { params: AddonParams, ok: AddonSigningSecretSchema }),
    async (request) => act(request, (uow) => rotateAddonSigningSecret(uow, Number(request.params.id))),
  );

  app.delete(`${ADDONS}/:id`, route(can('DELETE_ADDON'), { params: AddonParams }), async (request, reply) => {
    await act(request, (uow) => deleteAddon(uow, Number(request.params.id)));
    return reply.status(200).send();
  });

  app.get(
    `${ADDONS}/:id/events`,
    route(can('ADMIN'), { params: AddonParams, querystring: IntegrationEventsQuery, ok: IntegrationEventsSchema }),
    async (request) => ({
      integrationEvents: await listIntegrationEvents(deps.db, Number(request.params.id), request.query),
    }),
  );

  app.post(
    `${ADDONS}/:id/events/:integrationEventId/redeliver`,
    route(can('ADMIN'), { params: IntegrationEventParams, response: { 202: Type.Ref(AddonRedeliverySchema) } }),
    async (request, reply) => {
      const { id, integrationEventId } = request.params;
      const redelivery = await act(request, (uow) => redeliverIntegrationEvent(uow, Number(id), integrationEventId));
      return reply.status(202).send(redelivery);
    },
  );
};
