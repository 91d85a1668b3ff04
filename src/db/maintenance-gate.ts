import { ServiceUnavailableError } from '../shared/errors.js';
import type { Db, Tx } from './database.js';

/** Unleash's name for the maintenance setting, and the `id` its `setting-updated` events carry. */
export const MAINTENANCE_SETTING = 'maintenance.mode';

/**
 * The writes that go on while maintenance mode is on, each for a reason an Admin turning it on would expect; every
 * other unit of work is refused before it changes anything. Named here, so that the list stays short and reviewed.
 */
export type MaintenanceExemption =
  /** Turning maintenance mode itself off again. */
  | 'the maintenance switch'
  /** Signing in: sessions, the sign-in audit, and accounts an identity provider creates as people sign in. */
  | 'sign-in'
  /**
   * What SDKs report (registrations, usage metrics, experiments' exposures and tracked events), the safeguards those
   * metrics trip, and the phase an experiment starts when its weights changed before.
   */
  | 'SDK reports'
  /** The outbox worker's record of each attempt to deliver events already committed. */
  | 'integration deliveries'
  /** Setting up an empty database at start. */
  | 'installation'
  /** The admin command's `reset-password`: an operator's way back in when no Admin can sign in. */
  | 'account recovery'
  /** The audit record of an export: reading goes on in maintenance, and who took the configuration out is still logged. */
  | 'the record of an export';

export const MAINTENANCE_MESSAGE =
  'Vexil is in maintenance mode: changes are refused until an Admin turns it off (POST /api/admin/maintenance)';

/** Whether maintenance mode is on, as the transaction sees it. */
export async function maintenanceModeIn(tx: Pick<Db, 'selectFrom'>): Promise<boolean> {
  const row = await tx.selectFrom('settings').select('content').where('name', '=', MAINTENANCE_SETTING).executeTakeFirst();
  return (row?.content as { enabled?: boolean } | undefined)?.enabled === true;
}

/** Refuses the unit of work while maintenance mode is on, unless it is one of the exempt kinds of writes. */
export async function assertWritesAllowed(tx: Tx, exemption: MaintenanceExemption | undefined): Promise<void> {
  if (exemption !== undefined) return;
  if (await maintenanceModeIn(tx)) throw new ServiceUnavailableError(MAINTENANCE_MESSAGE);
}
