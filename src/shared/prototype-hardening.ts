/**
 * Keys that, written as a path or a property name, reach an object's prototype instead of the object: a library
 * that walks a user-given path through them (`__proto__.x`, `constructor.prototype.x`) changes every object of
 * the process. Paths and keys from requests are refused when any of their segments is one of these.
 */
const PROTOTYPE_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** What separates the segments of a key path as libraries read them: `a.b`, `a[b]`, `a/b`, `emails[type eq "x"].value`. */
const PATH_SEPARATORS = /[^A-Za-z0-9_$]+/;

/** The first segment of `segments` that reaches a prototype, compared as SCIM compares names (in any case). */
export function prototypeKeyIn(segments: Iterable<string>): string | undefined {
  for (const segment of segments) if (PROTOTYPE_KEYS.has(segment.toLowerCase())) return segment;
  return undefined;
}

/** The segment of a key or key path (`constructor.prototype.toString`) that reaches a prototype, if any. */
export function prototypeSegmentOf(keyPath: string): string | undefined {
  return prototypeKeyIn(keyPath.split(PATH_SEPARATORS));
}

/**
 * The first key, at any depth of a parsed JSON value, that names a prototype itself or as a segment of a dotted
 * path (libraries such as scim-patch walk `{"constructor.prototype.x": …}` as a path), with where it stands.
 */
export function prototypeKeyInValue(value: unknown, at = ''): { key: string; at: string } | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      const found = prototypeKeyInValue(value[index], `${at}/${index}`);
      if (found) return found;
    }
    return undefined;
  }
  for (const key of Object.keys(value)) {
    if (prototypeSegmentOf(key) !== undefined) return { key, at: `${at}/${key}` };
    const found = prototypeKeyInValue((value as Record<string, unknown>)[key], `${at}/${key}`);
    if (found) return found;
  }
  return undefined;
}

/**
 * Makes `proto`'s own data properties (those in `names`, or all) read-only for `proto` itself while an object that
 * inherits one may still set its own, as assignment did before: freezing a prototype alone would make
 * `error.message = …` or `object.toString = …` throw on every object below it (the "override mistake").
 */
function keepOverridable(proto: object, names?: ReadonlySet<PropertyKey>): void {
  for (const key of Reflect.ownKeys(proto)) {
    if (names && !names.has(key)) continue;
    const descriptor = Object.getOwnPropertyDescriptor(proto, key)!;
    if (!('value' in descriptor) || !descriptor.writable || !descriptor.configurable) continue;
    const { value } = descriptor;
    Object.defineProperty(proto, key, {
      configurable: false,
      enumerable: descriptor.enumerable ?? false,
      get: () => value,
      set(this: object, replacement: unknown) {
        if (this === proto) throw new TypeError(`${String(key)} of a built-in prototype cannot be changed in Vexil`);
        Object.defineProperty(this, key, { value: replacement, writable: true, enumerable: true, configurable: true });
      },
    });
  }
}

/**
 * What an object below these prototypes commonly sets for itself. `constructor` is left a data property on the
 * prototypes whose species V8 watches (arrays, promises, regular expressions, maps and sets): an accessor there would
 * turn off V8's fast paths for `map`, `filter` and `then` in the whole process (measured: four times slower).
 */
const OWN_OVERRIDES: ReadonlySet<PropertyKey> = new Set(['toString', 'toLocaleString', 'valueOf', 'toJSON']);
const ERROR_OVERRIDES: ReadonlySet<PropertyKey> = new Set([...OWN_OVERRIDES, 'constructor', 'name', 'message']);

const BUILT_IN_PROTOTYPES: ReadonlyArray<{ proto: object; overrides: ReadonlySet<PropertyKey> }> = [
  ...[Function, Array, String, Number, Boolean, Symbol, BigInt, RegExp, Date, Promise, Map, Set, WeakMap, WeakSet].map((builtIn) => ({
    proto: builtIn.prototype as object,
    overrides: OWN_OVERRIDES,
  })),
  ...[Error, TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError, AggregateError].map((builtIn) => ({
    proto: builtIn.prototype as object,
    overrides: ERROR_OVERRIDES,
  })),
];

/**
 * What every Vexil process does before it reads any request (the server, the edge, the `vexil` command and the admin
 * command alike), so that the next prototype-pollution bug in a library is harmless: `__proto__` used as a property
 * throws, as Node's `--disable-proto=throw` makes it; `Object.prototype` and the other built-in prototypes are
 * frozen, so a walk through `constructor.prototype` can neither add a property (the gadget such bugs need) nor replace
 * `hasOwnProperty` or `toString` under every object (which took a server down); objects below them still set their
 * own `toString` or `message`. `refuseProtoAccessor: false` is for browser tests alone (see test/helpers/browser.ts).
 */
export function hardenPrototypes(options: { refuseProtoAccessor?: boolean } = {}): void {
  if (Object.isFrozen(Object.prototype)) return;
  const accessor = Object.getOwnPropertyDescriptor(Object.prototype, '__proto__');
  if (accessor?.get && options.refuseProtoAccessor !== false) {
    const refuse = (): never => {
      throw new TypeError('Object.prototype.__proto__ is disabled in Vexil (as with --disable-proto=throw)');
    };
    Object.defineProperty(Object.prototype, '__proto__', { get: refuse, set: refuse, configurable: false, enumerable: false });
  }
  keepOverridable(Object.prototype);
  Object.freeze(Object.prototype);
  for (const { proto, overrides } of BUILT_IN_PROTOTYPES) {
    keepOverridable(proto, overrides);
    Object.freeze(proto);
  }
}
