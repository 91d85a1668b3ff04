import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useParams } from 'react-router';
import { actions, queries } from '../../api/queries';
import { useCan } from '../../components/layout';
import { ConfirmButton, ErrorMessage, Field, Loaded, Table, useAction, onFormSubmit } from '../../components/ui';

/** Who works in a project and as what: users and groups with their project roles. */
export function ProjectAccess() {
  const { projectId = '' } = useParams();
  const access = useQuery(queries.projectAccess(projectId));
  const canManage = useCan('PROJECT_USER_ACCESS_WRITE', projectId);
  const [changed, setChanged] = useState<string | null>(null);
  const setRoles = useAction(actions.setProjectRoles);
  const remove = useAction(actions.removeProjectAccess);
  return (
    <div>
      <p className="small">
        <Link to={`/projects/${encodeURIComponent(projectId)}`}>← {projectId}</Link>
      </p>
      <h1>People and access</h1>
      <Loaded query={access} what="the project's access">
        {(data) => {
          const rows = [
            ...data.groups.map((group) => ({
              holder: 'group' as const,
              id: group.id,
              name: group.name,
              detail: `group of ${group.userCount}`,
              roleId: group.roleId,
            })),
            ...data.users.map((user) => ({
              holder: 'user' as const,
              id: user.id,
              name: user.name ?? user.username ?? user.email ?? String(user.id),
              detail: user.accountType === 'Service Account' ? 'service account' : (user.email ?? user.username ?? ''),
              roleId: user.roleId,
            })),
          ];
          return (
            <>
              <p className="muted">
                {data.roles.map((role) => (
                  <span key={role.id}>
                    <strong>{role.name}</strong>: {role.description}.{' '}
                  </span>
                ))}
              </p>
              <Table label="Project access" columns={['Who', 'Kind', 'Role', '']}>
                {rows.length === 0 && (
                  <tr>
                    <td colSpan={4} className="muted">
                      Only what root roles allow: nobody has a role in this project yet.
                    </td>
                  </tr>
                )}
                {rows.map((row) => (
                  <tr key={`${row.holder}-${row.id}`}>
                    <td>
                      <strong>{row.name}</strong>
                    </td>
                    <td className="muted small">{row.detail}</td>
                    <td>
                      <select
                        aria-label={`Role of ${row.name}`}
                        value={row.roleId}
                        disabled={!canManage}
                        onChange={(event) => {
                          const role = data.roles.find((candidate) => candidate.id === Number(event.target.value));
                          setChanged(null);
                          setRoles.mutate(
                            { projectId, holder: row.holder, id: row.id, roles: [Number(event.target.value)] },
                            { onSuccess: () => setChanged(`${row.name} is now ${role?.name ?? 'changed'} in ${projectId}.`) },
                          );
                        }}
                      >
                        {data.roles.map((role) => (
                          <option key={role.id} value={role.id}>
                            {role.name}
                          </option>
                        ))}
                      </select>
                    </td>
                    <td>
                      {canManage && (
                        <ConfirmButton
                          question={`Remove ${row.name} from ${projectId}?`}
                          onConfirm={() => remove.mutate({ projectId, holder: row.holder, id: row.id })}
                        >
                          Remove
                        </ConfirmButton>
                      )}
                    </td>
                  </tr>
                ))}
              </Table>
              {changed && (
                <p className="success" role="status">
                  {changed}
                </p>
              )}
              <ErrorMessage error={setRoles.error ?? remove.error} />
              {canManage && <GrantForm projectId={projectId} roles={data.roles} />}
            </>
          );
        }}
      </Loaded>
    </div>
  );
}

function GrantForm({ projectId, roles }: { projectId: string; roles: Array<{ id: number; name: string }> }) {
  const [holder, setHolder] = useState<'user' | 'group'>('user');
  // Listing users and groups is for Admins; an Owner who is not one picks by id.
  const canList = useCan('ADMIN');
  const users = useQuery({ ...queries.users(), enabled: canList });
  const groups = useQuery({ ...queries.groups(), enabled: canList });
  const add = useAction(actions.addProjectAccess);
  const submit = onFormSubmit((form) => {
    const id = Number(form.get('holderId'));
    add.mutate({
      projectId,
      roles: [Number(form.get('role'))],
      users: holder === 'user' ? [id] : [],
      groups: holder === 'group' ? [id] : [],
    });
  });
  const choices =
    holder === 'user'
      ? (users.data?.users ?? []).map((user) => ({ id: user.id, label: user.name ?? user.username ?? user.email ?? String(user.id) }))
      : (groups.data?.groups ?? []).map((group) => ({ id: group.id, label: group.name }));
  return (
    <>
      <h2>Give access</h2>
      <form className="card row fields" onSubmit={submit} aria-label="Give access">
        <Field label="To a" error={add.error} field="users">
          <select value={holder} onChange={(event) => setHolder(event.target.value as 'user' | 'group')}>
            <option value="user">User</option>
            <option value="group">Group</option>
          </select>
        </Field>
        <Field label={holder === 'user' ? 'User' : 'Group'} error={add.error} field={holder === 'user' ? 'users' : 'groups'}>
          {canList ? (
            <select name="holderId" required>
              {choices.map((choice) => (
                <option key={choice.id} value={choice.id}>
                  {choice.label}
                </option>
              ))}
            </select>
          ) : (
            <input name="holderId" type="number" min={1} required placeholder="id" />
          )}
        </Field>
        <Field label="Role" error={add.error} field="roles">
          <select name="role" defaultValue={roles.find((role) => role.name === 'Member')?.id}>
            {roles.map((role) => (
              <option key={role.id} value={role.id}>
                {role.name}
              </option>
            ))}
          </select>
        </Field>
        <button className="primary" type="submit" disabled={add.isPending}>
          Give access
        </button>
      </form>
      <ErrorMessage error={add.error} />
    </>
  );
}
