/**
 * The NOTIFY channels of the database every Vexil instance shares. A commit that records an event notifies
 * them (domain/events/record-event.ts); whoever keeps state derived from the database listens.
 */

/** Something SDKs read may have changed: the client-feature store rebuilds what it holds. */
export const CONFIGURATION_CHANNEL = 'vexil_configuration';

/** Integration deliveries were queued: the delivery worker wakes up. */
export const DELIVERY_CHANNEL = 'vexil_integration_deliveries';
