import { LineCounter, parseDocument, stringify } from 'yaml';
import type { FlagsFile } from '../domain/flags-file/flags-file.js';
import { CommandError, type ApiErrorDetail } from './http-api.js';

/** A flags file read from YAML, able to say where in the text a JSON pointer of it lies. */
export interface ParsedFlagsFile {
  file: FlagsFile;
  /** `flags.yaml:12:7` for the entry at `pointer` (or the nearest entry holding it). */
  locate(pointer: string | undefined): string;
}

const unescapePointer = (segment: string) => segment.replaceAll('~1', '/').replaceAll('~0', '~');

export function parseFlagsYaml(text: string, fileName: string): ParsedFlagsFile {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, prettyErrors: true, uniqueKeys: true });
  const problem = document.errors[0];
  if (problem) {
    const at = problem.linePos?.[0];
    throw new CommandError(`${fileName}${at ? `:${at.line}:${at.col}` : ''}: ${problem.message.split('\n')[0]}`);
  }
  const value = document.toJS({ maxAliasCount: 100 }) as unknown;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new CommandError(`${fileName}: a flags file is a mapping starting with "version: 1"`);
  }
  const locate = (pointer: string | undefined) => {
    // Schema refusals point into the request (`/body/projects/0/…`), the apply's own into the file (`/projects/0/…`).
    const path = (pointer ?? '')
      .replace(/^\/body(?=\/|$)/, '')
      .split('/')
      .slice(1)
      .map(unescapePointer);
    for (let length = path.length; length >= 0; length--) {
      const node = length === 0 ? document.contents : document.getIn(path.slice(0, length), true);
      const range = (node as { range?: [number, number, number] } | null | undefined)?.range;
      if (range) {
        const { line, col } = lineCounter.linePos(range[0]);
        return `${fileName}:${line}:${col}`;
      }
    }
    return fileName;
  };
  return { file: value as FlagsFile, locate };
}

/** Each refusal detail on a line of its own, at its place in the file. */
export function locatedProblems(parsed: ParsedFlagsFile, message: string, details: ApiErrorDetail[]): string {
  const lines = details.length > 0 ? details.map((d) => `${parsed.locate(d.path)}: ${d.message}`) : [parsed.locate(undefined)];
  return `${message}\n${[...new Set(lines)].join('\n')}`;
}

export function flagsFileYaml(file: FlagsFile, source: string): string {
  return `# Vexil flags file, exported from ${source}\n# yaml-language-server: $schema=${new URL('docs/flags-file.schema.json', source).href}\n${stringify(file, { lineWidth: 0 })}`;
}
