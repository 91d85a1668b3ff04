import { sql } from 'kysely';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { generatedPassword, hashPassword } from '../../shared/secrets.js';
import { ensureAdminTokens } from '../api-tokens/api-tokens.js';
import { createUser } from '../users/users.js';

// Any constant works: it only has to be the same for every Vexil instance sharing the database.
const BOOTSTRAP_LOCK_KEY = 7_245_870_001;

export interface BootstrapResult {
  adminTokensCreated: number;
  /** Set only on the start that created the first admin user: the one time its password exists in clear. */
  initialAdmin?: { username: string; password: string };
}

/**
 * Start-up set-up, in a unit of work of the `system` actor so it is audited like any change: creates the configured admin
 * tokens, and on a first start with no way in (no users, no admin token) creates an `admin` user with a random
 * password. Runs under an advisory lock so instances starting together do it once.
 */
export async function setUpInstallation(uow: UnitOfWork, initAdminApiTokens: string[]): Promise<BootstrapResult> {
  await sql`SELECT pg_advisory_xact_lock(${BOOTSTRAP_LOCK_KEY})`.execute(uow.tx);
  const adminTokensCreated = await ensureAdminTokens(uow, initAdminApiTokens);
  if (initAdminApiTokens.length > 0) return { adminTokensCreated };
  const { users } = await uow.tx
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number>().as('users'))
    .executeTakeFirstOrThrow();
  const { tokens } = await uow.tx
    .selectFrom('api_tokens')
    .select((eb) => eb.fn.countAll<number>().as('tokens'))
    .where('type', '=', 'admin')
    .executeTakeFirstOrThrow();
  if (Number(users) > 0 || Number(tokens) > 0) return { adminTokensCreated };
  // Hashed here rather than before the transaction: it happens once in an installation's life.
  const password = generatedPassword();
  await createUser(uow, { username: 'admin', name: 'Admin', rootRole: 'Admin', passwordHash: await hashPassword(password) });
  return { adminTokensCreated, initialAdmin: { username: 'admin', password } };
}
