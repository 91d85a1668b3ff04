import { useQuery } from '@tanstack/react-query';
import { actions, queries, type Schemas } from '../../api/queries';
import { AdminList, EditorForm, formText, NameCell } from '../../components/admin';
import { ErrorMessage, Field, Switch, useAction } from '../../components/ui';

const TYPES = ['development', 'test', 'preproduction', 'production'] as const;
type EnvironmentType = (typeof TYPES)[number];

function TypeOptions() {
  return TYPES.map((type) => <option key={type}>{type}</option>);
}

/** Type and enabled, changed as soon as they are picked. */
function SettingCells({ environment }: { environment: Schemas['environmentSchema'] }) {
  const toggle = useAction(actions.setEnvironmentEnabled);
  const update = useAction(actions.updateEnvironment);
  return (
    <>
      <td>
        <select
          aria-label={`Type of ${environment.name}`}
          value={environment.type}
          onChange={(event) => update.mutate({ name: environment.name, type: event.target.value as EnvironmentType })}
        >
          <TypeOptions />
        </select>
        <ErrorMessage error={update.error} />
      </td>
      <td>
        <Switch
          checked={environment.enabled}
          label={`${environment.name} enabled`}
          onChange={(enabled) => toggle.mutate({ name: environment.name, enabled })}
        />
        <ErrorMessage error={toggle.error} />
      </td>
    </>
  );
}

function NewEnvironmentForm({ onDone }: { onDone: () => void }) {
  const create = useAction(actions.createEnvironment, onDone);
  return (
    <EditorForm
      label="New environment"
      submitLabel="Create environment"
      mutation={create}
      className="card row fields"
      onSubmit={(form) => create.mutate({ name: formText(form, 'name'), type: String(form.get('type')) as EnvironmentType, enabled: true })}
    >
      <Field label="Name" error={create.error} field="name">
        <input name="name" required />
      </Field>
      <Field label="Type" error={create.error} field="type">
        <select name="type">
          <TypeOptions />
        </select>
      </Field>
    </EditorForm>
  );
}

export function AdminEnvironments() {
  const environments = useQuery(queries.environments());
  return (
    <AdminList
      title="Environments"
      intro="Each flag is switched, and has its strategies, per environment; an SDK token reads one environment."
      query={environments}
      items={(data) => data.environments}
      columns={['Name', 'Type', 'Enabled', 'Projects', 'API tokens']}
      cells={(environment) => (
        <>
          <NameCell name={environment.name} />
          <SettingCells environment={environment} />
          <td>{environment.projectCount}</td>
          <td>{environment.apiTokenCount}</td>
        </>
      )}
      remove={{ action: actions.deleteEnvironment, consequence: "Flags' settings there are deleted." }}
      noun="environment"
      create={(done) => <NewEnvironmentForm onDone={done} />}
    />
  );
}
