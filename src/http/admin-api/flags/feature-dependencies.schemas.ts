import { Type } from '@sinclair/typebox';
import { StrictObject, UrlFriendlyName } from '../../common.schemas.js';

export const CreateDependentFeatureSchema = StrictObject(
  {
    feature: UrlFriendlyName,
    enabled: Type.Optional(Type.Boolean()),
    variants: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 100, errorMessage: 'Each variant is a name of 1 to 100 characters' }), {
        maxItems: 100,
        uniqueItems: true,
        errorMessage: 'variants is a list of at most 100 distinct variant names',
      }),
    ),
  },
  { $id: 'createDependentFeatureSchema' },
);

export const ParentFeatureOptionsSchema = Type.Array(Type.String(), {
  $id: 'parentFeatureOptionsSchema',
  description: 'Names of the flags the flag could depend on',
});

export const ParentVariantOptionsSchema = Type.Array(Type.String(), {
  $id: 'parentVariantOptionsSchema',
  description: 'Variant names of the parent flag, from its strategies and environments',
});

export const dependencySchemas = [CreateDependentFeatureSchema, ParentFeatureOptionsSchema, ParentVariantOptionsSchema];
