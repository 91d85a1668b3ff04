import { useQuery } from '@tanstack/react-query';
import type { FormEvent } from 'react';
import { actions, queries } from '../api/queries';
import { ConfirmButton, ErrorMessage, Field, Loaded, Switch, Table, useAction } from '../components/ui';

const TYPES = ['development', 'test', 'preproduction', 'production'] as const;

export function AdminEnvironments() {
  const environments = useQuery(queries.environments());
  const create = useAction(actions.createEnvironment);
  const toggle = useAction(actions.setEnvironmentEnabled);
  const update = useAction(actions.updateEnvironment);
  const remove = useAction(actions.deleteEnvironment);
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    create.mutate(
      { name: String(form.get('name')).trim(), type: String(form.get('type')) as (typeof TYPES)[number], enabled: true },
      { onSuccess: () => (event.target as HTMLFormElement).reset() },
    );
  };
  return (
    <div>
      <h1>Environments</h1>
      <Loaded query={environments} what="environments">
        {(data) => (
          <Table label="Environments" columns={['Name', 'Type', 'Enabled', 'Projects', 'API tokens', '']}>
            {data.environments.map((environment) => (
              <tr key={environment.name}>
                <td>{environment.name}</td>
                <td>
                  <select
                    aria-label={`Type of ${environment.name}`}
                    value={environment.type}
                    onChange={(event) => update.mutate({ name: environment.name, type: event.target.value as (typeof TYPES)[number] })}
                  >
                    {TYPES.map((type) => (
                      <option key={type}>{type}</option>
                    ))}
                  </select>
                </td>
                <td>
                  <Switch
                    checked={environment.enabled}
                    label={`${environment.name} enabled`}
                    onChange={(enabled) => toggle.mutate({ name: environment.name, enabled })}
                  />
                </td>
                <td>{environment.projectCount}</td>
                <td>{environment.apiTokenCount}</td>
                <td>
                  <ConfirmButton
                    question={`Delete the environment ${environment.name}? Flags' settings there are deleted.`}
                    onConfirm={() => remove.mutate(environment.name)}
                  >
                    Delete
                  </ConfirmButton>
                </td>
              </tr>
            ))}
          </Table>
        )}
      </Loaded>
      <ErrorMessage error={toggle.error ?? update.error ?? remove.error} />
      <h2>New environment</h2>
      <form className="card row fields" onSubmit={submit} aria-label="New environment">
        <Field label="Name" error={create.error} field="name">
          <input name="name" required />
        </Field>
        <Field label="Type" error={create.error} field="type">
          <select name="type">
            {TYPES.map((type) => (
              <option key={type}>{type}</option>
            ))}
          </select>
        </Field>
        <button className="primary" type="submit" disabled={create.isPending}>
          Create environment
        </button>
        <ErrorMessage error={create.error} />
      </form>
    </div>
  );
}
