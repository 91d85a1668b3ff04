import { Type } from '@sinclair/typebox';
import { PARAMETER_TYPES } from '../../../domain/strategies/strategy-definitions.js';
import { Nullable, StrictObject, UrlFriendlyName } from '../../common.schemas.js';

export const StrategyParameterSchema = Type.Object(
  {
    name: Type.String(),
    type: Type.Union(PARAMETER_TYPES.map((type) => Type.Literal(type))),
    description: Type.String(),
    required: Type.Boolean(),
  },
  { $id: 'strategyParameterSchema' },
);

export const StrategyDefinitionSchema = Type.Object(
  {
    name: Type.String(),
    title: Nullable(Type.String()),
    displayName: Type.String(),
    description: Type.String(),
    editable: Type.Boolean(),
    deprecated: Type.Boolean(),
    parameters: Type.Array(Type.Ref(StrategyParameterSchema)),
  },
  { $id: 'strategySchema' },
);

export const StrategiesSchema = Type.Object(
  { version: Type.Literal(1), strategies: Type.Array(Type.Ref(StrategyDefinitionSchema)) },
  { $id: 'strategiesSchema' },
);

const ParameterInput = StrictObject({
  name: Type.String({
    minLength: 1,
    maxLength: 100,
    pattern: '\\S',
    errorMessage: 'A parameter name is 1 to 100 characters, not only spaces',
  }),
  type: Type.Union(
    PARAMETER_TYPES.map((type) => Type.Literal(type)),
    {
      errorMessage: `type must be one of ${PARAMETER_TYPES.join(', ')}`,
    },
  ),
  description: Type.Optional(Type.String({ maxLength: 1000 })),
  required: Type.Optional(Type.Boolean()),
});

const updatableFields = {
  title: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
  description: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
  parameters: Type.Optional(Type.Array(ParameterInput, { maxItems: 50 })),
};

export const CreateStrategySchema = StrictObject(
  {
    name: UrlFriendlyName,
    ...updatableFields,
    // Unleash's create body carries it; a strategy a user defines is always editable.
    editable: Type.Optional(Type.Literal(true, { errorMessage: 'A strategy you define is always editable' })),
    deprecated: Type.Optional(Type.Boolean()),
  },
  { $id: 'createStrategySchema' },
);

export const UpdateStrategySchema = StrictObject(
  { ...updatableFields, name: Type.Optional(Type.String()) },
  { $id: 'updateStrategySchema' },
);

export const strategyDefinitionSchemas = [
  StrategyParameterSchema,
  StrategyDefinitionSchema,
  StrategiesSchema,
  CreateStrategySchema,
  UpdateStrategySchema,
];
