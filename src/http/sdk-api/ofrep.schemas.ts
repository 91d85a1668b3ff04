import { Type } from '@sinclair/typebox';

/** OpenFeature's evaluation context: a targeting key and attributes (strings, numbers, booleans). */
const Context = Type.Object(
  {
    targetingKey: Type.Optional(Type.String({ maxLength: 1000, errorMessage: 'targetingKey must be a string' })),
  },
  { additionalProperties: true, maxProperties: 100, errorMessage: 'context must be an object of at most 100 attributes' },
);

export const OfrepEvaluationRequestSchema = Type.Object(
  { context: Type.Optional(Context) },
  { $id: 'ofrepEvaluationRequest', additionalProperties: true },
);

const Evaluation = {
  key: Type.String(),
  value: Type.Unknown({ description: 'The flag state (boolean), or its variant payload (string, number, object) or name' }),
  reason: Type.String({ enum: ['STATIC', 'TARGETING_MATCH', 'SPLIT', 'DISABLED', 'DEFAULT'] }),
  variant: Type.String(),
  metadata: Type.Object({ project: Type.String(), flagType: Type.String() }),
};

export const OfrepEvaluationSuccessSchema = Type.Object(Evaluation, { $id: 'ofrepEvaluationSuccess' });

export const OfrepBulkEvaluationSchema = Type.Object(
  {
    flags: Type.Array(Type.Object(Evaluation)),
    metadata: Type.Object({ revision: Type.Integer() }),
    eventStreams: Type.Array(
      Type.Object({
        type: Type.Literal('sse'),
        endpoint: Type.Object({ requestUri: Type.String({ description: 'Relative to the OFREP base URL' }) }),
        inactivityDelaySec: Type.Integer(),
      }),
    ),
  },
  { $id: 'ofrepBulkEvaluationSuccess' },
);

/** OFREP's error body: the flag's key when one was asked for, a code from OFREP's list, and the reason in words. */
export const OfrepErrorSchema = Type.Object(
  {
    key: Type.Optional(Type.String()),
    errorCode: Type.String({ enum: ['PARSE_ERROR', 'INVALID_CONTEXT', 'FLAG_NOT_FOUND', 'GENERAL'] }),
    errorDetails: Type.String(),
  },
  { $id: 'ofrepError' },
);

export const ofrepSchemas = [OfrepEvaluationRequestSchema, OfrepEvaluationSuccessSchema, OfrepBulkEvaluationSchema, OfrepErrorSchema];
