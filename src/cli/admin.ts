/**
 * Operator commands: `reset-password` and a direct `import-unleash` run beside (PostgreSQL) or instead of
 * (embedded database) the server, with its environment variables; `apply`, `export` and `import-unleash --url`
 * talk to a running Vexil over HTTP, so they run from CI against any instance.
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config.js';
import { DataDirInUseError } from '../db/data-dir-lock.js';
import { openDatabase } from '../db/database.js';
import { migrateToLatest } from '../db/migrate.js';
import { inUnitOfWork } from '../db/unit-of-work.js';
import { waitForDatabase } from '../db/wait-for-database.js';
import { SYSTEM_ACTOR } from '../domain/access/actor.js';
import {
  applyFlagsFile,
  applyProject,
  applyShared,
  emptyReport,
  withoutUnknowableIds,
  type ApplyReport,
} from '../domain/flags-file/apply-flags-file.js';
import type { FlagsFile } from '../domain/flags-file/flags-file.js';
import { changeUserPassword } from '../domain/users/users.js';
import { createLogger } from '../http/plugins/logging.js';
import { systemClock } from '../shared/clock.js';
import { hardenPrototypes } from '../shared/prototype-hardening.js';
import { generatedPassword, hashPassword } from '../shared/secrets.js';
import { flagsFileYaml, locatedProblems, parseFlagsYaml } from './flags-yaml.js';
import { adminApi, ApiAnswerError, CommandError } from './http-api.js';
import { checkImport, type ImportCheck } from './import-check.js';
import { readUnleash } from './unleash-source.js';

// It reads flags files and a remote Unleash's answers: no key of those reaches a prototype, as in the server.
hardenPrototypes();

const USAGE = `Usage: npm run admin -- <command> [options]

Commands:
  reset-password <username or email>   Give the user a new random password, printed once, and end their sessions
  apply -f <flags.yaml> [--dry-run] [--detailed-exitcode]
                                       Make a Vexil's configuration what the flags file says (shows what changes);
                                       --detailed-exitcode exits 2 when something changes (or would), 0 when not
  export [--project <id>] [--archived] Print a Vexil's configuration as a flags file (YAML)
  import-unleash --from <unleash url> --from-token <admin token> [--project <id>] [--dry-run]
                                       Bring projects, environments, segments, context fields, tags, strategies
                                       and flags from a running Unleash; into a running Vexil (--url), then compare
                                       what SDKs get from both per environment and project (client tokens made for
                                       it and deleted after), print every difference and exit 3 when there is one

Options:
  --url <vexil url>, --token <admin token>   The Vexil to talk to (or VEXIL_URL, VEXIL_TOKEN). import-unleash
                                             without them writes into the server's database directly.

reset-password and a direct import-unleash use the server's database: DATABASE_URL, or the embedded database in
DATA_DIR (stop the server first).`;

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
    await inUnitOfWork({ db: database.db, clock: systemClock }, SYSTEM_ACTOR, (uow) => changeUserPassword(uow, user.id, passwordHash), {
      inMaintenance: 'account recovery',
    });
    return `The password of "${user.username ?? login}" is now ${password}\nIt is shown only this once; their sessions have ended.\n`;
  } finally {
    await database.close();
  }
}

/** Runs `work` on the server's database (migrated first), closing it afterwards. */
async function withServerDatabase<T>(work: (deps: { db: Awaited<ReturnType<typeof openDatabase>>['db'] }) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const database = await openDatabase(config.database);
  try {
    if (config.database.kind === 'postgres') await waitForDatabase(database.db, config.database.waitMs, createLogger('warn'));
    await migrateToLatest(database.db);
    return await work({ db: database.db });
  } finally {
    await database.close();
  }
}

const SIGNS: Record<string, string> = { created: '+', updated: '~', archived: '-', revived: '+', proposed: '?' };

/** What an apply changed (or would), a line per change, and a summary. */
function describeReport(report: ApplyReport, dryRun: boolean): string {
  const lines = report.changes.map((c) => `${SIGNS[c.change] ?? ' '} ${c.change.padEnd(8)} ${c.target}${c.detail ? `: ${c.detail}` : ''}`);
  const counts = new Map<string, number>();
  for (const change of report.changes) counts.set(change.change, (counts.get(change.change) ?? 0) + 1);
  const summary =
    report.changes.length === 0
      ? 'Nothing to change: the configuration already matches.'
      : `${dryRun ? 'Would change' : 'Changed'}: ${[...counts].map(([kind, count]) => `${count} ${kind}`).join(', ')}.`;
  const requests = report.changeRequests.map((cr) => {
    const where = `(project "${cr.project}", environment "${cr.environment}")`;
    return cr.id === null
      ? `A new change request ${where} would hold the changes to that protected environment.`
      : `Change request ${cr.id} ${where} holds the changes to that protected environment; it needs review.`;
  });
  return `${[...lines, summary, ...requests, ...(dryRun ? ['Dry run: nothing was written.'] : [])].join('\n')}\n`;
}

