import { isDeepStrictEqual } from 'node:util';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { BadDataError, ConflictError, repeatedKeys } from '../../shared/errors.js';
import { recordEvent } from '../events/record-event.js';
import { describeFlagUsage, joinWords } from '../../shared/flag-usage.js';
import {
  contextFieldUsage,
  findContextField,
  toContextFieldView,
  type ContextFieldView,
  type LegalValue,
} from './context-fields.queries.js';

// Unleash's default position for a new field: after the built-in ones.
const DEFAULT_SORT_ORDER = 10;

export interface CreateContextFieldInput {
  name: string;
  description?: string | null;
  legalValues?: LegalValue[];
  stickiness?: boolean;
  sortOrder?: number;
}

export type UpdateContextFieldInput = Omit<CreateContextFieldInput, 'name'>;

/** Legal values are unique by value; a description is kept only when given. */
function normalizeLegalValues(legalValues: LegalValue[]): LegalValue[] {
  const details = repeatedKeys(
    legalValues,
    (legalValue) => legalValue.value,
    (index) => `/body/legalValues/${index}/value`,
    'Legal values',
  );
  if (details.length > 0) throw new BadDataError('The legal values are invalid', details);
  return legalValues.map(({ value, description }) => (description === undefined ? { value } : { value, description }));
}

export async function createContextField(uow: UnitOfWork, input: CreateContextFieldInput): Promise<ContextFieldView> {
  const row = await uow.tx
    .insertInto('context_fields')
    .values({
      name: input.name,
      description: input.description ?? null,
      legal_values: JSON.stringify(normalizeLegalValues(input.legalValues ?? [])),
      stickiness: input.stickiness ?? false,
      sort_order: input.sortOrder ?? DEFAULT_SORT_ORDER,
      created_at: uow.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  const field = toContextFieldView(row);
  await recordEvent(uow, { type: 'context-field-created', data: field });
  return field;
}

/**
 * Fields left out keep their value (Unleash's PUT resets them, silently dropping legal values a client did not
 * resend). Unchanged values record nothing.
 */
export async function updateContextField(uow: UnitOfWork, name: string, input: UpdateContextFieldInput): Promise<ContextFieldView> {
  const before = await findContextField(uow.tx, name, true);
  const next = {
    description: input.description === undefined ? before.description : input.description,
    legalValues: input.legalValues === undefined ? before.legalValues : normalizeLegalValues(input.legalValues),
    stickiness: input.stickiness ?? before.stickiness,
    sortOrder: input.sortOrder ?? before.sortOrder,
  };
  const unchanged =
    next.description === before.description &&
    isDeepStrictEqual(next.legalValues, before.legalValues) &&
    next.stickiness === before.stickiness &&
    next.sortOrder === before.sortOrder;
  if (unchanged) return before;
  const row = await uow.tx
    .updateTable('context_fields')
    .set({
      description: next.description,
      legal_values: JSON.stringify(next.legalValues),
      stickiness: next.stickiness,
      sort_order: next.sortOrder,
    })
    .where('name', '=', name)
    .returningAll()
    .executeTakeFirstOrThrow();
  const after = toContextFieldView(row);
  await recordEvent(uow, { type: 'context-field-updated', data: after, preData: before });
  return after;
}

/**
 * Deletes a context field no constraint uses; otherwise a 409 names the flags (with environments) and segments
 * whose constraints use it, so the UI never shows constraints on a field it no longer knows.
 */
export async function deleteContextField(uow: UnitOfWork, name: string): Promise<void> {
  const before = await findContextField(uow.tx, name, true);
  const usage = await contextFieldUsage(uow.tx, name);
  if (usage.strategies.length > 0 || usage.segments.length > 0) {
    const users: string[] = [];
    if (usage.strategies.length > 0) users.push(`the strategies of ${describeFlagUsage(usage.strategies)}`);
    if (usage.segments.length > 0) {
      const names = usage.segments.map((segment) => `"${segment}"`).join(', ');
      users.push(`segment${usage.segments.length > 1 ? 's' : ''} ${names}`);
    }
    throw new ConflictError(`Context field "${name}" is used in constraints of ${joinWords(users)}; remove those constraints first`);
  }
  await uow.tx.deleteFrom('context_fields').where('name', '=', name).execute();
  await recordEvent(uow, { type: 'context-field-deleted', preData: before });
}
