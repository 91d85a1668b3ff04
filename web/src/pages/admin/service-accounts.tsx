import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { actions, queries, type Schemas } from '../../api/queries';
import { AdminList, NameCell, EditorForm, formText, RootRoleOptions } from '../../components/admin';
import { ConfirmButton, ErrorMessage, Field, formatDate, OneTimeSecret, Table, useAction } from '../../components/ui';

const DAY_MS = 86_400_000;

type Account = Schemas['serviceAccountSchema'];
type Role = { id: number; name: string };

function TokenForm({ accountId, username }: { accountId: number; username: string }) {
  const [secret, setSecret] = useState<string | null>(null);
  const [formKey, setFormKey] = useState(0);
  const create = useAction(actions.createServiceAccountToken, (token) => {
    setSecret(token.secret ?? null);
    setFormKey((key) => key + 1);
  });
  const submit = (form: FormData) =>
    create.mutate({
      id: accountId,
      description: formText(form, 'description'),
      expiresAt: new Date(Date.now() + Number(form.get('days')) * DAY_MS).toISOString(),
    });
  return (
    <div className="stack">
      {secret && <OneTimeSecret label={`New token for ${username}`} secret={secret} />}
      <EditorForm
        key={formKey}
        label={`New token for ${username}`}
        submitLabel="Create token"
        mutation={create}
        className="row fields"
        onSubmit={submit}
      >
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
      </EditorForm>
    </div>
  );
}

/** The account's tokens, each deletable, and the form for a new one. */
function Tokens({ account }: { account: Account }) {
  const removeToken = useAction(actions.deleteServiceAccountToken);
  const username = account.username ?? String(account.id);
  return (
    <div className="stack">
      <Table label={`Tokens of ${username}`} columns={['Description', 'Created', 'Expires', 'Last used', '']}>
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
      <ErrorMessage error={removeToken.error} />
      <TokenForm accountId={account.id} username={username} />
    </div>
  );
}

function RoleCell({ account, roles }: { account: Account; roles: Role[] }) {
  const update = useAction(actions.updateServiceAccount);
  return (
    <td>
      <select
        aria-label={`Role of ${account.username}`}
        value={account.rootRole}
        onChange={(event) => update.mutate({ id: account.id, rootRole: Number(event.target.value) })}
      >
        <RootRoleOptions roles={roles} by="id" />
      </select>
      <ErrorMessage error={update.error} />
    </td>
  );
}

function NewServiceAccountForm({ roles, onCreated }: { roles: Role[]; onCreated: (account: Account) => void }) {
  const create = useAction(actions.createServiceAccount, onCreated);
  return (
    <EditorForm
      label="New service account"
      submitLabel="Create service account"
      mutation={create}
      onSubmit={(form) =>
        create.mutate({ username: formText(form, 'username'), name: formText(form, 'name'), rootRole: Number(form.get('rootRole')) })
      }
    >
      <div className="grid2">
        <Field label="Username" error={create.error} field="username">
          <input name="username" required autoComplete="off" placeholder="ci-pipeline" />
        </Field>
        <Field label="Name" error={create.error} field="name">
          <input name="name" />
        </Field>
        <Field label="Role" error={create.error} field="rootRole">
          <select name="rootRole" defaultValue="2">
            <RootRoleOptions roles={roles} by="id" />
          </select>
        </Field>
      </div>
    </EditorForm>
  );
}

export function AdminServiceAccounts() {
  const accounts = useQuery(queries.serviceAccounts());
  const roles = accounts.data?.rootRoles ?? [];
  const [notice, setNotice] = useState<string | null>(null);
  const [open, setOpen] = useState<number | null>(null);
  return (
    <AdminList
      title="Service accounts"
      intro="Identities for automation: each has a root role and tokens of its own, and the event log names it for what it does."
      notice={notice}
      query={accounts}
      items={(data) => data.serviceAccounts}
      columns={['Service account', 'Role', 'Tokens', 'Last used']}
      empty="No service accounts yet."
      cells={(account) => (
        <>
          <NameCell name={account.username} description={account.name !== account.username ? account.name : null} />
          <RoleCell account={account} roles={roles} />
          <td>{account.tokens.length}</td>
          <td className="small">{account.seenAt ? formatDate(account.seenAt) : 'never'}</td>
        </>
      )}
      actions={(account) => (
        <button type="button" aria-expanded={open === account.id} onClick={() => setOpen(open === account.id ? null : account.id)}>
          Tokens
        </button>
      )}
      below={(account) => open === account.id && <Tokens account={account} />}
      nameOf={(account) => account.username ?? String(account.id)}
      remove={{ action: actions.deleteServiceAccount, consequence: 'Its tokens stop working at once.' }}
      noun="service account"
      create={(done) => (
        <NewServiceAccountForm
          roles={roles}
          onCreated={(account) => {
            setNotice(`Created ${account.username}. Give it a token to use.`);
            setOpen(account.id);
            done();
          }}
        />
      )}
    />
  );
}
