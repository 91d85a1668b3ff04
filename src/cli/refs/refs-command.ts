import { readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { CommandOutcome } from './command-outcome.js';
import { cleanupCommand } from './refs-cleanup.js';
import { LANGUAGES } from '../../domain/code-references/code-reading/languages.js';
import { type PushOptions, pushReferences } from './refs-push.js';
import { type CodeReference, scanRepository } from '../../domain/code-references/code-reading/scanner.js';

export const REFS_USAGE = `Usage: vexil refs scan [DIR] [--json] [--wrapper NAME]... [--fail-on-unresolved]
       vexil refs push [DIR] [--wrapper NAME]... [--repository NAME] [--branch NAME] [--commit SHA] [--url-template URL]
       vexil refs cleanup FLAG --keep on|off [DIR] [--wrapper NAME]... [--write]

scan  finds every reference to a feature flag in DIR (the current directory by default), parsing
      ${LANGUAGES.map((language) => language.name).join(', ')}.
  --json                 one JSON object per reference on standard output (the summary goes to standard error)
  --wrapper NAME         a function of the project's own that takes a flag's name first (repeatable; also
                         listed in .vexil-refs.json at DIR's root: {"wrappers": ["useFeature"]})
  --fail-on-unresolved   exit 1 when a reference's flag name cannot be worked out from the code
push  scans DIR and sends its references to Vexil (VEXIL_URL, VEXIL_TOKEN: a token whose role holds
      UPDATE_CODE_REFERENCES), for one repository, branch and commit. In GitHub Actions and GitLab CI these come
      from the job; elsewhere from git. The URL template makes each reference a link: {commit}, {branch}, {file}
      and {line} are filled in (GitHub's and GitLab's are known from the job).
cleanup  writes the patch that takes FLAG out of the code in DIR, keeping the branch that runs when the flag is on
      (or off): for TypeScript, JavaScript and Python the checks, the branches that no longer run, and the imports
      and name constants nothing uses any more go; the patch goes to standard output (for git apply), and what is
      left for a person (variant reads, other languages) to standard error.
  --keep on|off          the branch production runs (the flag's removal readiness says which)
  --write                change the files in place instead of printing the patch
Exit codes: 0 done, 1 unresolved references with --fail-on-unresolved, a push refused, or places a cleanup left for
a person, 2 a usage error.
`;

function usageError(message: string): CommandOutcome {
  return { stdout: '', stderr: `vexil refs: ${message}\n\n${REFS_USAGE}`, exitCode: 2 };
}

/** `vexil refs …` with its arguments (after `refs`). */
export async function runRefsCommand(args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<CommandOutcome> {
  const [subcommand, ...rest] = args;
  if (subcommand === undefined || subcommand === '--help') return { stdout: REFS_USAGE, stderr: '', exitCode: 0 };
  if (subcommand !== 'scan' && subcommand !== 'push' && subcommand !== 'cleanup') return usageError(`unknown command "${subcommand}"`);
  let parsed: ReturnType<typeof parseScanArguments>;
  try {
    parsed = parseScanArguments(rest, subcommand);
  } catch (error) {
    return usageError(error instanceof Error ? error.message : String(error));
  }
  const flag = subcommand === 'cleanup' ? parsed.positionals.shift() : undefined;
  if (subcommand === 'cleanup') {
    if (!flag) return usageError('cleanup needs the name of the flag to take out');
    if (parsed.values.keep !== 'on' && parsed.values.keep !== 'off') return usageError('cleanup needs --keep on or --keep off');
  }
  if (parsed.positionals.length > 1) return usageError(`one directory at most, not ${parsed.positionals.join(' ')}`);
  const root = resolve(cwd, parsed.positionals[0] ?? '.');
  const isDirectory = await stat(root).then(
    (found) => found.isDirectory(),
    () => false,
  );
  if (!isDirectory) return usageError(`${root} is not a directory`);
  let wrappers: string[];
  try {
    wrappers = [...(await configuredWrappers(root)), ...(parsed.values.wrapper ?? [])];
  } catch (error) {
    return usageError(error instanceof Error ? error.message : String(error));
  }
  if (subcommand === 'push') return pushReferences(root, { ...parsed.values, wrapper: wrappers }, env);
  if (flag) return cleanupCommand(root, flag, parsed.values.keep === 'on', wrappers, parsed.values.write === true);
  const result = await scanRepository(root, { wrappers });
  const summary = summarise(result.references, result.filesScanned, result.filesWithSyntaxErrors);
  const unresolved = result.references.filter((reference) => reference.flag === null).length;
  const exitCode = parsed.values['fail-on-unresolved'] && unresolved > 0 ? 1 : 0;
  if (parsed.values.json) {
    return { stdout: result.references.map((reference) => `${JSON.stringify(reference)}\n`).join(''), stderr: summary, exitCode };
  }
  return { stdout: summary, stderr: '', exitCode };
}

/** The repository's own settings for the scanner: `.vexil-refs.json` at its root, `{"wrappers": ["useFeature"]}`. */
export const CONFIG_FILE = '.vexil-refs.json';

async function configuredWrappers(root: string): Promise<string[]> {
  let text: string;
  try {
    text = await readFile(join(root, CONFIG_FILE), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  let config: unknown;
  try {
    config = JSON.parse(text);
  } catch (error) {
    throw new Error(`${CONFIG_FILE} is not JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  const wrappers = (config as { wrappers?: unknown } | null)?.wrappers;
  const valid =
    typeof config === 'object' &&
    config !== null &&
    !Array.isArray(config) &&
    Object.keys(config).every((key) => key === 'wrappers') &&
    (wrappers === undefined ||
      (Array.isArray(wrappers) &&
        wrappers.length <= 200 &&
        wrappers.every((name) => typeof name === 'string' && /^[A-Za-z_$][\w$]*[?!]?$/.test(name))));
  if (!valid) throw new Error(`${CONFIG_FILE} holds {"wrappers": [function names]} and nothing else`);
  return (wrappers as string[] | undefined) ?? [];
}

function parseScanArguments(args: string[], subcommand: 'scan' | 'push' | 'cleanup') {
  const common = { wrapper: { type: 'string', multiple: true } } as const;
  const options =
    subcommand === 'scan'
      ? { ...common, json: { type: 'boolean' }, 'fail-on-unresolved': { type: 'boolean' } }
      : subcommand === 'cleanup'
        ? { ...common, keep: { type: 'string' }, write: { type: 'boolean' } }
        : {
            ...common,
            repository: { type: 'string' },
            branch: { type: 'string' },
            commit: { type: 'string' },
            'url-template': { type: 'string' },
          };
  return parseArgs({
    args,
    allowPositionals: true,
    options: options as typeof common & Record<string, { type: 'string' | 'boolean' }>,
  }) as {
    positionals: string[];
    values: { wrapper?: string[]; json?: boolean; 'fail-on-unresolved'?: boolean; keep?: string; write?: boolean } & PushOptions;
  };
}

function summarise(references: CodeReference[], filesScanned: number, withErrors: string[]): string {
  const byFlag = new Map<string, CodeReference[]>();
  for (const reference of references) {
    if (reference.flag !== null) byFlag.set(reference.flag, [...(byFlag.get(reference.flag) ?? []), reference]);
  }
  const unresolved = references.filter((reference) => reference.flag === null);
  const lines = [
    `${references.length} references to ${byFlag.size} flags in ${filesScanned} files${unresolved.length > 0 ? `; ${unresolved.length} whose flag could not be worked out` : ''}`,
  ];
  for (const [flag, places] of [...byFlag].sort(([a], [b]) => a.localeCompare(b))) {
    lines.push(`  ${flag}: ${places.map((place) => `${place.file}:${place.line}`).join(', ')}`);
  }
  if (unresolved.length > 0) {
    lines.push('Unresolved (the flag is named by an expression the scanner cannot follow):');
    for (const place of unresolved) lines.push(`  ${place.file}:${place.line} ${place.call}(${place.expression})`);
  }
  if (withErrors.length > 0) lines.push(`Read in part (syntax errors): ${withErrors.join(', ')}`);
  return `${lines.join('\n')}\n`;
}
