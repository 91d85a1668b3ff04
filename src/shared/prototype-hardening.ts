/**
 * Keys that, written as a path or a property name, reach an object's prototype instead of the object: a library
 * that walks a user-given path through them (`__proto__.x`, `constructor.prototype.x`) changes every object of
 * the process. Paths and keys from requests are refused when any of their segments is one of these.
 */
const PROTOTYPE_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** The first segment of `segments` that reaches a prototype, compared as SCIM compares names (in any case). */
export function prototypeKeyIn(segments: Iterable<string>): string | undefined {
  for (const segment of segments) if (PROTOTYPE_KEYS.has(segment.toLowerCase())) return segment;
  return undefined;
}

/**
 * What a process does before it reads any request, so that the next prototype-pollution bug in a library is
 * harmless: `Object.prototype` takes no new property (the gadget every such bug needs is a property that objects
 * should not have, such as an option read from `{}`), and `__proto__` used as a property throws, as Node's
 * `--disable-proto=throw` makes it (which `npm start`, `npm run edge` and the container pass too; this covers a
 * process started any other way). Not frozen: freezing makes `toString` and its siblings read-only on every object,
 * and libraries that assign them to their own prototypes (ipaddr.js does, as it loads) then throw.
 */
export function hardenPrototypes(): void {
  if (!Object.isExtensible(Object.prototype)) return;
  const accessor = Object.getOwnPropertyDescriptor(Object.prototype, '__proto__');
  if (accessor?.get) {
    const refuse = (): never => {
      throw new TypeError('Object.prototype.__proto__ is disabled in Vexil (as with --disable-proto=throw)');
    };
    Object.defineProperty(Object.prototype, '__proto__', { get: refuse, set: refuse, configurable: false, enumerable: false });
  }
  Object.preventExtensions(Object.prototype);
}
