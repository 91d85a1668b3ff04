import { type SelectQueryBuilder, type Selectable, sql } from 'kysely';
import type { Database } from '../../db/schema.js';
import { NoTarget, ScimError, type ScimPatchOperation, type ScimResource, scimPatch } from 'scim-patch';
import { prototypeKeyInValue, prototypeSegmentOf } from '../../shared/prototype-hardening.js';
import { type Filter, parse as parseFilter } from 'scim2-parse-filter';
import { BadDataError, NameExistsError, type ErrorDetail } from '../../shared/errors.js';

/** The URNs of RFC 7643/7644 that Vexil's SCIM service speaks. */
export const SCIM = {
  user: 'urn:ietf:params:scim:schemas:core:2.0:User',
  group: 'urn:ietf:params:scim:schemas:core:2.0:Group',
  listResponse: 'urn:ietf:params:scim:api:messages:2.0:ListResponse',
  patchOp: 'urn:ietf:params:scim:api:messages:2.0:PatchOp',
  error: 'urn:ietf:params:scim:api:messages:2.0:Error',
  serviceProviderConfig: 'urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig',
  resourceType: 'urn:ietf:params:scim:schemas:core:2.0:ResourceType',
  schema: 'urn:ietf:params:scim:schemas:core:2.0:Schema',
} as const;

/** RFC 7644 §3.12's `scimType`, which tells a provider what kind of mistake a 400 or 409 is about. */
export type ScimType = 'invalidFilter' | 'invalidPath' | 'invalidValue' | 'invalidSyntax' | 'noTarget' | 'mutability' | 'uniqueness';

/** A 400 a SCIM client reads by its `scimType`; the body also carries Unleash's fields. */
export class ScimBadRequest extends BadDataError {
  constructor(
    message: string,
    readonly scimType: ScimType,
    details?: ErrorDetail[],
  ) {
    super(message, details);
  }

  override extraBody(): Record<string, unknown> {
    return { scimType: this.scimType };
  }
}

/** A 409: the userName, externalId or displayName is someone else's. */
export class ScimUniquenessError extends NameExistsError {
  readonly scimType = 'uniqueness';

  override extraBody(): Record<string, unknown> {
    return { scimType: this.scimType };
  }
}

/** At most this many resources in one page of a listing (`count`), as `ServiceProviderConfig` says. */
export const MAX_PAGE_SIZE = 200;

/** A page asked for with RFC 7644 §3.4.2.4's 1-based `startIndex` and `count`, made sane as the RFC says. */
export interface Page {
  startIndex: number;
  count: number;
}

export function pageOf(query: { startIndex?: string; count?: string }): Page {
  const startIndex = Math.max(1, Number(query.startIndex ?? 1) || 1);
  const count = Math.min(MAX_PAGE_SIZE, Math.max(0, Number(query.count ?? 100) || 0));
  return { startIndex, count };
}

/**
 * One page of the people or groups `select` finds, in the order they were made, and how many it finds in all
 * (RFC 7644 §3.4.2.4: `count=0` asks for the total alone).
 */
