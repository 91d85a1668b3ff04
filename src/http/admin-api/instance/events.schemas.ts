import { Type } from '@sinclair/typebox';
import { SPEC_EVENT_TYPES } from '../../../domain/events/event-types.js';
import { DateTime, Nullable, StrictObject, StringEnum } from '../../common.schemas.js';
import { TagSchema } from '../../features.schemas.js';

export const EventSchema = Type.Object(
  {
    id: Type.Integer({ minimum: 1 }),
    createdAt: DateTime,
    type: Type.String(),
    createdBy: Type.String(),
    createdByUserId: Nullable(Type.Integer()),
    environment: Nullable(Type.String()),
    project: Nullable(Type.String()),
    featureName: Nullable(Type.String()),
    data: Type.Unknown({ description: 'Free-form: the state after the change' }),
    preData: Type.Unknown({ description: 'Free-form: the state before the change' }),
    tags: Type.Array(Type.Ref(TagSchema)),
    label: Nullable(Type.String()),
    summary: Nullable(Type.String({ description: 'Markdown' })),
    changeRequestId: Type.Optional(
      Type.Integer({ description: 'Vexil: the change request whose application wrote this event, when one did' }),
    ),
    via: Type.Optional(
      Type.String({ description: "Vexil: the agent the change came through (an MCP client's name and version), when one did" }),
    ),
  },
  { $id: 'eventSchema' },
);

export const EventsSchema = Type.Object(
  { version: Type.Literal(1), events: Type.Array(Type.Ref(EventSchema)), totalEvents: Type.Integer() },
  { $id: 'eventsSchema' },
);

export const FeatureEventsSchema = Type.Object(
  {
    version: Type.Literal(1),
    toggleName: Type.String(),
    events: Type.Array(Type.Ref(EventSchema)),
    totalEvents: Type.Integer(),
  },
  { $id: 'featureEventsSchema' },
);

export const EventSearchResponseSchema = Type.Object(
  { events: Type.Array(Type.Ref(EventSchema)), total: Type.Integer() },
  { $id: 'eventSearchResponseSchema' },
);

const FilterParameter = (description: string) => Type.Optional(Type.String({ description }));

export const EventSearchQuerySchema = Type.Object(
  {
    query: FilterParameter('Case-insensitive text searched in data, preData and tags; % and _ are literal'),
    feature: FilterParameter('IS:<flag> or IS_ANY_OF:<flag>,<flag>'),
    project: FilterParameter('IS:<project> or IS_ANY_OF:<project>,<project>'),
    type: FilterParameter('IS:<type> or IS_ANY_OF:<type>,<type>'),
    createdBy: FilterParameter('IS:<user id> or IS_ANY_OF:<user id>,<user id>'),
    via: FilterParameter('Case-insensitive text in the name and version of the agent (MCP client) a change came through'),
    from: FilterParameter('IS:yyyy-MM-dd, the first UTC day included'),
    to: FilterParameter('IS:yyyy-MM-dd, the last UTC day included'),
    offset: FilterParameter('Events to skip; default 0'),
    limit: FilterParameter('Page size, 1 to 1000; default 50'),
  },
  { $id: 'eventSearchQueryParameters' },
);

export const EventExportQuerySchema = Type.Object(
  {
    format: Type.Optional(StringEnum(['ndjson', 'csv'], 'format must be ndjson or csv')),
    query: EventSearchQuerySchema.properties.query,
    feature: EventSearchQuerySchema.properties.feature,
    project: EventSearchQuerySchema.properties.project,
    type: EventSearchQuerySchema.properties.type,
    createdBy: EventSearchQuerySchema.properties.createdBy,
    via: EventSearchQuerySchema.properties.via,
    from: EventSearchQuerySchema.properties.from,
    to: EventSearchQuerySchema.properties.to,
  },
  { additionalProperties: false },
);

export const DeprecatedSearchEventsSchema = StrictObject(
  {
    type: Type.Optional(Type.String({ description: `One of the event types: ${SPEC_EVENT_TYPES.slice(0, 3).join(', ')}, …` })),
    project: Type.Optional(Type.String()),
    feature: Type.Optional(Type.String()),
    query: Type.Optional(Type.String({ maxLength: 10_000 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, errorMessage: 'limit must be a whole number from 1 to 100' })),
    offset: Type.Optional(Type.Integer({ minimum: 0, errorMessage: 'offset must be a whole number of at least 0' })),
  },
  { $id: 'deprecatedSearchEventsSchema' },
);

export const EventCreatorsSchema = Type.Array(Type.Object({ id: Type.Integer(), name: Type.String() }), {
  $id: 'eventCreatorsSchema',
});

export const eventSchemas = [
  EventSchema,
  EventsSchema,
  FeatureEventsSchema,
  EventSearchResponseSchema,
  DeprecatedSearchEventsSchema,
  EventCreatorsSchema,
];
