/**
 * The NOTIFY channels of the database every Vexil instance shares. A commit that records an event notifies
 * them (domain/events/record-event.ts); whoever keeps state derived from the database listens.
 */

/**
 * Something SDKs read may have changed: the client-feature store rebuilds what it holds. The payload lists, comma
 * separated, the other kinds of state the commit touched (`CHANGED_*`), so caches of those alone are dropped.
 */
export const CONFIGURATION_CHANNEL = 'vexil_configuration';

/** API tokens, or the environments and projects they are bound to: cached SDK credentials are dropped. */
export const CHANGED_ACCESS = 'access';
/** Instance settings (the frontend API's allowed origins). */
export const CHANGED_SETTINGS = 'settings';

/** Integration deliveries were queued: the delivery worker wakes up. */
export const DELIVERY_CHANNEL = 'vexil_integration_deliveries';
