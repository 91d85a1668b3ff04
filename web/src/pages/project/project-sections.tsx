import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { actions, queries } from '../../api/queries';
import { useCan } from '../../components/layout';
import { DeleteCell, ErrorMessage, Field, formatDate, Loaded, OneTimeSecret, Table, useAction, onFormSubmit } from '../../components/ui';

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
          onSubmit={onFormSubmit((form) => {
            setSecret(null);
            create.mutate({
              projectId,
              tokenName: String(form.get('tokenName')),
              type: String(form.get('type')),
              environment: String(form.get('environment')),
            });
          })}
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
                  <DeleteCell
                    shown={mayDelete}
                    question={`Delete the token "${token.tokenName}"? SDKs using it stop getting flags.`}
                    onConfirm={() => remove.mutate({ projectId, token: String(token.id) })}
                    disabled={remove.isPending}
                  />
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

/**
 * Each environment's default strategy: the gradual rollout a flag turned on there without strategies of its own gets
 * (Unleash's default: everyone, by the default stickiness).
 */
export function DefaultStrategies({ projectId }: { projectId: string }) {
  const environments = useQuery(queries.projectEnvironments(projectId));
  const set = useAction(actions.setProjectDefaultStrategy);
  const mayChange = useCan('UPDATE_PROJECT', projectId);
  return (
    <Loaded query={environments} what="the default strategies">
      {(data) => (
        <section className="card stack" aria-label="Default strategies">
          <p className="muted small">A flag turned on in an environment without strategies of its own gets that environment's rollout.</p>
          <Table label="Default strategies" columns={['Environment', 'Rollout', 'Stickiness', '']}>
            {data.environments
              .filter((environment) => environment.visible)
              .map((environment) => {
                const parameters = environment.defaultStrategy?.parameters ?? {};
                return (
                  <tr key={environment.name}>
                    <td>{environment.name}</td>
                    <td colSpan={mayChange ? 3 : 1}>
                      {mayChange ? (
                        <form
                          className="row"
                          aria-label={`Default strategy in ${environment.name}`}
                          onSubmit={onFormSubmit((form) => {
                            set.mutate({
                              projectId,
                              environment: environment.name,
                              name: 'flexibleRollout',
                              constraints: environment.defaultStrategy?.constraints ?? [],
                              parameters: { rollout: String(form.get('rollout')), stickiness: String(form.get('stickiness')), groupId: '' },
                            });
                          })}
                        >
                          <input
                            name="rollout"
                            type="number"
                            min={0}
                            max={100}
                            aria-label={`Rollout in ${environment.name}, per cent`}
                            defaultValue={parameters.rollout ?? '100'}
                            style={{ width: '6rem' }}
                          />
                          <input
                            name="stickiness"
                            aria-label={`Stickiness in ${environment.name}`}
                            defaultValue={parameters.stickiness ?? 'default'}
                            style={{ width: '9rem' }}
                          />
                          <button type="submit" disabled={set.isPending}>
                            Save
                          </button>
                        </form>
                      ) : (
                        `${parameters.rollout ?? '100'}% by ${parameters.stickiness ?? 'default'}`
                      )}
                    </td>
                  </tr>
                );
              })}
          </Table>
          <ErrorMessage error={set.error} />
        </section>
      )}
    </Loaded>
  );
}

/** The project's own context fields: usable in its flags' constraints, named in no other project's lists. */
export function ProjectContextFields({ projectId }: { projectId: string }) {
  const fields = useQuery(queries.projectContextFields(projectId));
  const create = useAction(actions.createProjectContextField);
  const remove = useAction(actions.deleteProjectContextField);
  const mayChange = useCan('UPDATE_PROJECT', projectId);
  return (
    <section className="card stack" aria-label="Project context fields">
      <Loaded query={fields} what="the project's context fields">
        {(data) =>
          data.length === 0 ? (
            <p className="muted">No context fields of this project's own; the instance's fields are under Admin → Context fields.</p>
          ) : (
            <Table label="Project context fields" columns={['Name', 'Legal values', '']}>
              {data.map((field) => (
                <tr key={field.name}>
                  <td>{field.name}</td>
                  <td className="small">{field.legalValues.map((value) => value.value).join(', ') || 'any value'}</td>
                  <DeleteCell
                    shown={mayChange}
                    question={`Delete the context field "${field.name}"?`}
                    onConfirm={() => remove.mutate({ projectId, name: field.name })}
                  />
                </tr>
              ))}
            </Table>
          )
        }
      </Loaded>
      {mayChange && (
        <form
          className="row fields"
          aria-label="New project context field"
          onSubmit={onFormSubmit((form) => {
            const legalValues = String(form.get('legalValues'))
              .split(',')
              .map((value) => value.trim())
              .filter(Boolean)
              .map((value) => ({ value }));
            create.mutate({ projectId, name: String(form.get('name')), legalValues });
          })}
        >
          <Field label="Field name" error={create.error} field="name">
            <input name="name" required />
          </Field>
          <Field label="Legal values (comma-separated, optional)" error={create.error} field="legalValues">
            <input name="legalValues" />
          </Field>
          <button className="primary" type="submit" disabled={create.isPending}>
            Add context field
          </button>
        </form>
      )}
      <ErrorMessage error={remove.error} />
    </section>
  );
}
