import type { FastifyInstance } from 'fastify';
import { BadDataError } from '../../shared/errors.js';
import { prototypeKeyInValue } from '../../shared/prototype-hardening.js';

/** Deeper than any Vexil body needs (a change request payload is about six levels), far below the stack's limit. */
export const MAX_JSON_NESTING = 32;

/**
 * The deepest nesting of arrays and objects in a JSON text, counted in one pass without parsing, so that a body
 * nested thousands deep is refused before anything recursive (parser, validator, error rendering) sees it.
 * Stops counting once `limit` is passed.
 */
export function jsonNestingDepth(text: string, limit: number): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const char = text.charCodeAt(i);
    if (inString) {
      if (char === 0x5c /* \ */) i++;
      else if (char === 0x22 /* " */) inString = false;
    } else if (char === 0x22) {
      inString = true;
    } else if (char === 0x5b /* [ */ || char === 0x7b /* { */) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > limit) return deepest;
      }
    } else if (char === 0x5d /* ] */ || char === 0x7d /* } */) {
      depth--;
    }
  }
  return deepest;
}

/**
 * Only JSON bodies are accepted (anything else is a 415). An empty body with a JSON content type is read as no
 * body, because some clients send the header on every DELETE; routes that need a body then say so.
 */
export function registerJsonBodyParser(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  // SCIM clients send their JSON as application/scim+json (RFC 7644 §3.1).
  app.addContentTypeParser(['application/json', 'application/scim+json'], { parseAs: 'string' }, (request, body, done) => {
    const text = body.toString();
    if (text === '') return done(null, undefined);
    // PostgreSQL cannot store NUL in text or jsonb; refuse it here with a clear 400 rather than fail in SQL.
    if (/\\u0000/i.test(text)) {
      return done(new BadDataError('Text in the request may not contain the NUL character (\\u0000)'), undefined);
    }
    if (jsonNestingDepth(text, MAX_JSON_NESTING) > MAX_JSON_NESTING) {
      return done(
        new BadDataError(`The request body is nested too deeply: at most ${MAX_JSON_NESTING} levels of arrays and objects`, [
          { path: '/body', message: `nesting deeper than ${MAX_JSON_NESTING} levels` },
        ]),
        undefined,
      );
    }
    return parseJson(request, text, (error, body) => {
      // Fastify's parser (secure-json-parse) refuses `__proto__` and `constructor` keys; the walk below also refuses
      // them at any depth as segments of a dotted key, which libraries walking key paths would follow.
      const refusedByParser = error !== null && /"(__proto__|constructor)"\s*:/.test(text);
      const prototypeKey = refusedByParser
        ? { key: '__proto__" or "constructor', at: '/body' }
        : error
          ? undefined
          : prototypeKeyInValue(body, '/body');
      if (prototypeKey) {
        return done(
          new BadDataError(
            `The request body uses "${prototypeKey.key}" as a key, which reaches an object's prototype and no Vexil body has`,
            [{ path: prototypeKey.at, message: "keys that reach an object's prototype (__proto__, constructor, prototype) are refused" }],
          ),
          undefined,
        );
      }
      return done(error, body);
    });
  });
}
