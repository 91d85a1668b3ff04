import type Parser from 'web-tree-sitter';

/**
 * How a flag's checks are taken out of code once its calls are replaced by the value production gives them: each
 * rule rewrites one construct that reads a kept value (`!on`, `on && x`, `on ? a : b`, `if (on) …`, a name that holds
 * it) into what it comes to, keeping the text around it as written. Rules only ever touch the markers that stand
 * for a replaced call, never a `true` the code had before, so code the flag did not guard is left as it was.
 */
type SyntaxNode = Parser.SyntaxNode;

/** Stand-ins for a replaced call while the rules run: identifiers in every dialect, written out as literals at the end. */
export const KEPT_ON = '__VEXIL_FLAG_ON__';
export const KEPT_OFF = '__VEXIL_FLAG_OFF__';
export const marker = (on: boolean) => (on ? KEPT_ON : KEPT_OFF);

export interface Edit {
  start: number;
  end: number;
  text: string;
}

export interface Dialect {
  /** How the language writes a boolean. */
  literal(on: boolean): string;
  /** SDK calls that answer a flag's on or off, so a call can be replaced by the kept value. */
  booleanCalls: Set<string>;
  /** A call's own wrappers that go with it when it is replaced (`await`). */
  awaitTypes: Set<string>;
  /** Where reading a call's result as an object (`.then`, `.value`) means its value is not a plain boolean. */
  memberTypes: Set<string>;
  /** Whether a call sits where only its truth counts (a condition, an operand of `!`, `&&`, `||`). */
  inCondition(call: SyntaxNode): boolean;
  /** The edits of the first rule that applies, deepest construct first; undefined when nothing is left to simplify. */
  simplify(root: SyntaxNode, text: string): Edit[] | undefined;
}

/** The kept value a node stands for, if it is a marker. */
function keptValue(node: SyntaxNode | null | undefined): boolean | undefined {
  if (node?.type !== 'identifier') return undefined;
  return node.text === KEPT_ON ? true : node.text === KEPT_OFF ? false : undefined;
}

function* postOrder(root: SyntaxNode): Generator<SyntaxNode> {
  const stack: Array<{ node: SyntaxNode; visited: boolean }> = [{ node: root, visited: false }];
  while (stack.length > 0) {
    const top = stack.pop()!;
    if (top.visited) {
      yield top.node;
      continue;
    }
    stack.push({ node: top.node, visited: true });
    const children = top.node.namedChildren;
    for (let index = children.length - 1; index >= 0; index--) stack.push({ node: children[index]!, visited: false });
  }
}

export function descendants(root: SyntaxNode): SyntaxNode[] {
  return [...postOrder(root)];
}

const lineStart = (text: string, index: number) => text.lastIndexOf('\n', index - 1) + 1;
const lineEnd = (text: string, index: number) => {
  const newline = text.indexOf('\n', index);
  return newline < 0 ? text.length : newline + 1;
};
const indentAt = (text: string, index: number) => /^[ \t]*/.exec(text.slice(lineStart(text, index)))![0];
const startsItsLine = (text: string, index: number) => text.slice(lineStart(text, index), index).trim() === '';

/** Takes a node out; where it has its lines to itself, the lines go too, so no blank line is left where it stood. */
export function removal(text: string, node: { startIndex: number; endIndex: number }): Edit {
  const endOfLine = lineEnd(text, node.endIndex);
  const restOfLine = text.slice(node.endIndex, endOfLine).trim();
  if (startsItsLine(text, node.startIndex) && (restOfLine === '' || restOfLine === ',' || restOfLine === ';')) {
    return { start: lineStart(text, node.startIndex), end: endOfLine, text: '' };
  }
  return { start: node.startIndex, end: node.endIndex, text: '' };
}

/**
 * Puts statements (a branch's body) where `target` stands, each line moved from the body's indentation to the
 * target's, so the kept branch reads as if it had been written there.
 */
function hoisted(text: string, target: SyntaxNode, statements: SyntaxNode[]): Edit {
  if (statements.length === 0) return removal(text, target);
  const first = statements[0]!;
  const last = statements.at(-1)!;
  const from = startsItsLine(text, first.startIndex) ? indentAt(text, first.startIndex) : undefined;
  const to = indentAt(text, target.startIndex);
  // The first line starts at the statement, after its indentation: only the lines below it move.
  const [firstLine, ...below] = text.slice(first.startIndex, last.endIndex).split('\n');
  return { start: target.startIndex, end: target.endIndex, text: [firstLine, ...movedLines(below, from, to)].join('\n') };
}

