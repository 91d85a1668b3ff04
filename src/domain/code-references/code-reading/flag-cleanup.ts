import { createTwoFilesPatch, FILE_HEADERS_ONLY } from 'diff';
import type Parser from 'web-tree-sitter';
import { descendants, type Dialect, type Edit, JAVASCRIPT, KEPT_OFF, KEPT_ON, marker, PYTHON, removal } from './cleanup-rules.js';
import { parserFor } from './file-findings.js';
import { type Language, languageOf } from './languages.js';
import { type CodeReference, scanSources } from './scanner.js';
import { bindingOf, CALL_TYPES, calleeName, flagArgument, literalValue } from './syntax.js';

/**
 * The patch that takes a flag out of code, keeping the branch production runs: each SDK call that answers the flag's
 * on or off becomes that value, the checks it fed are simplified away (`if`, `!`, `&&`, ternaries, JSX, names that
 * held it), and imports and constants nothing uses any more go. The text around each change stays as written.
 * Whatever it cannot decide (a variant read, a value used as an object, a language it has no rules for) is listed
 * for a person, never guessed.
 */
type SyntaxNode = Parser.SyntaxNode;

export interface SourceText {
  /** The path from the repository's root, with forward slashes. */
  file: string;
  text: string;
}

export interface PlaceLeftForPerson {
  file: string;
  line: number;
  call: string;
  reason: string;
}

export interface FlagCleanup {
  /** The files the patch changes, with their text after it. */
  changed: SourceText[];
  /** A unified diff (`git apply`, `patch -p1`); empty when nothing could be changed. */
  patch: string;
  leftForPerson: PlaceLeftForPerson[];
}

/** Rewrites one file takes at most: a file that needs more is left as it was and said so. */
const MAX_REWRITES = 2000;

function dialectOf(language: Language): Dialect | undefined {
  if (language.family === 'JavaScript') return JAVASCRIPT;
  return language.family === 'Python' ? PYTHON : undefined;
}

function applied(text: string, edits: Edit[]): string {
  let result = text;
  for (const edit of [...edits].sort((a, b) => b.start - a.start))
    result = result.slice(0, edit.start) + edit.text + result.slice(edit.end);
  return result;
}

async function withTree<T>(language: Language, text: string, read: (root: SyntaxNode) => T): Promise<T> {
  const tree = (await parserFor(language)).parse(text);
  try {
    return read(tree.rootNode);
  } finally {
    tree.delete();
  }
}

/** The SDK call whose flag argument starts where the scanner found the reference. */
function callAt(root: SyntaxNode, reference: CodeReference): SyntaxNode | undefined {
  const argument = root.descendantForPosition({ row: reference.line - 1, column: reference.column - 1 });
  for (let node: SyntaxNode | null = argument; node; node = node.parent) {
    if (!CALL_TYPES.has(node.type) || calleeName(node) !== reference.call) continue;
    const flag = flagArgument(node, 0);
    if (flag && flag.startPosition.row === reference.line - 1 && flag.startPosition.column === reference.column - 1) return node;
  }
  return undefined;
}

/** Replaces each boolean check of the flag by a marker of the kept value; the others are left for a person. */
function markedCalls(root: SyntaxNode, references: CodeReference[], dialect: Dialect, keep: boolean, wrappers: Set<string>) {
  const edits: Edit[] = [];
  const left: PlaceLeftForPerson[] = [];
  for (const reference of references) {
    const leave = (reason: string) => left.push({ file: reference.file, line: reference.line, call: reference.call, reason });
    const call = callAt(root, reference);
    if (!call) {
      leave('the call could not be found again in the file');
      continue;
    }
    let replacedNode = call;
    while (replacedNode.parent && dialect.awaitTypes.has(replacedNode.parent.type)) replacedNode = replacedNode.parent;
    const user = replacedNode.parent;
    if (user && dialect.memberTypes.has(user.type) && user.namedChild(0)?.id === replacedNode.id) {
      leave('the result is used as an object, not as on or off');
    } else if (dialect.booleanCalls.has(reference.call) || (wrappers.has(reference.call) && dialect.inCondition(call))) {
      edits.push({ start: replacedNode.startIndex, end: replacedNode.endIndex, text: marker(keep) });
    } else if (wrappers.has(reference.call)) {
      leave('a wrapper whose result is not used as a condition: what it returns is the project’s own');
    } else {
      leave('reads a variant or a value rather than on or off: which value to keep is a person’s choice');
    }
  }
  return { edits, left };
}

