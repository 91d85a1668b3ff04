import { useQuery } from '@tanstack/react-query';
import { Link, useNavigate } from 'react-router';
import { actions, queries } from '../../api/queries';
import { AdminList, NameCell, EditorForm, formText, NameAndDescription } from '../../components/admin';
import { Field, formatDate, useAction } from '../../components/ui';

function NewProjectForm() {
  const navigate = useNavigate();
  const environments = useQuery(queries.environments());
  const create = useAction(actions.createProject, (project) => navigate(`/projects/${encodeURIComponent(project.id)}`));
  const submit = (form: FormData) => {
    const chosen = form.getAll('environments').map(String);
    create.mutate({
      id: formText(form, 'id'),
      name: formText(form, 'name'),
      description: String(form.get('description')),
      ...(chosen.length ? { environments: chosen } : {}),
    });
  };
  return (
    <EditorForm label="New project" submitLabel="Create project" mutation={create} onSubmit={submit}>
      <div className="grid2">
        <Field label="Id" error={create.error} field="id" hint="Used in URLs and API tokens; it cannot change.">
          <input name="id" required pattern="[A-Za-z0-9_.\-]+" />
        </Field>
        <NameAndDescription error={create.error} />
      </div>
      <fieldset className="row">
        <legend className="small">Environments (none ticked: every enabled one)</legend>
        {(environments.data?.environments ?? []).map((environment) => (
          <label key={environment.name} className="check">
            <input type="checkbox" name="environments" value={environment.name} /> {environment.name}
          </label>
        ))}
      </fieldset>
    </EditorForm>
  );
}

export function AdminProjects() {
  const projects = useQuery(queries.projects());
  return (
    <AdminList
      title="Projects"
      query={projects}
      items={(data) => data.projects}
      columns={['Project', 'Id', 'Environments', 'Created']}
      cells={(project) => (
        <>
          <NameCell
            name={<Link to={`/projects/${encodeURIComponent(project.id)}`}>{project.name}</Link>}
            description={project.description}
          />
          <td>
            <code>{project.id}</code>
          </td>
          <td>{project.environments.join(', ')}</td>
          <td className="small">{formatDate(project.createdAt)}</td>
        </>
      )}
      noun="project"
      create={() => <NewProjectForm />}
    />
  );
}
