import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { BadDataError } from '../../shared/errors.js';
import { recordEvent } from '../events/record-event.js';
import { findFeature } from '../features/feature-lookup.js';

/** Where code reads a flag, as `vexil refs scan` finds it and Vexil keeps it. */
export interface CodeReferencePlace {
  file: string;
  line: number;
  column: number;
  language: string;
  /** The SDK call or wrapper that reads it. */
  call: string;
  /** The argument as written: `"new-checkout"`, `NEW_CHECKOUT`, `Flags.DARK`. */
  expression: string;
}

/** One reference as `vexil refs push` sends it (what `vexil refs scan` found, with a few lines around it). */
export interface PushedReference extends Omit<CodeReferencePlace, 'column'> {
  flag: string;
  column?: number;
  /** The lines around it, the reference's own among them. */
  context?: string[];
}

export interface CodeReferencePush {
  repository: string;
  branch: string;
  commit: string;
  /**
   * How a reference becomes a link: `{commit}`, `{branch}`, `{file}` and `{line}` are filled in, e.g.
   * `https://github.com/acme/shop/blob/{commit}/{file}#L{line}`.
   */
  urlTemplate?: string;
  references: PushedReference[];
}

export interface PushSummary {
  repository: string;
  branch: string;
  commit: string;
  /** False when this commit was the one already held: a push is idempotent per commit. */
  changed: boolean;
  references: number;
  flags: number;
  /** Names referenced in code that are no flag of Vexil's: kept and shown as such. */
  unknownFlags: string[];
  /** Flags this branch referenced before and no longer does. */
  removedFlags: string[];
}

const INSERT_CHUNK = 2000;

/** Placeholders a URL template may hold. */
const TEMPLATE_PLACEHOLDERS = ['{commit}', '{branch}', '{file}', '{line}'];

