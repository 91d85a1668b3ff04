import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { actions, queries, type Schemas } from '../../api/queries';
import { AdminList, NameCell, formText, ItemForm, NameAndDescription, RootRoleOptions } from '../../components/admin';
import { Field, useAction } from '../../components/ui';

type Group = Schemas['groupSchema'];

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
  const submit = (form: FormData) => {
    const rootRole = String(form.get('rootRole'));
    const body = {
      name: formText(form, 'name'),
      description: formText(form, 'description') || null,
      mappingsSSO: names(String(form.get('mappingsSSO'))),
      rootRole: rootRole === '' ? null : Number(rootRole),
      users: form.getAll('users').map((id) => ({ user: { id: Number(id) } })),
    };
    if (group) update.mutate({ id: group.id, ...body });
    else create.mutate(body);
  };
  return (
    <ItemForm noun="group" editing={group?.name} onDone={onDone} mutation={mutation} onSubmit={submit}>
      <div className="grid2">
        <NameAndDescription error={mutation.error} item={group} />
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
            <RootRoleOptions roles={users.data?.rootRoles ?? []} by="id" />
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
    </ItemForm>
  );
}

export function AdminGroups() {
  const groups = useQuery(queries.groups());
  // The root roles there are, built-in and custom, come with the user list.
  const rootRoles = useQuery(queries.users()).data?.rootRoles ?? [];
  return (
    <AdminList
      title="Groups"
      intro="A group gives its members a root role and roles in projects. With SSO groups, people join and leave as the identity provider says at each sign-in."
      query={groups}
      items={(data) => data.groups}
      columns={['Group', 'SSO groups', 'Root role', 'Members', 'Projects']}
      empty="No groups yet."
      cells={(group) => (
        <>
          <NameCell name={group.name} description={group.description} />
          <td className="small">{group.mappingsSSO.join(', ') || '—'}</td>
          <td>{rootRoles.find((role) => role.id === group.rootRole)?.name ?? '—'}</td>
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
        </>
      )}
      edit={(group, done) => <GroupForm group={group} onDone={done} />}
      remove={{ action: actions.deleteGroup, consequence: 'Its members lose what it gave them.' }}
      noun="group"
      create={(done) => <GroupForm onDone={done} />}
    />
  );
}
