import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cleanUpFlag } from '../../domain/code-references/code-reading/flag-cleanup.js';
import { scanRepository, sourceTexts } from '../../domain/code-references/code-reading/scanner.js';
import type { CommandOutcome } from './command-outcome.js';

/**
 * `vexil refs cleanup FLAG --keep on|off [DIR]`: the patch on standard output, so it can be reviewed, piped to
 * `git apply` or written in place with `--write`; what is left for a person on standard error. The flag itself is
 * never archived here: that follows once a push of the cleaned branch shows no references left.
 */
export async function cleanupCommand(
  root: string,
  flag: string,
  keep: boolean,
  wrappers: string[],
  write: boolean,
): Promise<CommandOutcome> {
  // The scan shares the parsing out to worker threads; the cleanup then parses only the files it changes.
  const { references } = await scanRepository(root, { wrappers });
  const cleanup = await cleanUpFlag(await sourceTexts(root), flag, keep, { wrappers, references });
  if (write) for (const { file, text } of cleanup.changed) await writeFile(join(root, file), text);
  const lines = [
    cleanup.changed.length === 0
      ? `Nothing to change for ${flag}.`
      : `${write ? 'Changed' : 'The patch changes'} ${cleanup.changed.length} files, keeping the ${keep ? 'on' : 'off'} branch of ${flag}: ${cleanup.changed.map((changed) => changed.file).join(', ')}`,
  ];
  if (cleanup.leftForPerson.length > 0) {
    lines.push('Left for a person:');
    for (const place of cleanup.leftForPerson)
      lines.push(`  ${place.file}:${place.line}${place.call ? ` ${place.call}` : ''}: ${place.reason}`);
  }
  lines.push(`Archive ${flag} in Vexil once a push of the cleaned branch shows no references left.`);
  return { stdout: write ? '' : cleanup.patch, stderr: `${lines.join('\n')}\n`, exitCode: cleanup.leftForPerson.length > 0 ? 1 : 0 };
}
