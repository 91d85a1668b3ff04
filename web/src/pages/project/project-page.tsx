import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { actions, queries } from '../../api/queries';
import { ChangeRequestTable } from '../../components/change-request-list';
import { FlagHealth } from '../flag-health';
import { DefaultStrategies, ProjectApiTokens, ProjectContextFields, ProjectStatus } from './project-sections';
import { ProjectExperiments } from './project-experiments';
import { useCan } from '../../components/layout';
import {
  Check,
  ConfirmButton,
  ErrorMessage,
  Field,
  FormSubmit,
  Loaded,
  Pager,
  UrlNameField,
  useAction,
  onFormSubmit,
} from '../../components/ui';

const STATES = ['Draft', 'In review', 'Approved', 'Scheduled', 'Applied', 'Rejected', 'Cancelled'];
const PAGE_SIZE = 50;

function NewFlagForm({ projectId }: { projectId: string }) {
  const navigate = useNavigate();
  const create = useAction(actions.createFlag, (flag) =>
    navigate(`/projects/${encodeURIComponent(projectId)}/flags/${encodeURIComponent(flag.name)}`),
  );
  const submit = onFormSubmit((form) => {
    create.mutate({
      projectId,
      name: String(form.get('name')).trim(),
      type: String(form.get('type')) as 'release',
      description: String(form.get('description')),
    });
  });
  return (
    <form className="card stack" onSubmit={submit} aria-label="New flag">
      <h3 style={{ margin: 0 }}>New flag</h3>
      <div className="grid2">
        <UrlNameField error={create.error} />
        <Field label="Type" error={create.error} field="type">
          <select name="type">
            {['release', 'experiment', 'operational', 'kill-switch', 'permission', 'sunset'].map((type) => (
              <option key={type}>{type}</option>
            ))}
          </select>
        </Field>
        <Field label="Description" error={create.error} field="description">
          <input name="description" />
        </Field>
      </div>
      <FormSubmit action={create} label="Create flag" primary />
    </form>
  );
}

function ProjectSettings({ project }: { project: { id: string; name: string; description: string | null } }) {
  const update = useAction(actions.updateProject);
  const mayUpdate = useCan('UPDATE_PROJECT', project.id);
  if (!mayUpdate) {
    return (
      <section className="card stack" aria-label="Project settings">
        <p>
          Name: <strong>{project.name}</strong>
        </p>
        <p className="muted small">Only a project Owner, an Editor or an Admin changes the project's settings.</p>
      </section>
    );
  }
  const submit = onFormSubmit((form) => {
    update.mutate({ projectId: project.id, name: String(form.get('name')).trim(), description: String(form.get('description')) });
  });
  return (
    <form className="card stack" onSubmit={submit} aria-label="Project settings">
      <div className="grid2">
        <Field label="Name" error={update.error} field="name">
          <input name="name" defaultValue={project.name} required />
        </Field>
        <Field label="Description" error={update.error} field="description">
          <input name="description" defaultValue={project.description ?? ''} />
        </Field>
      </div>
      <ErrorMessage error={update.error} />
      {update.isSuccess && <p className="success">Saved.</p>}
      <div>
        <button type="submit" disabled={update.isPending}>
          Save project
        </button>
      </div>
    </form>
  );
}

function ChangeRequestSettings({ projectId }: { projectId: string }) {
  const config = useQuery(queries.changeRequestConfig(projectId));
  const update = useAction(actions.setChangeRequestConfig);
  const mayConfigure = useCan('UPDATE_CHANGE_REQUEST_CONFIG', projectId);
  return (
    <Loaded query={config} what="change request settings">
      {(entries) => (
        <section className="card stack" aria-label="Change request settings">
          <p className="muted small">
            In a protected environment, flag changes need a change request approved by someone other than its author.
          </p>
          {entries.map((entry) => (
            <div key={entry.environment} className="row" data-testid={`cr-config-${entry.environment}`}>
              <Check
                style={{ minWidth: '14rem' }}
                disabled={!mayConfigure}
                checked={entry.changeRequestEnabled}
                onChange={(changeRequestsEnabled) =>
                  update.mutate({
                    projectId,
                    environment: entry.environment,
                    changeRequestsEnabled,
                    requiredApprovals: entry.requiredApprovals,
                  })
                }
              >
                Require change requests in <strong>{entry.environment}</strong>
              </Check>
              <label className="small">
                Approvals needed{' '}
                <input
                  type="number"
                  min={1}
                  max={10}
                  disabled={!mayConfigure}
                  defaultValue={entry.requiredApprovals}
                  style={{ width: '4rem' }}
                  onBlur={(event) =>
                    Number(event.target.value) !== entry.requiredApprovals &&
                    update.mutate({
                      projectId,
                      environment: entry.environment,
                      changeRequestsEnabled: entry.changeRequestEnabled,
                      requiredApprovals: Number(event.target.value),
                    })
                  }
                />
              </label>
            </div>
          ))}
          <ErrorMessage error={update.error} />
        </section>
      )}
    </Loaded>
  );
}

