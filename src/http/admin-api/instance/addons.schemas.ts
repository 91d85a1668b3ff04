import { Type } from '@sinclair/typebox';
import { DateTime, Nullable, NumericId, StrictObject, StringEnum } from '../../common.schemas.js';
import { EventSchema } from './events.schemas.js';
import { TagTypeSchema } from '../flags/tags.schemas.js';

export const AddonParameterSchema = Type.Object(
  {
    name: Type.String(),
    displayName: Type.String(),
    type: Type.String({ description: 'url, text or textfield (multi-line)' }),
    description: Type.Optional(Type.String()),
    placeholder: Type.Optional(Type.String()),
    required: Type.Boolean(),
    sensitive: Type.Boolean({ description: 'Masked as ***** when read back; sent back as *****, the stored value is kept' }),
  },
  { $id: 'addonParameterSchema' },
);

export const AddonTypeSchema = Type.Object(
  {
    name: Type.String(),
    displayName: Type.String(),
    documentationUrl: Type.String(),
    description: Type.String(),
    howTo: Type.Optional(Type.String()),
    tagTypes: Type.Optional(Type.Array(Type.Ref(TagTypeSchema))),
    parameters: Type.Optional(Type.Array(Type.Ref(AddonParameterSchema))),
    events: Type.Optional(Type.Array(Type.String())),
  },
  { $id: 'addonTypeSchema' },
);

const FilterList = (description: string) => Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 1000, description });

const addonFields = {
  id: Type.Integer(),
  provider: Type.String(),
  description: Type.String(),
  enabled: Type.Boolean(),
  parameters: Type.Record(Type.String(), Type.String(), { description: 'Sensitive parameters read as *****' }),
  events: Type.Array(Type.String(), { description: 'Event types delivered; empty delivers all' }),
  projects: Type.Array(Type.String(), { description: 'Projects whose events are delivered; empty or * delivers all' }),
  environments: Type.Array(Type.String(), { description: 'Environments whose events are delivered; empty or * delivers all' }),
  createdAt: Nullable(DateTime),
  updatedAt: Type.Optional(DateTime),
  signingSecretCreatedAt: Type.Optional(
    Type.String({ format: 'date-time', description: 'Vexil: when the Standard Webhooks signing secret in use was made' }),
  ),
};

export const AddonSchema = Type.Object(addonFields, { $id: 'addonSchema' });

const SigningSecret = Type.String({
  description: 'Standard Webhooks signing secret (whsec_…): shown only in this answer; deliveries are signed with it',
});

export const AddonCreatedSchema = Type.Object(
  { ...addonFields, signingSecret: SigningSecret },
  { $id: 'addonCreatedSchema', description: 'The configuration as created, with its signing secret shown this once' },
);

export const AddonSigningSecretSchema = Type.Object(
  {
    signingSecret: SigningSecret,
    signingSecretCreatedAt: DateTime,
    previousSecretValidUntil: Type.String({
      format: 'date-time',
      description: 'Until then deliveries also carry a signature made with the replaced secret',
    }),
  },
  { $id: 'addonSigningSecretSchema' },
);

export const DeliverySummarySchema = Type.Object(
  {
    pending: Type.Integer({ description: 'Deliveries not finished: due, in flight, awaiting a retry, or paused while disabled' }),
    lastSuccessAt: Nullable(DateTime),
    lastFailureAt: Nullable(DateTime),
  },
  { $id: 'deliverySummarySchema', description: 'Vexil: how deliveries to the configuration are going' },
);

export const AddonWithDeliveriesSchema = Type.Object(
  { ...addonFields, deliveries: Type.Ref(DeliverySummarySchema) },
  { $id: 'addonWithDeliveriesSchema' },
);

export const AddonsSchema = Type.Object(
  { addons: Type.Array(Type.Ref(AddonSchema)), providers: Type.Array(Type.Ref(AddonTypeSchema)) },
  { $id: 'addonsSchema' },
);

export const AddonCreateUpdateSchema = StrictObject(
  {
    provider: Type.String({ minLength: 1, maxLength: 100, description: 'webhook, slack, teams or datadog (case-sensitive)' }),
    description: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
    enabled: Type.Boolean(),
    parameters: Type.Record(Type.String({ maxLength: 100 }), Type.String({ maxLength: 65_536 }), {
      maxProperties: 50,
      errorMessage: 'parameters must be an object of string values, as the provider defines them',
    }),
    events: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
      maxItems: 1000,
      description: 'Event types to deliver; empty delivers all',
    }),
    projects: Type.Optional(FilterList('Projects whose events are delivered; empty or * delivers all')),
    environments: Type.Optional(FilterList('Environments whose events are delivered; empty or * delivers all')),
  },
  { $id: 'addonCreateUpdateSchema' },
);

export const IntegrationEventSchema = Type.Object(
  {
    id: Type.String({ pattern: '^[0-9]+$', description: 'Increasing; a string because it is a big integer' }),
    integrationId: Type.Integer(),
    createdAt: DateTime,
    state: StringEnum(['success', 'failed', 'successWithErrors'] as const, 'state is success, failed or successWithErrors'),
    stateDetails: Type.String(),
    event: Type.Ref(EventSchema),
    details: Type.Object(
      {},
      { additionalProperties: true, description: 'What was sent: url, contentType, body; and deliveryId, attempt, statusCode' },
    ),
  },
  { $id: 'integrationEventSchema' },
);

export const IntegrationEventsSchema = Type.Object(
  { integrationEvents: Type.Array(Type.Ref(IntegrationEventSchema)) },
  { $id: 'integrationEventsSchema' },
);

export const AddonRedeliverySchema = Type.Object(
  {
    deliveryId: Type.String({ format: 'uuid', description: 'Sent as X-Vexil-Delivery with every attempt of this redelivery' }),
    eventId: Type.Integer(),
  },
  { $id: 'addonRedeliverySchema' },
);

export const AddonParams = Type.Object({ id: NumericId });

export const IntegrationEventParams = Type.Object({
  id: NumericId,
  integrationEventId: Type.String({ pattern: '^[0-9]{1,18}$', errorMessage: 'The integration event id must be a positive whole number' }),
});

export const IntegrationEventsQuery = Type.Object({
  limit: Type.Optional(Type.String({ description: 'Page size, 1 to 1000; default 50' })),
  offset: Type.Optional(Type.String({ description: 'Integration events to skip; default 0' })),
});

export const addonSchemas = [
  AddonParameterSchema,
  AddonTypeSchema,
  AddonSchema,
  AddonCreatedSchema,
  AddonSigningSecretSchema,
  DeliverySummarySchema,
  AddonWithDeliveriesSchema,
  AddonsSchema,
  AddonCreateUpdateSchema,
  IntegrationEventSchema,
  IntegrationEventsSchema,
  AddonRedeliverySchema,
];
