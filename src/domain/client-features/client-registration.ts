import { sql } from 'kysely';
import { pruneUsage } from '../usage/client-metrics.js';
import type { Db } from '../../db/database.js';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { recordEvent } from '../events/record-event.js';
import type { NewApplicationLimit } from './new-application-limit.js';

const HOUR_MS = 3_600_000;
/** Deleted per statement, so a large backlog never holds long locks. */
const PRUNE_BATCH = 5_000;

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
  const created = await upsertApplication(uow, registration.appName, registration.strategies);
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
  if (created) {
    await recordApplicationCreated(uow, {
      appName: registration.appName,
      instanceId: registration.instanceId,
      environment: registration.environment,
      sdkVersion: registration.sdkVersion ?? null,
      strategies: registration.strategies,
    });
  }
  return { created };
}

/** The application's row made or marked seen; true when this call made it. Strategies are kept unless given. */
async function upsertApplication(uow: UnitOfWork, appName: string, strategies: string[] | undefined): Promise<boolean> {
  const inserted = await uow.tx
    .insertInto('client_applications')
    .values({ app_name: appName, strategies: strategies ?? [], created_at: uow.now, seen_at: uow.now })
    .onConflict((oc) => oc.column('app_name').doUpdateSet(strategies ? { strategies, seen_at: uow.now } : { seen_at: uow.now }))
    .returning(sql<boolean>`(xmax = 0)`.as('inserted'))
    .executeTakeFirstOrThrow();
  // xmax is 0 on a row this statement inserted, and set on one it updated.
  return inserted.inserted;
}

function recordApplicationCreated(
  uow: UnitOfWork,
  data: { appName: string; instanceId: string; environment: string; sdkVersion: string | null; strategies: string[] },
) {
  return recordEvent(uow, { type: 'application-created', environment: data.environment, data });
}

/**
 * Counts a new application against the token's limit per minute and the most applications Vexil keeps, or
 * refuses it with a 429; the caller's unit of work (with the application it made) then rolls back.
 */
async function admitNewApplication(uow: UnitOfWork, tokenId: number, limit: NewApplicationLimit): Promise<void> {
  limit.admit(tokenId, uow.now);
  const { n } = await uow.tx
    .selectFrom('client_applications')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  limit.assertRoom(Number(n));
}

/**
 * Registers what one token's SDKs report, in order; a new application beyond the token's limit, or beyond the
 * most Vexil keeps, is refused with a 429, and the unit of work (with what it registered) rolls back.
 */
export async function registerClients(
  uow: UnitOfWork,
  tokenId: number,
  registrations: ClientRegistration[],
  limit: NewApplicationLimit,
): Promise<void> {
  for (const registration of registrations) {
    const { created } = await registerClient(uow, registration);
    if (created) await admitNewApplication(uow, tokenId, limit);
  }
}

/**
 * The application a metrics report comes from, marked seen. Frontend SDKs never register, so their first report
 * makes the application (recorded as `application-created`) and counts as a new application of the token, under
 * the same limits as a registration: usage and the names it asked for are kept only for admitted applications.
 */
export async function admitReportingApplication(
  uow: UnitOfWork,
  tokenId: number,
  report: { appName: string; instanceId: string; environment: string },
  limit: NewApplicationLimit,
): Promise<void> {
  if (!(await upsertApplication(uow, report.appName, undefined))) return;
  await admitNewApplication(uow, tokenId, limit);
  await recordApplicationCreated(uow, { ...report, sdkVersion: null, strategies: [] });
}

/**
 * Forgets SDK instances not seen for `instanceRetentionHours`, and applications (with their instances) not seen
 * for `applicationRetentionDays`, in batches; returns how many rows went.
 */
export async function pruneClientBookkeeping(
  db: Db,
  now: Date,
  retention: { instanceRetentionHours: number; applicationRetentionDays: number },
): Promise<{ instances: number; applications: number }> {
  const instanceCutoff = new Date(now.getTime() - retention.instanceRetentionHours * HOUR_MS);
  const applicationCutoff = new Date(now.getTime() - retention.applicationRetentionDays * 24 * HOUR_MS);
  let applications = 0;
  for (;;) {
    const result = await db
      .deleteFrom('client_applications')
      .where('app_name', 'in', (eb) =>
        eb.selectFrom('client_applications').select('app_name').where('seen_at', '<', applicationCutoff).limit(PRUNE_BATCH),
      )
      .executeTakeFirst();
    const count = Number(result.numDeletedRows);
    applications += count;
    if (count < PRUNE_BATCH) break;
  }
  let instances = 0;
  for (;;) {
    // The key has three columns; the row address picks a batch of rows without restating it.
    const result = await sql`
      DELETE FROM client_instances WHERE ctid IN (
        SELECT ctid FROM client_instances WHERE seen_at < ${instanceCutoff} LIMIT ${PRUNE_BATCH})`.execute(db);
    const count = Number(result.numAffectedRows ?? 0);
    instances += count;
    if (count < PRUNE_BATCH) break;
  }
  await pruneUsage(db, now, applicationCutoff);
  return { instances, applications };
}

/**
 * Forgets an application and its instances (Unleash's `DELETE /api/admin/metrics/applications/:appName`): 200 whether or
 * not it was known, as in Unleash. An SDK that still runs registers it again at its next report.
 */
export async function deleteApplication(uow: UnitOfWork, appName: string): Promise<void> {
  const deleted = await uow.tx.deleteFrom('client_applications').where('app_name', '=', appName).returning('app_name').executeTakeFirst();
  if (deleted) await recordEvent(uow, { type: 'application-deleted', preData: { appName } });
}