/** The file after every simplification the rules find, or undefined when it would take more rewrites than allowed. */
async function simplified(language: Language, dialect: Dialect, text: string): Promise<string | undefined> {
  let current = text;
  for (let round = 0; round < MAX_REWRITES; round++) {
    const edits = await withTree(language, current, (root) => dialect.simplify(root, current));
    if (!edits) {
      return current.replaceAll(KEPT_ON, dialect.literal(true)).replaceAll(KEPT_OFF, dialect.literal(false));
    }
    current = applied(current, edits);
  }
  return undefined;
}

/** A name a file's imports bring in, with the part of the import that brings it and the import statement. */
interface ImportedName {
  name: string;
  specifier: SyntaxNode;
  statement: SyntaxNode;
}

function importedNames(root: SyntaxNode): ImportedName[] {
  const found: ImportedName[] = [];
  for (const statement of root.namedChildren) {
    if (statement.type === 'import_statement' && statement.namedChildren.some((child) => child.type === 'import_clause')) {
      const clause = statement.namedChildren.find((child) => child.type === 'import_clause')!;
      for (const part of clause.namedChildren) {
        if (part.type === 'identifier') found.push({ name: part.text, specifier: part, statement });
        else if (part.type === 'namespace_import' && part.namedChild(0))
          found.push({ name: part.namedChild(0)!.text, specifier: part, statement });
        else if (part.type === 'named_imports') {
          for (const specifier of part.namedChildren.filter((child) => child.type === 'import_specifier')) {
            const local = specifier.childForFieldName('alias') ?? specifier.childForFieldName('name');
            if (local) found.push({ name: local.text, specifier, statement });
          }
        }
      }
    } else if (statement.type === 'import_from_statement' || statement.type === 'import_statement') {
      // Python's `from m import a, b as c` and `import a, b as c`: the names each binds.
      for (const name of statement.childrenForFieldName('name')) {
        const local = name.type === 'aliased_import' ? name.childForFieldName('alias') : name;
        if (local && !local.text.includes('.')) found.push({ name: local.text, specifier: name, statement });
      }
    }
  }
  return found;
}

const USE_TYPES = new Set(['identifier', 'type_identifier', 'shorthand_property_identifier']);

/** How often each name is used outside the imports. */
function uses(root: SyntaxNode): Map<string, number> {
  const counts = new Map<string, number>();
  for (const node of descendants(root)) {
    if (!USE_TYPES.has(node.type)) continue;
    let inImport = false;
    for (let parent = node.parent; parent && !inImport; parent = parent.parent) inImport = /^import_/.test(parent.type);
    if (!inImport) counts.set(node.text, (counts.get(node.text) ?? 0) + 1);
  }
  return counts;
}

/** Edits that drop imported names the cleanup left unused (names unused before it are not its business). */
function unusedImports(root: SyntaxNode, text: string, usedBefore: Map<string, number>): Edit[] {
  const usedNow = uses(root);
  const imported = importedNames(root);
  const dropped = imported.filter(({ name }) => (usedBefore.get(name) ?? 0) > 0 && !usedNow.has(name));
  const edits: Edit[] = [];
  // An import whose every name goes goes whole; otherwise each name goes from its list.
  for (const statement of new Set(dropped.map((name) => name.statement))) {
    const going = dropped.filter((name) => name.statement === statement);
    if (going.length === imported.filter((name) => name.statement === statement).length) edits.push(removal(text, statement));
    else for (const { specifier } of going) edits.push(listItemRemoval(text, specifier));
  }
  return edits;
}

