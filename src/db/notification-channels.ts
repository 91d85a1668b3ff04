/**
 * The NOTIFY channels of the database every Vexil instance shares. A commit that records an event notifies
 * them (domain/events/record-event.ts); whoever keeps state derived from the database listens.
 */

/**
 * A commit recorded events. The payload lists, comma separated, what they touched: the flags by name
 * (`flagChanged`), segments, everything SDKs read (`CHANGED_FLAGS`), and the other kinds of state (`CHANGED_*`),
 * so that each cache drops only what changed; a payload naming none of these changed nothing SDKs read.
 */
export const CONFIGURATION_CHANNEL = 'vexil_configuration';

/** Anything SDKs read may have changed (projects' environments, many flags at once…): reload it all. */
export const CHANGED_FLAGS = 'flags';
/** Segment definitions. */
export const CHANGED_SEGMENTS = 'segments';
const FLAG_PREFIX = 'flag:';
/** One flag (names are URL-friendly, so never hold a comma). */
export const flagChanged = (name: string) => `${FLAG_PREFIX}${name}`;
/** The flag a payload entry names, if it names one. */
export const changedFlagOf = (entry: string): string | undefined =>
  entry.startsWith(FLAG_PREFIX) ? entry.slice(FLAG_PREFIX.length) : undefined;

/** API tokens, or the environments and projects they are bound to: cached SDK credentials are dropped. */
export const CHANGED_ACCESS = 'access';
/** Instance settings (the frontend API's allowed origins). */
export const CHANGED_SETTINGS = 'settings';

/** Integration deliveries were queued: the delivery worker wakes up. */
export const DELIVERY_CHANNEL = 'vexil_integration_deliveries';