/**
 * Lines moved from the indentation `from` to `to`: a line indented by `from` is indented by `to` instead, a blank
 * line is left empty, and any other (a template string's own lines) stays as written. No `from` (the body shares
 * its first line with something else) leaves every line as it is.
 */
function movedLines(lines: string[], from: string | undefined, to: string): string[] {
  if (from === undefined) return lines;
  return lines.map((line) => (line.startsWith(from) ? to + line.slice(from.length) : line.trim() === '' ? '' : line));
}

const replaced = (node: SyntaxNode, text: string): Edit[] => [{ start: node.startIndex, end: node.endIndex, text }];

const isComment = (node: SyntaxNode) => node.type === 'comment';

/** Expressions that need no parentheses of their own wherever an expression goes. */
const PRIMARY =
  /^(string|template_string|number|integer|float|identifier|member_expression|attribute|call_expression|call|true|false|null|none|subscript_expression|subscript|array|list)$/;

const isConditionOf = (node: SyntaxNode) =>
  !!node.parent && /^(if|while|do)_statement$/.test(node.parent.type) && node.parent.childForFieldName('condition')?.id === node.id;

/**
 * An expression that comes to one of its parts. The parentheses the whole needed go when the part needs none
 * (`(on ? `* ${item}` : item)` is `` `* ${item}` ``); in JSX, `{on && <New />}` comes to `<New />` without the braces.
 */
function replacedBy(node: SyntaxNode, kept: SyntaxNode, text: string): Edit[] {
  const holder = node.parent;
  if (holder?.type === 'parenthesized_expression' && holder.namedChildCount === 1 && PRIMARY.test(kept.type) && !isConditionOf(holder)) {
    return replaced(holder, kept.text);
  }
  const element = kept.type === 'parenthesized_expression' ? kept.namedChild(0) : kept;
  const isJsxChild = holder?.type === 'jsx_expression' && /^jsx_(element|fragment)$/.test(holder.parent?.type ?? '');
  if (isJsxChild && (kept.type === 'null' || kept.text === 'undefined')) return [removal(text, holder)];
  if (isJsxChild && element && /^jsx_(element|self_closing_element|fragment)$/.test(element.type))
    return [hoisted(text, holder, [element])];
  return replaced(node, kept.text);
}

/** Whether dropping an expression drops nothing it does: no call, assignment, await or `new` inside it. */
function isPure(node: SyntaxNode): boolean {
  return !descendants(node).some((part) => /call|assignment|await|new_expression|update_expression|yield|named_expression/.test(part.type));
}

/** `a && b`, `a or b`: the operand that decides, or the value the whole comes to. */
function logical(node: SyntaxNode, text: string, operator: string, and: string, or: string): Edit[] | undefined {
  const left = node.childForFieldName('left');
  const right = node.childForFieldName('right');
  if (!left || !right) return undefined;
  const leftValue = keptValue(left);
  const rightValue = keptValue(right);
  const isAnd = operator === and;
  if (!isAnd && operator !== or) return undefined;
  if (leftValue !== undefined) return leftValue === isAnd ? replacedBy(node, right, text) : replaced(node, left.text);
  if (rightValue === undefined) return undefined;
  // `x && on` is x; `x && off` is off, when x does nothing but answer.
  if (rightValue === isAnd) return replaced(node, left.text);
  return isPure(left) ? replaced(node, right.text) : undefined;
}

/** Statements a block declares at its own level: hoisting them beside the same names would not compile. */
function declaredNames(statements: SyntaxNode[]): Set<string> {
  const names = new Set<string>();
  for (const statement of statements) {
    const declaration = statement.type === 'export_statement' ? statement.namedChild(0) : statement;
    if (!declaration) continue;
    if (declaration.type === 'lexical_declaration' || declaration.type === 'variable_declaration') {
      for (const declarator of declaration.namedChildren) {
        const name = declarator.childForFieldName('name');
        if (name)
          for (const part of descendants(name))
            if (part.type === 'identifier' || part.type === 'shorthand_property_identifier_pattern') names.add(part.text);
      }
    } else {
      const name = declaration.childForFieldName('name');
      if (name && /declaration$/.test(declaration.type)) names.add(name.text);
    }
  }
  return names;
}

