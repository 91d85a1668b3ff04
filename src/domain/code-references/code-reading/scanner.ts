import { readdir, readFile, stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join, relative, sep } from 'node:path';
import type { CodeReferencePlace } from '../code-references.js';
import type { FileFindings } from './file-findings.js';
import { findingsInText, readFindings } from './file-findings.js';
import { type Language, languageNamed, languageOf } from './languages.js';
import { resultOfWorker } from './worker-result.js';
import type { FlagExpression } from './syntax.js';

/** One place in code that reads a flag. `flag` is null where its name could not be worked out from the code. */
export interface CodeReference extends CodeReferencePlace {
  flag: string | null;
  /** How the name was found, or why it was not. */
  resolution: 'literal' | 'constant in the file' | 'constant in another file' | 'unresolved';
}

export interface ScanOptions {
  /** The project's own functions that take a flag as their first argument. */
  wrappers?: string[];
  /** Files larger than this are not read (generated or minified code). */
  maxFileBytes?: number;
}

export interface ScanResult {
  references: CodeReference[];
  filesScanned: number;
  /** Files of a language the scanner reads that it could not parse whole (it reads what it can of them). */
  filesWithSyntaxErrors: string[];
}

const SKIPPED_DIRECTORIES = new Set([
  'node_modules',
  '.git',
  'dist',
  'build',
  'vendor',
  'target',
  '.venv',
  'venv',
  '__pycache__',
  'coverage',
  '.next',
]);
const DEFAULT_MAX_FILE_BYTES = 1024 * 1024;

interface SourceFile {
  path: string;
  /** The path from the repository's root, with forward slashes. */
  file: string;
  language: string;
}

/** Below this many files, starting worker threads costs more than it saves. */
const FILES_PER_WORKER = 64;

/**
 * Every file's findings, in the files' order: parsed on worker threads, one per CPU (at most four), when there are
 * enough files to share.
 */
async function readAll(files: SourceFile[], wrappers: string[]): Promise<Array<FileFindings & { hasError: boolean }>> {
  const workers = Math.min(availableParallelism(), 4, Math.floor(files.length / FILES_PER_WORKER));
  if (workers < 2) {
    const found = [];
    for (const source of files) found.push(await readFindings(source.path, source.file, languageNamed(source.language), new Set(wrappers)));
    return found;
  }
  const shares = Array.from({ length: workers }, (_, worker) => files.filter((_, index) => index % workers === worker));
  const results = await Promise.all(shares.map((share) => onWorker(share, wrappers)));
  return files.map((_, index) => results[index % workers]![Math.floor(index / workers)]!);
}

function onWorker(files: SourceFile[], wrappers: string[]): Promise<Array<FileFindings & { hasError: boolean }>> {
  return resultOfWorker(new URL('./scan-worker.js', import.meta.url), { files, wrappers });
}

async function* sourceFiles(root: string, maxFileBytes: number): AsyncGenerator<{ path: string; language: Language }> {
  const entries = await readdir(root, { withFileTypes: true });
  entries.sort((a, b) => a.name.localeCompare(b.name));
  for (const entry of entries) {
    const path = join(root, entry.name);
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRECTORIES.has(entry.name)) yield* sourceFiles(path, maxFileBytes);
      continue;
    }
    if (!entry.isFile()) continue;
    const language = languageOf(entry.name);
    if (!language || entry.name.endsWith('.min.js') || entry.name.endsWith('.d.ts')) continue;
    if ((await stat(path)).size <= maxFileBytes) yield { path, language };
  }
}

/**
 * Finds every reference to a flag under `root`: each SDK call (and each wrapper named in the options) whose flag
 * argument is a string, a constant or a member of an enum or object that holds one, in the same file or a unique
 * one elsewhere in the repository. Names it cannot work out are reported as unresolved, never guessed.
 */
export async function scanRepository(root: string, options: ScanOptions = {}): Promise<ScanResult> {
  const wrappers = options.wrappers ?? [];
  const files: SourceFile[] = [];
  for await (const { path, language } of sourceFiles(root, options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES)) {
    files.push({ path, file: relative(root, path).split(sep).join('/'), language: language.name });
  }
  const read = await readAll(files, wrappers);
  const filesWithSyntaxErrors = files.filter((_, index) => read[index]!.hasError).map((source) => source.file);
  return { references: resolveReferences(read), filesScanned: files.length, filesWithSyntaxErrors };
}

