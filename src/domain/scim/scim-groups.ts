import type { Selectable } from 'kysely';
import type { Db, LockingHandle, Tx } from '../../db/database.js';
import type { GroupsTable } from '../../db/schema.js';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { NotFoundError, PermissionError } from '../../shared/errors.js';
import { createProvisionedGroup, deleteGroup, type ProvisionedGroup, replaceProvisionedGroup } from '../groups/groups.js';
import { groupGrantsAdmin } from '../users/users.js';
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

/** The attributes a Groups filter may compare; `members eq` is how Entra ID asks whether someone is a member. */
export const GROUP_FILTER_ATTRIBUTES = ['displayName', 'externalId', 'id', 'members', 'members.value'] as const;

/** A group pushed over SCIM holds at most this many people (a company's largest teams, well within a request). */
export const MAX_GROUP_MEMBERS = 10_000;

function invalid(path: string, message: string): ScimBadRequest {
  return new ScimBadRequest(message, 'invalidValue', [{ path: `/body/${path}`, message }]);
}

/** Reads and checks a Group resource (a POST or PUT body, or a PATCH's result). */
function readGroup(resource: Record<string, unknown>): ProvisionedGroup {
  const { displayName, externalId, members } = resource;
  if (typeof displayName !== 'string' || displayName.trim() === '' || displayName.length > 100) {
    throw invalid('displayName', 'displayName is required: 1 to 100 characters');
  }
  if (externalId !== undefined && externalId !== null && (typeof externalId !== 'string' || externalId.length > 255)) {
    throw invalid('externalId', 'externalId is text of at most 255 characters');
  }
  if (members !== undefined && members !== null && (!Array.isArray(members) || members.length > MAX_GROUP_MEMBERS)) {
    throw invalid('members', `members is a list of at most ${MAX_GROUP_MEMBERS}`);
  }
  const memberIds = ((members ?? []) as unknown[]).map((member, index) => {
    const value = (member as { value?: unknown } | null)?.value;
    const id = typeof value === 'string' ? idOf(value) : undefined;
    if (id === undefined) throw invalid(`members/${index}/value`, `members[${index}].value is not the id of a user`);
    return id;
  });
  return { name: displayName.trim(), externalId: (externalId as string | null | undefined) || null, memberIds };
}

/** A 400 naming the members that are no person here (service accounts cannot be members). */
async function assertPeople(tx: Tx, ids: number[], groupId: number | null): Promise<void> {
  if (ids.length === 0) return;
  // A new member is someone SCIM provisioned; the group's present members may stay, whoever added them.
  const found = await tx
    .selectFrom('users')
    .select('id')
    .where('id', 'in', ids)
    .where('is_service', '=', false)
    .where((eb) =>
      eb.or([
        eb('scim_managed', '=', true),
        eb(
          'id',
          'in',
          eb
            .selectFrom('group_users')
            .select('user_id')
            .where('group_id', '=', groupId ?? 0),
        ),
      ]),
    )
    .execute();
  const known = new Set(found.map((row) => row.id));
  const unknown = [...new Set(ids.filter((id) => !known.has(id)))];
  if (unknown.length > 0) {
    throw new ScimBadRequest(`No user has the id ${unknown.slice(0, 10).join(', ')}`, 'invalidValue', [
      { path: '/body/members', message: `unknown user ids: ${unknown.slice(0, 10).join(', ')}` },
    ]);
  }
}

async function assertUnique(tx: Tx, fields: ProvisionedGroup, exceptId: number | null): Promise<void> {
  const clash = await tx
    .selectFrom('groups')
    .select(['id', 'name', 'scim_external_id'])
    .where((eb) =>
      eb.or([
        eb(eb.fn('lower', ['name']), '=', fields.name.toLowerCase()),
        ...(fields.externalId === null ? [] : [eb('scim_external_id', '=', fields.externalId)]),
      ]),
    )
    .$if(exceptId !== null, (select) => select.where('id', '!=', exceptId!))
    .executeTakeFirst();
  if (!clash) return;
  const what = clash.name.toLowerCase() === fields.name.toLowerCase() ? `displayName ${fields.name}` : `externalId ${fields.externalId}`;
  throw new ScimUniquenessError(`Another group (id ${clash.id}) already has the ${what}`);
}

type GroupRow = Selectable<GroupsTable>;

/** Groups as SCIM Group resources, with their members. */
async function scimGroups(db: Db, rows: GroupRow[], baseUrl: string) {
  const members =
    rows.length === 0
      ? []
      : await db
          .selectFrom('group_users as gu')
          .innerJoin('users as u', 'u.id', 'gu.user_id')
          .select(['gu.group_id', 'u.id', 'u.username', 'u.email'])
          .where(
            'gu.group_id',
            'in',
            rows.map((row) => row.id),
          )
          .orderBy('u.id')
          .execute();
  return rows.map((row) => ({
    schemas: [SCIM.group],
    id: String(row.id),
    ...(row.scim_external_id === null ? {} : { externalId: row.scim_external_id }),
    displayName: row.name,
    members: members
      .filter((member) => member.group_id === row.id)
      .map((member) => ({
        value: String(member.id),
        display: (member.username ?? member.email)!,
        type: 'User',
        $ref: `${baseUrl}/scim/v2/Users/${member.id}`,
      })),
    meta: metaOf('Group', row.id, row.created_at, row.updated_at, baseUrl),
  }));
}

