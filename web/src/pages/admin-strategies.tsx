import { useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { actions, queries, type Schemas } from '../api/queries';
import { ConfirmButton, ErrorMessage, Field, Loaded, Table, useAction } from '../components/ui';

type Definition = Schemas['strategySchema'];
type Parameter = Definition['parameters'][number];

const PARAMETER_TYPES: Parameter['type'][] = ['string', 'percentage', 'list', 'number', 'boolean'];
const EMPTY_PARAMETER: Parameter = { name: '', type: 'string', description: '', required: false };

/** A strategy's typed parameters, edited as rows. */
function ParameterRows({
  parameters,
  onChange,
  error,
}: {
  parameters: Parameter[];
  onChange: (next: Parameter[]) => void;
  error: unknown;
}) {
  const change = (index: number, patch: Partial<Parameter>) =>
    onChange(parameters.map((parameter, at) => (at === index ? { ...parameter, ...patch } : parameter)));
  return (
    <div className="stack">
      {parameters.map((parameter, index) => (
        <div key={index} className="row fields" data-testid="parameter-row">
          <Field label={`Parameter ${index + 1}`} error={error} field={`parameters/${index}/name`}>
            <input value={parameter.name} required onChange={(event) => change(index, { name: event.target.value })} />
          </Field>
          <Field label="Type" error={error} field={`parameters/${index}/type`}>
            <select value={parameter.type} onChange={(event) => change(index, { type: event.target.value as Parameter['type'] })}>
              {PARAMETER_TYPES.map((type) => (
                <option key={type}>{type}</option>
              ))}
            </select>
          </Field>
          <Field label="Description" error={error} field={`parameters/${index}/description`}>
            <input value={parameter.description} onChange={(event) => change(index, { description: event.target.value })} />
          </Field>
          <label className="check">
            <input type="checkbox" checked={parameter.required} onChange={(event) => change(index, { required: event.target.checked })} />{' '}
            Required
          </label>
          <button
            type="button"
            aria-label={`Remove parameter ${index + 1}`}
            onClick={() => onChange(parameters.filter((_, at) => at !== index))}
          >
            ×
          </button>
        </div>
      ))}
      <div>
        <button type="button" onClick={() => onChange([...parameters, { ...EMPTY_PARAMETER }])}>
          Add parameter
        </button>
      </div>
    </div>
  );
}

function DefinitionForm({ definition, onDone }: { definition?: Definition; onDone: () => void }) {
  const [parameters, setParameters] = useState<Parameter[]>(definition?.parameters ?? []);
  const create = useAction(actions.createStrategyDefinition, onDone);
  const update = useAction(actions.updateStrategyDefinition, onDone);
  const mutation = definition ? update : create;
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const fields = {
      title: String(form.get('title')).trim() || null,
      description: String(form.get('description')).trim() || null,
      parameters: parameters.map((parameter) => ({ ...parameter, name: parameter.name.trim() })),
    };
    if (definition) update.mutate({ name: definition.name, ...fields });
    else create.mutate({ name: String(form.get('name')).trim(), ...fields });
  };
  return (
    <form className="card stack" onSubmit={submit} aria-label={definition ? `Edit strategy ${definition.name}` : 'New strategy'}>
      <div className="grid2">
        <Field label="Name" error={mutation.error} field="name" hint="What flags and SDKs call it; it cannot change later.">
          <input name="name" required defaultValue={definition?.name} disabled={definition !== undefined} />
        </Field>
        <Field label="Title" error={mutation.error} field="title">
          <input name="title" defaultValue={definition?.title ?? ''} />
        </Field>
      </div>
      <Field label="Description" error={mutation.error} field="description">
        <input name="description" defaultValue={definition?.description ?? ''} />
      </Field>
      <ParameterRows parameters={parameters} onChange={setParameters} error={mutation.error} />
      <ErrorMessage error={mutation.error} />
      <div className="row">
        <button className="primary" type="submit" disabled={mutation.isPending}>
          {definition ? 'Save strategy' : 'Create strategy'}
        </button>
        {definition && (
          <button type="button" onClick={onDone}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}

/** The strategies flags may use: the built-in ones, and custom ones with typed parameters that SDKs implement. */
export function AdminStrategies() {
  const definitions = useQuery(queries.strategyDefinitions());
  const deprecate = useAction(actions.setStrategyDeprecated);
  const remove = useAction(actions.deleteStrategyDefinition);
  const [editing, setEditing] = useState<string | null>(null);
  const [formKey, setFormKey] = useState(0);
  return (
    <Loaded query={definitions} what="strategies">
      {(data) => (
        <div>
          <h1>Strategies</h1>
          <p className="muted">
            Custom strategies need code in the SDKs that evaluate them. A deprecated strategy stays on the flags that use it and is not
            offered for new ones.
          </p>
          <Table label="Strategies" columns={['Strategy', 'Parameters', 'Kind', '']}>
            {data.strategies.map((definition) =>
              editing === definition.name ? (
                <tr key={definition.name}>
                  <td colSpan={4}>
                    <DefinitionForm definition={definition} onDone={() => setEditing(null)} />
                  </td>
                </tr>
              ) : (
                <tr key={definition.name} className={definition.deprecated ? 'muted' : undefined}>
                  <td>
                    <strong>{definition.displayName || definition.name}</strong>{' '}
                    {definition.deprecated && <span className="badge">deprecated</span>}
                    <div className="muted small">{definition.description}</div>
                  </td>
                  <td className="small">
                    {definition.parameters
                      .map((parameter) => `${parameter.name} (${parameter.type}${parameter.required ? ', required' : ''})`)
                      .join(', ') || '—'}
                  </td>
                  <td>{definition.editable ? 'custom' : 'built in'}</td>
                  <td>
                    <div className="row">
                      {definition.editable && (
                        <button type="button" onClick={() => setEditing(definition.name)}>
                          Edit
                        </button>
                      )}
                      {definition.name !== 'default' && definition.name !== 'flexibleRollout' && (
                        <button
                          type="button"
                          onClick={() => deprecate.mutate({ name: definition.name, deprecated: !definition.deprecated })}
                        >
                          {definition.deprecated ? 'Reactivate' : 'Deprecate'}
                        </button>
                      )}
                      {definition.editable && (
                        <ConfirmButton
                          question={`Delete the strategy ${definition.name}?`}
                          onConfirm={() => remove.mutate(definition.name)}
                        >
                          Delete
                        </ConfirmButton>
                      )}
                    </div>
                  </td>
                </tr>
              ),
            )}
          </Table>
          <ErrorMessage error={deprecate.error ?? remove.error} />
          <h2>New strategy</h2>
          <DefinitionForm key={formKey} onDone={() => setFormKey((key) => key + 1)} />
        </div>
      )}
    </Loaded>
  );
}