function vexilApi(values: { url?: string; token?: string }) {
  const url = values.url ?? process.env.VEXIL_URL;
  const token = values.token ?? process.env.VEXIL_TOKEN;
  if (!url || !token) throw new CommandError('Name the Vexil to talk to: --url and --token (or VEXIL_URL and VEXIL_TOKEN)');
  return adminApi('Vexil', url, token);
}

/** What a command prints, and its exit status when not 0 (the detailed exit status of a plan). */
type CommandResult = string | { output: string; code: number };

/** With --detailed-exitcode (as `terraform plan` has it): 2 when changes are pending or made, so CI sees drift. */
const CHANGES_EXIT_CODE = 2;
/** An import whose comparison found SDK-visible differences. */
const IMPORT_DIFFERS_EXIT_CODE = 3;

async function applyCommand(args: string[]): Promise<CommandResult> {
  const { values } = parseArgs({
    args,
    options: {
      file: { type: 'string', short: 'f' },
      url: { type: 'string' },
      token: { type: 'string' },
      'dry-run': { type: 'boolean' },
      'detailed-exitcode': { type: 'boolean' },
    },
    strict: true,
  });
  if (!values.file) throw new CommandError('Name the flags file: apply -f flags.yaml');
  const api = vexilApi(values);
  let text: string;
  try {
    text = await readFile(values.file, 'utf8');
  } catch (error) {
    throw new CommandError(`Could not read ${values.file}: ${(error as Error).message}`);
  }
  const parsed = parseFlagsYaml(text, values.file);
  const dryRun = values['dry-run'] ?? false;
  try {
    const report = await api.post<ApplyReport>(`/api/admin/flags-file/apply${dryRun ? '?dryRun=true' : ''}`, parsed.file);
    const output = describeReport(report, dryRun);
    return values['detailed-exitcode'] && report.changes.length > 0 ? { output, code: CHANGES_EXIT_CODE } : output;
  } catch (error) {
    if (error instanceof ApiAnswerError && error.status === 400) {
      throw new CommandError(`${locatedProblems(parsed, error.message, error.details)}\nNothing was applied.`);
    }
    throw error;
  }
}

async function exportCommand(args: string[]): Promise<string> {
  const { values } = parseArgs({
    args,
    options: { url: { type: 'string' }, token: { type: 'string' }, project: { type: 'string' }, archived: { type: 'boolean' } },
    strict: true,
  });
  const api = vexilApi(values);
  const query = new URLSearchParams({
    ...(values.project ? { project: values.project } : {}),
    ...(values.archived ? { archived: 'true' } : {}),
  }).toString();
  const file = await api.get<FlagsFile>(`/api/admin/flags-file${query ? `?${query}` : ''}`);
  return flagsFileYaml(file, api.baseUrl);
}

/** Shared definitions, then one project at a time: a failure leaves no project half-imported. */
async function importIntoRunningVexil(api: ReturnType<typeof adminApi>, file: FlagsFile, dryRun: boolean): Promise<ApplyReport> {
  if (dryRun) return api.post<ApplyReport>('/api/admin/flags-file/apply?dryRun=true', file);
  const report = emptyReport();
  const merge = (part: ApplyReport) => {
    report.changes.push(...part.changes);
    report.changeRequests.push(...part.changeRequests);
  };
  // A project-scoped segment needs its project: those projects come along, without their flags yet.
  const segmentProjects = new Set((file.segments ?? []).map((segment) => segment.project).filter(Boolean));
  const shells = (file.projects ?? []).filter((project) => segmentProjects.has(project.id)).map((project) => ({ ...project, flags: [] }));
  const steps: Array<[string, FlagsFile]> = [
    ['the shared definitions', { ...file, projects: shells }],
    ...(file.projects ?? []).map((project): [string, FlagsFile] => [`project "${project.id}"`, { version: 1, projects: [project] }]),
  ];
  for (const [index, [what, part]] of steps.entries()) {
    try {
      merge(await api.post<ApplyReport>('/api/admin/flags-file/apply', part));
    } catch (error) {
      // What the steps before committed stays; say what it was, where it stopped, and what was not reached.
      const notReached = steps.slice(index + 1).map(([name]) => name);
      throw new CommandError(
        `${describeReport(report, false)}Stopped at ${what}: ${(error as Error).message}\nNothing of ${what} was written${
          notReached.length > 0 ? `; not reached: ${notReached.join(', ')}` : ''
        }. Import again once the cause is fixed: what is already there is left as it is.`,
      );
    }
  }
  return report;
}

/**
 * Flags that were already in Vexil and that the import changed to what Unleash has: a flag of the same name made
 * in Vexil, or changed there since the last import, loses its settings; said aloud, not done silently.
 */
function overwrittenFlags(report: ApplyReport, dryRun: boolean): string {
  const flagOf = (target: string) => /^flag "([^"]+)"/.exec(target)?.[1];
  const created = new Set(report.changes.filter((c) => c.change === 'created').map((c) => flagOf(c.target)));
  const overwritten = [
    ...new Set(
      report.changes
        .filter((c) => c.change === 'updated' || c.change === 'proposed')
        .map((c) => flagOf(c.target))
        .filter((name): name is string => name !== undefined && !created.has(name)),
    ),
  ];
  if (overwritten.length === 0) return '';
  return `${dryRun ? 'Would overwrite' : 'Overwritten'} in Vexil to match Unleash (flags that were already there): ${overwritten.join(', ')}.\n`;
}