/** An item of a comma-separated list taken out with the comma that joins it to the list. */
function listItemRemoval(text: string, item: SyntaxNode): Edit {
  const after = /^\s*,[ \t]*/.exec(text.slice(item.endIndex));
  if (after) {
    const edit = removal(text, { startIndex: item.startIndex, endIndex: item.endIndex + after[0].length });
    return edit.end > item.endIndex + after[0].length ? edit : { start: item.startIndex, end: item.endIndex + after[0].length, text: '' };
  }
  const before = /,\s*$/.exec(text.slice(0, item.startIndex));
  return { start: before ? item.startIndex - before[0].length : item.startIndex, end: item.endIndex, text: '' };
}

/** The statement or list item that gives a name to the flag's string, to be taken out when nothing uses the name. */
function definitionOf(literal: SyntaxNode): { name: string; node: SyntaxNode; inList: boolean } | undefined {
  const binding = bindingOf(literal, literalValue(literal)!);
  // A name a constant can have; the flag's name as a key of its own (`{'new-checkout': true}`) names nothing.
  if (!binding || !/^[A-Za-z_$][\w$]*$/.test(binding.name)) return undefined;
  if (literal.parent?.type === 'pair' && literal.parent.childForFieldName('value')?.id !== literal.id) return undefined;
  for (let node = literal.parent; node; node = node.parent) {
    if (['pair', 'enum_assignment', 'public_field_definition'].includes(node.type))
      return { name: binding.name, node, inList: node.type !== 'public_field_definition' };
    if (node.type === 'lexical_declaration' || node.type === 'expression_statement') {
      const holder = node.parent?.type === 'export_statement' ? node.parent : node;
      return node.namedChildCount === 1 ? { name: binding.name, node: holder, inList: false } : undefined;
    }
    if (/statement|block|body|program|module/.test(node.type)) return undefined;
  }
  return undefined;
}

