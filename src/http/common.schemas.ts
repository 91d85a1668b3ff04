import { Type, type TObject, type TProperties, type ObjectOptions, type TSchema } from '@sinclair/typebox';

/** A request body object: unknown properties are a 400, never silently dropped. */
export function StrictObject<T extends TProperties>(properties: T, options: ObjectOptions = {}): TObject<T> {
  return Type.Object(properties, { additionalProperties: false, ...options });
}

/**
 * One of a fixed set of strings, as a JSON Schema `enum`: a wrong value is one problem with one message,
 * where a union of literals would report a failure per alternative.
 */
export function StringEnum<const T extends readonly string[]>(values: T, errorMessage: string) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], errorMessage });
}

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const DateTime = Type.String({ format: 'date-time' });

/** Unleash's rule for ids and names that appear in URLs. */
export const UrlFriendlyName = Type.String({
  minLength: 1,
  maxLength: 100,
  pattern: '^(?!\\.{1,2}$)[A-Za-z0-9~_.\\-]+$',
  errorMessage: 'Names must be 1 to 100 URL-friendly characters: letters, digits, "-", "_", "." and "~"',
});

/** Path ids of rows with integer keys. */
export const NumericId = Type.String({
  pattern: '^[0-9]{1,9}$',
  errorMessage: 'The id must be a positive whole number',
});

export const ErrorSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    message: Type.String(),
    details: Type.Array(Type.Object({ message: Type.String(), path: Type.Optional(Type.String()) })),
    permissions: Type.Optional(Type.Array(Type.String())),
    // A 401 of an admin path asked without a session: how to sign in, as Unleash describes it.
    type: Type.Optional(Type.Literal('password')),
    path: Type.Optional(Type.String()),
    defaultHidden: Type.Optional(Type.Boolean()),
    options: Type.Optional(Type.Array(Type.Object({ type: Type.String(), message: Type.String(), path: Type.String() }))),
  },
  { $id: 'errorSchema', description: "Unleash's error body, returned for every 4xx and 5xx answer" },
);

/** Shared components registered once with `addSchema` so routes refer to them and OpenAPI names them. */
export const commonSchemas = [ErrorSchema];

/** Error responses every authenticated route may give, for the OpenAPI document. */
export function errorResponses(...statuses: number[]) {
  return Object.fromEntries(statuses.map((status) => [status, Type.Ref(ErrorSchema)]));
}

/** A 304: the caller's ETag is current, so no body. */
export const NotModified = { type: 'null', description: 'Not modified: the ETag sent in If-None-Match is current' } as const;

/** Path parameters: a thing named by `:name`, numbered by `:id`, or a project's `:projectId`. */
export const NameParams = Type.Object({ name: UrlFriendlyName });
export const IdParams = Type.Object({ id: NumericId });
export const ProjectParams = Type.Object({ projectId: UrlFriendlyName });
