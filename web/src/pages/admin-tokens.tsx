import { useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { actions, queries } from '../api/queries';
import { ConfirmButton, ErrorMessage, Field, formatDate, Loaded, OneTimeSecret, Table, useAction } from '../components/ui';

export function AdminTokens() {
  const tokens = useQuery(queries.apiTokens());
  const projects = useQuery(queries.projects());
  const environments = useQuery(queries.environments());
  const [created, setCreated] = useState<string | null>(null);
  const [type, setType] = useState('client');
  const create = useAction(actions.createApiToken, (token) => setCreated(token.secret ?? null));
  const remove = useAction(actions.deleteApiToken);
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const chosen = form.getAll('projects').map(String);
    const expires = String(form.get('expiresAt'));
    create.mutate({
      tokenName: String(form.get('tokenName')).trim(),
      type,
      ...(type === 'admin' ? {} : { environment: String(form.get('environment')), projects: chosen.length ? chosen : ['*'] }),
      ...(expires ? { expiresAt: new Date(expires).toISOString() } : {}),
    });
  };
  return (
    <div>
      <h1>API tokens</h1>
      <p className="muted">
        SDKs read flags with client (server-side) and frontend tokens; scripts call the admin API with admin tokens. A token's secret is
        shown only when it is created.
      </p>
      {created && <OneTimeSecret label="The new token" secret={created} />}
      <Loaded query={tokens} what="tokens">
        {(data) => (
          <Table label="API tokens" columns={['Name', 'Type', 'Projects', 'Environment', 'Created', 'Last seen', 'Expires', '']}>
            {data.tokens.map((token) => (
              <tr key={token.id}>
                <td>{token.tokenName}</td>
                <td>{token.type}</td>
                <td>{token.projects.join(', ')}</td>
                <td>{token.environment}</td>
                <td className="small">{formatDate(token.createdAt)}</td>
                <td className="small">{formatDate(token.seenAt)}</td>
                <td className="small">{formatDate(token.expiresAt)}</td>
                <td>
                  <ConfirmButton
                    question={`Delete the token ${token.tokenName}? Whatever uses it stops working.`}
                    onConfirm={() => remove.mutate(String(token.id))}
                  >
                    Delete
                  </ConfirmButton>
                </td>
              </tr>
            ))}
          </Table>
        )}
      </Loaded>
      <ErrorMessage error={remove.error} />
      <h2>New token</h2>
      <form className="card stack" onSubmit={submit} aria-label="New token">
        <div className="grid2">
          <Field label="Name" error={create.error} field="tokenName">
            <input name="tokenName" required />
          </Field>
          <Field label="Type" error={create.error} field="type">
            <select value={type} onChange={(event) => setType(event.target.value)}>
              <option value="client">client (server-side SDK)</option>
              <option value="frontend">frontend (browser and mobile SDK)</option>
              <option value="admin">admin</option>
            </select>
          </Field>
          {type !== 'admin' && (
            <Field label="Environment" error={create.error} field="environment">
              <select name="environment">
                {(environments.data?.environments ?? []).map((environment) => (
                  <option key={environment.name}>{environment.name}</option>
                ))}
              </select>
            </Field>
          )}
          <Field label="Expires (optional)" error={create.error} field="expiresAt">
            <input name="expiresAt" type="datetime-local" />
          </Field>
        </div>
        {type !== 'admin' && (
          <fieldset className="row">
            <legend className="small">Projects (none ticked: all)</legend>
            {(projects.data?.projects ?? []).map((project) => (
              <label key={project.id} className="check">
                <input type="checkbox" name="projects" value={project.id} /> {project.name}
              </label>
            ))}
          </fieldset>
        )}
        <ErrorMessage error={create.error} />
        <div>
          <button className="primary" type="submit" disabled={create.isPending}>
            Create token
          </button>
        </div>
      </form>
    </div>
  );
}