const JS_STATEMENT_CONTAINERS = new Set(['program', 'statement_block', 'switch_case', 'switch_default']);
const ENDS = new Set(['return_statement', 'throw_statement', 'raise_statement', 'continue_statement', 'break_statement']);
/** What stays after a `return`: comments, and JavaScript's function declarations, which are hoisted and can be called. */
const STAYS_AFTER_RETURN = new Set(['comment', 'function_declaration', 'generator_function_declaration']);

/** Statements after a kept branch that ends in `return` (or `throw`, `continue`, `break`) can never run, and go with the check. */
function unreachableAfter(text: string, statement: SyntaxNode, kept: SyntaxNode[]): Edit[] {
  const last = kept.filter((node) => !isComment(node)).at(-1);
  if (!last || !ENDS.has(last.type)) return [];
  const edits: Edit[] = [];
  for (let next = statement.nextNamedSibling; next; next = next.nextNamedSibling) {
    if (!STAYS_AFTER_RETURN.has(next.type)) edits.push(removal(text, next));
  }
  return edits;
}

function jsIfStatement(node: SyntaxNode, text: string): Edit[] | undefined {
  const condition = node.childForFieldName('condition');
  const value = keptValue(condition?.type === 'parenthesized_expression' ? condition.namedChild(0) : condition);
  if (value === undefined || condition!.namedChildCount !== 1) return undefined;
  const consequence = node.childForFieldName('consequence')!;
  const elseClause = node.childForFieldName('alternative');
  const alternative = elseClause?.namedChildren.find((child) => !isComment(child));
  const kept = value ? consequence : alternative;
  const parent = node.parent!;
  if (parent.type === 'else_clause') {
    // `else if (on) { a } else { b }` is `else { a }`; `else if (off) { a } else { b }` is `else { b }`.
    if (kept) return replaced(node, kept.text);
    return [removal(text, { startIndex: parent.previousSibling?.endIndex ?? parent.startIndex, endIndex: parent.endIndex })];
  }
  if (!JS_STATEMENT_CONTAINERS.has(parent.type)) return replaced(node, kept ? kept.text : '{}');
  if (!kept) return [removal(text, node)];
  if (kept.type === 'if_statement') return replaced(node, kept.text);
  const statements = kept.type === 'statement_block' ? kept.namedChildren : [kept];
  const siblings = parent.namedChildren.filter((sibling) => sibling.id !== node.id);
  const clash = [...declaredNames(statements)].some((name) => declaredNames(siblings).has(name));
  if (clash) return replaced(node, kept.text);
  return [hoisted(text, node, statements), ...unreachableAfter(text, node, statements)];
}

/** `const enabled = on;`: every use of `enabled` in its scope becomes the kept value, and the declaration goes. */
function jsInlinedConstant(node: SyntaxNode, text: string): Edit[] | undefined {
  if (node.parent?.type === 'export_statement' || node.namedChildCount !== 1 || !node.text.startsWith('const')) return undefined;
  const declarator = node.namedChild(0)!;
  const name = declarator.childForFieldName('name');
  const value = keptValue(declarator.childForFieldName('value'));
  if (value === undefined || name?.type !== 'identifier') return undefined;
  const scope = node.parent!;
  const uses: Edit[] = [];
  for (const part of descendants(scope)) {
    if (part.startIndex < node.endIndex || part.text !== name.text) continue;
    if (part.type === 'identifier') {
      // A name declared again inside the scope shadows this one: leave them all as written.
      if (part.parent?.childForFieldName('name')?.id === part.id && /declarator|parameter|function/.test(part.parent.type))
        return undefined;
      uses.push({ start: part.startIndex, end: part.endIndex, text: marker(value) });
    } else if (part.type === 'shorthand_property_identifier') {
      uses.push({ start: part.startIndex, end: part.endIndex, text: `${part.text}: ${marker(value)}` });
    }
  }
  return [removal(text, node), ...uses];
}

/** A JSX child that now renders nothing, `{false}` or `{null}`, goes. */
function jsxChild(node: SyntaxNode, text: string): Edit[] | undefined {
  if (node.parent?.type !== 'jsx_element' && node.parent?.type !== 'jsx_fragment') return undefined;
  const inner = node.namedChildren.filter((child) => !isComment(child));
  return inner.length === 1 && keptValue(inner[0]) !== undefined ? [removal(text, node)] : undefined;
}

