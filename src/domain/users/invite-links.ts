import { sql, type Selectable } from 'kysely';
import type { Db, LockingHandle } from '../../db/database.js';
import type { InviteLinksTable } from '../../db/schema.js';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { BadDataError, ConflictError, NotFoundError } from '../../shared/errors.js';
import { hashToken, randomSecret } from '../../shared/secrets.js';
import { actorIdentity } from '../access/actor.js';
import { ROOT_ROLE_IDS } from '../access/permissions.js';
import { recordEvent } from '../events/record-event.js';
import { createUser } from './users.js';
import { toUserView, type UserView } from './user-view.js';

// Invite links (Unleash's public sign-up tokens): an Admin makes one, shares its address, and whoever follows it makes
// an account with the link's role (Viewer) until it expires or is turned off. Only the secret's hash is kept: the
// address is shown once, when the link is made; afterwards a link is named by its id.

/** Where an invited person makes their account: the admin UI's page, with the secret. */
export const inviteUrl = (baseUrl: string, secret: string) => `${baseUrl}/invite/${encodeURIComponent(secret)}`;

export interface InviteLinkView {
  id: number;
  name: string;
  /** False once expired, whatever was set. */
  enabled: boolean;
  expiresAt: string;
  createdAt: string;
  createdBy: string;
  role: { id: number; name: string; type: 'root' };
  /** The people who made their accounts through it. */
  users: UserView[];
}

function toView(row: Selectable<InviteLinksTable>, users: UserView[], now: Date): InviteLinkView {
  return {
    id: row.id,
    name: row.name,
    enabled: row.enabled && row.expires_at > now,
    expiresAt: row.expires_at.toISOString(),
    createdAt: row.created_at.toISOString(),
    createdBy: row.created_by,
    role: { id: ROOT_ROLE_IDS[row.root_role], name: row.root_role, type: 'root' },
    users,
  };
}

async function usersOf(db: Db, linkIds: number[]): Promise<Map<number, UserView[]>> {
  const byLink = new Map<number, UserView[]>();
  if (linkIds.length === 0) return byLink;
  const rows = await db
    .selectFrom('invite_link_users as l')
    .innerJoin('users as u', 'u.id', 'l.user_id')
    .selectAll('u')
    .select('l.invite_link_id')
    .where('l.invite_link_id', 'in', linkIds)
    .orderBy('u.id')
    .execute();
  for (const row of rows) byLink.set(row.invite_link_id, [...(byLink.get(row.invite_link_id) ?? []), toUserView(row)]);
  return byLink;
}

export async function listInviteLinks(db: Db, now: Date): Promise<InviteLinkView[]> {
  const rows = await db.selectFrom('invite_links').selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
  const users = await usersOf(
    db,
    rows.map((row) => row.id),
  );
  return rows.map((row) => toView(row, users.get(row.id) ?? [], now));
}

/** `reference` is the link's secret (as Unleash's paths take it) or its id. */
async function findLink<Lock extends boolean = false>(db: LockingHandle<Lock>, reference: string, lock?: Lock) {
  let query = db.selectFrom('invite_links').selectAll();
  query = /^\d{1,9}$/.test(reference) ? query.where('id', '=', Number(reference)) : query.where('secret_hash', '=', hashToken(reference));
  if (lock) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  if (!row) throw new NotFoundError('Could not find that invite link');
  return row;
}

export async function getInviteLink(db: Db, reference: string, now: Date): Promise<InviteLinkView> {
  const row = await findLink(db, reference);
  return toView(row, (await usersOf(db, [row.id])).get(row.id) ?? [], now);
}

function assertFuture(expiresAt: Date, now: Date) {
  if (expiresAt <= now)
    throw new BadDataError('An invite link must expire in the future', [{ path: '/body/expiresAt', message: 'Give a time in the future' }]);
}

/** Invite links that can still be used at once: each is a way in, so their number is bounded. */
export const MAX_USABLE_INVITE_LINKS = 20;

