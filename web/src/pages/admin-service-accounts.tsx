import { useQuery } from '@tanstack/react-query';
import { Fragment, useState, type FormEvent } from 'react';
import { actions, queries } from '../api/queries';
import { ConfirmButton, ErrorMessage, Field, formatDate, Loaded, OneTimeSecret, Table, useAction } from '../components/ui';

const DAY_MS = 86_400_000;

function TokenForm({ accountId, username }: { accountId: number; username: string }) {
  const [secret, setSecret] = useState<string | null>(null);
  const create = useAction(actions.createServiceAccountToken, (token) => setSecret(token.secret ?? null));
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const days = Number(form.get('days'));
    create.mutate(
      { id: accountId, description: String(form.get('description')).trim(), expiresAt: new Date(Date.now() + days * DAY_MS).toISOString() },
      { onSuccess: () => (event.target as HTMLFormElement).reset() },
    );
  };
  return (
    <div className="stack">
      {secret && <OneTimeSecret label={`New token for ${username}`} secret={secret} />}
      <form className="row fields" onSubmit={submit} aria-label={`New token for ${username}`}>
        <Field label="Token description" error={create.error} field="description">
          <input name="description" required placeholder="deploy pipeline" />
        </Field>
        <Field label="Expires in" error={create.error} field="expiresAt">
          <select name="days" defaultValue="90">
            {[30, 90, 365].map((days) => (
              <option key={days} value={days}>
                {days} days
              </option>
            ))}
          </select>
        </Field>
        <button className="primary" type="submit" disabled={create.isPending}>
          Create token
        </button>
      </form>
      <ErrorMessage error={create.error} />
    </div>
  );
}

export function AdminServiceAccounts() {
  const accounts = useQuery(queries.serviceAccounts());
  const [notice, setNotice] = useState<string | null>(null);
  const [open, setOpen] = useState<number | null>(null);
  const create = useAction(actions.createServiceAccount, (account) => {
    setNotice(`Created ${account.username}. Give it a token to use.`);
    setOpen(account.id);
  });
  const update = useAction(actions.updateServiceAccount);
  const remove = useAction(actions.deleteServiceAccount);
  const removeToken = useAction(actions.deleteServiceAccountToken);
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    create.mutate(
      { username: String(form.get('username')).trim(), name: String(form.get('name')).trim(), rootRole: Number(form.get('rootRole')) },
      { onSuccess: () => (event.target as HTMLFormElement).reset() },
    );
  };
  return (
    <Loaded query={accounts} what="service accounts">
      {(data) => (
        <div>
          <h1>Service accounts</h1>
          <p className="muted">
            Identities for automation: each has a root role and tokens of its own, and the event log names it for what it does.
          </p>
          {notice && <p className="success">{notice}</p>}
          <Table label="Service accounts" columns={['Service account', 'Role', 'Tokens', 'Last used', '']}>
            {data.serviceAccounts.length === 0 && (
              <tr>
                <td colSpan={5} className="muted">
                  No service accounts yet.
                </td>
              </tr>
            )}
            {data.serviceAccounts.map((account) => (
              <Fragment key={account.id}>
                <tr>
                  <td>
                    <strong>{account.username}</strong>
                    {account.name && account.name !== account.username && <div className="muted small">{account.name}</div>}
                  </td>
                  <td>
                    <select
                      aria-label={`Role of ${account.username}`}
                      value={account.rootRole}
                      onChange={(event) => update.mutate({ id: account.id, rootRole: Number(event.target.value) })}
                    >
                      {data.rootRoles.map((role) => (
                        <option key={role.id} value={role.id}>
                          {role.name}
                        </option>
                      ))}
                    </select>
                  </td>
                  <td>{account.tokens.length}</td>
                  <td className="small">{account.seenAt ? formatDate(account.seenAt) : 'never'}</td>
                  <td>
                    <div className="row">
                      <button
                        type="button"
                        aria-expanded={open === account.id}
                        onClick={() => setOpen(open === account.id ? null : account.id)}
                      >
                        Tokens
                      </button>
                      <ConfirmButton
                        question={`Delete the service account ${account.username}? Its tokens stop working at once.`}
                        onConfirm={() => remove.mutate(account.id)}
                      >
                        Delete
                      </ConfirmButton>
                    </div>
                  </td>
                </tr>
                {open === account.id && (
                  <tr>
                    <td colSpan={5}>
                      <div className="stack">
                        <Table label={`Tokens of ${account.username}`} columns={['Description', 'Created', 'Expires', 'Last used', '']}>
                          {account.tokens.length === 0 && (
                            <tr>
                              <td colSpan={5} className="muted">
                                No tokens yet.
                              </td>
                            </tr>
                          )}
                          {account.tokens.map((token) => (
                            <tr key={token.id}>
                              <td>{token.description}</td>
                              <td className="small">{formatDate(token.createdAt)}</td>
                              <td className="small">{formatDate(token.expiresAt)}</td>
                              <td className="small">{token.seenAt ? formatDate(token.seenAt) : 'never'}</td>
                              <td>
                                <ConfirmButton
                                  question={`Delete the token "${token.description}"? What uses it stops working.`}
                                  onConfirm={() => removeToken.mutate({ id: account.id, tokenId: token.id })}
                                >
                                  Delete token
                                </ConfirmButton>
                              </td>
                            </tr>
                          ))}
                        </Table>
                        <TokenForm accountId={account.id} username={account.username ?? String(account.id)} />
                      </div>
                    </td>
                  </tr>
                )}
              </Fragment>
            ))}
          </Table>
          <ErrorMessage error={update.error ?? remove.error ?? removeToken.error} />
          <h2>New service account</h2>
          <form className="card stack" onSubmit={submit} aria-label="New service account">
            <div className="grid2">
              <Field label="Username" error={create.error} field="username">
                <input name="username" required autoComplete="off" placeholder="ci-pipeline" />
              </Field>
              <Field label="Name" error={create.error} field="name">
                <input name="name" />
              </Field>
              <Field label="Role" error={create.error} field="rootRole">
                <select name="rootRole" defaultValue="2">
                  {data.rootRoles.map((role) => (
                    <option key={role.id} value={role.id}>
                      {role.name}
                    </option>
                  ))}
                </select>
              </Field>
            </div>
            <ErrorMessage error={create.error} />
            <div>
              <button className="primary" type="submit" disabled={create.isPending}>
                Create service account
              </button>
            </div>
          </form>
        </div>
      )}
    </Loaded>
  );
}