function ProjectChangeRequests({ projectId }: { projectId: string }) {
  const [state, setState] = useState('open');
  const [offset, setOffset] = useState(0);
  const list = useQuery(queries.projectChangeRequests(projectId, { offset, limit: PAGE_SIZE }));
  const open = new Set(['Draft', 'In review', 'Approved', 'Scheduled']);
  return (
    <div className="stack">
      <label className="small">
        State{' '}
        <select value={state} onChange={(event) => setState(event.target.value)}>
          <option value="open">Open</option>
          <option value="all">All</option>
          {STATES.map((name) => (
            <option key={name}>{name}</option>
          ))}
        </select>
      </label>
      <Loaded query={list} what="change requests">
        {(requests) => (
          <>
            <ChangeRequestTable
              changeRequests={requests.filter(
                (request) => state === 'all' || (state === 'open' ? open.has(request.state) : request.state === state),
              )}
              empty="No change requests in this state."
            />
            {(offset > 0 || requests.length === PAGE_SIZE) && (
              <Pager offset={offset} limit={PAGE_SIZE} shown={requests.length} onChange={setOffset} />
            )}
          </>
        )}
      </Loaded>
    </div>
  );
}

function ProjectEnvironments({ projectId, environments }: { projectId: string; environments: string[] }) {
  const all = useQuery(queries.environments());
  const add = useAction(actions.addProjectEnvironment);
  const remove = useAction(actions.removeProjectEnvironment);
  const mayChange = useCan('UPDATE_PROJECT', projectId);
  const others = (all.data?.environments ?? []).map((environment) => environment.name).filter((name) => !environments.includes(name));
  return (
    <section className="card stack" aria-label="Project environments">
      <div className="chips">
        {environments.map((name) => (
          <span key={name} className="chip">
            {name}
            {mayChange && (
              <button
                type="button"
                aria-label={`Remove ${name} from the project`}
                onClick={() =>
                  window.confirm(`Remove ${name} from ${projectId}? Its flag settings there are deleted.`) &&
                  remove.mutate({ projectId, environment: name })
                }
              >
                ×
              </button>
            )}
          </span>
        ))}
      </div>
      {mayChange && others.length > 0 && (
        <form
          className="row"
          onSubmit={onFormSubmit((form) => {
            add.mutate({ projectId, environment: String(form.get('environment')) });
          })}
        >
          <select name="environment" aria-label="Environment to add">
            {others.map((name) => (
              <option key={name}>{name}</option>
            ))}
          </select>
          <button type="submit">Add environment</button>
        </form>
      )}
      <ErrorMessage error={add.error ?? remove.error} />
    </section>
  );
}

export function ProjectPage() {
  const { projectId = '' } = useParams();
  const navigate = useNavigate();
  const project = useQuery(queries.project(projectId));
  const flags = useQuery(queries.featureSearch({ project: `IS:${projectId}`, limit: '10', sortBy: 'createdAt', sortOrder: 'desc' }));
  const remove = useAction(actions.deleteProject, () => navigate('/admin/projects'));
  const mayDelete = useCan('DELETE_PROJECT', projectId);
  const mayCreateFlags = useCan('CREATE_FEATURE', projectId);
  return (
    <Loaded query={project} what="the project">
      {(details) => (
        <div>
          <div className="spread">
            <h1>
              {details.name} <span className="muted small">({details.id})</span>
            </h1>
            {mayDelete && (
              <ConfirmButton
                question={`Delete the project ${details.id}? It must have no flags left.`}
                onConfirm={() => remove.mutate(projectId)}
              >
                Delete project
              </ConfirmButton>
            )}
          </div>
          {details.description && <p>{details.description}</p>}
          <p>
            <Link to={`/projects/${encodeURIComponent(projectId)}/access`}>People and access →</Link>
          </p>
          <ErrorMessage error={remove.error} />
          <h2>Status</h2>
          <ProjectStatus projectId={projectId} />
          <h2>Flags</h2>
          <Loaded query={flags} what="flags">
            {(result) => (
              <div className="card">
                {result.features.length === 0 ? (
                  <p className="muted">No flags yet.</p>
                ) : (
                  <>
                    <ul>
                      {result.features.map((flag) => (
                        <li key={flag.name}>
                          <Link to={`/projects/${encodeURIComponent(projectId)}/flags/${encodeURIComponent(flag.name)}`}>{flag.name}</Link>{' '}
                          <span className="muted small">{flag.type}</span>
                        </li>
                      ))}
                    </ul>
                    <Link to={`/flags?project=${encodeURIComponent(`IS:${projectId}`)}`}>
                      All {result.total} {result.total === 1 ? 'flag' : 'flags'} of this project →
                    </Link>
                  </>
                )}
              </div>
            )}
          </Loaded>
          {mayCreateFlags && <NewFlagForm projectId={projectId} />}
          <h2>Experiments</h2>
          <ProjectExperiments projectId={projectId} environments={details.environments} />
          <h2>Flag health</h2>
          <FlagHealth projectId={projectId} />
          <h2>Settings</h2>
          <ProjectSettings project={details} />
          <h2>Environments</h2>
          <ProjectEnvironments projectId={projectId} environments={details.environments} />
          <h2>Default strategies</h2>
          <DefaultStrategies projectId={projectId} />
          <h2>Context fields</h2>
          <ProjectContextFields projectId={projectId} />
          <h2>API tokens</h2>
          <ProjectApiTokens projectId={projectId} environments={details.environments} />
          <h2>Change requests</h2>
          <ChangeRequestSettings projectId={projectId} />
          <ProjectChangeRequests projectId={projectId} />
        </div>
      )}
    </Loaded>
  );
}
