import { sql, type Selectable } from 'kysely';
import type { AddonsTable } from '../../db/schema.js';
import { findProvider } from './providers/index.js';
import { NotFoundError } from '../../shared/errors.js';
import type { Db } from '../../db/database.js';

/** What a sensitive parameter reads back as; sent back unchanged on update, it keeps the stored value. */
export const MASKED_VALUE = '*****';

/** A configuration as Unleash's `addonSchema` shows it (plus `updatedAt`), sensitive parameters masked. */
export interface AddonView {
  id: number;
  provider: string;
  description: string;
  enabled: boolean;
  parameters: Record<string, string>;
  events: string[];
  projects: string[];
  environments: string[];
  createdAt: string;
  updatedAt: string;
  /** When the signing secret in use was made: the secret itself is shown only when made. */
  signingSecretCreatedAt: string;
}

/** How deliveries to a configuration are going (Vexil's addition to `GET /api/admin/addons/:id`). */
export interface DeliverySummary {
  /** Deliveries not finished yet: due, in flight, waiting for a retry, or paused while the configuration is disabled. */
  pending: number;
  /** The last attempt that delivered (`success` or `successWithErrors`). */
  lastSuccessAt: string | null;
  lastFailureAt: string | null;
}

export type AddonWithDeliveries = AddonView & { deliveries: DeliverySummary };

export function isSensitiveParameter(provider: string, name: string): boolean {
  const definition = findProvider(provider)?.definition.parameters.find((parameter) => parameter.name === name);
  // A parameter no provider defines (a provider removed since) is treated as a secret: nothing leaks by default.
  return definition?.sensitive ?? true;
}

export function maskParameters(provider: string, parameters: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(parameters).map(([name, value]) => [name, value !== '' && isSensitiveParameter(provider, name) ? MASKED_VALUE : value]),
  );
}

export function toAddonView(row: Selectable<AddonsTable>): AddonView {
  return {
    id: row.id,
    provider: row.provider,
    description: row.description,
    enabled: row.enabled,
    parameters: maskParameters(row.provider, row.parameters),
    events: row.events,
    projects: row.projects,
    environments: row.environments,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    signingSecretCreatedAt: row.signing_secret_created_at.toISOString(),
  };
}

export async function listAddons(db: Db): Promise<AddonView[]> {
  const rows = await db.selectFrom('addons').selectAll().orderBy('id').execute();
  return rows.map(toAddonView);
}

/** The stored configuration `id`, secrets included, locked for the caller's transaction when asked. */
export async function findAddonRow(db: Db, id: number, lock = false): Promise<Selectable<AddonsTable>> {
  let query = db.selectFrom('addons').selectAll().where('id', '=', id);
  if (lock) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  if (!row) throw new NotFoundError(`Could not find integration configuration ${id}`);
  return row;
}

/** The newest integration event of a configuration in one state: one short index scan each. */
function lastAttemptAt(id: number, state: 'success' | 'successWithErrors' | 'failed') {
  return sql<Date | null>`(SELECT created_at FROM integration_events
    WHERE integration_id = ${id} AND state = ${state} ORDER BY id DESC LIMIT 1)`;
}

export async function getAddonWithDeliveries(db: Db, id: number): Promise<AddonWithDeliveries> {
  const row = await findAddonRow(db, id);
  const summary = await db
    .selectNoFrom([
      sql<number>`(SELECT count(*) FROM addon_deliveries WHERE addon_id = ${id})::int8`.as('pending'),
      sql<Date | null>`greatest(${lastAttemptAt(id, 'success')}, ${lastAttemptAt(id, 'successWithErrors')})`.as('last_success_at'),
      lastAttemptAt(id, 'failed').as('last_failure_at'),
    ])
    .executeTakeFirstOrThrow();
  return {
    ...toAddonView(row),
    deliveries: {
      pending: summary.pending,
      lastSuccessAt: summary.last_success_at?.toISOString() ?? null,
      lastFailureAt: summary.last_failure_at?.toISOString() ?? null,
    },
  };
}
