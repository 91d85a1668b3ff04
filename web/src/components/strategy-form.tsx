import { useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { queries, type Schemas } from '../api/queries';
import { Check, Field } from './ui';
import { VariantsEditor, type VariantDraft } from './variants-editor';

type Constraint = Schemas['constraintSchema'];
type Operator = Constraint['operator'];

const OPERATORS: Operator[] = [
  'IN',
  'NOT_IN',
  'STR_CONTAINS',
  'STR_STARTS_WITH',
  'STR_ENDS_WITH',
  'NUM_EQ',
  'NUM_GT',
  'NUM_GTE',
  'NUM_LT',
  'NUM_LTE',
  'DATE_AFTER',
  'DATE_BEFORE',
  'SEMVER_EQ',
  'SEMVER_GT',
  'SEMVER_LT',
  'SEMVER_GTE',
  'SEMVER_LTE',
  'REGEX',
  'IN_CIDR',
];
/** Operators that take a list of values; the others take one value. */
const LIST_OPERATORS = new Set<Operator>(['IN', 'NOT_IN', 'STR_CONTAINS', 'STR_STARTS_WITH', 'STR_ENDS_WITH', 'IN_CIDR']);

export interface StrategyDraft {
  name: string;
  title?: string | null;
  disabled?: boolean;
  parameters: Record<string, string>;
  constraints: Constraint[];
  segments: number[];
  variants: VariantDraft[];
}

export function ConstraintsEditor({ constraints, onChange }: { constraints: Constraint[]; onChange: (constraints: Constraint[]) => void }) {
  const contextFields = useQuery(queries.contextFields());
  const names = contextFields.data?.map((field) => field.name) ?? ['userId', 'environment', 'appName'];
  const set = (index: number, change: Partial<Constraint>) =>
    onChange(constraints.map((constraint, at) => (at === index ? { ...constraint, ...change } : constraint)));
  return (
    <div className="stack">
      {constraints.map((constraint, index) => {
        const list = LIST_OPERATORS.has(constraint.operator);
        return (
          <fieldset key={index} className="row card" aria-label={`Constraint ${index + 1}`}>
            <Field label="Context field">
              <select value={constraint.contextName} onChange={(event) => set(index, { contextName: event.target.value })}>
                {!names.includes(constraint.contextName) && <option>{constraint.contextName}</option>}
                {names.map((name) => (
                  <option key={name}>{name}</option>
                ))}
              </select>
            </Field>
            <Field label="Operator">
              <select
                value={constraint.operator}
                onChange={(event) => {
                  const operator = event.target.value as Operator;
                  // Moving between list and single-value operators carries the values over.
                  const values = constraint.values ?? (constraint.value ? [constraint.value] : []);
                  set(
                    index,
                    LIST_OPERATORS.has(operator)
                      ? { operator, values, value: undefined }
                      : { operator, value: values[0] ?? constraint.value ?? '', values: undefined },
                  );
                }}
              >
                {OPERATORS.map((operator) => (
                  <option key={operator}>{operator}</option>
                ))}
              </select>
            </Field>
            <Field label={list ? 'Values (comma-separated)' : 'Value'}>
              <input
                value={list ? (constraint.values ?? []).join(', ') : (constraint.value ?? '')}
                onChange={(event) =>
                  set(
                    index,
                    list
                      ? {
                          values: event.target.value
                            .split(',')
                            .map((value) => value.trim())
                            .filter(Boolean),
                        }
                      : { value: event.target.value },
                  )
                }
              />
            </Field>
            <Check className="check small" checked={constraint.inverted ?? false} onChange={(inverted) => set(index, { inverted })}>
              Negate
            </Check>
            <Check
              className="check small"
              checked={constraint.caseInsensitive ?? false}
              onChange={(caseInsensitive) => set(index, { caseInsensitive })}
            >
              Ignore case
            </Check>
            <button type="button" className="danger" onClick={() => onChange(constraints.filter((_, at) => at !== index))}>
              Remove
            </button>
          </fieldset>
        );
      })}
      <div>
        <button type="button" onClick={() => onChange([...constraints, { contextName: names[0] ?? 'userId', operator: 'IN', values: [] }])}>
          Add constraint
        </button>
      </div>
    </div>
  );
}

/** Adds or edits one strategy: its type's parameters, constraints, segments and variants. */
export function StrategyForm({
  initial,
  flagName,
  error,
  saving,
  onSave,
  onCancel,
}: {
  initial?: StrategyDraft;
  flagName: string;
  error: unknown;
  saving: boolean;
  onSave: (draft: StrategyDraft) => void;
  onCancel: () => void;
}) {
  const definitions = useQuery(queries.strategyDefinitions());
  const segments = useQuery(queries.segments());
  const [draft, setDraft] = useState<StrategyDraft>(
    initial ?? {
      name: 'flexibleRollout',
      title: '',
      parameters: { rollout: '100', stickiness: 'default', groupId: flagName },
      constraints: [],
      segments: [],
      variants: [],
    },
  );
  const definition = definitions.data?.strategies.find((strategy) => strategy.name === draft.name);
  const setParameter = (name: string, value: string) => setDraft({ ...draft, parameters: { ...draft.parameters, [name]: value } });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onSave(draft);
  };
  return (
    <form className="card stack" onSubmit={submit} aria-label={initial ? 'Edit strategy' : 'Add strategy'}>
      <div className="grid2">
        <Field label="Strategy" error={error} field="name">
          <select
            value={draft.name}
            onChange={(event) => {
              const name = event.target.value;
              const chosen = definitions.data?.strategies.find((strategy) => strategy.name === name);
              const parameters = Object.fromEntries(
                (chosen?.parameters ?? []).map((parameter) => [
                  parameter.name,
                  name === 'flexibleRollout'
                    ? (({ rollout: '100', stickiness: 'default', groupId: flagName } as Record<string, string>)[parameter.name] ?? '')
                    : '',
                ]),
              );
              setDraft({ ...draft, name, parameters });
            }}
          >
            {(definitions.data?.strategies ?? [{ name: draft.name, displayName: draft.name, deprecated: false }])
              .filter((strategy) => !strategy.deprecated || strategy.name === draft.name)
              .map((strategy) => (
                <option key={strategy.name} value={strategy.name}>
                  {strategy.displayName || strategy.name}
                </option>
              ))}
          </select>
        </Field>
        <Field label="Title (optional)" error={error} field="title">
          <input value={draft.title ?? ''} onChange={(event) => setDraft({ ...draft, title: event.target.value })} />
        </Field>
        {(definition?.parameters ?? []).map((parameter) => (
          <Field
            key={parameter.name}
            label={`${parameter.name === 'rollout' ? 'Rollout (%)' : parameter.name}${parameter.required ? ' *' : ''}`}
            error={error}
            field={`parameters/${parameter.name}`}
            hint={parameter.description}
          >
            {parameter.type === 'percentage' ? (
              <input
                type="number"
                min={0}
                max={100}
                value={draft.parameters[parameter.name] ?? ''}
                onChange={(event) => setParameter(parameter.name, event.target.value)}
              />
            ) : parameter.type === 'boolean' ? (
              <select
                value={draft.parameters[parameter.name] ?? 'false'}
                onChange={(event) => setParameter(parameter.name, event.target.value)}
              >
                <option>true</option>
                <option>false</option>
              </select>
            ) : (
              <input
                type={parameter.type === 'number' ? 'number' : 'text'}
                value={draft.parameters[parameter.name] ?? ''}
                required={parameter.required}
                placeholder={parameter.type === 'list' ? 'Comma-separated values' : undefined}
                onChange={(event) => setParameter(parameter.name, event.target.value)}
              />
            )}
          </Field>
        ))}
      </div>
      <h3>Constraints</h3>
      <ConstraintsEditor constraints={draft.constraints} onChange={(constraints) => setDraft({ ...draft, constraints })} />
      <h3>Segments</h3>
      <div className="row">
        {(segments.data?.segments ?? []).length === 0 && <span className="muted small">No segments defined.</span>}
        {(segments.data?.segments ?? []).map((segment) => (
          <Check
            key={segment.id}
            checked={draft.segments.includes(segment.id)}
            onChange={(on) =>
              setDraft({ ...draft, segments: on ? [...draft.segments, segment.id] : draft.segments.filter((id) => id !== segment.id) })
            }
          >
            {segment.name}
          </Check>
        ))}
      </div>
      <details>
        <summary>Strategy variants ({draft.variants.length})</summary>
        <VariantsEditor initial={draft.variants} saveLabel="Keep these variants" onSave={(variants) => setDraft({ ...draft, variants })} />
      </details>
      <Check checked={draft.disabled ?? false} onChange={(disabled) => setDraft({ ...draft, disabled })}>
        Disabled (kept, but not evaluated)
      </Check>
      <div className="row">
        <button className="primary" type="submit" disabled={saving}>
          Save strategy
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
