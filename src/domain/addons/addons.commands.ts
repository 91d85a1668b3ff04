import { isDeepStrictEqual } from 'node:util';
import type { Selectable } from 'kysely';
import type { AddonsTable } from '../../db/schema.js';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { enqueueRedelivery } from '../events/delivery-outbox.js';
import { assertPublicUrl, BlockedAddressError } from './outbound-safety.js';
import { ADDON_PROVIDERS, findProvider } from './providers/index.js';
import { newSigningSecret, PREVIOUS_SECRET_GRACE_MS } from './webhook-signature.js';
import { BadDataError, ConflictError, type ErrorDetail } from '../../shared/errors.js';
import { isEventType } from '../events/event-types.js';
import { recordEvent } from '../events/record-event.js';
import { ensureTagType } from '../tags/tag-types.commands.js';
import { findAddonRow, isSensitiveParameter, MASKED_VALUE, toAddonView, type AddonView } from './addons.queries.js';
import { findIntegrationEvent } from './integration-events.queries.js';

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

/** Replaces masks with the stored secrets; a mask with nothing stored behind it is a 400. */
function unmaskParameters(input: AddonInput, stored: Selectable<AddonsTable> | undefined): Record<string, string> {
  const details: ErrorDetail[] = [];
  const parameters = Object.fromEntries(
    Object.entries(input.parameters).map(([name, value]) => {
      if (!keepsStoredValue(input.provider, name, value)) return [name, value];
      const kept = stored?.provider === input.provider ? stored.parameters[name] : undefined;
      if (kept === undefined || kept === '') {
        details.push({ path: `/body/parameters/${name}`, message: `"${name}" has no stored value to keep; send the value itself` });
      }
      return [name, kept ?? value];
    }),
  );
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

/**
 * Sends the event of an integration event to its configuration again, through the outbox like any delivery:
 * a new delivery id and a new set of attempts, each recorded as a new integration event.
 */
export async function redeliverIntegrationEvent(
  uow: UnitOfWork,
  addonId: number,
  integrationEventId: string,
): Promise<{ deliveryId: string; eventId: number }> {
  const addon = await findAddonRow(uow.tx, addonId);
  const handled = await findIntegrationEvent(uow.tx, addonId, integrationEventId);
  if (!addon.enabled) {
    throw new ConflictError(`Integration configuration ${addonId} is disabled; enable it to redeliver its events`);
  }
  const deliveryId = await enqueueRedelivery(uow, addonId, handled.event.id);
  return { deliveryId, eventId: handled.event.id };
}
