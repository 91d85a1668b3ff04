import { BadDataError } from './errors.js';

/**
 * The filter syntax of Unleash's search endpoints: `<OPERATOR>:<value>[,<value>...]`. Values are split on
 * commas and trimmed. Every way a filter can be wrong is a 400 naming the parameter and what was sent, never
 * a filter silently ignored.
 */
export interface Filter<Op extends string = string> {
  operator: Op;
  values: string[];
}

function problem(parameter: string, sent: string, message: string, what = 'filter'): BadDataError {
  const shown = sent.length > 100 ? `${sent.slice(0, 97)}...` : sent;
  return new BadDataError(`Invalid ${parameter} ${what}: ${message}`, [
    { path: `/query/${parameter}`, message: `${message} (got ${JSON.stringify(shown)})` },
  ]);
}

/**
 * Values one filter may list. Far more than a person picks, few enough that no filter can make a query
 * expensive to plan or run.
 */
export const MAX_FILTER_VALUES = 100;

export function parseFilter<Op extends string>(parameter: string, raw: string, operators: readonly Op[]): Filter<Op> {
  const colon = raw.indexOf(':');
  const operator = colon === -1 ? raw : raw.slice(0, colon);
  if (colon === -1 || !(operators as readonly string[]).includes(operator)) {
    throw problem(parameter, raw, `use <OPERATOR>:<value> with one of the operators ${operators.join(', ')}`);
  }
  const values = raw
    .slice(colon + 1)
    .split(',')
    .map((value) => value.trim());
  if (values.some((value) => value === '')) throw problem(parameter, raw, 'values may not be empty');
  if (values.length > MAX_FILTER_VALUES) throw problem(parameter, raw, `give at most ${MAX_FILTER_VALUES} values`);
  return { operator: operator as Op, values: [...new Set(values)] };
}

/** Whole numbers from query strings (`limit`, `offset`, user ids), with their allowed range. */
export function parseWholeNumber(parameter: string, raw: string | undefined, fallback: number, min: number, max: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < min || value > max) {
    throw problem(parameter, raw, `must be a whole number from ${min} to ${max}`, 'parameter');
  }
  return value;
}

/** A `yyyy-MM-dd` day that exists in the calendar, as the start of that day in UTC. */
export function parseDay(parameter: string, raw: string, value: string): Date {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  const day = match ? new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]))) : undefined;
  if (!match || !day || day.toISOString().slice(0, 10) !== value) {
    throw problem(parameter, raw, 'dates must be real days written yyyy-MM-dd');
  }
  return day;
}

export function parseUserIds(parameter: string, raw: string, values: string[]): number[] {
  return values.map((value) => {
    if (!/^-?\d{1,9}$/.test(value)) throw problem(parameter, raw, 'user ids must be whole numbers');
    return Number(value);
  });
}

/**
 * The longest text one search term may be. A substring match costs about its length times the text it reads, so
 * a long term over a large log could hold the database (and the embedded engine's one connection) for long.
 */
export const MAX_SEARCH_TERM_LENGTH = 100;

/**
 * A search term as an ILIKE pattern matching it anywhere: `%` and `_` in it are literal characters, not
 * wildcards, and a term longer than MAX_SEARCH_TERM_LENGTH is a 400 naming the parameter.
 */
export function likePattern(term: string, path = '/query/query'): string {
  if (term.length > MAX_SEARCH_TERM_LENGTH) {
    const message = `a search term is at most ${MAX_SEARCH_TERM_LENGTH} characters (got ${term.length})`;
    throw new BadDataError(`Invalid query: ${message}`, [{ path, message }]);
  }
  return `%${term.replace(/[\\%_]/g, (character) => `\\${character}`)}%`;
}
