import { isDeepStrictEqual } from 'node:util';
import { type Selectable, sql } from 'kysely';
import type { AddonsTable } from '../../db/schema.js';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { assertPublicUrl, BlockedAddressError } from './outbound-safety.js';
import { ADDON_PROVIDERS, findProvider } from './providers/index.js';
import { newSigningSecret, PREVIOUS_SECRET_GRACE_MS } from './webhook-signature.js';
import { BadDataError, type ErrorDetail, NotFoundError } from '../../shared/errors.js';
import { isEventType } from '../events/event-types.js';
import { recordEvent } from '../events/record-event.js';
import { ensureTagType } from '../tags/tag-types.js';
import type { Db, LockingHandle } from '../../db/database.js';

/** Unleash's `addonCreateUpdateSchema`. */
export interface AddonInput {
  provider: string;
  description?: string | null;
  enabled: boolean;
  parameters: Record<string, string>;
  /** Event types to deliver; empty delivers every type. */
  events: string[];
  /** Projects whose events are delivered; empty (or `*`) delivers every project's. */
  projects?: string[];
  /** Environments whose events are delivered; empty (or `*`) delivers every environment's. */
  environments?: string[];
}

/** `*` in a filter means "all", as Unleash's UI sends it. */
const WILDCARD = '*';
const MAX_URL_LENGTH = 2048;

function rejectAll(details: ErrorDetail[]): void {
  if (details.length === 0) return;
  const summary = details.length === 1 ? details[0]!.message : `The configuration has ${details.length} problems; see details`;
  throw new BadDataError(`Invalid integration configuration: ${summary}`, details);
}

/** A sensitive parameter sent back as the mask: the client means "keep the stored value". */
function keepsStoredValue(provider: string, name: string, value: string): boolean {
  return value === MASKED_VALUE && isSensitiveParameter(provider, name);
}

function urlProblem(name: string, value: string): ErrorDetail | undefined {
  const path = `/body/parameters/${name}`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { path, message: `${name} must be an absolute http or https URL (got ${JSON.stringify(value.slice(0, 100))})` };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { path, message: `${name} must be an http or https URL (got a ${url.protocol} URL)` };
  }
  if (url.username || url.password) {
    return { path, message: `${name} may not carry credentials; use the authorization or customHeaders parameters` };
  }
  if (value.length > MAX_URL_LENGTH) return { path, message: `${name} may be at most ${MAX_URL_LENGTH} characters` };
  return undefined;
}

/**
 * Every check that needs neither the database nor the network, all problems at once: a known provider, only its
 * parameters, the required ones present, URLs well-formed, the provider's own rules, known event types.
 */
export function validateAddonInput(input: AddonInput): void {
  const provider = findProvider(input.provider);
  if (!provider) {
    const known = [...ADDON_PROVIDERS.keys()].join(', ');
    throw new BadDataError(`Unknown integration provider "${input.provider}"; use one of ${known}`, [
      { path: '/body/provider', message: `provider must be one of ${known} (got ${JSON.stringify(input.provider)})` },
    ]);
  }
  const details: ErrorDetail[] = [];
  const definitions = provider.definition.parameters;
  for (const name of Object.keys(input.parameters)) {
    if (!definitions.some((definition) => definition.name === name)) {
      details.push({
        path: `/body/parameters/${name}`,
        message: `"${name}" is not a parameter of ${input.provider}; it takes ${definitions.map((d) => d.name).join(', ')}`,
      });
    }
  }
  for (const definition of definitions) {
    const value = input.parameters[definition.name];
    if (value === undefined || value.trim() === '') {
      if (definition.required)
        details.push({ path: `/body/parameters/${definition.name}`, message: `"${definition.name}" is required by ${input.provider}` });
      continue;
    }
    if (definition.type === 'url' && !keepsStoredValue(input.provider, definition.name, value)) {
      const problem = urlProblem(definition.name, value);
      if (problem) details.push(problem);
    }
  }
  details.push(...provider.validate(input.parameters));
  input.events.forEach((type, index) => {
    if (!isEventType(type)) details.push({ path: `/body/events/${index}`, message: `Unknown event type ${JSON.stringify(type)}` });
  });
  rejectAll(details);
}

/**
 * The outbound-safety check of the URLs a configuration names, which resolves host names: run it before the
 * unit of work, never inside a transaction. Masked values were checked when they were stored.
 */
