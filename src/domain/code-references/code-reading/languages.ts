/**
 * The languages `vexil refs scan` reads: the grammar that parses each (tree-sitter's WebAssembly builds from npm),
 * its file endings, and the calls its Unleash and OpenFeature SDKs document for reading a flag, as each SDK's own
 * README names them. A call's flag is its first argument unless the SDK puts it elsewhere (Go's OpenFeature takes a
 * context first) or names it (Ruby's `flag_key:`, Swift's `name:` and `key:`).
 */
export interface Language {
  name: string;
  /** Languages that read each other's constants share a family (TypeScript, TSX and JavaScript; Java and Kotlin). */
  family: string;
  /** The grammar's WebAssembly: the npm package that ships it and its file there. */
  grammar: Grammar;
  extensions: string[];
  /** SDK calls by name: the position of the flag among the call's arguments. */
  calls: Map<string, number>;
}

export interface Grammar {
  package: string;
  file: string;
}

/** tree-sitter-wasms ships most grammars, built alike. */
const wasms = (name: string): Grammar => ({ package: 'tree-sitter-wasms', file: `out/tree-sitter-${name}.wasm` });

const openFeatureKinds = (kinds: string[], forms: (kind: string) => string[]) => kinds.flatMap(forms);
const at = (position: number, names: string[]) => names.map((name) => [name, position] as const);

const JAVASCRIPT_CALLS = new Map([
  // Unleash's Node SDK, its browser SDK and the React hooks (@unleash/proxy-client-react).
  ...at(0, ['isEnabled', 'getVariant', 'useFlag', 'useVariant']),
  // OpenFeature's server and web SDKs, and its React hooks.
  ...at(
    0,
    openFeatureKinds(['Boolean', 'String', 'Number', 'Object'], (kind) => [
      `get${kind}Value`,
      `get${kind}Details`,
      `use${kind}FlagValue`,
      `use${kind}FlagDetails`,
    ]),
  ),
]);

const PYTHON_CALLS = new Map([
  ...at(0, ['is_enabled', 'get_variant']),
  ...at(
    0,
    openFeatureKinds(['boolean', 'string', 'integer', 'float', 'object'], (kind) => [
      `get_${kind}_value`,
      `get_${kind}_details`,
      `get_${kind}_value_async`,
      `get_${kind}_details_async`,
    ]),
  ),
]);

const JVM_CALLS = new Map([
  ...at(0, ['isEnabled', 'getVariant']),
  ...at(
    0,
    openFeatureKinds(['Boolean', 'String', 'Integer', 'Double', 'Object'], (kind) => [`get${kind}Value`, `get${kind}Details`]),
  ),
]);