/** The import's comparison in words: what was compared, each difference, and what to do. */
function describeCheck(check: ImportCheck): string {
  const compared = `Compared what SDKs get from Unleash and from Vexil: ${check.compared.flags} flag answers in ${check.compared.scopes} environment and project scopes.`;
  const unlisted =
    check.unlistedProjects.length === 0
      ? []
      : [
          `Unleash serves SDKs the flags of projects its admin API does not list (${check.unlistedProjects.join(', ')}); they were not brought over.`,
        ];
  if (check.differences.length === 0 && unlisted.length === 0) return `${compared} No difference.\n`;
  return `${[compared, ...check.differences.map((line) => `  ≠ ${line}`), ...unlisted, `${check.differences.length + unlisted.length} differences: SDKs would see Vexil answer otherwise than Unleash.`].join('\n')}\n`;
}

async function importUnleashCommand(args: string[]): Promise<CommandResult> {
  const { values } = parseArgs({
    args,
    options: {
      from: { type: 'string' },
      'from-token': { type: 'string' },
      project: { type: 'string' },
      url: { type: 'string' },
      token: { type: 'string' },
      'dry-run': { type: 'boolean' },
    },
    strict: true,
  });
  if (!values.from || !values['from-token']) throw new CommandError('Name the Unleash to read: --from <url> --from-token <admin token>');
  const dryRun = values['dry-run'] ?? false;
  const source = adminApi('Unleash', values.from, values['from-token'], { notice: (line) => process.stderr.write(`${line}\n`) });
  const { file, notBrought, unlistedProjects } = await readUnleash(source, values.project);
  const flagCount = (file.projects ?? []).reduce((sum, p) => sum + (p.flags?.length ?? 0), 0);
  const unlisted =
    unlistedProjects.length === 0
      ? ''
      : `Unleash's admin API does not list ${unlistedProjects.length === 1 ? 'the project' : 'the projects'} ${unlistedProjects.join(', ')}, yet serves SDKs ${unlistedProjects.length === 1 ? 'its' : 'their'} flags: brought too.\n`;
  const read = `Read from Unleash: ${file.projects?.length ?? 0} projects, ${flagCount} flags, ${file.segments?.length ?? 0} segments, ${file.contextFields?.length ?? 0} context fields, ${file.strategies?.length ?? 0} custom strategies.\n${unlisted}`;

  let report: ApplyReport;
  let check: ImportCheck | undefined;
  if (values.url || values.token || process.env.VEXIL_URL) {
    const target = vexilApi(values);
    report = await importIntoRunningVexil(target, file, dryRun);
    if (!dryRun) {
      const environments = (file.environments ?? []).filter((environment) => environment.enabled !== false).map((e) => e.name);
      check = await checkImport(
        source,
        target,
        environments,
        (file.projects ?? []).map((project) => project.id),
      );
    }
  } else {
    report = await withServerDatabase(async ({ db }) => {
      const deps = { db, clock: systemClock };
      if (dryRun) {
        const planned = emptyReport();
        await inUnitOfWork(deps, SYSTEM_ACTOR, (uow) => applyFlagsFile(uow, file, planned), { rollback: true });
        return withoutUnknowableIds(planned);
      }
      const applied = emptyReport();
      await inUnitOfWork(deps, SYSTEM_ACTOR, (uow) => applyShared(uow, file, applied));
      for (const index of (file.projects ?? []).keys()) {
        await inUnitOfWork(deps, SYSTEM_ACTOR, (uow) => applyProject(uow, file, index, applied));
      }
      return applied;
    });
  }
  const left = `Not brought over:\n${notBrought.map((line) => `  - ${line}`).join('\n')}\n`;
  const output = `${read}${describeReport(report, dryRun)}${overwrittenFlags(report, dryRun)}${left}${check ? describeCheck(check) : ''}`;
  const differs = check !== undefined && (check.differences.length > 0 || check.unlistedProjects.length > 0);
  return differs ? { output, code: IMPORT_DIFFERS_EXIT_CODE } : output;
}

async function run(args: string[]): Promise<number> {
  const [command, ...rest] = args;
  if (command === 'reset-password' && rest.length === 1 && rest[0]!.trim() !== '') {
    process.stdout.write(await resetPassword(rest[0]!.trim()));
    return 0;
  }
  const commands: Record<string, (args: string[]) => Promise<CommandResult>> = {
    apply: applyCommand,
    export: exportCommand,
    'import-unleash': importUnleashCommand,
  };
  const handler = command === undefined ? undefined : commands[command];
  if (handler) {
    try {
      const result = await handler(rest);
      if (typeof result !== 'string') {
        process.stdout.write(result.output);
        return result.code;
      }
      process.stdout.write(result);
    } catch (error) {
      // parseArgs names the unknown or malformed option; the usage follows.
      if ((error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS'))
        throw new CommandError(`${(error as Error).message}\n\n${USAGE}`);
      throw error;
    }
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
