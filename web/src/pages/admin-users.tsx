import { useQuery } from '@tanstack/react-query';
import { Fragment, useState, type FormEvent } from 'react';
import { ApiError } from '../api/errors';
import { actions, queries } from '../api/queries';
import { useMe } from '../components/layout';
import { ConfirmButton, ErrorMessage, Field, formatDate, Loaded, Table, useAction } from '../components/ui';

export function AdminUsers() {
  const me = useMe().data;
  const users = useQuery(queries.users());
  const [notice, setNotice] = useState<string | null>(null);
  const create = useAction(actions.createUser, (user) => setNotice(`Created ${user.username ?? user.email}.`));
  const update = useAction(actions.updateUser);
  const remove = useAction(actions.deleteUser);
  /** The user whose password is being set, in a form under their row. */
  const [passwordFor, setPasswordFor] = useState<number | null>(null);
  const setPassword = useAction(actions.setUserPassword, () => {
    setPasswordFor(null);
    setNotice('Password set; the user’s sessions were ended.');
  });
  const submitPassword = (id: number) => (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    setPassword.mutate({ id, password: String(new FormData(event.currentTarget).get('password')) });
  };
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const email = String(form.get('email')).trim();
    create.mutate(
      {
        username: String(form.get('username')).trim(),
        name: String(form.get('name')).trim(),
        ...(email ? { email } : {}),
        rootRole: String(form.get('rootRole')),
        password: String(form.get('password')),
      },
      { onSuccess: () => (event.target as HTMLFormElement).reset() },
    );
  };
  return (
    <Loaded query={users} what="users">
      {(data) => {
        const roleName = (id: number) => data.rootRoles.find((role) => role.id === id)?.name ?? String(id);
        return (
          <div>
            <h1>Users</h1>
            {notice && <p className="success">{notice}</p>}
            <Table label="Users" columns={['User', 'Role', 'Created', 'Last seen', '']}>
              {data.users.map((user) => {
                const login = user.username ?? user.email;
                return (
                  <Fragment key={user.id}>
                    <tr>
                      <td>
                        <strong>{user.name ?? user.username}</strong>
                        <div className="muted small">{[user.username, user.email].filter(Boolean).join(' · ')}</div>
                      </td>
                      <td>
                        <select
                          aria-label={`Role of ${login}`}
                          value={roleName(user.rootRole)}
                          disabled={user.id === me?.user.id}
                          onChange={(event) => update.mutate({ id: user.id, rootRole: event.target.value })}
                        >
                          {data.rootRoles.map((role) => (
                            <option key={role.id} value={role.name}>
                              {role.name}
                            </option>
                          ))}
                        </select>
                      </td>
                      <td className="small">{formatDate(user.createdAt)}</td>
                      <td className="small">{formatDate(user.seenAt)}</td>
                      <td>
                        <div className="row">
                          <button
                            type="button"
                            aria-expanded={passwordFor === user.id}
                            onClick={() => {
                              setPassword.reset();
                              setPasswordFor(passwordFor === user.id ? null : user.id);
                            }}
                          >
                            Set password
                          </button>
                          {user.id !== me?.user.id && (
                            <ConfirmButton question={`Delete the user ${login}?`} onConfirm={() => remove.mutate(user.id)}>
                              Delete
                            </ConfirmButton>
                          )}
                        </div>
                      </td>
                    </tr>
                    {passwordFor === user.id && (
                      <tr>
                        <td colSpan={5}>
                          <form className="row fields" onSubmit={submitPassword(user.id)} aria-label={`Password of ${login}`}>
                            <Field label={`New password for ${login}`} error={setPassword.error} field="password">
                              <input name="password" type="password" autoComplete="new-password" required autoFocus />
                            </Field>
                            <button className="primary" type="submit" disabled={setPassword.isPending}>
                              Set password
                            </button>
                            <button type="button" onClick={() => setPasswordFor(null)}>
                              Cancel
                            </button>
                          </form>
                          {setPassword.error instanceof ApiError && setPassword.error.about('password') ? null : (
                            <ErrorMessage error={setPassword.error} />
                          )}
                        </td>
                      </tr>
                    )}
                  </Fragment>
                );
              })}
            </Table>
            <ErrorMessage error={update.error ?? remove.error} />
            <h2>New user</h2>
            <form className="card stack" onSubmit={submit} aria-label="New user">
              <div className="grid2">
                <Field label="Username" error={create.error} field="username">
                  <input name="username" required autoComplete="off" />
                </Field>
                <Field label="Name" error={create.error} field="name">
                  <input name="name" />
                </Field>
                <Field label="Email (optional)" error={create.error} field="email">
                  <input name="email" type="email" />
                </Field>
                <Field label="Role" error={create.error} field="rootRole">
                  <select name="rootRole" defaultValue="Editor">
                    {data.rootRoles.map((role) => (
                      <option key={role.id} value={role.name}>
                        {role.name}
                      </option>
                    ))}
                  </select>
                </Field>
                <Field
                  label="Password"
                  error={create.error}
                  field="password"
                  hint="10 to 128 characters with lower and upper case, a digit and a symbol."
                >
                  <input name="password" type="password" autoComplete="new-password" required />
                </Field>
              </div>
              <ErrorMessage error={create.error} />
              <div>
                <button className="primary" type="submit" disabled={create.isPending}>
                  Create user
                </button>
              </div>
            </form>
          </div>
        );
      }}
    </Loaded>
  );
}
