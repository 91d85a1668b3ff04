import { HourlyCount } from '../../shared/hourly-count.js';
import type { Db } from '../../db/database.js';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { InvalidTokenError, NotFoundError } from '../../shared/errors.js';
import { hashToken, randomSecret } from '../../shared/secrets.js';
import { actorIdentity } from '../access/actor.js';
import { ROOT_ROLE_IDS } from '../access/permissions.js';
import { changeUserPassword, hashNewPassword } from './users.js';

/** How long a reset link works, as in Unleash. */
export const RESET_LINK_HOURS = 24;

/** Where a person chooses their new password: the admin UI's page, with the token. */
export const resetLink = (baseUrl: string, token: string) => `${baseUrl}/reset-password?token=${encodeURIComponent(token)}`;

/** Whom a reset link is for, as Unleash's `tokenUserSchema` shows them to the page that uses it. */
export interface ResetTokenUser {
  id: number;
  name?: string;
  email: string;
  token: string;
  createdBy: string;
  role: { id: number; name: string; type: string };
}

/**
 * Makes a reset link for a person with a password of their own to choose (not a service account, not someone an
 * identity provider manages): any link made before for them stops working. Answers the token, shown once.
 */
async function createResetToken(uow: UnitOfWork, userId: number): Promise<string> {
  const token = randomSecret(24);
  await uow.tx
    .updateTable('password_reset_tokens')
    .set({ used_at: uow.now })
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .execute();
  await uow.tx
    .insertInto('password_reset_tokens')
    .values({
      token_hash: hashToken(token),
      user_id: userId,
      created_at: uow.now,
      expires_at: new Date(uow.now.getTime() + RESET_LINK_HOURS * 3_600_000),
      created_by: actorIdentity(uow.actor).createdBy,
    })
    .execute();
  return token;
}

/** The person an email address or username names, if they may reset a password (not a service account or SCIM's). */
async function resettablePerson(db: Db, emailOrUsername: string) {
  return db
    .selectFrom('users')
    .select(['id', 'email', 'username', 'name'])
    .where((eb) => eb.or([eb(eb.fn('lower', ['email']), '=', emailOrUsername.toLowerCase()), eb('username', '=', emailOrUsername)]))
    .where('is_service', '=', false)
    .where('scim_managed', '=', false)
    .where('deactivated_at', 'is', null)
    .executeTakeFirst();
}

/** An Admin's reset link for someone (Unleash's `POST /api/admin/user-admin/reset-password`), to hand over themselves. */
export async function createResetLinkFor(uow: UnitOfWork, emailOrUsername: string, baseUrl: string): Promise<string> {
  const person = await resettablePerson(uow.tx, emailOrUsername);
  if (!person) throw new NotFoundError(`No one who signs in with a password has the email or username "${emailOrUsername}"`);
  return resetLink(baseUrl, await createResetToken(uow, person.id));
}

/**
 * A reset link for the person with this email, to send them: undefined when nobody may reset with it, which the caller
 * must not reveal (anyone can ask).
 */
export async function createResetLinkByEmail(
  uow: UnitOfWork,
  email: string,
  baseUrl: string,
): Promise<{ link: string; email: string; name: string | null } | undefined> {
  const person = await resettablePerson(uow.tx, email);
  if (!person?.email || person.email.toLowerCase() !== email.toLowerCase()) return undefined;
  return { link: resetLink(baseUrl, await createResetToken(uow, person.id)), email: person.email, name: person.name };
}

async function validToken(db: Db, token: string, now: Date) {
  const row = await db
    .selectFrom('password_reset_tokens as t')
    .innerJoin('users as u', 'u.id', 't.user_id')
    .select(['t.token_hash', 't.created_by', 't.expires_at', 't.used_at', 'u.id', 'u.name', 'u.email', 'u.username', 'u.root_role'])
    .where('t.token_hash', '=', hashToken(token))
    .executeTakeFirst();
  if (!row || row.used_at !== null || row.expires_at <= now) {
    throw new InvalidTokenError('This link is unknown, used or expired; ask for a new one');
  }
  return row;
}

/** Whom a reset link is for, if it still works (Unleash's `GET /auth/reset/validate`). */
export async function resetTokenUser(db: Db, token: string, now: Date): Promise<ResetTokenUser> {
  const row = await validToken(db, token, now);
  return {
    id: row.id,
    ...(row.name ? { name: row.name } : {}),
    email: row.email ?? row.username ?? '',
    token,
    createdBy: row.created_by,
    role: { id: ROOT_ROLE_IDS[row.root_role], name: row.root_role, type: 'root' },
  };
}

/** Chooses a new password through a reset link: the link is used up, and every session of the person ends. */
export async function resetPassword(uow: UnitOfWork, token: string, password: string): Promise<void> {
  const row = await validToken(uow.tx, token, uow.now);
  const passwordHash = await hashNewPassword(password, '/body/password');
  const claimed = await uow.tx
    .updateTable('password_reset_tokens')
    .set({ used_at: uow.now })
    .where('token_hash', '=', row.token_hash)
    .where('used_at', 'is', null)
    .returning('token_hash')
    .executeTakeFirst();
  // Two uses at once: the second finds the link used.
  if (!claimed) throw new InvalidTokenError('This link is unknown, used or expired; ask for a new one');
  await changeUserPassword(uow, row.id, passwordHash);
}

/** Reset emails one address may be sent per hour by one instance: anyone may ask, so no one can flood an inbox. */
export const RESET_EMAILS_PER_HOUR = 3;
/** Reset requests one client address may make per hour: enough for an office behind one address, not for a sweep. */
export const RESET_REQUESTS_PER_CLIENT_HOUR = 30;
/** Counts reset emails per address, and reset requests per client address, over the last hour (this instance's). */
export class ResetEmailLimit {
  private readonly perAddress = new HourlyCount(RESET_EMAILS_PER_HOUR);
  private readonly perClient = new HourlyCount(RESET_REQUESTS_PER_CLIENT_HOUR);

  /** Whether another email may go to the address now, asked from `client`; counts it when it may. */
  allow(email: string, client: string, now: number): boolean {
    const address = email.toLowerCase();
    if (!this.perAddress.allows(address, now) || !this.perClient.allows(client, now)) return false;
    this.perAddress.count(address, now);
    this.perClient.count(client, now);
    return true;
  }
}

/** The email that carries a reset link. */
export function resetEmail(to: { email: string; name: string | null }, link: string) {
  const greeting = to.name ? `Hello ${to.name},` : 'Hello,';
  const text = `${greeting}\n\nSomeone asked to reset your Vexil password. Choose a new one here within ${RESET_LINK_HOURS} hours:\n\n${link}\n\nIf it was not you, ignore this email: your password stays as it is.\n`;
  const escaped = (value: string) => value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  const html = `<p>${escaped(greeting)}</p><p>Someone asked to reset your Vexil password. Choose a new one within ${RESET_LINK_HOURS} hours:</p><p><a href="${escaped(link)}">Choose a new password</a></p><p>If it was not you, ignore this email: your password stays as it is.</p>`;
  return { to: to.email, subject: 'Reset your Vexil password', text, html };
}

/**
 * Deletes reset links that can no longer be used (used, or expired): they are kept only as hashes, but a table of
 * dead links is of no use to anyone. Answers how many went.
 */
export async function pruneResetLinks(db: Db, now: Date): Promise<number> {
  const deleted = await db
    .deleteFrom('password_reset_tokens')
    .where((eb) => eb.or([eb('used_at', 'is not', null), eb('expires_at', '<=', now)]))
    .executeTakeFirst();
  return Number(deleted.numDeletedRows);
}