export async function readPage<T extends 'users' | 'groups'>(
  select: SelectQueryBuilder<Database, T, object>,
  page: Page,
): Promise<{ rows: Selectable<Database[T]>[]; total: number }> {
  const [rows, counted] = await Promise.all([
    page.count === 0
      ? []
      : select
          .selectAll()
          .orderBy(sql`id`)
          .offset(page.startIndex - 1)
          .limit(page.count)
          .execute(),
    select.select(sql<number>`count(*)`.as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows: rows as Selectable<Database[T]>[], total: Number(counted.total) };
}

export function listResponse(resources: object[], total: number, page: Page) {
  return {
    schemas: [SCIM.listResponse],
    totalResults: total,
    startIndex: page.startIndex,
    itemsPerPage: resources.length,
    Resources: resources,
  };
}

/** One `attribute eq "value"` of a filter, with the attribute as the resource type names it. */
export interface Equality {
  attribute: string;
  value: string;
}

function unsupportedFilter(text: string, attributes: readonly string[]): ScimBadRequest {
  const examples = attributes.map((attribute) => `${attribute} eq "…"`).join(', ');
  return new ScimBadRequest(`Vexil filters by ${examples}, joined by "and"; "${text}" is not one of those`, 'invalidFilter', [
    { path: '/query/filter', message: `only ${examples}, joined by "and"` },
  ]);
}

/**
 * The equalities a filter asks for, all of which must hold. Identity providers look resources up by one attribute
 * at a time (Okta and Entra ID: `userName eq`, `externalId eq`, `displayName eq`, `id eq … and members eq …`), so
 * that is what is served; any other filter is refused with `invalidFilter` rather than answered wrongly. Attribute
 * names are matched in any case and may carry the core schema's URN, as RFC 7644 §3.10 allows.
 */
export function readFilter(text: string | undefined, resourceSchema: string, attributes: readonly string[]): Equality[] {
  if (text === undefined || text.trim() === '') return [];
  let filter: Filter;
  try {
    filter = parseFilter(text);
  } catch {
    throw new ScimBadRequest(`The filter "${text}" is not a SCIM filter`, 'invalidFilter', [
      { path: '/query/filter', message: 'not a filter of RFC 7644 §3.4.2.2' },
    ]);
  }
  const terms = filter.op === 'and' ? (filter as { filters: Filter[] }).filters : [filter];
  return terms.map((term) => {
    if (term.op !== 'eq' || !('attrPath' in term) || typeof term.compValue !== 'string') throw unsupportedFilter(text, attributes);
    const path = term.attrPath.startsWith(`${resourceSchema}:`) ? term.attrPath.slice(resourceSchema.length + 1) : term.attrPath;
    const attribute = attributes.find((candidate) => candidate.toLowerCase() === path.toLowerCase());
    if (!attribute) throw unsupportedFilter(text, attributes);
    return { attribute, value: term.compValue };
  });
}

/** The top-level names of a comma-separated `attributes` list (`name.givenName` selects `name`), lower-cased. */
function attributeNames(list: string | undefined, resourceSchema: string): Set<string> | undefined {
  if (list === undefined || list.trim() === '') return undefined;
  return new Set(
    list.split(',').map((item) => {
      const path = item.trim().startsWith(`${resourceSchema}:`) ? item.trim().slice(resourceSchema.length + 1) : item.trim();
      return path.split('.')[0]!.toLowerCase();
    }),
  );
}

// Returned whatever a request asks (RFC 7643 §7: "always").
const ALWAYS_RETURNED = new Set(['id', 'schemas', 'meta']);

/** The resource with only the attributes asked for, or without those excluded (RFC 7644 §3.4.2.5). */
export function selectAttributes<T extends object>(
  resource: T,
  query: { attributes?: string; excludedAttributes?: string },
  resourceSchema: string,
): Partial<T> {
  const wanted = attributeNames(query.attributes, resourceSchema);
  const excluded = attributeNames(query.excludedAttributes, resourceSchema);
  if (!wanted && !excluded) return resource;
  return Object.fromEntries(
    Object.entries(resource).filter(([name]) => {
      const key = name.toLowerCase();
      if (ALWAYS_RETURNED.has(key)) return true;
      return wanted ? wanted.has(key) : !excluded!.has(key);
    }),
  ) as Partial<T>;
}

/** An operation of a PATCH request (RFC 7644 §3.5.2), as sent. */
export interface PatchOperation {
  op: string;
  path?: string;
  value?: unknown;
}

/** Whether the attribute a path starts with (`members` of `members[value eq "7"]`) is an empty or absent list. */
function isEmptyList(resource: object, path: string | undefined): boolean {
  const name = path?.split(/[[.]/)[0];
  if (!name) return false;
  const value = (resource as Record<string, unknown>)[name];
  return value === undefined || (Array.isArray(value) && value.length === 0);
}

/**
 * The resource as the operations leave it, applied by scim-patch, which reads their paths and value filters
 * (`members[value eq "…"]`) and takes `op` in any case, as Entra ID writes it. Removing from a list that is already
 * empty removes nothing, as removing an absent member does. The caller checks and stores the result as it would a
 * replacement, so a PATCH can do nothing a PUT could not.
 */
export function applyPatch(resource: object, operations: PatchOperation[]): Record<string, unknown> {
  let patched = structuredClone(resource) as unknown as ScimResource;
  for (const [index, operation] of operations.entries()) {
    // scim-patch walks a path's attribute names as property names, `__proto__` included, and every key of a value
    // object as a dotted path of its own (the JSON parser refuses those too; this holds for any other caller).
    const prototypeKey = operation.path === undefined ? undefined : prototypeSegmentOf(operation.path);
    if (prototypeKey !== undefined) {
      throw new ScimBadRequest(`The PATCH path "${operation.path}" names no attribute`, 'invalidPath', [
        { path: `/body/Operations/${index}/path`, message: `"${prototypeKey}" is not an attribute` },
      ]);
    }
    const valueKey = prototypeKeyInValue(operation.value, `/body/Operations/${index}/value`);
    if (valueKey !== undefined) {
      throw new ScimBadRequest(`The PATCH value's key "${valueKey.key}" names no attribute`, 'invalidValue', [
        { path: valueKey.at, message: `"${valueKey.key}" is not an attribute` },
      ]);
    }
    if (operation.op.toLowerCase() === 'remove' && isEmptyList(patched, operation.path)) continue;
    try {
      patched = scimPatch(patched, [operation as ScimPatchOperation], { treatMissingAsAdd: true });
    } catch (error) {
      if (!(error instanceof ScimError)) throw error;
      const scimType: ScimType = error instanceof NoTarget ? 'noTarget' : 'invalidPath';
      throw new ScimBadRequest(`The PATCH cannot be applied: ${error.message}`, scimType, [
        { path: '/body/Operations', message: error.message },
      ]);
    }
  }
  return patched as unknown as Record<string, unknown>;
}

/** `meta` of a resource (RFC 7643 §3.1). */
export function metaOf(resourceType: 'User' | 'Group', id: number, created: Date, modified: Date | null, baseUrl: string) {
  return {
    resourceType,
    created: created.toISOString(),
    lastModified: (modified ?? created).toISOString(),
    location: `${baseUrl}/scim/v2/${resourceType}s/${id}`,
  };
}

/** A resource's id in a path: Vexil's numeric id, written as SCIM's string. Anything else names no resource. */
export function idOf(text: string): number | undefined {
  return /^[1-9][0-9]{0,9}$/.test(text) && Number(text) <= 2_147_483_647 ? Number(text) : undefined;
}
