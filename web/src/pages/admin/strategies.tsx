import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { actions, queries, type Schemas } from '../../api/queries';
import { AdminList, NameCell, formText, ItemForm } from '../../components/admin';
import { ErrorMessage, Field, useAction } from '../../components/ui';

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
  const submit = (form: FormData) => {
    const fields = {
      title: formText(form, 'title') || null,
      description: formText(form, 'description') || null,
      parameters: parameters.map((parameter) => ({ ...parameter, name: parameter.name.trim() })),
    };
    if (definition) update.mutate({ name: definition.name, ...fields });
    else create.mutate({ name: formText(form, 'name'), ...fields });
  };
  return (
    <ItemForm noun="strategy" editing={definition?.name} onDone={onDone} mutation={mutation} onSubmit={submit}>
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
    </ItemForm>
  );
}

/** Deprecating keeps a strategy on the flags that use it and stops offering it; the two every flag may use stay. */
function DeprecateButton({ definition }: { definition: Definition }) {
  const deprecate = useAction(actions.setStrategyDeprecated);
  if (definition.name === 'default' || definition.name === 'flexibleRollout') return null;
  return (
    <>
      <button type="button" onClick={() => deprecate.mutate({ name: definition.name, deprecated: !definition.deprecated })}>
        {definition.deprecated ? 'Reactivate' : 'Deprecate'}
      </button>
      <ErrorMessage error={deprecate.error} />
    </>
  );
}

/** The strategies flags may use: the built-in ones, and custom ones with typed parameters that SDKs implement. */
export function AdminStrategies() {
  const definitions = useQuery(queries.strategyDefinitions());
  return (
    <AdminList
      title="Strategies"
      intro="Custom strategies need code in the SDKs that evaluate them. A deprecated strategy stays on the flags that use it and is not offered for new ones."
      query={definitions}
      items={(data) => data.strategies}
      columns={['Strategy', 'Parameters', 'Kind']}
      rowClass={(definition) => (definition.deprecated ? 'muted' : undefined)}
      cells={(definition) => (
        <>
          <NameCell name={definition.displayName || definition.name} description={definition.description}>
            {definition.deprecated && (
              <>
                {' '}
                <span className="badge">deprecated</span>
              </>
            )}
          </NameCell>
          <td className="small">
            {definition.parameters
              .map((parameter) => `${parameter.name} (${parameter.type}${parameter.required ? ', required' : ''})`)
              .join(', ') || '—'}
          </td>
          <td>{definition.editable ? 'custom' : 'built in'}</td>
        </>
      )}
      actions={(definition) => <DeprecateButton definition={definition} />}
      changeable={(definition) => definition.editable}
      edit={(definition, done) => <DefinitionForm definition={definition} onDone={done} />}
      remove={{ action: actions.deleteStrategyDefinition }}
      noun="strategy"
      create={(done) => <DefinitionForm onDone={done} />}
    />
  );
}
