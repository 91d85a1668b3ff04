import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { actions, queries } from '../api/queries';
import { useCan } from '../components/layout';
import { ConfirmButton, ErrorMessage, Field, formatDate, Loaded, OneTimeSecret, Table, useAction } from '../components/ui';

const STAGES = [
  ['initial', 'Initial'],
  ['preLive', 'Pre-live'],
  ['live', 'Live'],
  ['completed', 'Completed'],
] as const;

/** Where the project stands: its health, where its flags are in their lifecycle, and what it holds. */
export function ProjectStatus({ projectId }: { projectId: string }) {
  const status = useQuery(queries.projectStatus(projectId));
  return (
    <Loaded query={status} what="the project's status">
      {(data) => (
        <section className="card stack" aria-label="Project status">
          <dl className="figures">
            <div>
              <dt className="muted small">Health</dt>
              <dd data-testid="project-health">{data.health.current}%</dd>
            </div>
            <div>
              <dt className="muted small">Stale or potentially stale</dt>
              <dd data-testid="project-stale">{data.staleFlags.total}</dd>
            </div>
            {STAGES.map(([key, label]) => (
              <div key={key}>
                <dt className="muted small">{label}</dt>
                <dd data-testid={`stage-${key}`}>
                  {data.lifecycleSummary[key].currentFlags}
                  {data.lifecycleSummary[key].averageDays !== null && (
                    <span className="muted small"> · {data.lifecycleSummary[key].averageDays} days on average</span>
                  )}
                </dd>
              </div>
            ))}
            <div>
              <dt className="muted small">Archived (30 days)</dt>
              <dd data-testid="stage-archived">
                {data.lifecycleSummary.archived.currentFlags}{' '}
                <span className="muted small">({data.lifecycleSummary.archived.last30Days})</span>
              </dd>
            </div>
          </dl>
          <p className="small muted">
            {data.resources.members} {data.resources.members === 1 ? 'member' : 'members'} · {data.resources.apiTokens} API{' '}
            {data.resources.apiTokens === 1 ? 'token' : 'tokens'} · {data.resources.segments}{' '}
            {data.resources.segments === 1 ? 'segment' : 'segments'} · {data.activityCountByDate.reduce((sum, day) => sum + day.count, 0)}{' '}
            changes this year
          </p>
        </section>
      )}
    </Loaded>
  );
}

/** The project's own SDK tokens: made and deleted here by its members, the secret shown once. */
export function ProjectApiTokens({ projectId, environments }: { projectId: string; environments: string[] }) {
  const mayRead = useCan('READ_PROJECT_API_TOKEN', projectId);
  const mayCreate = useCan('CREATE_PROJECT_API_TOKEN', projectId);
  const mayDelete = useCan('DELETE_PROJECT_API_TOKEN', projectId);
  const tokens = useQuery({ ...queries.projectApiTokens(projectId), enabled: mayRead });
  const [secret, setSecret] = useState<string | null>(null);
  const create = useAction(actions.createProjectApiToken, (token) => setSecret(token.secret ?? null));
  const remove = useAction(actions.deleteProjectApiToken);
  if (!mayRead) return <p className="muted">Your role in this project does not show its API tokens.</p>;
  return (
    <section className="card stack" aria-label="Project API tokens">
      {mayCreate && (
        <form
          className="row fields"
          aria-label="New project token"
          onSubmit={(event) => {
            event.preventDefault();
            const form = new FormData(event.currentTarget);
            setSecret(null);
            create.mutate({
              projectId,
              tokenName: String(form.get('tokenName')),
              type: String(form.get('type')),
              environment: String(form.get('environment')),
            });
          }}
        >
          <Field label="Token name" error={create.error} field="tokenName">
            <input name="tokenName" required />
          </Field>
          <Field label="Kind" error={create.error} field="type">
            <select name="type" defaultValue="client">
              <option value="client">client (server-side SDK)</option>
              <option value="frontend">frontend (browser and mobile SDK)</option>
            </select>
          </Field>
          <Field label="Environment" error={create.error} field="environment">
            <select name="environment">
              {environments.map((environment) => (
                <option key={environment}>{environment}</option>
              ))}
            </select>
          </Field>
          <button className="primary" type="submit" disabled={create.isPending}>
            Create token
          </button>
        </form>
      )}
      {secret && <OneTimeSecret label="The new token" secret={secret} />}
      <Loaded query={tokens} what="the project's tokens">
        {(data) =>
          data.tokens.length === 0 ? (
            <p className="muted">No tokens for this project yet.</p>
          ) : (
            <Table label="Project API tokens" columns={['Name', 'Kind', 'Environment', 'Created', 'Last used', '']}>
              {data.tokens.map((token) => (
                <tr key={token.id}>
                  <td>{token.tokenName}</td>
                  <td>{token.type}</td>
                  <td>{token.environment}</td>
                  <td className="small">{formatDate(token.createdAt)}</td>
                  <td className="small">{formatDate(token.seenAt)}</td>
                  <td>
                    {mayDelete && (
                      <ConfirmButton
                        question={`Delete the token "${token.tokenName}"? SDKs using it stop getting flags.`}
                        onConfirm={() => remove.mutate({ projectId, token: String(token.id) })}
                        disabled={remove.isPending}
                      >
                        Delete
                      </ConfirmButton>
                    )}
                  </td>
                </tr>
              ))}
            </Table>
          )
        }
      </Loaded>
      <ErrorMessage error={remove.error} />
    </section>
  );
}
