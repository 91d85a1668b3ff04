import type { Selectable } from 'kysely';
import type { Db, Tx } from '../../db/database.js';
import type { UsersTable } from '../../db/schema.js';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { NotFoundError, PermissionError } from '../../shared/errors.js';
import { readSignInPolicy, type SignInPolicy, type SignInProvider } from '../settings/sign-in-policy.js';
import { createProvisionedUser, type ProvisionedPerson, replaceProvisionedUser } from '../users/provisioned-users.js';
import { deleteUser, holdsAdminRole, lockUser } from '../users/users.js';
import {
  applyPatch,
  idOf,
  listResponse,
  readPage,
  metaOf,
  type Page,
  type PatchOperation,
  readFilter,
  SCIM,
  ScimBadRequest,
  ScimUniquenessError,
} from './scim-protocol.js';

/** What the SCIM service needs beyond the database: where it is served, and who a new person becomes. */
export interface ScimContext {
  baseUrl: string;
  /**
   * Whose sign-in policy gives a provisioned person their default root role: the provider they sign in with
   * (OpenID Connect when it is set up, else SAML), and that policy's fallback until an Admin sets it.
   */
  policyProvider: SignInProvider;
  startingPolicy: SignInPolicy;
}

/** The attributes a Users filter may compare (RFC 7644 §3.4.2.2, as Okta and Entra ID use them). */
export const USER_FILTER_ATTRIBUTES = ['userName', 'externalId', 'id', 'emails.value'] as const;

// Stored as sent, returned as sent: enough for the attributes a provider sends, not a store for anything else.
const MAX_STORED_ATTRIBUTES_LENGTH = 16_384;
const MAX_EMAILS = 20;
const MAX_TEXT_LENGTH = 255;
// As the admin API's usernames are: a login, so no spaces.
const USER_NAME = /^\S{1,100}$/;
const EMAIL = /^[^\s@]+@[^\s@]+$/;

// Attributes Vexil models itself, or that are the service's to set (RFC 7643: id and meta are read-only; groups
// are changed through the Groups resource). A password (Okta sends one when told to sync them) is never kept:
// provisioned people sign in through the identity provider.
const MODELLED = new Set(['schemas', 'id', 'meta', 'username', 'externalid', 'active', 'groups', 'password']);

function invalid(path: string, message: string): ScimBadRequest {
  return new ScimBadRequest(message, 'invalidValue', [{ path: `/body/${path}`, message }]);
}

function optionalText(resource: Record<string, unknown>, key: string, path = key): string | null {
  const value = resource[key];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || value.length > MAX_TEXT_LENGTH)
    throw invalid(path, `${path} is text of at most ${MAX_TEXT_LENGTH} characters`);
  return value.trim() === '' ? null : value.trim();
}

/** `active` as a boolean: Entra ID sends it as the text "True" or "False" in PATCH requests. */
function activeOf(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string' && /^(true|false)$/i.test(value)) return value.toLowerCase() === 'true';
  throw invalid('active', 'active is true or false');
}

/** The email of the resource: the primary one of `emails`, else the first, else the userName when it is one. */
function emailOf(resource: Record<string, unknown>, userName: string): string | null {
  const emails = resource.emails;
  if (emails === undefined || emails === null) return EMAIL.test(userName) ? userName : null;
  if (!Array.isArray(emails) || emails.length > MAX_EMAILS) throw invalid('emails', `emails is a list of at most ${MAX_EMAILS}`);
  emails.forEach((entry, index) => {
    const value = (entry as { value?: unknown } | null)?.value;
    if (typeof value !== 'string' || value.length > 320 || !EMAIL.test(value)) {
      throw invalid(`emails/${index}/value`, `emails[${index}].value is not an email address`);
    }
  });
  const primary = emails.find((entry: { primary?: unknown }) => entry.primary === true) ?? emails[0];
  return (primary as { value: string } | undefined)?.value ?? null;
}

function personNameOf(resource: Record<string, unknown>): string | null {
  const name = resource.name;
  if (name !== undefined && name !== null && (typeof name !== 'object' || Array.isArray(name))) throw invalid('name', 'name is an object');
  const parts = (name ?? {}) as Record<string, unknown>;
  const formatted = optionalText(parts, 'formatted', 'name/formatted');
  const given = optionalText(parts, 'givenName', 'name/givenName');
  const family = optionalText(parts, 'familyName', 'name/familyName');
  const joined = [given, family].filter((part) => part !== null).join(' ');
  return formatted ?? (joined || optionalText(resource, 'displayName'));
}

