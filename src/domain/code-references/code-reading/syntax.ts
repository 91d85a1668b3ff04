import type Parser from 'web-tree-sitter';
import { FLAG_ARGUMENT_NAMES } from './languages.js';

/**
 * What the scanner reads in a syntax tree, across the grammars: calls and their arguments, string literals and the
 * names they are bound to. The grammars name the same things differently (a call is `call_expression`,
 * `method_invocation`, `invocation_expression`…); these sets and functions are where the differences live.
 */
export type SyntaxNode = Parser.SyntaxNode;

export const CALL_TYPES = new Set([
  'call_expression',
  // Dart has no call node: a call is a name, then selectors, the last of them its arguments.
  'argument_part',
  'call',
  'method_invocation',
  'invocation_expression',
  'member_call_expression',
  'nullsafe_member_call_expression',
  'scoped_call_expression',
  'function_call_expression',
]);

const LITERAL_TYPES = new Set([
  'string',
  'string_literal',
  'interpreted_string_literal',
  'raw_string_literal',
  'line_string_literal',
  'template_string',
  'encapsed_string',
  'verbatim_string_literal',
  'atom',
  'simple_symbol',
]);

/**
 * Imports that rename what they bring in, or bring a module in under a name: TypeScript's and JavaScript's, Python's,
 * Go's packages, Java's static imports, Kotlin's.
 */
const IMPORT_TYPES = [
  'import_specifier',
  'namespace_import',
  'aliased_import',
  'import_statement',
  'import_spec',
  'import_declaration',
  'import_header',
];

