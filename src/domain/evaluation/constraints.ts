import { Address4, Address6 } from 'ip-address';
import { RE2JS } from 're2js';
import { SemVer, parse as parseSemver } from 'semver';
import type { Constraint } from '../features/feature-views.js';
import { contextValue, type EvaluationContext } from './context.js';

/** One compiled check of a context. */
export type Predicate = (context: EvaluationContext) => boolean;

export const NEVER: Predicate = () => false;

/** The SDKs drop empty values and trim the others. */
const cleanValues = (values: unknown[] | undefined): string[] =>
  (values ?? []).filter((value): value is string => typeof value === 'string' && value !== '').map((value) => value.trim());

function inList(constraint: Constraint): Predicate {
  const values = new Set(cleanValues(constraint.values));
  const field = constraint.contextName;
  return constraint.operator === 'IN'
    ? (context) => values.has(contextValue(context, field)!)
    : (context) => !values.has(contextValue(context, field)!);
}

function stringMatch(constraint: Constraint): Predicate {
  const field = constraint.contextName;
  const lower = constraint.caseInsensitive === true;
  const values = cleanValues(constraint.values).map((value) => (lower ? value.toLocaleLowerCase() : value));
  const matches =
    constraint.operator === 'STR_STARTS_WITH'
      ? (value: string, candidate: string) => value.startsWith(candidate)
      : constraint.operator === 'STR_ENDS_WITH'
        ? (value: string, candidate: string) => value.endsWith(candidate)
        : (value: string, candidate: string) => value.includes(candidate);
  return (context) => {
    const given = contextValue(context, field);
    if (given === undefined) return false;
    const value = lower ? given.toLocaleLowerCase() : given;
    for (const candidate of values) if (matches(value, candidate)) return true;
    return false;
  };
}

/** Whether an order (negative, zero, positive; NaN when the two cannot be compared) is what the operator asks. */
const ORDER_ACCEPTS: Record<string, (order: number) => boolean> = {
  EQ: (order) => order === 0,
  GT: (order) => order > 0,
  GTE: (order) => order >= 0,
  LT: (order) => order < 0,
  LTE: (order) => order <= 0,
};

const acceptsOf = (operator: string) => ORDER_ACCEPTS[operator.slice(operator.indexOf('_') + 1)]!;

function numberCompare(constraint: Constraint): Predicate {
  const field = constraint.contextName;
  const target = Number(constraint.value);
  if (Number.isNaN(target)) return NEVER;
  const accepts = acceptsOf(constraint.operator);
  return (context) => {
    const value = Number(contextValue(context, field));
    // NaN (no number given) gives NaN, which no operator accepts, as the SDK's explicit check makes it.
    return accepts(value === target ? 0 : value - target);
  };
}

/** The time an evaluation happens at: the context's `currentTime` when it gives one, else now. */
function timeOf(context: EvaluationContext): number {
  const { currentTime } = context;
  if (!currentTime) return Date.now();
  return currentTime instanceof Date ? currentTime.getTime() : new Date(currentTime).getTime();
}

function dateCompare(constraint: Constraint): Predicate {
  const target = new Date(constraint.value as string).getTime();
  if (Number.isNaN(target)) return NEVER;
  // The SDKs compare the evaluation's time, whatever field the constraint names.
  return constraint.operator === 'DATE_AFTER' ? (context) => timeOf(context) > target : (context) => timeOf(context) < target;
}

function semverCompare(constraint: Constraint): Predicate {
  const field = constraint.contextName;
  let target: SemVer;
  try {
    target = new SemVer(constraint.value as string);
  } catch {
    return NEVER;
  }
  const accepts = acceptsOf(constraint.operator);
  return (context) => {
    const value = contextValue(context, field);
    // A leading `v` is not a version to the SDKs, though the semver library would read one.
    if (!value || value.startsWith('v')) return false;
    const version = parseSemver(value);
    return version !== null && accepts(version.compare(target));
  };
}

function regexMatch(constraint: Constraint): Predicate {
  const field = constraint.contextName;
  let regex: RE2JS;
  try {
    // RE2: linear time whatever the pattern, so a pattern cannot stall the server.
    regex = RE2JS.compile(constraint.value as string, constraint.caseInsensitive ? RE2JS.CASE_INSENSITIVE : undefined);
  } catch {
    return NEVER;
  }
  return (context) => {
    const value = contextValue(context, field);
    if (value === undefined) return false;
    try {
      return regex.matcher(value).find();
    } catch {
      return false;
    }
  };
}

interface Range<A> {
  form: string;
  address: A;
}

function ranges<A extends Address4 | Address6>(
  values: string[],
  Kind: { isValid(text: string): boolean; new (text: string): A },
): Range<A>[] {
  return values
    .filter((value) => Kind.isValid(value))
    .map((value) => {
      const address = new Kind(value);
      return { form: address.correctForm(), address };
    });
}

function inRange<A extends Address4 | Address6>(address: A, candidates: Range<A>[]): boolean {
  const form = address.correctForm();
  for (const range of candidates) if (form === range.form || address.isInSubnet(range.address as never)) return true;
  return false;
}

function cidrMatch(constraint: Constraint): Predicate {
  const field = constraint.contextName;
  const values = cleanValues(constraint.values);
  const v4 = ranges(values, Address4);
  const v6 = ranges(values, Address6);
  return (context) => {
    const value = contextValue(context, field);
    if (value === undefined) return false;
    if (Address4.isValid(value)) return inRange(new Address4(value), v4);
    if (Address6.isValid(value)) return inRange(new Address6(value), v6);
    return false;
  };
}

const OPERATORS: Record<string, (constraint: Constraint) => Predicate> = {
  IN: inList,
  NOT_IN: inList,
  STR_STARTS_WITH: stringMatch,
  STR_ENDS_WITH: stringMatch,
  STR_CONTAINS: stringMatch,
  NUM_EQ: numberCompare,
  NUM_GT: numberCompare,
  NUM_GTE: numberCompare,
  NUM_LT: numberCompare,
  NUM_LTE: numberCompare,
  DATE_AFTER: dateCompare,
  DATE_BEFORE: dateCompare,
  SEMVER_EQ: semverCompare,
  SEMVER_GT: semverCompare,
  SEMVER_GTE: semverCompare,
  SEMVER_LT: semverCompare,
  SEMVER_LTE: semverCompare,
  REGEX: regexMatch,
  IN_CIDR: cidrMatch,
};

/**
 * A constraint compiled to a predicate, its values parsed once (a set for `IN`, numbers, dates, versions,
 * address ranges, the regular expression). An operator the SDKs do not know never holds, inverted or not.
 */
export function compileConstraint(constraint: Constraint): Predicate {
  const compile = Object.hasOwn(OPERATORS, constraint.operator) ? OPERATORS[constraint.operator] : undefined;
  if (!compile) return NEVER;
  const check = compile(constraint);
  return constraint.inverted ? (context) => !check(context) : check;
}