/** Reads and checks a User resource (a POST or PUT body, or a PATCH's result), naming the first thing wrong. */
function readUser(resource: Record<string, unknown>): ProvisionedPerson {
  const userName = resource.userName;
  if (typeof userName !== 'string' || !USER_NAME.test(userName.trim())) {
    throw invalid('userName', 'userName is required: 1 to 100 characters without spaces');
  }
  const attributes = Object.fromEntries(Object.entries(resource).filter(([key]) => !MODELLED.has(key.toLowerCase())));
  if (JSON.stringify(attributes).length > MAX_STORED_ATTRIBUTES_LENGTH) {
    throw new ScimBadRequest(`The user's attributes take more than ${MAX_STORED_ATTRIBUTES_LENGTH} characters`, 'invalidValue');
  }
  return {
    userName: userName.trim(),
    externalId: optionalText(resource, 'externalId'),
    active: activeOf(resource.active),
    email: emailOf(resource, userName.trim()),
    name: personNameOf(resource),
    attributes,
  };
}

type UserRow = Selectable<UsersTable>;

/** Users as SCIM User resources, with the groups each belongs to. */
async function scimUsers(db: Db, rows: UserRow[], baseUrl: string) {
  const memberships =
    rows.length === 0
      ? []
      : await db
          .selectFrom('group_users as gu')
          .innerJoin('groups as g', 'g.id', 'gu.group_id')
          .select(['gu.user_id', 'g.id', 'g.name'])
          .where(
            'gu.user_id',
            'in',
            rows.map((row) => row.id),
          )
          .orderBy('g.id')
          .execute();
  return rows.map((row) => {
    const attributes = (row.scim_attributes ?? {}) as Record<string, unknown>;
    const extensions = Object.keys(attributes).filter((key) => key.startsWith('urn:'));
    return {
      schemas: [SCIM.user, ...extensions],
      id: String(row.id),
      ...(row.scim_external_id === null ? {} : { externalId: row.scim_external_id }),
      userName: (row.username ?? row.email)!,
      ...attributes,
      ...nameAndEmails(row, attributes),
      active: row.deactivated_at === null,
      groups: memberships
        .filter((membership) => membership.user_id === row.id)
        .map((group) => ({ value: String(group.id), display: group.name, $ref: `${baseUrl}/scim/v2/Groups/${group.id}` })),
      meta: metaOf('User', row.id, row.created_at, row.updated_at, baseUrl),
    };
  });
}

/** The name and email Vexil holds (an Admin may have changed them), written into the attributes the provider sent. */
function nameAndEmails(row: UserRow, attributes: Record<string, unknown>) {
  const sentName = (attributes.name ?? {}) as Record<string, unknown>;
  const name = row.name === null ? {} : { name: { ...sentName, formatted: row.name } };
  const sentEmails = Array.isArray(attributes.emails) ? (attributes.emails as Array<Record<string, unknown>>) : [];
  if (row.email === null) return { ...name, ...(sentEmails.length > 0 ? { emails: sentEmails } : {}) };
  const primaryIndex = Math.max(
    0,
    sentEmails.findIndex((entry) => entry.primary === true),
  );
  const emails =
    sentEmails.length === 0
      ? [{ value: row.email, primary: true, type: 'work' }]
      : sentEmails.map((entry, index) => (index === primaryIndex ? { ...entry, value: row.email } : entry));
  return { ...name, emails };
}

export type ScimUser = Awaited<ReturnType<typeof scimUsers>>[number];

const COLUMN_OF_FILTER: Record<(typeof USER_FILTER_ATTRIBUTES)[number], 'username' | 'scim_external_id' | 'id' | 'email'> = {
  userName: 'username',
  externalId: 'scim_external_id',
  id: 'id',
  'emails.value': 'email',
};

/**
 * The people SCIM reaches: those it created (`scim_managed`), never service accounts nor people an Admin made, so a
 * SCIM token cannot read, rename, re-address or remove anyone the identity provider did not bring.
 */
function provisionedPeople(db: Db) {
  return db.selectFrom('users').where('is_service', '=', false).where('scim_managed', '=', true);
}

