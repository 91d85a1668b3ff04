import ipaddr from 'ipaddr.js';
import { RE2JS } from 're2js';
import semver from 'semver';
import { BadDataError, type ErrorDetail } from '../../shared/errors.js';
import type { Constraint } from './feature-views.js';

export { CONSTRAINT_OPERATORS } from './feature-views.js';

const MULTI_VALUE_OPERATORS = new Set(['NOT_IN', 'IN', 'STR_ENDS_WITH', 'STR_STARTS_WITH', 'STR_CONTAINS', 'IN_CIDR']);

const NUMBER = /^-?\d+(\.\d+)?$/;
// RFC 3339 date-times, as Unleash's SDKs compare them.
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

/** RFC 3339 and a day the month has: Date.parse alone would roll 2024-02-30 over to March 1st. */
function isRealDateTime(value: string): boolean {
  const match = DATE_TIME.exec(value);
  if (!match || Number.isNaN(Date.parse(value))) return false;
  const [year, month, day] = value.slice(0, 10).split('-').map(Number) as [number, number, number];
  const calendarDay = new Date(Date.UTC(year, month - 1, day));
  return calendarDay.getUTCFullYear() === year && calendarDay.getUTCMonth() === month - 1 && calendarDay.getUTCDate() === day;
}

function valueProblem(operator: string, value: string): string | undefined {
  if (operator.startsWith('NUM_') && !NUMBER.test(value)) return `${operator} needs a number`;
  if (operator.startsWith('DATE_') && !isRealDateTime(value)) {
    return `${operator} needs an RFC 3339 date-time such as 2026-01-31T12:00:00Z`;
  }
  if (operator.startsWith('SEMVER_') && semver.valid(value) === null) return `${operator} needs a semantic version such as 1.2.3`;
  if (operator === 'REGEX') {
    // The SDKs run RE2 (linear time, no backreferences or lookaround): accept exactly what they can run.
    try {
      RE2JS.compile(value);
    } catch (error) {
      return `REGEX needs a regular expression in RE2 syntax: ${(error as Error).message}`;
    }
  }
  return undefined;
}

/** An IPv4 or IPv6 address, or a range in CIDR notation, as IN_CIDR compares them. */
function isAddressOrRange(value: string): boolean {
  if (ipaddr.isValid(value)) return true;
  try {
    ipaddr.parseCIDR(value);
    return true;
  } catch {
    return false;
  }
}

/** What the schema cannot check of one constraint at `at`: a value of the operator's kind, or values for a list operator. */
function constraintProblems(constraint: Constraint, at: string): ErrorDetail[] {
  if (MULTI_VALUE_OPERATORS.has(constraint.operator)) {
    if (!constraint.values || constraint.values.length === 0) {
      return [{ path: `${at}/values`, message: `${constraint.operator} needs at least one value in "values"` }];
    }
    if (constraint.operator !== 'IN_CIDR') return [];
    return constraint.values.flatMap((value, i) =>
      isAddressOrRange(value)
        ? []
        : [
            {
              path: `${at}/values/${i}`,
              message: `IN_CIDR needs IP addresses or CIDR ranges such as 10.0.0.0/8 (got ${JSON.stringify(value)})`,
            },
          ],
    );
  }
  const value = constraint.value ?? (constraint.values?.length === 1 ? constraint.values[0] : undefined);
  if (value === undefined || value === '') return [{ path: `${at}/value`, message: `${constraint.operator} needs one value in "value"` }];
  const problem = valueProblem(constraint.operator, value);
  return problem ? [{ path: `${at}/value`, message: `${problem} (got ${JSON.stringify(value)})` }] : [];
}

/**
 * Checks what the schema cannot: single-value operators need a `value` of the right kind (number, date,
 * semver), list operators need `values`. Throws one 400 listing every problem.
 */
export function validateConstraints(constraints: Constraint[], path: string): void {
  const details = constraints.flatMap((constraint, index) => constraintProblems(constraint, `${path}/${index}`));
  if (details.length > 0) throw new BadDataError('A constraint is invalid', details);
}

/** The same check of one constraint, its problems reported under `path` itself. */
export function validateConstraint(constraint: Constraint, path: string): void {
  const details = constraintProblems(constraint, path);
  if (details.length > 0) throw new BadDataError('The constraint is invalid', details);
}

/** Stored form: defaults made explicit, so reads and events show the same thing. */
export function normalizeConstraints(constraints: Constraint[] = []): Constraint[] {
  return constraints.map((c) => {
    const multi = MULTI_VALUE_OPERATORS.has(c.operator);
    const normalized: Constraint = {
      contextName: c.contextName,
      operator: c.operator,
      caseInsensitive: c.caseInsensitive ?? false,
      inverted: c.inverted ?? false,
    };
    if (multi) normalized.values = c.values ?? [];
    else normalized.value = c.value ?? c.values?.[0] ?? '';
    return normalized;
  });
}