function jsRule(node: SyntaxNode, text: string): Edit[] | undefined {
  switch (node.type) {
    case 'parenthesized_expression': {
      const value = keptValue(node.namedChild(0));
      return value !== undefined && node.namedChildCount === 1 && !isConditionOf(node) ? replaced(node, marker(value)) : undefined;
    }
    case 'unary_expression': {
      const value = keptValue(node.childForFieldName('argument'));
      return value !== undefined && node.childForFieldName('operator')?.text === '!' ? replaced(node, marker(!value)) : undefined;
    }
    case 'binary_expression':
      return logical(node, text, node.childForFieldName('operator')?.text ?? '', '&&', '||');
    case 'ternary_expression': {
      const value = keptValue(node.childForFieldName('condition'));
      if (value === undefined) return undefined;
      return replacedBy(node, node.childForFieldName(value ? 'consequence' : 'alternative')!, text);
    }
    case 'if_statement':
      return jsIfStatement(node, text);
    case 'lexical_declaration':
      return jsInlinedConstant(node, text);
    case 'jsx_expression':
      return jsxChild(node, text);
    default:
      return undefined;
  }
}

/** Python's blocks cannot be empty: a statement that was the last of its block leaves `pass`. */
function pythonRemoval(text: string, node: SyntaxNode): Edit {
  const block = node.parent;
  const others = block?.namedChildren.filter((child) => child.id !== node.id && !isComment(child)) ?? [];
  if (block?.type === 'block' && others.length === 0) return { start: node.startIndex, end: node.endIndex, text: 'pass' };
  return removal(text, node);
}

/**
 * A Python clause's body put where `target` stands: every line after the clause's header, comments before its first
 * statement among them (the grammar hangs those outside the block), moved to the target's indentation.
 */
function pythonBodyHoisted(text: string, target: SyntaxNode, clause: SyntaxNode, body: SyntaxNode): Edit {
  const colon = clause.children.find((child) => child.type === ':' && child.endIndex <= body.startIndex);
  const start = colon ? lineEnd(text, colon.endIndex) : lineStart(text, body.startIndex);
  const lines = text.slice(start, body.endIndex).split('\n');
  const from = /^[ \t]*/.exec(lines.find((line) => line.trim() !== '') ?? '')![0];
  return {
    start: lineStart(text, target.startIndex),
    end: target.endIndex,
    text: movedLines(lines, from, indentAt(text, target.startIndex)).join('\n'),
  };
}

function pythonIfStatement(node: SyntaxNode, text: string): Edit[] | undefined {
  const value = keptValue(node.childForFieldName('condition'));
  if (value === undefined) return undefined;
  const alternatives = node
    .childrenForFieldName('alternative')
    .filter((child) => child.type === 'elif_clause' || child.type === 'else_clause');
  if (value) {
    const body = node.childForFieldName('consequence')!;
    return [pythonBodyHoisted(text, node, node, body), ...unreachableAfter(text, node, body.namedChildren)];
  }
  const first = alternatives[0];
  if (!first) return [pythonRemoval(text, node)];
  // `if off: … elif c: …` is `if c: …`: the elif takes the if's place.
  if (first.type === 'elif_clause') return [{ start: node.startIndex, end: first.startIndex + 'elif'.length, text: 'if' }];
  const body = first.childForFieldName('body')!;
  return [pythonBodyHoisted(text, node, first, body), ...unreachableAfter(text, node, body.namedChildren)];
}

function pythonElif(node: SyntaxNode): Edit[] | undefined {
  const condition = node.childForFieldName('condition');
  const value = keptValue(condition);
  if (value === undefined) return undefined;
  if (!value) return [{ start: node.previousSibling!.endIndex, end: node.endIndex, text: '' }];
  // `elif on:` is the else of what came before, and what came after it can no longer run.
  const statement = node.parent!;
  return [
    { start: node.startIndex, end: condition!.endIndex, text: 'else' },
    { start: node.endIndex, end: statement.endIndex, text: '' },
  ];
}

/** `enabled = on` in a function, assigned nowhere else there: its uses become the kept value and the line goes. */
function pythonInlinedName(node: SyntaxNode, text: string): Edit[] | undefined {
  const assignment = node.namedChild(0);
  if (node.namedChildCount !== 1 || assignment?.type !== 'assignment') return undefined;
  const name = assignment.childForFieldName('left');
  const value = keptValue(assignment.childForFieldName('right'));
  const body = node.parent;
  if (value === undefined || name?.type !== 'identifier' || body?.parent?.type !== 'function_definition') return undefined;
  const uses: Edit[] = [];
  for (const part of descendants(body)) {
    if (part.type !== 'identifier' || part.text !== name.text || part.id === name.id) continue;
    const parent = part.parent!;
    if (parent.type === 'keyword_argument' && parent.childForFieldName('name')?.id === part.id) continue;
    if (parent.type === 'attribute' && parent.childForFieldName('attribute')?.id === part.id) continue;
    // Assigned again, or bound by a loop, a `with` or a nested function: leave it as written.
    const rebinds =
      (/assignment|for_statement|for_in_clause/.test(parent.type) && parent.childForFieldName('left')?.id === part.id) ||
      /as_pattern|parameters|global_statement|nonlocal_statement/.test(parent.type);
    if (rebinds || part.startIndex < node.endIndex) return undefined;
    uses.push({ start: part.startIndex, end: part.endIndex, text: marker(value) });
  }
  return [pythonRemoval(text, node), ...uses];
}

