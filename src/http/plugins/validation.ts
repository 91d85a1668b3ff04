import { Ajv, type ErrorObject, type Options as AjvOptions, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchema, FastifyServerOptions } from 'fastify';

// ajv-formats is CommonJS; under NodeNext its default export arrives wrapped.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

/**
 * Two validators: bodies are JSON and must match exactly (no coercion, unknown properties rejected, never
 * stripped); query strings and path parameters are text, so numbers there are declared as digit strings and
 * a repeated parameter may be coerced into an array.
 */
function buildAjv(options: AjvOptions): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    removeAdditional: false,
    useDefaults: true,
    verbose: true, // errors carry the offending value and schema, so details can say what was sent
    strict: false,
    // A `oneOf` tagged by a property (a change request's `action`) validates only the branch the tag names,
    // so a bad payload is reported against its own schema instead of against every alternative.
    discriminator: true,
    ...options,
  });
  addFormats(ajv);
  // Annotation read by the error handler: a plain sentence to show instead of Ajv's generic message.
  ajv.addKeyword({ keyword: 'errorMessage', schemaType: 'string' });
  return ajv;
}

type ValidatorFactory = NonNullable<
  NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildValidator']
>;

interface Validators {
  /** Bodies: JSON, no coercion. */
  body: Ajv;
  /** Query strings, path parameters and headers: text, coerced. */
  text: Ajv;
}

/**
 * Fastify asks for a validator compiler in every plugin context (one per route module), each time with the
 * same shared schemas. Adding those to new Ajv instances each time cost most of a second of start-up, so the
 * instances are made once per set of schemas and shared: by every context, and by every app a process builds.
 */
const validatorsBySchemas = new Map<string, Validators>();

function validatorsFor(schemas: Array<{ $id?: string }>): Validators {
  const key = schemas
    .map((schema) => schema.$id ?? '')
    .sort()
    .join('\n');
  let validators = validatorsBySchemas.get(key);
  if (!validators) {
    validators = { body: buildAjv({ coerceTypes: false }), text: buildAjv({ coerceTypes: 'array' }) };
    for (const schema of schemas) {
      validators.body.addSchema(schema);
      validators.text.addSchema(schema);
    }
    validatorsBySchemas.set(key, validators);
  }
  return validators;
}

// Fastify calls the compiler with `{schema, httpPart, ...}` (its validatorCompiler contract); the published
// type of `buildValidator` describes Ajv's own compile signature instead, hence the cast.
function buildValidator(externalSchemas: Record<string, { $id?: string }>) {
  const validators = validatorsFor(Object.values(externalSchemas));
  return ({ schema, httpPart }: { schema: FastifySchema; httpPart?: string }) =>
    compiledOnFirstUse(() => (httpPart === 'body' ? validators.body : validators.text).compile(schema as object));
}

/**
 * A validator compiled when its route is first called rather than when the server starts: compiling the ~400
 * schemas of every route took over a second of each start-up, most of them for routes an instance may never
 * serve. Fastify reads a failed validation's problems from the function's `errors`, as Ajv sets them.
 */
function compiledOnFirstUse(compile: () => ValidateFunction): (data: unknown) => boolean {
  let compiled: ValidateFunction | undefined;
  const validate = (data: unknown): boolean => {
    compiled ??= compile();
    const valid = compiled(data) as boolean;
    validate.errors = compiled.errors;
    return valid;
  };
  validate.errors = undefined as ValidateFunction['errors'];
  return validate;
}

/**
 * Responses are written with JSON.stringify. Response schemas document the API (OpenAPI) and the tests hold the
 * handlers to them; compiling them into fast-json-stringify serializers re-validated every shared schema for
 * each of the ~150 routes and took 11 s of every start-up, for no gain on bodies this size.
 */
const buildSerializer = () => () => (data: unknown) => JSON.stringify(data);

export const schemaController: NonNullable<FastifyServerOptions['schemaController']> = {
  compilersFactory: { buildValidator: buildValidator as unknown as ValidatorFactory, buildSerializer },
};

/**
 * Validates a document that did not come through a route's schema, such as the result of a JSON Patch,
 * against a shared schema, reporting problems exactly as request validation does.
 */
let documentAjv: Ajv | undefined;

export function useSharedSchemas(schemas: Array<{ $id?: string }>): void {
  documentAjv = validatorsFor(schemas).body;
}

export function validateDocument(schema: { $id?: string }, value: unknown): ErrorObject[] {
  if (!documentAjv || !schema.$id) throw new Error('validateDocument needs a shared schema registered with useSharedSchemas');
  const validate = documentAjv.getSchema(schema.$id)!;
  return validate(value) ? [] : [...(validate.errors ?? [])];
}