export const LANGUAGES: Language[] = [
  { name: 'TypeScript', family: 'JavaScript', grammar: wasms('typescript'), extensions: ['.ts', '.mts', '.cts'], calls: JAVASCRIPT_CALLS },
  { name: 'TSX', family: 'JavaScript', grammar: wasms('tsx'), extensions: ['.tsx'], calls: JAVASCRIPT_CALLS },
  {
    name: 'JavaScript',
    family: 'JavaScript',
    grammar: wasms('javascript'),
    extensions: ['.js', '.mjs', '.cjs', '.jsx'],
    calls: JAVASCRIPT_CALLS,
  },
  { name: 'Python', family: 'Python', grammar: wasms('python'), extensions: ['.py'], calls: PYTHON_CALLS },
  {
    name: 'Go',
    family: 'Go',
    grammar: wasms('go'),
    extensions: ['.go'],
    calls: new Map([
      ...at(0, ['IsEnabled', 'GetVariant']),
      // OpenFeature's Go client takes a context.Context first.
      ...at(
        1,
        openFeatureKinds(['Boolean', 'String', 'Int', 'Float', 'Object'], (kind) => [`${kind}Value`, `${kind}ValueDetails`]),
      ),
    ]),
  },
  { name: 'Java', family: 'JVM', grammar: wasms('java'), extensions: ['.java'], calls: JVM_CALLS },
  { name: 'Kotlin', family: 'JVM', grammar: wasms('kotlin'), extensions: ['.kt', '.kts'], calls: JVM_CALLS },
  {
    name: 'C#',
    family: 'C#',
    grammar: wasms('c_sharp'),
    extensions: ['.cs'],
    calls: new Map([
      ...at(0, ['IsEnabled', 'GetVariant']),
      ...at(
        0,
        openFeatureKinds(['Boolean', 'String', 'Integer', 'Double', 'Object'], (kind) => [
          `Get${kind}ValueAsync`,
          `Get${kind}DetailsAsync`,
        ]),
      ),
    ]),
  },
  {
    name: 'Ruby',
    family: 'Ruby',
    grammar: wasms('ruby'),
    extensions: ['.rb'],
    calls: new Map([
      ...at(0, ['is_enabled?', 'is_disabled?', 'enabled?', 'disabled?', 'get_variant', 'if_enabled', 'if_disabled']),
      ...at(
        0,
        openFeatureKinds(['boolean', 'string', 'number', 'integer', 'float', 'object'], (kind) => [
          `fetch_${kind}_value`,
          `fetch_${kind}_details`,
        ]),
      ),
    ]),
  },
  {
    name: 'PHP',
    family: 'PHP',
    grammar: wasms('php'),
    extensions: ['.php'],
    calls: new Map([
      ...at(0, ['isEnabled', 'getVariant']),
      ...at(
        0,
        openFeatureKinds(['Boolean', 'String', 'Integer', 'Float', 'Object'], (kind) => [`get${kind}Value`, `get${kind}Details`]),
      ),
    ]),
  },
  {
    name: 'Rust',
    family: 'Rust',
    grammar: wasms('rust'),
    extensions: ['.rs'],
    calls: new Map([
      ...at(0, ['is_enabled', 'get_variant']),
      ...at(
        0,
        openFeatureKinds(['bool', 'string', 'int', 'float', 'struct'], (kind) => [`get_${kind}_value`, `get_${kind}_details`]),
      ),
    ]),
  },
  {
    name: 'Swift',
    family: 'Swift',
    grammar: wasms('swift'),
    extensions: ['.swift'],
    calls: new Map([
      ...at(0, ['isEnabled', 'getVariant']),
      ...at(
        0,
        openFeatureKinds(['Boolean', 'String', 'Integer', 'Double', 'Object'], (kind) => [`get${kind}Value`, `get${kind}Details`]),
      ),
    ]),
  },
  {
    name: 'Dart',
    family: 'Dart',
    // The Dart grammar's own package ships its WebAssembly build (tree-sitter-wasms' does not load).
    grammar: { package: 'tree-sitter-dart', file: 'tree-sitter-dart.wasm' },
    extensions: ['.dart'],
    calls: new Map([
      // Unleash's Flutter SDK, and OpenFeature's Dart SDK.
      ...at(0, ['isEnabled', 'getVariant']),
      ...at(
        0,
        openFeatureKinds(['Boolean', 'String', 'Integer', 'Double', 'Object'], (kind) => [`get${kind}Value`, `get${kind}Details`]),
      ),
    ]),
  },
  {
    name: 'Elixir',
    family: 'Elixir',
    grammar: wasms('elixir'),
    extensions: ['.ex', '.exs'],
    calls: new Map([
      ...at(0, ['enabled?', 'get_variant']),
      // OpenFeature.Client.get_boolean_value(client, "flag", false)
      ...at(
        1,
        openFeatureKinds(['boolean', 'string', 'number', 'map'], (kind) => [`get_${kind}_value`, `get_${kind}_details`]),
      ),
    ]),
  },
];

/** Argument names under which SDKs take the flag (Ruby's and Swift's keyword arguments, Python's). */
export const FLAG_ARGUMENT_NAMES = new Set([
  'flag_key',
  'flagKey',
  'key',
  'name',
  'feature_name',
  'featureName',
  'toggle_name',
  'toggleName',
]);

export function languageOf(path: string): Language | undefined {
  const dot = path.lastIndexOf('.');
  if (dot < 0) return undefined;
  const extension = path.slice(dot).toLowerCase();
  return LANGUAGES.find((language) => language.extensions.includes(extension));
}

export function languageNamed(name: string): Language {
  const language = LANGUAGES.find((candidate) => candidate.name === name);
  if (!language) throw new Error(`No language called ${name}`);
  return language;
}