/** The files under `root` the scanner reads, with their text: what a cleanup rewrites. */
export async function sourceTexts(root: string, options: ScanOptions = {}): Promise<Array<{ file: string; text: string }>> {
  const found = [];
  for await (const { path } of sourceFiles(root, options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES)) {
    found.push({ file: relative(root, path).split(sep).join('/'), text: await readFile(path, 'utf8') });
  }
  return found;
}

/** The references in files given as text (a coding agent's workspace, sent over MCP), as `scanRepository` finds them. */
export async function scanSources(sources: Array<{ file: string; text: string }>, options: ScanOptions = {}): Promise<CodeReference[]> {
  const wrappers = new Set(options.wrappers ?? []);
  const findings: FileFindings[] = [];
  for (const source of sources) {
    const language = languageOf(source.file);
    if (language) findings.push(await findingsInText(source.text, source.file, language, wrappers));
  }
  return resolveReferences(findings);
}

/** Each call's flag, looked up in its own file, then in the one other file of its family that names it. */
function resolveReferences(findings: FileFindings[]): CodeReference[] {
  // A name defined in one other file only, with one value, is taken from there (an import, a shared constants file).
  const everywhere = (pick: (found: FileFindings) => Map<string, string>) => {
    const values = new Map<string, Set<string>>();
    for (const found of findings) {
      for (const [name, value] of pick(found)) {
        const key = `${found.family} ${name}`;
        values.set(key, (values.get(key) ?? new Set()).add(value));
      }
    }
    return new Map([...values].flatMap(([name, set]) => (set.size === 1 ? [[name, [...set][0]!] as const] : [])));
  };
  const constants = everywhere((found) => found.constants);
  const members = everywhere((found) => found.members);
  const references: CodeReference[] = [];
  for (const found of findings) {
    for (const { argument, ...place } of found.pending) {
      const [flag, resolution] = resolve(argument, found, constants, members);
      references.push({ flag, ...place, resolution });
    }
  }
  return references;
}

function resolve(
  argument: FlagExpression,
  file: FileFindings,
  constants: Map<string, string>,
  members: Map<string, string>,
): [string | null, CodeReference['resolution']] {
  if (argument.kind === 'literal') return [argument.value, 'literal'];
  const lookUp = (name: string): [string | null, CodeReference['resolution']] | undefined => {
    const local = file.constants.get(name) ?? file.membersByName.get(name);
    if (local !== undefined) return [local, 'constant in the file'];
    const shared = constants.get(`${file.family} ${name}`);
    return shared !== undefined ? [shared, 'constant in another file'] : undefined;
  };
  if (argument.kind === 'name') {
    const found = lookUp(argument.name);
    if (found) return found;
    const aliased = file.aliases.get(argument.name);
    // An import of a member (Java's static import, Kotlin's) stands for the member.
    if (aliased?.includes('.')) return resolve({ kind: 'member', path: aliased.split('.') }, file, constants, members);
    return (aliased ? lookUp(aliased) : undefined) ?? [null, 'unresolved'];
  }
  if (argument.kind === 'member') {
    // The class's own constant: self::FLAG (PHP), this.FLAG, Self.flag (Swift), cls.FLAG (Python).
    if (argument.path.length === 2 && ['self', 'static', 'this', 'Self', 'cls'].includes(argument.path[0]!)) {
      return lookUp(argument.path[1]!) ?? [null, 'unresolved'];
    }
    // An imported alias stands for its name: `F.DarkMode` with `import { Flag as F }` is `Flag.DarkMode`.
    const path = [...(file.aliases.get(argument.path[0]!)?.split('.') ?? [argument.path[0]!]), ...argument.path.slice(1)];
    // Flags.DARK, and Flags.DARK.value (Python's enums) or Flags.DARK.key (an enum with a property).
    for (let end = path.length; end >= 2; end--) {
      const key = path.slice(end - 2, end).join('.');
      const local = file.members.get(key);
      if (local !== undefined) return [local, 'constant in the file'];
      const shared = members.get(`${file.family} ${key}`);
      if (shared !== undefined) return [shared, 'constant in another file'];
    }
    // A module imported whole: `flags.NEW_CHECKOUT` is the constant NEW_CHECKOUT of another file.
    if (file.modules.has(path.slice(0, -1).join('.'))) return lookUp(path.at(-1)!) ?? [null, 'unresolved'];
  }
  return [null, 'unresolved'];
}