function pythonRule(node: SyntaxNode, text: string): Edit[] | undefined {
  switch (node.type) {
    case 'parenthesized_expression': {
      const value = keptValue(node.namedChild(0));
      return value !== undefined && node.namedChildCount === 1 ? replaced(node, marker(value)) : undefined;
    }
    case 'not_operator': {
      const value = keptValue(node.childForFieldName('argument'));
      return value !== undefined ? replaced(node, marker(!value)) : undefined;
    }
    case 'boolean_operator':
      return logical(node, text, node.childForFieldName('operator')?.text ?? '', 'and', 'or');
    case 'conditional_expression': {
      const [body, condition, alternative] = node.namedChildren.filter((child) => !isComment(child));
      const value = keptValue(condition);
      return value === undefined || !body || !alternative ? undefined : replacedBy(node, value ? body : alternative, text);
    }
    case 'if_statement':
      return pythonIfStatement(node, text);
    case 'elif_clause':
      return pythonElif(node);
    case 'expression_statement':
      return pythonInlinedName(node, text);
    default:
      return undefined;
  }
}

function firstRule(root: SyntaxNode, text: string, rule: (node: SyntaxNode, text: string) => Edit[] | undefined) {
  if (!text.includes(KEPT_ON) && !text.includes(KEPT_OFF)) return undefined;
  for (const node of postOrder(root)) {
    const edits = rule(node, text);
    if (edits) return edits;
  }
  return undefined;
}

const within = (node: SyntaxNode, outer: SyntaxNode | null | undefined) =>
  !!outer && outer.startIndex <= node.startIndex && node.endIndex <= outer.endIndex;

/** Walks up from a call through what only wraps it, to where its value is used. */
function usedAt(call: SyntaxNode, transparent: Set<string>): SyntaxNode | null {
  let node = call.parent;
  while (node && transparent.has(node.type)) node = node.parent;
  return node;
}

const JS_CONDITIONS = new Set([
  'if_statement',
  'while_statement',
  'do_statement',
  'ternary_expression',
  'unary_expression',
  'binary_expression',
]);

export const JAVASCRIPT: Dialect = {
  literal: (on) => (on ? 'true' : 'false'),
  booleanCalls: new Set(['isEnabled', 'useFlag', 'getBooleanValue', 'useBooleanFlagValue']),
  awaitTypes: new Set(['await_expression']),
  memberTypes: new Set(['member_expression', 'subscript_expression']),
  inCondition(call) {
    const user = usedAt(call, new Set(['parenthesized_expression', 'await_expression']));
    if (!user || !JS_CONDITIONS.has(user.type)) return false;
    if (user.type === 'binary_expression') return ['&&', '||'].includes(user.childForFieldName('operator')?.text ?? '');
    if (user.type === 'unary_expression') return user.childForFieldName('operator')?.text === '!';
    return user.type !== 'ternary_expression' || within(call, user.childForFieldName('condition'));
  },
  simplify: (root, text) => firstRule(root, text, jsRule),
};

export const PYTHON: Dialect = {
  literal: (on) => (on ? 'True' : 'False'),
  booleanCalls: new Set(['is_enabled', 'get_boolean_value', 'get_boolean_value_async']),
  awaitTypes: new Set(['await']),
  memberTypes: new Set(['attribute', 'subscript']),
  inCondition(call) {
    const user = usedAt(call, new Set(['parenthesized_expression', 'await']));
    if (!user) return false;
    if (['if_statement', 'elif_clause', 'while_statement', 'not_operator', 'boolean_operator'].includes(user.type)) return true;
    return user.type === 'conditional_expression' && within(call, user.namedChildren.filter((child) => !isComment(child))[1]);
  },
  simplify: (root, text) => firstRule(root, text, pythonRule),
};
