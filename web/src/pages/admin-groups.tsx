import { useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { actions, queries, type Schemas } from '../api/queries';
import { ConfirmButton, ErrorMessage, Field, Loaded, Table, useAction } from '../components/ui';

type Group = Schemas['groupSchema'];

const ROOT_ROLES = [
  { id: 1, name: 'Admin' },
  { id: 2, name: 'Editor' },
  { id: 3, name: 'Viewer' },
];

/** Splits "a, b c" into the distinct names, as people type a list of SSO group names. */
function names(text: string): string[] {
  return [...new Set(text.split(/[,\n]/).map((name) => name.trim()))].filter(Boolean);
}

function GroupForm({ group, onDone }: { group?: Group; onDone: () => void }) {
  const users = useQuery(queries.users());
  const create = useAction(actions.createGroup, onDone);
  const update = useAction(actions.updateGroup, onDone);
  const mutation = group ? update : create;
  const manual = new Set(group?.users.filter((member) => !member.fromSso).map((member) => member.user.id));
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const rootRole = String(form.get('rootRole'));
    const body = {
      name: String(form.get('name')).trim(),
      description: String(form.get('description')).trim() || null,
      mappingsSSO: names(String(form.get('mappingsSSO'))),
      rootRole: rootRole === '' ? null : Number(rootRole),
      users: form.getAll('users').map((id) => ({ user: { id: Number(id) } })),
    };
    if (group) update.mutate({ id: group.id, ...body });
    else create.mutate(body);
  };
  return (
    <form className="card stack" onSubmit={submit} aria-label={group ? `Edit group ${group.name}` : 'New group'}>
      <div className="grid2">
        <Field label="Name" error={mutation.error} field="name">
          <input name="name" required defaultValue={group?.name} />
        </Field>
        <Field label="Description" error={mutation.error} field="description">
          <input name="description" defaultValue={group?.description ?? ''} />
        </Field>
        <Field
          label="SSO groups"
          error={mutation.error}
          field="mappingsSSO"
          hint="Names in the identity provider's groups claim, comma-separated: people with any of them join at sign-in, and leave when it goes."
        >
          <input name="mappingsSSO" defaultValue={group?.mappingsSSO.join(', ')} />
        </Field>
        <Field label="Root role" error={mutation.error} field="rootRole" hint="Members get it on top of their own role.">
          <select name="rootRole" defaultValue={group?.rootRole ?? ''}>
            <option value="">None</option>
            {ROOT_ROLES.map((role) => (
              <option key={role.id} value={role.id}>
                {role.name}
              </option>
            ))}
          </select>
        </Field>
      </div>
      <Field
        label="Members"
        error={mutation.error}
        field="users"
        hint="Hold Ctrl (⌘ on a Mac) to choose several, or to take one off. People added here stay until removed; sign-ins manage the others."
      >
        <select name="users" multiple size={6} defaultValue={[...manual].map(String)}>
          {(users.data?.users ?? []).map((user) => (
            <option key={user.id} value={user.id}>
              {user.name ?? user.username ?? user.email} {user.email ? `(${user.email})` : ''}
            </option>
          ))}
        </select>
      </Field>
      <ErrorMessage error={mutation.error} />
      <div className="row">
        <button className="primary" type="submit" disabled={mutation.isPending}>
          {group ? 'Save group' : 'Create group'}
        </button>
        {group && (
          <button type="button" onClick={onDone}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}

export function AdminGroups() {
  const groups = useQuery(queries.groups());
  const remove = useAction(actions.deleteGroup);
  const [editing, setEditing] = useState<number | null>(null);
  const [formKey, setFormKey] = useState(0);
  return (
    <Loaded query={groups} what="groups">
      {(data) => (
        <div>
          <h1>Groups</h1>
          <p className="muted">
            A group gives its members a root role and roles in projects. With SSO groups, people join and leave as the identity provider
            says at each sign-in.
          </p>
          <Table label="Groups" columns={['Group', 'SSO groups', 'Root role', 'Members', 'Projects', '']}>
            {data.groups.length === 0 && (
              <tr>
                <td colSpan={6} className="muted">
                  No groups yet.
                </td>
              </tr>
            )}
            {data.groups.map((group) =>
              editing === group.id ? (
                <tr key={group.id}>
                  <td colSpan={6}>
                    <GroupForm group={group} onDone={() => setEditing(null)} />
                  </td>
                </tr>
              ) : (
                <tr key={group.id}>
                  <td>
                    <strong>{group.name}</strong>
                    {group.description && <div className="muted small">{group.description}</div>}
                  </td>
                  <td className="small">{group.mappingsSSO.join(', ') || '—'}</td>
                  <td>{ROOT_ROLES.find((role) => role.id === group.rootRole)?.name ?? '—'}</td>
                  <td className="small">
                    {group.users.map((member) => member.user.name ?? member.user.username ?? member.user.email).join(', ') || '—'}
                  </td>
                  <td className="small">
                    {group.projects.map((project, index) => (
                      <span key={project}>
                        {index > 0 && ', '}
                        <Link to={`/projects/${encodeURIComponent(project)}/access`}>{project}</Link>
                      </span>
                    ))}
                    {group.projects.length === 0 && '—'}
                  </td>
                  <td>
                    <div className="row">
                      <button type="button" onClick={() => setEditing(group.id)}>
                        Edit
                      </button>
                      <ConfirmButton
                        question={`Delete the group ${group.name}? Its members lose what it gave them.`}
                        onConfirm={() => remove.mutate(group.id)}
                      >
                        Delete
                      </ConfirmButton>
                    </div>
                  </td>
                </tr>
              ),
            )}
          </Table>
          <ErrorMessage error={remove.error} />
          <h2>New group</h2>
          <GroupForm key={formKey} onDone={() => setFormKey((key) => key + 1)} />
        </div>
      )}
    </Loaded>
  );
}
