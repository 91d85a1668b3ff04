import type { StartingSignInPolicy } from '../../config.js';
import type { Db } from '../../db/database.js';
import type { RootRoleName } from '../../db/schema.js';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { readEmailDomains, MAX_EMAIL_DOMAINS } from '../../shared/email-domains.js';
import { BadDataError } from '../../shared/errors.js';
import { ROOT_ROLES } from '../access/permissions.js';
import { recordEvent } from '../events/record-event.js';

/** Who the identity provider may bring in, and as what. */
export interface SignInPolicy {
  /** Whether a person the provider signs in for the first time becomes a user; off, an Admin creates them first. */
  autoCreate: boolean;
  /** The root role of a user created at sign-in. */
  defaultRootRole: RootRoleName;
  /** Email domains the provider's people must have (lower case); empty lets any in. */
  emailDomains: string[];
}

/** The policy when the provider is not configured and no Admin has set one: anyone in, as a Viewer. */
export const OPEN_SIGN_IN_POLICY: SignInPolicy = { autoCreate: true, defaultRootRole: 'Viewer', emailDomains: [] };

/** The policy a provider starts with, from its configuration. */
export function startingSignInPolicy(config: StartingSignInPolicy): SignInPolicy {
  return { autoCreate: config.autoCreate, defaultRootRole: config.defaultRole, emailDomains: config.emailDomains };
}

/** The identity providers a policy is kept for, each its own. */
export type SignInProvider = 'oidc' | 'saml';

/** Unleash's names for the settings, and the `id` their `setting-updated` events carry. */
const SETTING_NAMES: Record<SignInProvider, string> = { oidc: 'oidcSettings', saml: 'samlSettings' };

/**
 * Email domains as Unleash writes them: one string, comma-separated. Each must be a domain name; a mistake names
 * the domain and the field.
 */
export function parseEmailDomains(text: string, path: string): string[] {
  const { domains, wrong } = readEmailDomains(text);
  if (wrong !== undefined) {
    throw new BadDataError(`"${wrong}" is not an email domain such as example.com`, [{ path, message: `"${wrong}" is not a domain` }]);
  }
  if (domains.length > MAX_EMAIL_DOMAINS) {
    throw new BadDataError(`At most ${MAX_EMAIL_DOMAINS} email domains`, [{ path, message: `At most ${MAX_EMAIL_DOMAINS} domains` }]);
  }
  return domains;
}

/** The provider's policy in force: what an Admin set, or else what the server was started with (`fallback`). */
export async function readSignInPolicy(db: Db, provider: SignInProvider, fallback: SignInPolicy): Promise<SignInPolicy> {
  const row = await db.selectFrom('settings').select('content').where('name', '=', SETTING_NAMES[provider]).executeTakeFirst();
  return row ? { ...fallback, ...(row.content as Partial<SignInPolicy>) } : fallback;
}

/** Changes what is given of the provider's policy, recorded as `setting-updated`. */
export async function setSignInPolicy(
  uow: UnitOfWork,
  provider: SignInProvider,
  change: { autoCreate?: boolean; defaultRootRole?: string; emailDomains?: string },
  fallback: SignInPolicy,
): Promise<SignInPolicy> {
  const role = ROOT_ROLES.find((candidate) => candidate === change.defaultRootRole);
  if (change.defaultRootRole !== undefined && role === undefined) {
    throw new BadDataError('defaultRootRole must be Admin, Editor or Viewer', [
      { path: '/body/defaultRootRole', message: 'Admin, Editor or Viewer' },
    ]);
  }
  const current = await readSignInPolicy(uow.tx, provider, fallback);
  const name = SETTING_NAMES[provider];
  const next: SignInPolicy = {
    autoCreate: change.autoCreate ?? current.autoCreate,
    defaultRootRole: role ?? current.defaultRootRole,
    emailDomains: change.emailDomains === undefined ? current.emailDomains : parseEmailDomains(change.emailDomains, '/body/emailDomains'),
  };
  const content = JSON.stringify(next);
  await uow.tx
    .insertInto('settings')
    .values({ name, content })
    .onConflict((oc) => oc.column('name').doUpdateSet({ content }))
    .execute();
  await recordEvent(uow, { type: 'setting-updated', data: { id: name, ...next }, preData: { id: name, ...current } });
  return next;
}

/** Whether the policy lets in a person with this email (none: only when no domains are required). */
export function emailAllowed(policy: SignInPolicy, email: string | undefined): boolean {
  if (policy.emailDomains.length === 0) return true;
  const at = email?.lastIndexOf('@') ?? -1;
  return at >= 0 && policy.emailDomains.includes(email!.slice(at + 1).toLowerCase());
}
