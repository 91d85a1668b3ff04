import type { RootRoleName } from '../../db/schema.js';
import type { Actor } from '../../db/unit-of-work.js';

// The ids Unleash gives its built-in identities, so events and creator filters read the same as there.
export const ADMIN_TOKEN_USER_ID = -42;
export const SYSTEM_USER_ID = -1337;

export const SYSTEM_ACTOR: Actor = { kind: 'system' };

export function actorRootRole(actor: Actor): RootRoleName {
  return actor.kind === 'user' ? actor.rootRole : 'Admin';
}

/** `createdBy` / `createdByUserId` of the events this actor records. */
export function actorIdentity(actor: Actor): { createdBy: string; createdByUserId: number } {
  switch (actor.kind) {
    case 'user':
      return { createdBy: actor.username, createdByUserId: actor.userId };
    case 'admin-token':
      return { createdBy: 'admin-token', createdByUserId: ADMIN_TOKEN_USER_ID };
    case 'system':
      return { createdBy: 'system', createdByUserId: SYSTEM_USER_ID };
    case 'identity-provider':
      return { createdBy: actor.name, createdByUserId: SYSTEM_USER_ID };
  }
}