/** Makes an invite link; answers it with its secret and address, the only time either is shown. */
export async function createInviteLink(
  uow: UnitOfWork,
  input: { name: string; expiresAt: Date },
  baseUrl: string,
): Promise<InviteLinkView & { secret: string; url: string }> {
  assertFuture(input.expiresAt, uow.now);
  // Counted under a lock on the table, so two Admins at once cannot pass the bound together.
  await sql`LOCK TABLE invite_links IN SHARE ROW EXCLUSIVE MODE`.execute(uow.tx);
  const { usable } = await uow.tx
    .selectFrom('invite_links')
    .select((eb) => eb.fn.countAll<string>().as('usable'))
    .where('enabled', '=', true)
    .where('expires_at', '>', uow.now)
    .executeTakeFirstOrThrow();
  if (Number(usable) >= MAX_USABLE_INVITE_LINKS) {
    throw new ConflictError(`${MAX_USABLE_INVITE_LINKS} invite links can already be used, the most there may be; turn one off first`);
  }
  const secret = randomSecret(24);
  const row = await uow.tx
    .insertInto('invite_links')
    .values({
      secret_hash: hashToken(secret),
      name: input.name,
      expires_at: input.expiresAt,
      created_at: uow.now,
      created_by: actorIdentity(uow.actor).createdBy,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  const view = toView(row, [], uow.now);
  await recordEvent(uow, { type: 'public-signup-token-created', data: view });
  return { ...view, secret, url: inviteUrl(baseUrl, secret) };
}

/** Changes when a link expires, or turns it off or on again. */
export async function updateInviteLink(
  uow: UnitOfWork,
  reference: string,
  input: { expiresAt?: Date; enabled?: boolean },
): Promise<InviteLinkView> {
  const row = await findLink(uow.tx, reference, true);
  if (input.expiresAt) assertFuture(input.expiresAt, uow.now);
  const users = (await usersOf(uow.tx, [row.id])).get(row.id) ?? [];
  const updated = await uow.tx
    .updateTable('invite_links')
    .set({
      ...(input.expiresAt ? { expires_at: input.expiresAt } : {}),
      ...(input.enabled !== undefined ? { enabled: input.enabled } : {}),
    })
    .where('id', '=', row.id)
    .returningAll()
    .executeTakeFirstOrThrow();
  const [before, after] = [toView(row, users, uow.now), toView(updated, users, uow.now)];
  await recordEvent(uow, { type: 'public-signup-token-updated', data: after, preData: before });
  return after;
}

const REFUSED = 'This invite link is unknown, turned off or expired; ask an Admin for a new one';

/** The link a secret names, if it may still be used; a 400 otherwise (Unleash's `GET /invite/:token/validate`). */
export async function validInviteLink(db: Db, secret: string, now: Date) {
  const row = await db.selectFrom('invite_links').selectAll().where('secret_hash', '=', hashToken(secret)).executeTakeFirst();
  if (!row?.enabled || row.expires_at <= now) throw new BadDataError(REFUSED);
  return row;
}

/** Makes an account through an invite link, with the link's role; a taken email or username is a 409. */
export async function signUpWithInvite(
  uow: UnitOfWork,
  secret: string,
  person: { email: string; name: string; username?: string; passwordHash: string },
): Promise<UserView> {
  const link = await validInviteLink(uow.tx, secret, uow.now);
  const user = await createUser(uow, {
    email: person.email,
    name: person.name,
    ...(person.username ? { username: person.username } : {}),
    rootRole: link.root_role,
    passwordHash: person.passwordHash,
    // Typed by whoever holds the link: never proof that the address is theirs.
    emailVerified: false,
  });
  await uow.tx.insertInto('invite_link_users').values({ invite_link_id: link.id, user_id: user.id }).execute();
  await recordEvent(uow, { type: 'public-signup-token-user-added', data: { id: link.id, name: link.name, userId: user.id } });
  return user;
}
