import type { Db } from '../../db/database.js';
import { MAINTENANCE_SETTING, maintenanceModeIn } from '../../db/maintenance-gate.js';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { recordEvent } from '../events/record-event.js';

/** Turns maintenance mode on or off; a change records `setting-updated`, which every instance hears. */
export async function setMaintenanceMode(uow: UnitOfWork, enabled: boolean): Promise<void> {
  const current = await maintenanceModeIn(uow.tx);
  if (current === enabled) return;
  await uow.tx
    .insertInto('settings')
    .values({ name: MAINTENANCE_SETTING, content: JSON.stringify({ enabled }) })
    .onConflict((oc) => oc.column('name').doUpdateSet({ content: JSON.stringify({ enabled }) }))
    .execute();
  await recordEvent(uow, {
    type: 'setting-updated',
    data: { id: MAINTENANCE_SETTING, enabled },
    preData: { id: MAINTENANCE_SETTING, enabled: current },
  });
}

/**
 * Whether the instance is in maintenance mode, as every admin write asks: read once and kept until a change of settings
 * is committed (on any instance). While the database cannot be read, it is not: the write then meets the database's own
 * answer.
 */
export class MaintenanceMode {
  private cached: Promise<boolean> | undefined;

  constructor(private readonly db: Db) {}

  enabled(): Promise<boolean> {
    this.cached ??= maintenanceModeIn(this.db).catch(() => {
      this.cached = undefined;
      return false;
    });
    return this.cached;
  }

  invalidate(): void {
    this.cached = undefined;
  }
}
