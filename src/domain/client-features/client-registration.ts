import { sql } from 'kysely';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { recordEvent } from '../events/record-event.js';

/** An SDK's registration (Unleash's client registration format), as stored. */
export interface ClientRegistration {
  appName: string;
  instanceId: string;
  environment: string;
  sdkVersion?: string;
  strategies: string[];
  started?: Date;
  intervalMs?: number;
  clientIp: string;
}

/**
 * Registers an application and its instance. The first registration of an application records
 * `application-created`; later ones refresh what it reports and when it was seen.
 */
export async function registerClient(uow: UnitOfWork, registration: ClientRegistration): Promise<{ created: boolean }> {
  const inserted = await uow.tx
    .insertInto('client_applications')
    .values({ app_name: registration.appName, strategies: registration.strategies, created_at: uow.now, seen_at: uow.now })
    .onConflict((oc) => oc.column('app_name').doUpdateSet({ strategies: registration.strategies, seen_at: uow.now }))
    .returning(sql<boolean>`(xmax = 0)`.as('inserted'))
    .executeTakeFirstOrThrow();
  await uow.tx
    .insertInto('client_instances')
    .values({
      app_name: registration.appName,
      instance_id: registration.instanceId,
      environment: registration.environment,
      sdk_version: registration.sdkVersion ?? null,
      client_ip: registration.clientIp,
      started_at: registration.started ?? null,
      interval_ms: registration.intervalMs ?? null,
      created_at: uow.now,
      seen_at: uow.now,
    })
    .onConflict((oc) =>
      oc.columns(['app_name', 'instance_id', 'environment']).doUpdateSet((eb) => ({
        sdk_version: eb.ref('excluded.sdk_version'),
        client_ip: eb.ref('excluded.client_ip'),
        started_at: eb.ref('excluded.started_at'),
        interval_ms: eb.ref('excluded.interval_ms'),
        seen_at: eb.ref('excluded.seen_at'),
      })),
    )
    .execute();
  // xmax is 0 on a row this statement inserted, and set on one it updated.
  const created = inserted.inserted;
  if (created) {
    await recordEvent(uow, {
      type: 'application-created',
      environment: registration.environment,
      data: {
        appName: registration.appName,
        instanceId: registration.instanceId,
        environment: registration.environment,
        sdkVersion: registration.sdkVersion ?? null,
        strategies: registration.strategies,
      },
    });
  }
  return { created };
}
