import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { adminApi, CommandError } from '../http-api.js';
import type { CommandOutcome } from './command-outcome.js';
import { scanRepository } from '../../domain/code-references/code-reading/scanner.js';

export interface PushOptions {
  wrapper?: string[];
  repository?: string;
  branch?: string;
  commit?: string;
  'url-template'?: string;
}

/** Lines sent around each reference, on either side of its own. */
const CONTEXT_LINES = 2;

interface Where {
  repository?: string;
  branch?: string;
  commit?: string;
  urlTemplate?: string;
}

/** What the CI job says about the checkout: GitHub Actions' and GitLab CI's variables. */
function fromCi(env: NodeJS.ProcessEnv): Where {
  if (env.GITHUB_ACTIONS === 'true' && env.GITHUB_REPOSITORY) {
    const server = env.GITHUB_SERVER_URL ?? 'https://github.com';
    return {
      repository: env.GITHUB_REPOSITORY,
      branch: env.GITHUB_HEAD_REF || env.GITHUB_REF_NAME,
      commit: env.GITHUB_SHA,
      urlTemplate: `${server}/${env.GITHUB_REPOSITORY}/blob/{commit}/{file}#L{line}`,
    };
  }
  if (env.GITLAB_CI === 'true' && env.CI_PROJECT_PATH) {
    return {
      repository: env.CI_PROJECT_PATH,
      branch: env.CI_COMMIT_REF_NAME,
      commit: env.CI_COMMIT_SHA,
      ...(env.CI_PROJECT_URL ? { urlTemplate: `${env.CI_PROJECT_URL}/-/blob/{commit}/{file}#L{line}` } : {}),
    };
  }
  return {};
}

/** What git says about the checkout, for runs outside a known CI. */
function fromGit(root: string): Where {
  const git = (...args: string[]) => {
    try {
      return execFileSync('git', ['-C', root, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() || undefined;
    } catch {
      return undefined;
    }
  };
  const remote = git('remote', 'get-url', 'origin');
  // git@github.com:acme/shop.git and https://github.com/acme/shop.git both name acme/shop.
  const repository = remote?.replace(/\.git$/, '').match(/[:/]([^:/]+\/[^/]+)$/)?.[1];
  const branch = git('rev-parse', '--abbrev-ref', 'HEAD');
  return {
    ...(repository ? { repository } : {}),
    ...(branch && branch !== 'HEAD' ? { branch } : {}),
    ...(git('rev-parse', 'HEAD') ? { commit: git('rev-parse', 'HEAD') } : {}),
  };
}

async function contextOf(root: string, file: string, line: number, files: Map<string, string[]>): Promise<string[]> {
  let lines = files.get(file);
  if (!lines) {
    lines = (await readFile(join(root, file), 'utf8')).split('\n');
    files.set(file, lines);
  }
  return lines.slice(Math.max(0, line - 1 - CONTEXT_LINES), line + CONTEXT_LINES).map((text) => text.slice(0, 500));
}

/** `vexil refs push`: scans `root` and replaces what Vexil holds for its repository and branch. */
export async function pushReferences(root: string, options: PushOptions, env: NodeJS.ProcessEnv): Promise<CommandOutcome> {
  const fail = (message: string, exitCode: number): CommandOutcome => ({ stdout: '', stderr: `vexil refs push: ${message}\n`, exitCode });
  const url = env.VEXIL_URL?.trim();
  const token = env.VEXIL_TOKEN?.trim();
  if (!url || !token) return fail('set VEXIL_URL and VEXIL_TOKEN (a token whose role holds UPDATE_CODE_REFERENCES)', 2);
  const ci = fromCi(env);
  const needsGit = !(options.repository ?? ci.repository) || !(options.branch ?? ci.branch) || !(options.commit ?? ci.commit);
  const git = needsGit ? fromGit(root) : {};
  const where = {
    repository: options.repository ?? ci.repository ?? git.repository,
    branch: options.branch ?? ci.branch ?? git.branch,
    commit: options.commit ?? ci.commit ?? git.commit,
    urlTemplate: options['url-template'] ?? ci.urlTemplate,
  };
  for (const [name, value] of Object.entries({ repository: where.repository, branch: where.branch, commit: where.commit })) {
    if (!value) return fail(`no ${name}: pass --${name} (it is taken from GitHub Actions, GitLab CI or git where they tell it)`, 2);
  }

  const scan = await scanRepository(root, { wrappers: options.wrapper ?? [] });
  const files = new Map<string, string[]>();
  const named = scan.references.filter((reference) => reference.flag !== null);
  const references = [];
  for (const reference of named) {
    references.push({
      flag: reference.flag!,
      file: reference.file,
      line: reference.line,
      column: reference.column,
      language: reference.language,
      call: reference.call,
      expression: reference.expression.slice(0, 500),
      context: await contextOf(root, reference.file, reference.line, files),
    });
  }
  let summary: { changed: boolean; references: number; flags: number; unknownFlags: string[]; removedFlags: string[] };
  try {
    summary = await adminApi('Vexil', url, token).post('/api/admin/code-references', {
      repository: where.repository,
      branch: where.branch,
      commit: where.commit,
      ...(where.urlTemplate ? { urlTemplate: where.urlTemplate } : {}),
      references,
    });
  } catch (error) {
    if (error instanceof CommandError) return fail(error.message, 1);
    throw error;
  }
  const lines = [
    summary.changed
      ? `Pushed ${summary.references} references to ${summary.flags} flags of ${where.repository} (${where.branch} at ${where.commit})`
      : `${where.repository} (${where.branch}) was already at ${where.commit}: nothing changed`,
  ];
  if (summary.unknownFlags.length > 0) lines.push(`Names that are no flag of Vexil's (kept): ${summary.unknownFlags.join(', ')}`);
  if (summary.removedFlags.length > 0) lines.push(`No longer referenced on this branch: ${summary.removedFlags.join(', ')}`);
  const unresolved = scan.references.length - named.length;
  if (unresolved > 0) lines.push(`${unresolved} references whose flag could not be worked out were not sent (vexil refs scan lists them)`);
  return { stdout: `${lines.join('\n')}\n`, stderr: '', exitCode: 0 };
}