/** Whether a text holds the flag's name as a name of its own, not inside a longer one (`flag-42` in `flag-420`). */
function namesFlag(text: string, flag: string): boolean {
  if (!text.includes(flag)) return false;
  const escaped = flag.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(?<![\\w.~-])${escaped}(?![\\w.~-])`).test(text);
}

const countWord = (texts: string[], word: string) => {
  const pattern = new RegExp(`(?<![\\w$])${word.replace(/[$]/g, '\\$')}(?![\\w$])`, 'g');
  return texts.reduce((count, text) => count + (text.match(pattern)?.length ?? 0), 0);
};

/**
 * The flag's name constants (`const NEW_CHECKOUT = 'new-checkout'`, an enum's or object's member) that the cleanup
 * left with no other mention in the language's files: each goes from the file that defines it.
 */
async function orphanedConstants(flag: string, before: Map<string, string>, after: Map<string, string>): Promise<Map<string, Edit[]>> {
  const edits = new Map<string, Edit[]>();
  for (const [file, text] of after) {
    const language = languageOf(file);
    if (!language || !dialectOf(language) || !namesFlag(text, flag)) continue;
    const family = [...after].filter(([other]) => languageOf(other)?.family === language.family);
    const familyBefore = family.map(([other]) => before.get(other) ?? '');
    const familyAfter = family.map(([, otherText]) => otherText);
    const found = await withTree(language, text, (root) => {
      const removals: Edit[] = [];
      for (const node of descendants(root)) {
        if (literalValue(node) !== flag) continue;
        const definition = definitionOf(node);
        if (!definition || countWord(familyBefore, definition.name) <= 1 || countWord(familyAfter, definition.name) !== 1) continue;
        removals.push(definition.inList ? listItemRemoval(text, definition.node) : removal(text, definition.node));
      }
      return removals;
    });
    if (found.length > 0) edits.set(file, found);
  }
  return edits;
}

export interface CleanupOptions {
  /** The project's own functions that take a flag's name first, read as checks where their result is a condition. */
  wrappers?: string[];
  /** The sources' references, where the caller has scanned them already (the command does, on worker threads). */
  references?: CodeReference[];
}

/**
 * The cleanup of `flag` over a repository's files given as text, keeping the branch that runs when the flag is `keep`
 * (on or off).
 */
export async function cleanUpFlag(sources: SourceText[], flag: string, keep: boolean, options: CleanupOptions = {}): Promise<FlagCleanup> {
  const wrappers = options.wrappers ?? [];
  const scanned = options.references ?? (await scanSources(sources, { wrappers }));
  const references = scanned.filter((reference) => reference.flag === flag);
  const before = new Map(sources.map((source) => [source.file, source.text]));
  const after = new Map(before);
  const leftForPerson: PlaceLeftForPerson[] = [];
  const usedBefore = new Map<string, Map<string, number>>();
  for (const file of new Set(references.map((reference) => reference.file))) {
    const inFile = references.filter((reference) => reference.file === file);
    const language = languageOf(file)!;
    const dialect = dialectOf(language);
    const text = before.get(file)!;
    if (!dialect) {
      for (const reference of inFile) {
        leftForPerson.push({
          ...place(reference),
          reason: `Vexil writes patches for TypeScript, JavaScript and Python; change this ${language.name} by hand`,
        });
      }
      continue;
    }
    const { edits, left } = await withTree(language, text, (root) => {
      usedBefore.set(file, uses(root));
      return markedCalls(root, inFile, dialect, keep, new Set(wrappers));
    });
    leftForPerson.push(...left);
    if (edits.length === 0) continue;
    const simple = await simplified(language, dialect, applied(text, edits));
    if (simple === undefined) {
      leftForPerson.push({
        ...place(inFile[0]!),
        reason: `the checks in this file took more than ${MAX_REWRITES} rewrites; nothing in it was changed`,
      });
      continue;
    }
    const imports = await withTree(language, simple, (root) => unusedImports(root, simple, usedBefore.get(file)!));
    after.set(file, withoutNewLeadingBlankLines(text, applied(simple, imports)));
  }
  for (const [file, edits] of await orphanedConstants(flag, before, after)) after.set(file, applied(after.get(file)!, edits));
  await revertBroken(before, after, leftForPerson);
  return { ...describe(before, after), leftForPerson: [...leftForPerson, ...(await stillReading(before, after, flag, leftForPerson))] };
}

/** A file whose first lines were imports that all went starts with its code, not with the blank line after them. */
const withoutNewLeadingBlankLines = (before: string, after: string) => (/^\s*\n/.test(before) ? after : after.replace(/^(\s*\n)+/, ''));

const place = (reference: CodeReference) => ({ file: reference.file, line: reference.line, call: reference.call });

/** A file the patch would leave unparseable (where it parsed before) is left as it was, and said so. */
async function revertBroken(before: Map<string, string>, after: Map<string, string>, leftForPerson: PlaceLeftForPerson[]) {
  for (const [file, text] of after) {
    const original = before.get(file)!;
    if (text === original) continue;
    const language = languageOf(file)!;
    const broken =
      (await withTree(language, text, (root) => root.hasError)) && !(await withTree(language, original, (root) => root.hasError));
    if (!broken) continue;
    after.set(file, original);
    leftForPerson.push({ file, line: 1, call: '', reason: 'the rewritten file would not parse, so it is left as it was' });
  }
}

/**
 * References the patched files still make to the flag that no earlier entry has named. Only the changed files are
 * read again, with those that name the flag (where its constants are defined): no other file's references changed.
 */
async function stillReading(
  before: Map<string, string>,
  after: Map<string, string>,
  flag: string,
  listed: PlaceLeftForPerson[],
): Promise<PlaceLeftForPerson[]> {
  const known = new Set(listed.map((entry) => entry.file));
  const reread = [...after]
    .filter(([file, text]) => text !== before.get(file) || namesFlag(text, flag))
    .map(([file, text]) => ({ file, text }));
  const remaining = (await scanSources(reread)).filter((reference) => reference.flag === flag && !known.has(reference.file));
  return remaining.map((reference) => ({ ...place(reference), reason: 'still reads the flag after the cleanup' }));
}

function describe(before: Map<string, string>, after: Map<string, string>): Omit<FlagCleanup, 'leftForPerson'> {
  const changed = [...after].filter(([file, text]) => before.get(file) !== text).map(([file, text]) => ({ file, text }));
  const patch = changed
    .map(({ file, text }) =>
      createTwoFilesPatch(`a/${file}`, `b/${file}`, before.get(file)!, text, undefined, undefined, { headerOptions: FILE_HEADERS_ONLY }),
    )
    .join('');
  return { changed, patch };
}
