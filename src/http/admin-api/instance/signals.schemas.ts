import { Type } from '@sinclair/typebox';
import { DateTime, Nullable, StrictObject } from '../../common.schemas.js';

/** Signal endpoints, their tokens and signals, and projects' action sets, in Unleash's shapes. */

const SignalEndpointToken = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  signalEndpointId: Type.Integer(),
  createdAt: DateTime,
  createdByUserId: Type.Integer(),
});

export const SignalEndpointTokenSchema = Type.Composite([SignalEndpointToken, Type.Object({ token: Type.Optional(Type.String()) })], {
  $id: 'signalEndpointTokenSchema',
});

export const SignalEndpointSchema = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    description: Nullable(Type.String()),
    enabled: Type.Boolean(),
    createdAt: DateTime,
    createdByUserId: Type.Integer(),
    tokens: Type.Array(SignalEndpointToken),
  },
  { $id: 'signalEndpointSchema' },
);

export const SignalEndpointsSchema = Type.Object(
  { signalEndpoints: Type.Array(Type.Ref(SignalEndpointSchema)) },
  { $id: 'signalEndpointsSchema' },
);

export const CreateSignalEndpointSchema = StrictObject(
  {
    name: Type.String({
      minLength: 1,
      maxLength: 100,
      pattern: '^[a-z0-9-]+$',
      errorMessage: 'A signal endpoint name is 1 to 100 lower-case letters, digits and dashes: it is part of its URL',
    }),
    description: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
    enabled: Type.Optional(Type.Boolean()),
  },
  { $id: 'createSignalEndpointSchema' },
);

export const CreateSignalEndpointTokenSchema = StrictObject(
  { name: Type.String({ minLength: 1, maxLength: 100 }) },
  { $id: 'createSignalEndpointTokenSchema' },
);

export const SignalsSchema = Type.Object(
  { signals: Type.Array(Type.Object({ id: Type.Integer(), payload: Type.Unknown(), createdAt: DateTime })) },
  { $id: 'signalsSchema' },
);

export const SignalReceivedSchema = Type.Object(
  {
    signalId: Type.Integer(),
    actionSets: Type.Array(
      Type.Object({
        actionSetId: Type.Integer(),
        name: Type.String(),
        state: Type.String(),
        message: Type.Optional(Type.String()),
      }),
    ),
  },
  { $id: 'signalReceivedSchema' },
);

const Action = StrictObject({
  action: Type.Union([Type.Literal('TOGGLE_FEATURE_ON'), Type.Literal('TOGGLE_FEATURE_OFF')], {
    errorMessage: 'action is TOGGLE_FEATURE_ON or TOGGLE_FEATURE_OFF',
  }),
  sortOrder: Type.Integer({ minimum: 0, maximum: 1000 }),
  executionParams: StrictObject({
    project: Type.String({ minLength: 1, maxLength: 100 }),
    environment: Type.String({ minLength: 1, maxLength: 100 }),
    featureName: Type.String({ minLength: 1, maxLength: 100 }),
  }),
});

export const CreateActionSetSchema = StrictObject(
  {
    name: Type.String({ minLength: 1, maxLength: 255 }),
    description: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
    enabled: Type.Optional(Type.Boolean()),
    actorId: Type.Integer({ minimum: 1 }),
    match: StrictObject({
      source: Type.Literal('signal-endpoint', { errorMessage: 'source is signal-endpoint' }),
      sourceId: Type.Integer({ minimum: 1 }),
      payload: Type.Record(Type.String({ maxLength: 100 }), Type.Unknown(), { maxProperties: 20 }),
    }),
    actions: Type.Array(Action, { minItems: 1, maxItems: 20, errorMessage: 'an action set has 1 to 20 actions' }),
  },
  { $id: 'createActionSetSchema' },
);

export const ActionSetSchema = Type.Object(
  {
    id: Type.Integer(),
    project: Type.String(),
    name: Type.String(),
    description: Nullable(Type.String()),
    enabled: Type.Boolean(),
    actorId: Type.Integer(),
    match: Type.Object({ source: Type.String(), sourceId: Type.Integer(), payload: Type.Record(Type.String(), Type.Unknown()) }),
    actions: Type.Array(
      Type.Object({
        id: Type.Integer(),
        action: Type.String(),
        sortOrder: Type.Integer(),
        executionParams: Type.Record(Type.String(), Type.String()),
        createdAt: DateTime,
        createdByUserId: Type.Integer(),
      }),
    ),
    createdAt: DateTime,
    createdByUserId: Type.Integer(),
  },
  { $id: 'actionSetSchema' },
);

export const ActionSetsSchema = Type.Object({ actions: Type.Array(Type.Ref(ActionSetSchema)) }, { $id: 'actionSetsSchema' });

export const ActionSetEventSchema = Type.Object(
  {
    id: Type.Integer(),
    actionSetId: Type.Integer(),
    observableEventId: Type.Union([Type.Integer(), Type.Null()], { description: 'The signal the set ran on' }),
    createdAt: Type.String({ format: 'date-time' }),
    state: Type.String({ enum: ['success', 'failed'] }),
    message: Type.Union([Type.String(), Type.Null()], { description: 'Why it failed' }),
    observableEvent: Type.Union(
      [Type.Object({ id: Type.Integer(), payload: Type.Unknown(), createdAt: Type.String({ format: 'date-time' }) }), Type.Null()],
      { description: 'The signal, while its endpoint still keeps it (its last 1,000)' },
    ),
  },
  { $id: 'actionSetEventSchema' },
);

export const ActionSetEventsSchema = Type.Object(
  { actionSetEvents: Type.Array(Type.Ref(ActionSetEventSchema)) },
  { $id: 'actionSetEventsSchema' },
);

export const signalSchemas = [
  SignalEndpointTokenSchema,
  SignalEndpointSchema,
  SignalEndpointsSchema,
  CreateSignalEndpointSchema,
  CreateSignalEndpointTokenSchema,
  SignalsSchema,
  SignalReceivedSchema,
  CreateActionSetSchema,
  ActionSetSchema,
  ActionSetsSchema,
  ActionSetEventSchema,
  ActionSetEventsSchema,
];
