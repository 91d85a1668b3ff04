/**
 * Operator commands, run beside (PostgreSQL) or instead of (embedded database) the server, with the same
 * environment variables: `npm run admin -- reset-password <username or email>`.
 */
import { ConfigError, loadConfig } from '../config.js';
import { DataDirInUseError } from '../db/data-dir-lock.js';
import { openDatabase } from '../db/database.js';
import { migrateToLatest } from '../db/migrate.js';
import { inUnitOfWork } from '../db/unit-of-work.js';
import { waitForDatabase } from '../db/wait-for-database.js';
import { SYSTEM_ACTOR } from '../domain/access/actor.js';
import { changeUserPassword } from '../domain/users/users.commands.js';
import { createLogger } from '../http/plugins/logging.js';
import { systemClock } from '../shared/clock.js';
import { generatedPassword, hashPassword } from '../shared/secrets.js';

const USAGE = `Usage: npm run admin -- <command>

Commands:
  reset-password <username or email>   Give the user a new random password, printed once, and end their sessions

The database is the server's: DATABASE_URL, or the embedded database in DATA_DIR (stop the server first).`;

class CommandError extends Error {}

async function resetPassword(login: string): Promise<string> {
  const config = loadConfig();
  const log = createLogger('warn');
  const database = await openDatabase(config.database);
  try {
    if (config.database.kind === 'postgres') await waitForDatabase(database.db, config.database.waitMs, log);
    await migrateToLatest(database.db);
    const user = await database.db
      .selectFrom('users')
      .select(['id', 'username'])
      .where((eb) =>
        eb.or([eb(eb.fn('lower', ['username']), '=', login.toLowerCase()), eb(eb.fn('lower', ['email']), '=', login.toLowerCase())]),
      )
      .executeTakeFirst();
    if (!user) throw new CommandError(`No user has the username or email "${login}"`);
    const password = generatedPassword();
    const passwordHash = await hashPassword(password);
    // Recorded as the system actor (`user-password-changed`), like every change, without the password.
    await inUnitOfWork({ db: database.db, clock: systemClock }, SYSTEM_ACTOR, (uow) => changeUserPassword(uow, user.id, passwordHash));
    return `The password of "${user.username ?? login}" is now ${password}\nIt is shown only this once; their sessions have ended.\n`;
  } finally {
    await database.close();
  }
}

async function run(args: string[]): Promise<number> {
  const [command, ...rest] = args;
  if (command === 'reset-password' && rest.length === 1 && rest[0]!.trim() !== '') {
    process.stdout.write(await resetPassword(rest[0]!.trim()));
    return 0;
  }
  process.stderr.write(
    `${command === undefined || command === 'help' || command === '--help' ? '' : `Unknown command or arguments: ${args.join(' ')}\n\n`}${USAGE}\n`,
  );
  return command === 'help' || command === '--help' ? 0 : 2;
}

run(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    // Expected failures are one line; anything else is a bug and keeps its stack.
    const expected = error instanceof CommandError || error instanceof ConfigError || error instanceof DataDirInUseError;
    process.stderr.write(
      `vexil admin: ${expected ? error.message : error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);