export async function assertAddonUrlsAllowed(input: AddonInput, allowPrivateNetworks: boolean): Promise<void> {
  if (allowPrivateNetworks) return;
  const definitions = findProvider(input.provider)?.definition.parameters ?? [];
  const details: ErrorDetail[] = [];
  for (const definition of definitions.filter((d) => d.type === 'url')) {
    const value = input.parameters[definition.name];
    if (value === undefined || value.trim() === '' || keepsStoredValue(input.provider, definition.name, value)) continue;
    try {
      await assertPublicUrl(new URL(value));
    } catch (error) {
      if (!(error instanceof BlockedAddressError)) throw error;
      details.push({ path: `/body/parameters/${definition.name}`, message: `${definition.name} is not allowed: ${error.message}` });
    }
  }
  rejectAll(details);
}

const unique = (values: string[]) => [...new Set(values)];

/** Projects and environments named in filters must exist (`*` aside): a filter naming nothing would silently match nothing. */
async function assertFilterTargetsExist(uow: UnitOfWork, projects: string[], environments: string[]): Promise<void> {
  const wantedProjects = projects.filter((project) => project !== WILDCARD);
  const wantedEnvironments = environments.filter((environment) => environment !== WILDCARD);
  const [knownProjects, knownEnvironments] = await Promise.all([
    wantedProjects.length === 0 ? [] : uow.tx.selectFrom('projects').select('id').where('id', 'in', wantedProjects).execute(),
    wantedEnvironments.length === 0
      ? []
      : uow.tx.selectFrom('environments').select('name').where('name', 'in', wantedEnvironments).execute(),
  ]);
  const details: ErrorDetail[] = [];
  const projectIds = new Set(knownProjects.map((row) => row.id));
  const environmentNames = new Set(knownEnvironments.map((row) => row.name));
  projects.forEach((project, index) => {
    if (project !== WILDCARD && !projectIds.has(project))
      details.push({ path: `/body/projects/${index}`, message: `Unknown project ${JSON.stringify(project)}` });
  });
  environments.forEach((environment, index) => {
    if (environment !== WILDCARD && !environmentNames.has(environment)) {
      details.push({ path: `/body/environments/${index}`, message: `Unknown environment ${JSON.stringify(environment)}` });
    }
  });
  rejectAll(details);
}

/**
 * Replaces masks with the stored secrets; a mask with nothing stored behind it is a 400. So is a mask beside a
 * changed URL: the stored secrets were given for the old destination, and whoever may edit the configuration
 * could otherwise point it at their own server and have the secrets delivered there. Secrets go to a new
 * destination only when sent again.
 */
function unmaskParameters(input: AddonInput, stored: Selectable<AddonsTable> | undefined): Record<string, string> {
  const details: ErrorDetail[] = [];
  const sameProvider = stored?.provider === input.provider;
  const parameters = Object.fromEntries(
    Object.entries(input.parameters).map(([name, value]) => {
      if (!keepsStoredValue(input.provider, name, value)) return [name, value];
      const kept = sameProvider ? stored.parameters[name] : undefined;
      if (kept === undefined || kept === '') {
        details.push({ path: `/body/parameters/${name}`, message: `"${name}" has no stored value to keep; send the value itself` });
      }
      return [name, kept ?? value];
    }),
  );
  rejectAll(details);
  const urls = (findProvider(input.provider)?.definition.parameters ?? []).filter((parameter) => parameter.type === 'url');
  const moved = urls.filter(({ name }) => sameProvider && (parameters[name] ?? '') !== (stored.parameters[name] ?? ''));
  if (moved.length > 0) {
    for (const [name, value] of Object.entries(input.parameters)) {
      if (!keepsStoredValue(input.provider, name, value)) continue;
      details.push({
        path: `/body/parameters/${name}`,
        message: `"${name}" must be sent again: ${moved.map((url) => `"${url.name}"`).join(', ')} changed, and a stored secret is never sent to a new destination`,
      });
    }
  }
  rejectAll(details);
  return parameters;
}

async function ensureProviderTagTypes(uow: UnitOfWork, provider: string): Promise<void> {
  for (const tagType of findProvider(provider)?.definition.tagTypes ?? []) await ensureTagType(uow, tagType);
}

/** Creates a configuration (validated beforehand by validateAddonInput and assertAddonUrlsAllowed). */
/** A configuration as just created: the one time its signing secret is shown. */
export type CreatedAddon = AddonView & { signingSecret: string };