function checkUrlTemplate(template: string): void {
  let url: URL;
  try {
    url = new URL(template.replaceAll(/\{(commit|branch|file|line)\}/g, 'x'));
  } catch {
    throw new BadDataError(`urlTemplate "${template}" is not a URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new BadDataError(`urlTemplate must be an http(s) URL; "${template}" is ${url.protocol.replace(':', '')}`);
  }
  if (!template.includes('{file}')) {
    throw new BadDataError(`urlTemplate must place the file: it has none of ${TEMPLATE_PLACEHOLDERS.join(', ')} but ${template}`);
  }
}

/**
 * Replaces what a repository's branch references with what its `commit` does, in one transaction. The same commit
 * again changes nothing. Flags the branch no longer references are remembered with the commit that removed them.
 */
export async function pushCodeReferences(uow: UnitOfWork, push: CodeReferencePush): Promise<PushSummary> {
  if (push.urlTemplate !== undefined) checkUrlTemplate(push.urlTemplate);
  const { repository, branch, commit } = push;
  const flags = [...new Set(push.references.map((reference) => reference.flag))].sort();
  const known = new Set(
    flags.length === 0
      ? []
      : (await uow.tx.selectFrom('features').select('name').where('name', 'in', flags).execute()).map((row) => row.name),
  );
  const unknownFlags = flags.filter((flag) => !known.has(flag));
  // Taken with the branch's row locked: two pushes of one branch follow each other.
  const held = await uow.tx
    .selectFrom('code_reference_pushes')
    .select('commit_sha')
    .where('repository', '=', repository)
    .where('branch', '=', branch)
    .forUpdate()
    .executeTakeFirst();
  const summary = { repository, branch, commit, references: push.references.length, flags: flags.length, unknownFlags };
  if (held?.commit_sha === commit) return { ...summary, changed: false, removedFlags: [] };

  const before = (
    await uow.tx
      .selectFrom('code_references')
      .select('feature_name')
      .distinct()
      .where('repository', '=', repository)
      .where('branch', '=', branch)
      .execute()
  ).map((row) => row.feature_name);
  const now = uow.now;
  await uow.tx
    .insertInto('code_reference_pushes')
    .values({
      repository,
      branch,
      commit_sha: commit,
      url_template: push.urlTemplate ?? null,
      pushed_at: now,
      reference_count: push.references.length,
    })
    .onConflict((conflict) =>
      conflict.columns(['repository', 'branch']).doUpdateSet({
        commit_sha: commit,
        url_template: push.urlTemplate ?? null,
        pushed_at: now,
        reference_count: push.references.length,
      }),
    )
    .execute();
  await uow.tx.deleteFrom('code_references').where('repository', '=', repository).where('branch', '=', branch).execute();
  for (let from = 0; from < push.references.length; from += INSERT_CHUNK) {
    await uow.tx
      .insertInto('code_references')
      .values(
        push.references.slice(from, from + INSERT_CHUNK).map((reference) => ({
          repository,
          branch,
          feature_name: reference.flag,
          file: reference.file,
          line: reference.line,
          column_number: reference.column ?? 1,
          language: reference.language,
          call: reference.call,
          expression: reference.expression,
          context: JSON.stringify(reference.context ?? []),
        })),
      )
      .execute();
  }

  const nowReferenced = new Set(flags);
  const removedFlags = before.filter((flag) => !nowReferenced.has(flag)).sort();
  if (flags.length > 0) {
    await uow.tx
      .deleteFrom('code_reference_removals')
      .where('repository', '=', repository)
      .where('branch', '=', branch)
      .where('feature_name', 'in', flags)
      .execute();
  }
  if (removedFlags.length > 0) {
    await uow.tx
      .insertInto('code_reference_removals')
      .values(removedFlags.map((flag) => ({ feature_name: flag, repository, branch, commit_sha: commit, removed_at: now })))
      .onConflict((conflict) =>
        conflict.columns(['feature_name', 'repository', 'branch']).doUpdateSet({ commit_sha: commit, removed_at: now }),
      )
      .execute();
  }
  await recordEvent(uow, {
    type: 'code-references-pushed',
    data: { repository, branch, commit, references: push.references.length, flags: flags.length, removedFlags },
  });
  // A flag whose last reference anywhere went with this push: its own history says in which commit.
  const stillReferenced = new Set(
    removedFlags.length === 0
      ? []
      : (
          await uow.tx.selectFrom('code_references').select('feature_name').distinct().where('feature_name', 'in', removedFlags).execute()
        ).map((row) => row.feature_name),
  );
  const goneFromCode = removedFlags.filter((flag) => !stillReferenced.has(flag));
  if (goneFromCode.length > 0) {
    const projects = await uow.tx.selectFrom('features').select(['name', 'project']).where('name', 'in', goneFromCode).execute();
    for (const { name, project } of projects) {
      await recordEvent(uow, {
        type: 'feature-removed-from-code',
        project,
        featureName: name,
        data: { repository, branch, commit },
      });
    }
  }
  return { ...summary, changed: true, removedFlags };
}

export interface CodeReferenceView extends CodeReferencePlace {
  repository: string;
  branch: string;
  commit: string;
  context: string[];
  /** The link to the line, from the repository's URL template; null without one. */
  url: string | null;
}

export interface FlagCodeReferences {
  references: CodeReferenceView[];
  /** How many there are in all; at most `limit` are listed. */
  total: number;
  /** Where the flag's last reference went, once none is left: "removed from code in commit abc123". */
  removedFromCode: { repository: string; branch: string; commit: string; removedAt: string } | null;
}

function linkOf(template: string | null, values: { commit: string; branch: string; file: string; line: number }): string | null {
  if (template === null) return null;
  return template
    .replaceAll('{commit}', encodeURIComponent(values.commit))
    .replaceAll('{branch}', encodeURIComponent(values.branch))
    .replaceAll('{file}', values.file.split('/').map(encodeURIComponent).join('/'))
    .replaceAll('{line}', String(values.line));
}

/** The references of a flag of `project`, repository by repository, branch by branch, file by file. */
export async function codeReferencesOfFlag(db: Db, project: string, flag: string, limit: number): Promise<FlagCodeReferences> {
  await findFeature(db, project, flag);
  const rows = await db
    .selectFrom('code_references as r')
    .innerJoin('code_reference_pushes as p', (join) => join.onRef('p.repository', '=', 'r.repository').onRef('p.branch', '=', 'r.branch'))
    .select([
      'r.repository',
      'r.branch',
      'p.commit_sha',
      'p.url_template',
      'r.file',
      'r.line',
      'r.column_number',
      'r.language',
      'r.call',
      'r.expression',
      'r.context',
      sql<string>`count(*) over ()`.as('total'),
    ])
    .where('r.feature_name', '=', flag)
    .orderBy('r.repository')
    .orderBy('r.branch')
    .orderBy('r.file')
    .orderBy('r.line')
    .limit(limit)
    .execute();
  const references = rows.map((row) => ({
    repository: row.repository,
    branch: row.branch,
    commit: row.commit_sha,
    file: row.file,
    line: row.line,
    column: row.column_number,
    language: row.language,
    call: row.call,
    expression: row.expression,
    context: row.context as string[],
    url: linkOf(row.url_template, { commit: row.commit_sha, branch: row.branch, file: row.file, line: row.line }),
  }));
  let removedFromCode: FlagCodeReferences['removedFromCode'] = null;
  if (references.length === 0) {
    const removal = await db
      .selectFrom('code_reference_removals')
      .select(['repository', 'branch', 'commit_sha', 'removed_at'])
      .where('feature_name', '=', flag)
      .orderBy('removed_at', 'desc')
      .limit(1)
      .executeTakeFirst();
    if (removal) {
      removedFromCode = {
        repository: removal.repository,
        branch: removal.branch,
        commit: removal.commit_sha,
        removedAt: removal.removed_at.toISOString(),
      };
    }
  }
  return { references, total: Number(rows[0]?.total ?? 0), removedFromCode };
}
