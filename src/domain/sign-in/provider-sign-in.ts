import { endCredentials } from '../users/deactivation.js';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { syncSsoGroups } from '../groups/groups.js';
import { emailAllowed, type SignInPolicy } from '../settings/sign-in-policy.js';
import { ACCOUNT_DEACTIVATED, type SessionOrigin, startSession } from '../users/sessions.js';
import { type AuthType, recordSignIn } from '../users/sign-in-audit.js';
import { createUser, linkSignInIdentity, updateUser } from '../users/users.js';

/** A sign-in that could not finish, with the line the person and the log are shown. */
export class SignInRefused extends Error {
  override readonly name = 'SignInRefused';
}

/** Who an identity provider (OpenID Connect or SAML) says signed in, from an answer already verified. */
export interface ProviderIdentity {
  /** The provider's stable id for the person (the ID token's `sub`, the assertion's NameID). */
  subject: string;
  email: string | undefined;
  /** Whether the provider vouches for the email, so that it may link an existing account. */
  emailVerified: boolean;
  name: string | undefined;
  groups: string[];
}

/** The most group names an answer may bring; more are ignored (providers cap theirs similarly). */
const MAX_CLAIMED_GROUPS = 500;
const MAX_GROUP_NAME = 255;

/** The group names of a claim or attribute: text of sensible length, each once, at most `MAX_CLAIMED_GROUPS`. */
export function claimedGroups(value: unknown): string[] {
  const listed = Array.isArray(value) ? value : typeof value === 'string' ? [value] : [];
  const groups = listed.filter((group): group is string => typeof group === 'string' && group.length > 0 && group.length <= MAX_GROUP_NAME);
  return [...new Set(groups.slice(0, MAX_CLAIMED_GROUPS))];
}

/**
 * Signs a person in through an identity provider under the sign-in policy: the user the provider (`issuer`) knows
 * by this subject, or else the one with the same confirmed email, or a new user with the default root role. A
 * deactivated user is refused. Name and email follow the provider; SSO-mapped group memberships follow its groups.
 * The sign-in is audited; returns the new session's id.
 *
 * An email counts only when the provider says it verified it: providers where people register themselves
 * (Keycloak, Auth0 database connections) would otherwise let anyone be `someone@your-company.com`. So an
 * unverified email passes no email-domain rule, creates no account, links to none, and never replaces the one
 * stored.
 */
export async function signInThroughProvider(
  uow: UnitOfWork,
  provider: { issuer: string; authType: AuthType },
  identity: ProviderIdentity,
  policy: SignInPolicy,
  session: { sessionTtlHours: number; origin: SessionOrigin },
): Promise<string> {
  const unverified = identity.email !== undefined && !identity.emailVerified;
  if (unverified && policy.emailDomains.length > 0) {
    throw new SignInRefused(
      `The sign-in provider does not say it verified ${identity.email}, so it cannot show an email at ${policy.emailDomains.join(', ')}`,
    );
  }
  if (!emailAllowed(policy, identity.email)) {
    throw new SignInRefused(
      `Only people with an email at ${policy.emailDomains.join(', ')} may sign in here${identity.email ? ` (not ${identity.email})` : ''}`,
    );
  }
  const known = await uow.tx
    .selectFrom('users')
    .select(['id', 'deactivated_at'])
    .where('oidc_issuer', '=', provider.issuer)
    .where('oidc_subject', '=', identity.subject)
    .forUpdate()
    .executeTakeFirst();
  let user: { id: number; username: string | null; email: string | null };
  if (known?.deactivated_at) throw new SignInRefused(ACCOUNT_DEACTIVATED);
  if (!known) {
    if (!identity.email) {
      throw new SignInRefused('The sign-in provider sent no email for this person; Vexil needs one to know them by');
    }
    const sameEmail = await uow.tx
      .selectFrom('users')
      .selectAll()
      .where((eb) => eb(eb.fn('lower', ['email']), '=', identity.email!))
      .forUpdate()
      .executeTakeFirst();
    if (sameEmail && (sameEmail.oidc_subject !== null || sameEmail.is_service)) {
      throw new SignInRefused(`The email ${identity.email} belongs to another account; ask an administrator`);
    }
    if (sameEmail?.deactivated_at) throw new SignInRefused(ACCOUNT_DEACTIVATED);
    if (sameEmail && !sameEmail.email_verified) {
      // Made through an invite link by whoever typed this address: linking would hand its maker the real person's roles.
      throw new SignInRefused(
        `An account with the email ${identity.email} was made without confirming that email, so it is not linked; ask an administrator`,
      );
    }
    if (sameEmail && !identity.emailVerified) {
      throw new SignInRefused(
        `An account with the email ${identity.email} exists, and the provider does not say it verified that email, so it is not linked`,
      );
    }
    if (!sameEmail && !policy.autoCreate) {
      throw new SignInRefused(`${identity.email} has no account here, and none is created at sign-in; ask an administrator for one`);
    }
    if (!sameEmail && unverified) {
      throw new SignInRefused(`The sign-in provider does not say it verified ${identity.email}, so no account is created for it`);
    }
    user = sameEmail ?? (await createUser(uow, { email: identity.email, name: identity.name, rootRole: policy.defaultRootRole }));
    await linkSignInIdentity(uow, user.id, provider.issuer, identity.subject);
    // From now on the provider decides who this is: what the account held before (sessions, tokens) ends.
    if (sameEmail) await endCredentials(uow, user.id);
  } else {
    // Name and a verified email follow the provider at every later sign-in.
    user = await updateUser(uow, known.id, {
      ...(identity.name ? { name: identity.name } : {}),
      ...(identity.email && !unverified ? { email: identity.email } : {}),
    });
  }
  await syncSsoGroups(uow, { id: user.id, username: (user.username ?? user.email)! }, identity.groups);
  const { sessionId } = await startSession(uow, user.id, session.sessionTtlHours, session.origin);
  await recordSignIn(
    uow,
    { authType: provider.authType, username: user.email ?? user.username ?? undefined, origin: session.origin },
    user.id,
  );
  return sessionId;
}