export async function createAddon(uow: UnitOfWork, input: AddonInput): Promise<CreatedAddon> {
  const projects = unique(input.projects ?? []);
  const environments = unique(input.environments ?? []);
  await assertFilterTargetsExist(uow, projects, environments);
  const row = await uow.tx
    .insertInto('addons')
    .values({
      provider: input.provider,
      description: input.description ?? '',
      enabled: input.enabled,
      parameters: JSON.stringify(unmaskParameters(input, undefined)),
      events: unique(input.events),
      projects,
      environments,
      created_at: uow.now,
      updated_at: uow.now,
      signing_secret: newSigningSecret(),
      signing_secret_created_at: uow.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  const created = toAddonView(row);
  await recordEvent(uow, { type: 'addon-config-created', data: created });
  await ensureProviderTagTypes(uow, row.provider);
  return { ...created, signingSecret: row.signing_secret };
}

export interface RotatedSigningSecret {
  signingSecret: string;
  signingSecretCreatedAt: string;
  /** Until when deliveries also carry a signature made with the secret this one replaces. */
  previousSecretValidUntil: string;
}

/**
 * Replaces a configuration's signing secret and shows the new one, once. The replaced secret signs beside it
 * for a day; a second rotation within that day ends the first secret at once. The event records that the
 * secret changed (`signingSecretCreatedAt`), never the secret.
 */
export async function rotateAddonSigningSecret(uow: UnitOfWork, id: number): Promise<RotatedSigningSecret> {
  const stored = await findAddonRow(uow.tx, id, true);
  // Strictly later than the secret it replaces even on a clock that has not moved, so the event shows a change.
  const createdAt = new Date(Math.max(uow.now.getTime(), stored.signing_secret_created_at.getTime() + 1));
  const previousValidUntil = new Date(uow.now.getTime() + PREVIOUS_SECRET_GRACE_MS);
  const row = await uow.tx
    .updateTable('addons')
    .set({
      signing_secret: newSigningSecret(),
      signing_secret_created_at: createdAt,
      previous_signing_secret: stored.signing_secret,
      previous_signing_secret_expires_at: previousValidUntil,
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
  await recordEvent(uow, { type: 'addon-config-updated', data: toAddonView(row), preData: toAddonView(stored) });
  return {
    signingSecret: row.signing_secret,
    signingSecretCreatedAt: createdAt.toISOString(),
    previousSecretValidUntil: previousValidUntil.toISOString(),
  };
}

/**
 * Replaces a configuration; `description`, `projects` and `environments` left out keep their values, as in
 * Unleash. A sensitive parameter sent as the mask keeps its stored value. A change of secrets alone is
 * recorded too: `updatedAt` tells the two masked versions apart. Nothing changed records nothing.
 */
export async function updateAddon(uow: UnitOfWork, id: number, input: AddonInput): Promise<AddonView> {
  const stored = await findAddonRow(uow.tx, id, true);
  const next = {
    provider: input.provider,
    description: input.description === undefined ? stored.description : (input.description ?? ''),
    enabled: input.enabled,
    parameters: unmaskParameters(input, stored),
    events: unique(input.events),
    projects: input.projects === undefined ? stored.projects : unique(input.projects),
    environments: input.environments === undefined ? stored.environments : unique(input.environments),
  };
  const current = {
    provider: stored.provider,
    description: stored.description,
    enabled: stored.enabled,
    parameters: stored.parameters,
    events: stored.events,
    projects: stored.projects,
    environments: stored.environments,
  };
  if (isDeepStrictEqual(next, current)) return toAddonView(stored);
  await assertFilterTargetsExist(uow, next.projects, next.environments);
  const row = await uow.tx
    .updateTable('addons')
    // Strictly later than before even on a clock that has not moved, so the masked versions always differ.
    .set({
      ...next,
      parameters: JSON.stringify(next.parameters),
      updated_at: new Date(Math.max(uow.now.getTime(), stored.updated_at.getTime() + 1)),
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
  const updated = toAddonView(row);
  await recordEvent(uow, { type: 'addon-config-updated', data: updated, preData: toAddonView(stored) });
  if (row.provider !== stored.provider) await ensureProviderTagTypes(uow, row.provider);
  return updated;
}

/** Deletes a configuration with its pending deliveries and its integration events. */
export async function deleteAddon(uow: UnitOfWork, id: number): Promise<void> {
  const stored = await findAddonRow(uow.tx, id, true);
  await uow.tx.deleteFrom('addons').where('id', '=', id).execute();
  await recordEvent(uow, { type: 'addon-config-deleted', preData: toAddonView(stored) });
}

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
export async function findAddonRow<Lock extends boolean = false>(
  db: LockingHandle<Lock>,
  id: number,
  lock?: Lock,
): Promise<Selectable<AddonsTable>> {
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
