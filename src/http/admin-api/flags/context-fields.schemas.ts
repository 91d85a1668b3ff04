import { Type } from '@sinclair/typebox';
import { MAX_LEGAL_VALUES } from '../../../domain/context-fields/context-fields.js';
import { StrategyUsage } from './segments.schemas.js';
import { DateTime, Nullable, StrictObject, UrlFriendlyName } from '../../common.schemas.js';

export const LegalValueSchema = StrictObject(
  {
    value: Type.String({ minLength: 1, maxLength: 100, errorMessage: 'A legal value is 1 to 100 characters' }),
    description: Type.Optional(Type.String({ maxLength: 1000 })),
  },
  { $id: 'legalValueSchema' },
);

export const ContextFieldSchema = Type.Object(
  {
    name: Type.String(),
    description: Nullable(Type.String()),
    legalValues: Type.Array(Type.Ref(LegalValueSchema)),
    stickiness: Type.Boolean(),
    sortOrder: Type.Integer(),
    createdAt: DateTime,
    project: Type.Optional(Type.String({ description: "The project the field belongs to; absent for the instance's fields" })),
  },
  { $id: 'contextFieldSchema' },
);

export const ContextFieldsSchema = Type.Array(Type.Ref(ContextFieldSchema), { $id: 'contextFieldsSchema' });

const updatableFields = {
  description: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
  legalValues: Type.Optional(Type.Array(Type.Ref(LegalValueSchema), { maxItems: MAX_LEGAL_VALUES })),
  stickiness: Type.Optional(Type.Boolean()),
  sortOrder: Type.Optional(Type.Integer({ minimum: -1_000_000, maximum: 1_000_000 })),
};

export const CreateContextFieldSchema = StrictObject(
  { name: UrlFriendlyName, ...updatableFields, project: Type.Optional(UrlFriendlyName) },
  { $id: 'createContextFieldSchema' },
);

/** A project's field is made in the project its path names. */
export const CreateProjectContextFieldSchema = StrictObject(
  { name: UrlFriendlyName, ...updatableFields },
  { $id: 'createProjectContextFieldSchema' },
);

export const ContextFieldsQuerySchema = Type.Object({
  include: Type.Optional(Type.Literal('project', { description: "`project`: every project's own fields too" })),
});

export const UpdateContextFieldSchema = StrictObject(updatableFields, { $id: 'updateContextFieldSchema' });

export const ContextFieldNameSchema = StrictObject({ name: UrlFriendlyName }, { $id: 'contextFieldNameSchema' });

export const ContextFieldStrategiesSchema = Type.Object({ strategies: Type.Array(StrategyUsage) }, { $id: 'contextFieldStrategiesSchema' });

export const contextFieldSchemas = [
  LegalValueSchema,
  ContextFieldSchema,
  ContextFieldsSchema,
  CreateContextFieldSchema,
  CreateProjectContextFieldSchema,
  UpdateContextFieldSchema,
  ContextFieldNameSchema,
  ContextFieldStrategiesSchema,
];