export type ScimGroup = Awaited<ReturnType<typeof scimGroups>>[number];

/** Groups, filtered and paged as RFC 7644 §3.4.2 says, in the order they were made. */
export async function listScimGroups(db: Db, query: { filter?: string }, page: Page, baseUrl: string) {
  const equalities = readFilter(query.filter, SCIM.group, GROUP_FILTER_ATTRIBUTES);
  let select = db.selectFrom('groups').where('scim_managed', '=', true);
  for (const { attribute, value } of equalities) {
    if (attribute === 'displayName') select = select.where((eb) => eb(eb.fn('lower', ['name']), '=', value.toLowerCase()));
    else if (attribute === 'externalId') select = select.where('scim_external_id', '=', value);
    // A value that is no id of Vexil's matches nothing (ids start at 1).
    else if (attribute === 'id') select = select.where('id', '=', idOf(value) ?? 0);
    else {
      const members = db
        .selectFrom('group_users')
        .select('group_id')
        .where('user_id', '=', idOf(value) ?? 0);
      select = select.where('id', 'in', members);
    }
  }
  const { rows, total } = await readPage(select, page);
  return listResponse(await scimGroups(db, rows, baseUrl), total, page);
}

/** A group SCIM reaches: one it created, never one an Admin made in Vexil. */
async function groupRow<Lock extends boolean = false>(db: LockingHandle<Lock>, id: number, forUpdate?: Lock): Promise<GroupRow> {
  const row = await db
    .selectFrom('groups')
    .selectAll()
    .where('id', '=', id)
    .where('scim_managed', '=', true)
    .$if(forUpdate === true, (select) => select.forUpdate())
    .executeTakeFirst();
  if (!row) throw new NotFoundError(`Could not find group ${id}`);
  return row;
}

/**
 * A provisioned group the provider may change: not one an Admin gave a root role granting `ADMIN` (the built-in Admin
 * or a custom one), which anyone joining it would hold.
 */
async function changeableGroup<Lock extends boolean = false>(db: LockingHandle<Lock>, id: number, forUpdate?: Lock): Promise<GroupRow> {
  const row = await groupRow<Lock>(db, id, forUpdate);
  if (await groupGrantsAdmin(db, id)) {
    throw new PermissionError(`Group ${id} holds a root role that grants ADMIN: only an Admin changes it, in Vexil`, ['ADMIN']);
  }
  return row;
}

export async function getScimGroup(db: Db, id: number, baseUrl: string): Promise<ScimGroup> {
  return (await scimGroups(db, [await groupRow(db, id)], baseUrl))[0]!;
}

/** A group the provider pushes, with its members. */
export async function createScimGroup(uow: UnitOfWork, resource: Record<string, unknown>, baseUrl: string): Promise<ScimGroup> {
  const group = readGroup(resource);
  await assertUnique(uow.tx, group, null);
  await assertPeople(uow.tx, group.memberIds, null);
  return getScimGroup(uow.tx, await createProvisionedGroup(uow, group), baseUrl);
}

/** Replaces a group as the provider sees it (PUT; a PATCH arrives here with its result). */
export async function replaceScimGroup(
  uow: UnitOfWork,
  id: number,
  resource: Record<string, unknown>,
  baseUrl: string,
): Promise<ScimGroup> {
  const group = readGroup(resource);
  await changeableGroup(uow.tx, id);
  await assertUnique(uow.tx, group, id);
  await assertPeople(uow.tx, group.memberIds, id);
  await replaceProvisionedGroup(uow, id, group);
  return getScimGroup(uow.tx, id, baseUrl);
}

/**
 * Members are known by their value alone. Entra ID removes them by listing them (`{"$ref": null, "value": "7"}`),
 * which would match only a member equal in every attribute; each becomes `members[value eq "7"]`.
 */
function removalsByValue(operations: PatchOperation[]): PatchOperation[] {
  return operations.flatMap((operation) =>
    operation.op.toLowerCase() === 'remove' && operation.path?.toLowerCase() === 'members' && Array.isArray(operation.value)
      ? operation.value.map((member: { value?: unknown } | null) => ({
          op: 'remove',
          path: `members[value eq ${JSON.stringify(String(member?.value))}]`,
        }))
      : [operation],
  );
}

/** Applies a PATCH (add and remove members, rename) to the group as the provider sees it, stored as a replacement. */
export async function patchScimGroup(uow: UnitOfWork, id: number, operations: PatchOperation[], baseUrl: string): Promise<ScimGroup> {
  const current = (await scimGroups(uow.tx, [await changeableGroup(uow.tx, id, true)], baseUrl))[0]!;
  return replaceScimGroup(uow, id, applyPatch(current, removalsByValue(operations)), baseUrl);
}

/** DELETE: a provisioned group the provider may change goes, and the access it gave with it. */
export async function deleteScimGroup(uow: UnitOfWork, id: number): Promise<void> {
  await changeableGroup(uow.tx, id, true);
  await deleteGroup(uow, id);
}
