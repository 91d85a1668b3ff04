import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { actions, queries } from '../../api/queries';
import { AdminList, EditorForm, formText, NameCell } from '../../components/admin';
import { Field, formatDate, OneTimeSecret, useAction } from '../../components/ui';

function NewTokenForm({ onCreated }: { onCreated: (secret: string | null) => void }) {
  const projects = useQuery(queries.projects());
  const environments = useQuery(queries.environments());
  const [type, setType] = useState('client');
  const create = useAction(actions.createApiToken, (token) => onCreated(token.secret ?? null));
  const submit = (form: FormData) => {
    const chosen = form.getAll('projects').map(String);
    const expires = String(form.get('expiresAt'));
    create.mutate({
      tokenName: formText(form, 'tokenName'),
      type,
      ...(type === 'admin' ? {} : { environment: String(form.get('environment')), projects: chosen.length ? chosen : ['*'] }),
      ...(expires ? { expiresAt: new Date(expires).toISOString() } : {}),
    });
  };
  return (
    <EditorForm label="New token" submitLabel="Create token" mutation={create} onSubmit={submit}>
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
    </EditorForm>
  );
}

export function AdminTokens() {
  const tokens = useQuery(queries.apiTokens());
  const [created, setCreated] = useState<string | null>(null);
  return (
    <AdminList
      title="API tokens"
      intro="SDKs read flags with client (server-side) and frontend tokens; scripts call the admin API with admin tokens. A token's secret is shown only when it is created."
      query={tokens}
      items={(data) => data.tokens}
      columns={['Name', 'Type', 'Projects', 'Environment', 'Created', 'Last seen', 'Expires']}
      cells={(token) => (
        <>
          <NameCell name={token.tokenName} />
          <td>{token.type}</td>
          <td>{token.projects.join(', ')}</td>
          <td>{token.environment}</td>
          <td className="small">{formatDate(token.createdAt)}</td>
          <td className="small">{formatDate(token.seenAt)}</td>
          <td className="small">{formatDate(token.expiresAt)}</td>
        </>
      )}
      nameOf={(token) => token.tokenName}
      remove={{ action: actions.deleteApiToken, input: (token) => String(token.id), consequence: 'Whatever uses it stops working.' }}
      noun="token"
      create={(done) => (
        <>
          {created && <OneTimeSecret label="The new token" secret={created} />}
          <NewTokenForm
            onCreated={(secret) => {
              setCreated(secret);
              done();
            }}
          />
        </>
      )}
    />
  );
}