/** What an import node says: `alias` stands for `name` of another file; `module` is a module's name in this one. */
export function importOf(node: SyntaxNode): { alias: string; name: string } | { module: string } | undefined {
  switch (node.type) {
    case 'import_specifier': {
      const name = node.childForFieldName('name')?.text;
      const alias = node.childForFieldName('alias')?.text;
      return name && alias ? { alias, name } : undefined;
    }
    case 'namespace_import':
      return node.namedChild(0) ? { module: node.namedChild(0)!.text } : undefined;
    case 'aliased_import': {
      const name = node.childForFieldName('name')?.text;
      const alias = node.childForFieldName('alias')?.text;
      if (!name || !alias) return undefined;
      // from flags import Flags as F: F is Flags. import a.b as c: c is a module.
      return node.parent?.type === 'import_from_statement' ? { alias, name } : { module: alias };
    }
    case 'import_statement': {
      // Python's `import flags` (TypeScript's import_statement holds the clauses above instead).
      const name = node.childForFieldName('name');
      return name?.type === 'dotted_name' ? { module: name.text } : undefined;
    }
    case 'import_spec': {
      // Go: a package is read as its alias, or as the last part of its path.
      const alias = node.childForFieldName('name')?.text;
      const path = node.childForFieldName('path')?.text.replace(/^["`]|["`]$/g, '');
      const module = alias ?? path?.split('/').at(-1);
      return module && module !== '_' && module !== '.' ? { module } : undefined;
    }
    case 'import_declaration': {
      // Java: `import static shop.Flags.NEW_CHECKOUT;` makes NEW_CHECKOUT stand for Flags.NEW_CHECKOUT.
      const imported = /^import\s+static\s+(?:[\w$]+\.)*([\w$]+)\.([\w$]+)\s*;/.exec(node.text);
      return imported ? { alias: imported[2]!, name: `${imported[1]}.${imported[2]}` } : undefined;
    }
    case 'import_header': {
      // Kotlin: `import shop.Flags as F` (F is Flags), `import shop.Flags.DARK` (DARK is Flags.DARK).
      const imported = /^import\s+((?:[\w$]+\.)*)([\w$]+)(?:\s+as\s+([\w$]+))?/.exec(node.text);
      if (!imported) return undefined;
      if (imported[3]) return { alias: imported[3], name: imported[2]! };
      const container = imported[1]!.split('.').filter(Boolean).at(-1);
      return container && /^[A-Z]/.test(container) ? { alias: imported[2]!, name: `${container}.${imported[2]}` } : undefined;
    }
    default:
      return undefined;
  }
}

/** The nodes the scanner looks at; everything else it passes by (a query in the grammar finds them). */
export const SCANNED_TYPES = [...CALL_TYPES, ...LITERAL_TYPES, 'enum_item', ...IMPORT_TYPES];

const IDENTIFIER_TYPES = new Set(['identifier', 'constant', 'simple_identifier', 'name']);

const MEMBER_TYPES = new Set([
  'member_expression',
  'attribute',
  'selector_expression',
  'field_access',
  'member_access_expression',
  'navigation_expression',
  'scoped_identifier',
  'class_constant_access_expression',
  'scope_resolution',
  'dot',
]);

/** Nodes between a literal and the declaration that names it: `const X = ("a")`, Go's value lists, C#'s `= "a"`. */
const WRAPPER_TYPES = new Set([
  'expression_list',
  'equals_value_clause',
  'as_expression',
  'satisfies_expression',
  'parenthesized_expression',
  'arguments',
  'argument_list',
  'value_argument',
  'value_arguments',
]);

const CONTAINER_TYPES = new Set([
  'class_declaration',
  'class_definition',
  'enum_declaration',
  'object_declaration',
  'companion_object',
  'class',
  'module',
  'interface_declaration',
]);

/** A flag name written out: a string with nothing interpolated, an Elixir atom or a Ruby symbol. */
export function literalValue(node: SyntaxNode): string | undefined {
  if (!LITERAL_TYPES.has(node.type)) return undefined;
  if (hasDescendant(node, (child) => /interpolat|substitution|variable_name/.test(child.type))) return undefined;
  const text = node.text;
  if (node.type === 'atom' || node.type === 'simple_symbol') return text.startsWith(':"') ? text.slice(2, -1) : text.slice(1);
  const unprefixed = text.replace(/^[rbfuRBFU@$]+(?=["'`])/, '');
  const quote = /^("""|'''|"|'|`)/.exec(unprefixed)?.[1];
  if (!quote || !unprefixed.endsWith(quote) || unprefixed.length < quote.length * 2) return undefined;
  return unprefixed.slice(quote.length, unprefixed.length - quote.length);
}

export function isDynamicString(node: SyntaxNode): boolean {
  return LITERAL_TYPES.has(node.type) && literalValue(node) === undefined;
}

function hasDescendant(node: SyntaxNode, test: (node: SyntaxNode) => boolean): boolean {
  for (const child of node.namedChildren) if (test(child) || hasDescendant(child, test)) return true;
  return false;
}

/** The name a call is made by, the last one of its callee: `isEnabled` of `this.unleash.isEnabled`. */
export function calleeName(call: SyntaxNode): string | undefined {
  if (call.type === 'argument_part') {
    const callee = call.parent?.previousNamedSibling;
    return callee ? /([A-Za-z_][A-Za-z0-9_]*)\s*$/.exec(callee.text)?.[1] : undefined;
  }
  const callee =
    call.childForFieldName('method') ??
    call.childForFieldName('name') ??
    call.childForFieldName('function') ??
    call.childForFieldName('target') ??
    call.namedChild(0);
  if (!callee) return undefined;
  return /([A-Za-z_][A-Za-z0-9_]*[?!]?)\s*$/.exec(withoutTypeArguments(callee.text))?.[1];
}

/** A callee without the type arguments it ends in: `getObjectValue<T>`, Rust's `get_struct_value::<HashMap<K, V>>`. */
function withoutTypeArguments(text: string): string {
  let end = text.trimEnd();
  while (end.endsWith('>')) {
    let depth = 0;
    let index = end.length - 1;
    for (; index >= 0; index--) {
      if (end[index] === '>') depth++;
      else if (end[index] === '<' && --depth === 0) break;
    }
    if (index < 0) return end;
    end = end.slice(0, index).replace(/::$/, '').trimEnd();
  }
  return end;
}

interface Argument {
  label?: string;
  value: SyntaxNode;
}

/** A call's arguments, each with the keyword or label it is given under (Ruby's, Swift's, Python's, C#'s). */
export function argumentsOf(call: SyntaxNode): Argument[] {
  const container =
    call.childForFieldName('arguments') ??
    call.namedChildren.find((child) => ['arguments', 'argument_list', 'call_suffix', 'value_arguments'].includes(child.type));
  if (!container) return [];
  const found: Argument[] = [];
  const read = (node: SyntaxNode) => {
    for (const child of node.namedChildren) {
      if (child.type === 'comment') continue;
      if (child.type === 'call_suffix' || child.type === 'value_arguments') read(child);
      else if (child.type === 'argument' || child.type === 'value_argument') {
        // C# writes a named argument's label as a name_colon child rather than a field.
        const labelNode = child.childForFieldName('name') ?? child.namedChildren.find((part) => part.type === 'name_colon');
        const label = labelNode?.text.replace(/\s*:$/, '');
        // Labelled: the value is the last part. Unlabelled: the one part, or (Dart) the argument as a whole.
        const value =
          child.childForFieldName('value') ??
          (label ? child.namedChild(child.namedChildCount - 1) : child.namedChildCount === 1 ? child.namedChild(0) : child);
        if (value) found.push({ ...(label && child.namedChildCount > 1 ? { label } : {}), value });
      } else if (child.type === 'pair' || child.type === 'keyword_argument') {
        const label = (child.childForFieldName('key') ?? child.childForFieldName('name'))?.text.replace(/:$/, '');
        const value = child.childForFieldName('value');
        if (value) found.push({ ...(label ? { label } : {}), value });
      } else found.push({ value: child });
    }
  };
  read(container);
  return found;
}

/** The argument that holds the flag: one given under a flag's keyword, or else the one at the SDK's position. */
export function flagArgument(call: SyntaxNode, position: number): SyntaxNode | undefined {
  const all = argumentsOf(call);
  // Elixir's pipe gives a call its first argument: `"new-checkout" |> Unleash.enabled?()`.
  const pipe = call.parent;
  if (
    pipe?.type === 'binary_operator' &&
    pipe.childForFieldName('right')?.id === call.id &&
    pipe.childForFieldName('operator')?.text === '|>'
  ) {
    const left = pipe.childForFieldName('left');
    if (left) all.unshift({ value: left });
  }
  const named = all.find((argument) => argument.label !== undefined && FLAG_ARGUMENT_NAMES.has(argument.label));
  if (named) return named.value;
  return all.filter((argument) => argument.label === undefined)[position]?.value;
}

/** How an argument names its flag: written out, by a name, by a member (`Flags.DARK`), or by neither. */
export type FlagExpression =
  | { kind: 'literal'; value: string }
  | { kind: 'name'; name: string }
  | { kind: 'member'; path: string[] }
  | { kind: 'dynamic' };

export function flagExpression(node: SyntaxNode): FlagExpression {
  const value = literalValue(node);
  if (value !== undefined) return { kind: 'literal', value };
  if (IDENTIFIER_TYPES.has(node.type)) return { kind: 'name', name: node.text };
  // Elixir's module attribute: @flag
  if (node.type === 'unary_operator' && node.text.startsWith('@') && node.namedChild(0)?.type === 'identifier') {
    return { kind: 'name', name: node.text };
  }
  // A member (`Flags.DARK`, `Flags::DARK`), whatever node the grammar makes of it.
  if (MEMBER_TYPES.has(node.type) || node.type === 'argument') {
    const path = node.text.split(/\s*(?:\?\.|\.|::|->)\s*/).filter((segment) => segment !== '');
    if (path.length >= 2 && path.every((segment) => /^[A-Za-z_$][\w$]*$/.test(segment))) return { kind: 'member', path };
  }
  return { kind: 'dynamic' };
}

/** A name bound to a string: `const X = "a"`, `X = "a"` in a class, an enum's member, an object's key. */
export interface Binding {
  name: string;
  /** The class, enum or object it is a member of, if any. */
  container?: string;
  value: string;
}

export function bindingOf(literal: SyntaxNode, value: string): Binding | undefined {
  let node = literal.parent;
  for (let depth = 0; node && WRAPPER_TYPES.has(node.type) && depth < 3; depth++) node = node.parent;
  if (!node) return undefined;
  const name = bindingName(node);
  if (!name) return undefined;
  const container = containerName(node);
  return { name, value, ...(container ? { container } : {}) };
}

function bindingName(node: SyntaxNode): string | undefined {
  const identifier = (candidate: SyntaxNode | null | undefined) =>
    candidate && (IDENTIFIER_TYPES.has(candidate.type) || candidate.type === 'property_identifier') ? candidate.text : undefined;
  switch (node.type) {
    case 'variable_declarator':
      return identifier(node.childForFieldName('name') ?? node.namedChild(0));
    case 'assignment':
    case 'assignment_expression':
    case 'short_var_declaration':
      return identifier(node.childForFieldName('left')) ?? node.childForFieldName('left')?.text.match(/^\$?(\w+)$/)?.[1];
    case 'const_spec':
    case 'const_item':
    case 'static_item':
    case 'enum_assignment':
    case 'enum_constant':
      return identifier(node.childForFieldName('name'));
    case 'const_element':
    case 'static_final_declaration':
      return identifier(node.namedChild(0));
    case 'enum_entry':
      return identifier(node.namedChildren.find((child) => child.type === 'simple_identifier'));
    case 'property_declaration': {
      const declared = node.childForFieldName('name') ?? node.namedChildren.find((child) => child.type === 'variable_declaration');
      return declared?.text.match(/^(\w+)/)?.[1];
    }
    case 'pair':
      return node.childForFieldName('key')?.text.replace(/^["':]|["':]$/g, '');
    case 'call':
      // Elixir's module attribute: `@flag "name"` is a call of `flag` under a unary `@`.
      if (node.parent?.type === 'unary_operator' && node.parent.text.startsWith('@')) {
        return `@${node.childForFieldName('target')?.text ?? ''}`;
      }
      return undefined;
    default:
      return undefined;
  }
}

function containerName(node: SyntaxNode): string | undefined {
  for (let ancestor = node.parent; ancestor; ancestor = ancestor.parent) {
    if (ancestor.type === 'object' && ancestor.parent) {
      // const Flags = { DARK: 'dark' } (as const)
      let holder: SyntaxNode | null = ancestor.parent;
      // Through `as const` and `Object.freeze({ … })` to the declaration that names the object.
      while (holder && (WRAPPER_TYPES.has(holder.type) || holder.type === 'call_expression')) holder = holder.parent;
      return holder?.type === 'variable_declarator' ? (holder.childForFieldName('name')?.text ?? undefined) : undefined;
    }
    if (CONTAINER_TYPES.has(ancestor.type)) {
      const named =
        ancestor.childForFieldName('name') ??
        ancestor.namedChildren.find((child) =>
          ['type_identifier', 'identifier', 'constant', 'name', 'simple_identifier'].includes(child.type),
        );
      return named?.text;
    }
  }
  return undefined;
}