/** Provisioned people, filtered and paged as RFC 7644 §3.4.2 says, in the order they were made. */
export async function listScimUsers(db: Db, query: { filter?: string }, page: Page, baseUrl: string) {
  const equalities = readFilter(query.filter, SCIM.user, USER_FILTER_ATTRIBUTES);
  let select = provisionedPeople(db);
  for (const { attribute, value } of equalities) {
    const column = COLUMN_OF_FILTER[attribute as keyof typeof COLUMN_OF_FILTER];
    // A value that is no id of Vexil's matches nobody (ids start at 1).
    if (column === 'id') select = select.where('id', '=', idOf(value) ?? 0);
    // userName and emails are compared in any case (caseExact false in RFC 7643 §4.1); externalId exactly.
    else if (column === 'scim_external_id') select = select.where(column, '=', value);
    else select = select.where((eb) => eb(eb.fn('lower', [column]), '=', value.toLowerCase()));
  }
  const { rows, total } = await readPage(select, page);
  return listResponse(await scimUsers(db, rows, baseUrl), total, page);
}

async function personRow(db: Db, id: number): Promise<UserRow> {
  const row = await provisionedPeople(db).selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw new NotFoundError(`Could not find user ${id}`);
  return row;
}

/**
 * A provisioned person the provider may change: not one holding the Admin root role (given by an Admin in Vexil),
 * whom a SCIM token could otherwise re-address, deactivate or delete.
 */
async function changeablePerson(tx: Tx, id: number): Promise<UserRow> {
  const row = await personRow(tx, id);
  if (await holdsAdminRole(tx, id)) {
    throw new PermissionError(`User ${id} holds a root role that grants ADMIN: only an Admin changes them, in Vexil`, ['ADMIN']);
  }
  return row;
}

export async function getScimUser(db: Db, id: number, baseUrl: string): Promise<ScimUser> {
  return (await scimUsers(db, [await personRow(db, id)], baseUrl))[0]!;
}

/** A 409 when another person has the userName (as a username or an email), the email, or the externalId. */
async function assertUnique(tx: Tx, fields: ProvisionedPerson, exceptId: number | null): Promise<void> {
  const login = fields.userName.toLowerCase();
  const email = fields.email?.toLowerCase() ?? null;
  const clash = await tx
    .selectFrom('users')
    .select(['id', 'username', 'email', 'scim_external_id'])
    .where((eb) =>
      eb.or([
        eb(eb.fn('lower', ['username']), '=', login),
        eb(eb.fn('lower', ['email']), '=', login),
        ...(email === null ? [] : [eb(eb.fn('lower', ['email']), '=', email), eb(eb.fn('lower', ['username']), '=', email)]),
        ...(fields.externalId === null ? [] : [eb('scim_external_id', '=', fields.externalId)]),
      ]),
    )
    .$if(exceptId !== null, (select) => select.where('id', '!=', exceptId!))
    .executeTakeFirst();
  if (!clash) return;
  const what =
    fields.externalId !== null && clash.scim_external_id === fields.externalId
      ? `externalId ${fields.externalId}`
      : [clash.username, clash.email].some((known) => known?.toLowerCase() === login)
        ? `userName ${fields.userName}`
        : `email ${fields.email}`;
  throw new ScimUniquenessError(`Another user (id ${clash.id}) already has the ${what}`);
}

/** A person the provider brings in, with the sign-in policy's default root role. */
export async function createScimUser(uow: UnitOfWork, resource: Record<string, unknown>, context: ScimContext): Promise<ScimUser> {
  const person = readUser(resource);
  await assertUnique(uow.tx, person, null);
  const policy = await readSignInPolicy(uow.tx, context.policyProvider, context.startingPolicy);
  const row = await createProvisionedUser(uow, person, policy.defaultRootRole);
  return (await scimUsers(uow.tx, [row], context.baseUrl))[0]!;
}

/** Replaces a person as the provider sees them (PUT; a PATCH arrives here with its result). */
export async function replaceScimUser(uow: UnitOfWork, id: number, resource: Record<string, unknown>, baseUrl: string): Promise<ScimUser> {
  const person = readUser(resource);
  await changeablePerson(uow.tx, id);
  await assertUnique(uow.tx, person, id);
  await replaceProvisionedUser(uow, id, person);
  return getScimUser(uow.tx, id, baseUrl);
}

/** Applies a PATCH (RFC 7644 §3.5.2) to the person as the provider sees them, then stores it as a replacement. */
export async function patchScimUser(uow: UnitOfWork, id: number, operations: PatchOperation[], baseUrl: string): Promise<ScimUser> {
  await lockUser(uow, id);
  await changeablePerson(uow.tx, id);
  const current = await getScimUser(uow.tx, id, baseUrl);
  return replaceScimUser(uow, id, applyPatch(current, operations), baseUrl);
}

/** DELETE: a provisioned person the provider may change leaves for good. */
export async function deleteScimUser(uow: UnitOfWork, id: number): Promise<void> {
  await changeablePerson(uow.tx, id);
  await deleteUser(uow, id);
}
