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
  /** Bodies: JSON, no coercion; stops at the first problem. */
  body: Ajv;
  /** The same, listing every problem: run only on a rejected body small enough (see `checkBody`). */
  bodyProblems: Ajv;
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
    validators = {
      body: buildAjv({ coerceTypes: false, allErrors: false }),
      bodyProblems: buildAjv({ coerceTypes: false }),
      text: buildAjv({ coerceTypes: 'array' }),
    };
    for (const schema of schemas) {
      validators.body.addSchema(schema);
      validators.bodyProblems.addSchema(schema);
      validators.text.addSchema(schema);
    }
    validatorsBySchemas.set(key, validators);
  }
  return validators;
}

/** A validation function as Fastify calls it: whether the data is valid, and the problems in `errors` if not. */
type Validator = ((data: unknown) => boolean) & Pick<ValidateFunction, 'errors'>;

// Fastify calls the compiler with `{schema, httpPart, ...}` (its validatorCompiler contract); the published
// type of `buildValidator` describes Ajv's own compile signature instead, hence the cast.
function buildValidator(externalSchemas: Record<string, { $id?: string }>) {
  const validators = validatorsFor(Object.values(externalSchemas));
  return ({ schema, httpPart }: { schema: FastifySchema; httpPart?: string }) =>
    httpPart === 'body'
      ? checkBody(
          compiledOnFirstUse(() => validators.body.compile(schema as object)),
          compiledOnFirstUse(() => validators.bodyProblems.compile(schema as object)),
        )
      : compiledOnFirstUse(() => validators.text.compile(schema as object));
}

/** A rejected body with at most this many values (list items and object members) has all its problems listed. */
export const MAX_VALUES_FOR_ALL_PROBLEMS = 5_000;

/** Whether `value` holds more than `limit` values at any depth; stops counting once past it. */
function holdsMoreValuesThan(value: unknown, limit: number): boolean {
  const pending = [value];
  let count = 0;
  while (pending.length > 0) {
    const next = pending.pop();
    if (next === null || typeof next !== 'object') continue;
    for (const item of Array.isArray(next) ? next : Object.values(next)) {
      if (++count > limit) return true;
      pending.push(item);
    }
  }
  return false;
}

/**
 * A body is checked by a validator that stops at its first problem, which is all a valid body costs. A rejected
 * one is checked again for every problem, so the client can mend them all at once, unless it holds more than
 * `MAX_VALUES_FOR_ALL_PROBLEMS` values: Ajv's all-problems mode copies its list of problems at each failing `$ref`,
 * and a body of 100,000 bad list items held the server's one thread for minutes. That body gets its first problem
 * (a list over its `maxItems` is found before its items are read).
 */
function checkBody(firstProblem: Validator, allProblems: Validator): Validator {
  const validate = (data: unknown): boolean => {
    if (firstProblem(data)) {
      validate.errors = null;
      return true;
    }
    if (holdsMoreValuesThan(data, MAX_VALUES_FOR_ALL_PROBLEMS)) {
      validate.errors = firstProblem.errors;
    } else {
      allProblems(data);
      validate.errors = allProblems.errors;
    }
    return false;
  };
  validate.errors = undefined as ValidateFunction['errors'];
  return validate;
}

/**
 * A validator compiled when its route is first called rather than when the server starts: compiling the ~400
 * schemas of every route took over a second of each start-up, most of them for routes an instance may never
 * serve. Fastify reads a failed validation's problems from the function's `errors`, as Ajv sets them.
 */
function compiledOnFirstUse(compile: () => ValidateFunction): Validator {
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
let documentValidators: Validators | undefined;

export function useSharedSchemas(schemas: Array<{ $id?: string }>): void {
  documentValidators = validatorsFor(schemas);
}

export function validateDocument(schema: { $id?: string }, value: unknown): ErrorObject[] {
  if (!documentValidators || !schema.$id) throw new Error('validateDocument needs a shared schema registered with useSharedSchemas');
  const { body, bodyProblems } = documentValidators;
  const validate = checkBody(body.getSchema(schema.$id) as ValidateFunction, bodyProblems.getSchema(schema.$id) as ValidateFunction);
  return validate(value) ? [] : [...(validate.errors ?? [])];
}

let jsonValidators: Ajv | undefined;

/** A validator of a JSON value, as bodies are checked, for a schema no route declares (an MCP tool's arguments). */
export function compileJsonValidator(schema: object): ValidateFunction {
  jsonValidators ??= buildAjv({ allErrors: false });
  return jsonValidators.compile(schema);
}
