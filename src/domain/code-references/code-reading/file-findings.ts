import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import Parser from 'web-tree-sitter';
import type { CodeReferencePlace } from '../code-references.js';
import type { Grammar, Language } from './languages.js';
import {
  type Binding,
  bindingOf,
  CALL_TYPES,
  calleeName,
  type FlagExpression,
  flagArgument,
  flagExpression,
  importOf,
  literalValue,
  SCANNED_TYPES,
} from './syntax.js';

/**
 * One file read by its grammar: the names it binds to strings and the SDK calls it makes, before names are looked
 * up across files. Runs in the scanner's worker threads as well as in its own thread.
 */
const require = createRequire(import.meta.url);
let initialised: Promise<void> | undefined;

interface LoadedGrammar {
  parser: Parser;
  /** Finds the nodes the scanner looks at, in the grammar's own (WebAssembly) code rather than node by node in JS. */
  query: Parser.Query;
}
const grammars = new Map<string, Promise<LoadedGrammar>>();

async function loadGrammar(language: Language): Promise<LoadedGrammar> {
  initialised ??= Parser.init();
  await initialised;
  const loaded = await Parser.Language.load(await readGrammar(language.grammar));
  const parser = new Parser();
  parser.setLanguage(loaded);
  // Each grammar has only some of the node types scanned: those it lacks would make the query invalid.
  const types = SCANNED_TYPES.filter((type) => {
    try {
      loaded.query(`(${type}) @node`).delete();
      return true;
    } catch {
      return false;
    }
  });
  return { parser, query: loaded.query(`[${types.map((type) => `(${type})`).join(' ')}] @node`) };
}

function grammarFor(language: Language): Promise<LoadedGrammar> {
  const key = `${language.grammar.package}/${language.grammar.file}`;
  let grammar = grammars.get(key);
  if (!grammar) {
    grammar = loadGrammar(language);
    grammars.set(key, grammar);
  }
  return grammar;
}

/**
 * A grammar's WebAssembly: as its package ships it, or gzipped as the container image keeps the ones the scanner
 * reads (2 MB instead of 30).
 */
async function readGrammar(grammar: Grammar): Promise<Uint8Array> {
  let folder: string;
  try {
    folder = dirname(require.resolve(`${grammar.package}/package.json`));
  } catch {
    throw new Error(`The grammar package ${grammar.package} is not installed: npm install ${grammar.package}`);
  }
  const file = join(folder, grammar.file);
  try {
    return await readFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    return gunzipSync(await readFile(`${file}.gz`));
  }
}

export interface PendingReference extends CodeReferencePlace {
  argument: FlagExpression;
}

/** What one file defines and reads, before names are looked up across files. */
export interface FileFindings {
  /** Names are looked up in other files of the same family only: a Python file never reads a Java constant. */
  family: string;
  constants: Map<string, string>;
  members: Map<string, string>;
  /** Members by their own name: a class's constant read inside the class (`IsEnabled(Flag)` in C# or Java). */
  membersByName: Map<string, string>;
  /** Names imported under another name (`import { Flag as F }`): F stands for Flag. */
  aliases: Map<string, string>;
  /** Modules imported whole under a name (`import * as flags`, Python's `import flags`): their members are constants. */
  modules: Set<string>;
  pending: PendingReference[];
}

export function findingsOf(tree: Parser.Tree, query: Parser.Query, file: string, language: Language, wrappers: Set<string>): FileFindings {
  const constants = new Map<string, string>();
  const members = new Map<string, string>();
  const membersByName = new Map<string, string>();
  const aliases = new Map<string, string>();
  const modules = new Set<string>();
  const pending: PendingReference[] = [];
  const bind = (binding: Binding) => {
    if (binding.container) {
      members.set(`${binding.container}.${binding.name}`, binding.value);
      membersByName.set(binding.name, binding.value);
    } else constants.set(binding.name, binding.value);
  };
  for (const { node } of query.captures(tree.rootNode)) {
    const value = literalValue(node);
    if (value !== undefined) {
      const binding = bindingOf(node, value);
      if (binding) bind(binding);
      continue;
    }
    const imported = importOf(node);
    if (imported) {
      if ('module' in imported) modules.add(imported.module);
      else aliases.set(imported.alias, imported.name);
      continue;
    }
    // Rust's SDK names flags by an enum's variants: `UserFeatures::new_checkout`.
    if (node.type === 'enum_item') {
      const name = node.childForFieldName('name')?.text;
      for (const variant of node.childForFieldName('body')?.namedChildren ?? []) {
        const variantName = variant.childForFieldName('name')?.text;
        if (name && variant.type === 'enum_variant' && variantName) members.set(`${name}.${variantName}`, variantName);
      }
      continue;
    }
    if (!CALL_TYPES.has(node.type)) continue;
    const call = calleeName(node);
    if (!call) continue;
    const position = language.calls.get(call) ?? (wrappers.has(call) ? 0 : undefined);
    if (position === undefined) continue;
    const argument = flagArgument(node, position);
    if (!argument) continue;
    pending.push({
      file,
      line: argument.startPosition.row + 1,
      column: argument.startPosition.column + 1,
      language: language.name,
      call,
      expression: argument.text,
      argument: flagExpression(argument),
    });
  }
  return { family: language.family, constants, members, membersByName, aliases, modules, pending };
}

/** Reads and parses one file; `hasError` says whether its grammar could read it whole. */
export async function readFindings(
  path: string,
  file: string,
  language: Language,
  wrappers: Set<string>,
): Promise<FileFindings & { hasError: boolean }> {
  return findingsInText(await readFile(path, 'utf8'), file, language, wrappers);
}

/** What a file's text defines and reads, as `readFindings` finds it on disk. */
export async function findingsInText(
  text: string,
  file: string,
  language: Language,
  wrappers: Set<string>,
): Promise<FileFindings & { hasError: boolean }> {
  const { parser, query } = await grammarFor(language);
  const tree = parser.parse(text);
  try {
    return { ...findingsOf(tree, query, file, language, wrappers), hasError: tree.rootNode.hasError };
  } finally {
    tree.delete();
  }
}

/** A parser for the language, loaded once per thread; the caller deletes each tree it parses. */
export async function parserFor(language: Language): Promise<Parser> {
  return (await grammarFor(language)).parser;
}
