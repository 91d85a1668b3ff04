import { useQuery } from '@tanstack/react-query';
import type { FormEvent } from 'react';
import { Link, useNavigate } from 'react-router';
import { actions, queries } from '../api/queries';
import { ErrorMessage, Field, formatDate, Loaded, Table, useAction } from '../components/ui';

export function AdminProjects() {
  const navigate = useNavigate();
  const projects = useQuery(queries.projects());
  const environments = useQuery(queries.environments());
  const create = useAction(actions.createProject, (project) => navigate(`/projects/${encodeURIComponent(project.id)}`));
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const chosen = form.getAll('environments').map(String);
    create.mutate({
      id: String(form.get('id')).trim(),
      name: String(form.get('name')).trim(),
      description: String(form.get('description')),
      ...(chosen.length ? { environments: chosen } : {}),
    });
  };
  return (
    <div>
      <h1>Projects</h1>
      <Loaded query={projects} what="projects">
        {(data) => (
          <Table label="Projects" columns={['Project', 'Id', 'Environments', 'Created']}>
            {data.projects.map((project) => (
              <tr key={project.id}>
                <td>
                  <Link to={`/projects/${encodeURIComponent(project.id)}`}>{project.name}</Link>
                  {project.description && <div className="muted small">{project.description}</div>}
                </td>
                <td>
                  <code>{project.id}</code>
                </td>
                <td>{project.environments.join(', ')}</td>
                <td className="small">{formatDate(project.createdAt)}</td>
              </tr>
            ))}
          </Table>
        )}
      </Loaded>
      <h2>New project</h2>
      <form className="card stack" onSubmit={submit} aria-label="New project">
        <div className="grid2">
          <Field label="Id" error={create.error} field="id" hint="Used in URLs and API tokens; it cannot change.">
            <input name="id" required pattern="[A-Za-z0-9_.\-]+" />
          </Field>
          <Field label="Name" error={create.error} field="name">
            <input name="name" required />
          </Field>
          <Field label="Description" error={create.error} field="description">
            <input name="description" />
          </Field>
        </div>
        <fieldset className="row">
          <legend className="small">Environments (none ticked: every enabled one)</legend>
          {(environments.data?.environments ?? []).map((environment) => (
            <label key={environment.name} className="check">
              <input type="checkbox" name="environments" value={environment.name} /> {environment.name}
            </label>
          ))}
        </fieldset>
        <ErrorMessage error={create.error} />
        <div>
          <button className="primary" type="submit" disabled={create.isPending}>
            Create project
          </button>
        </div>
      </form>
    </div>
  );
}
