import type { Selectable } from 'kysely';
import type { RootRoleName, UsersTable } from '../../db/schema.js';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { recordEvent } from '../events/record-event.js';
import { setUserActive } from './deactivation.js';
import { toUserView } from './user-view.js';
import { lockUser } from './users.js';

/** A person as an identity provider manages them over SCIM, already checked. */
export interface ProvisionedPerson {
  userName: string;
  email: string | null;
  name: string | null;
  /** The provider's own id for the person. */
  externalId: string | null;
  /** What the provider sent that Vexil does not model, kept to be returned as sent. */
  attributes: Record<string, unknown>;
  active: boolean;
}

function columnsOf(person: ProvisionedPerson, now: Date) {
  return {
    username: person.userName,
    email: person.email,
    name: person.name,
    scim_managed: true,
    scim_external_id: person.externalId,
    scim_attributes: JSON.stringify(person.attributes),
    updated_at: now,
  };
}

/** A person the provider brings in, with `rootRole`; recorded as `user-created`. */
export async function createProvisionedUser(
  uow: UnitOfWork,
  person: ProvisionedPerson,
  rootRole: RootRoleName,
): Promise<Selectable<UsersTable>> {
  const row = await uow.tx
    .insertInto('users')
    .values({
      ...columnsOf(person, uow.now),
      image_url: null,
      password_hash: null,
      root_role: rootRole,
      created_at: uow.now,
      seen_at: null,
      deactivated_at: person.active ? null : uow.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  await recordEvent(uow, { type: 'user-created', data: toUserView(row) });
  return row;
}

/**
 * Replaces what the provider manages of a person (from then on it manages them): their userName, email, name and
 * attributes, recorded as `user-updated` when what Vexil shows changed; and whether they are active, which
 * deactivates them (ending their sessions and tokens at once) or lets them in again.
 */
export async function replaceProvisionedUser(uow: UnitOfWork, id: number, person: ProvisionedPerson): Promise<void> {
  const before = await lockUser(uow, id);
  const after = await uow.tx
    .updateTable('users')
    .set(columnsOf(person, uow.now))
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
  const changed = (['username', 'email', 'name', 'scim_managed', 'scim_external_id'] as const).some(
    (column) => before[column] !== after[column],
  );
  if (changed) await recordEvent(uow, { type: 'user-updated', data: toUserView(after), preData: toUserView(before) });
  await setUserActive(uow, id, person.active);
}
