import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { ApiError } from '../../api/errors';
import { actions, queries, type Schemas } from '../../api/queries';
import { AdminList, NameCell, EditorForm, formText, RootRoleOptions } from '../../components/admin';
import { useMe } from '../../components/layout';
import { describeAgent, SessionTable } from '../../components/sessions';
import {
  ConfirmButton,
  ErrorMessage,
  Field,
  formatDate,
  Loaded,
  NewPasswordField,
  OneTimeSecret,
  LoadedList,
  Pager,
  Table,
  useAction,
  onFormSubmit,
} from '../../components/ui';

type Role = { id: number; name: string };
type User = Schemas['userSchema'];

/** The user's root role, changed as soon as it is picked; not one's own, so that no Admin locks themselves out. */
function RoleCell({ user, login, roles, own }: { user: User; login: string; roles: Role[]; own: boolean }) {
  const update = useAction(actions.updateUser);
  return (
    <td>
      <select
        aria-label={`Role of ${login}`}
        value={roles.find((role) => role.id === user.rootRole)?.name ?? String(user.rootRole)}
        disabled={own}
        onChange={(event) => update.mutate({ id: user.id, rootRole: event.target.value })}
      >
        <RootRoleOptions roles={roles} by="name" />
      </select>
      <ErrorMessage error={update.error} />
    </td>
  );
}

/** An Admin sets a user's password in a form under their row. */
function PasswordForm({ user, login, onSet, onCancel }: { user: User; login: string; onSet: () => void; onCancel: () => void }) {
  const setPassword = useAction(actions.setUserPassword, onSet);
  return (
    <>
      <form
        className="row fields"
        aria-label={`Password of ${login}`}
        onSubmit={onFormSubmit((form) => {
          setPassword.mutate({ id: user.id, password: String(form.get('password')) });
        })}
      >
        <Field label={`New password for ${login}`} error={setPassword.error} field="password">
          <input name="password" type="password" autoComplete="new-password" required autoFocus />
        </Field>
        <button className="primary" type="submit" disabled={setPassword.isPending}>
          Set password
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </form>
      {setPassword.error instanceof ApiError && setPassword.error.about('password') ? null : <ErrorMessage error={setPassword.error} />}
    </>
  );
}

/** A reset link an Admin makes for a user and hands over (valid 24 hours, once), shown once under their row. */
function ResetLink({ login }: { login: string }) {
  const make = useAction(actions.makeResetLink);
  return (
    <div className="stack">
      {make.data ? (
        <OneTimeSecret label={`Reset link for ${login}: it works for 24 hours, once`} secret={make.data.resetPasswordUrl} />
      ) : (
        <div className="row">
          <span className="muted small">A link {login} opens to choose a new password; any older link stops working.</span>
          <button type="button" className="primary" disabled={make.isPending} onClick={() => make.mutate(login)}>
            Make reset link
          </button>
        </div>
      )}
      <ErrorMessage error={make.error} />
    </div>
  );
}

/** A user's open sessions under their row, for an Admin to end one or all (a lost laptop, someone who left). */
function UserSessions({ user, login }: { user: User; login: string }) {
  const sessions = useQuery(queries.userSessions(user.id));
  const endOne = useAction(actions.endUserSession);
  const endAll = useAction(actions.endUserSessions);
  return (
    <section className="stack" aria-label={`Sessions of ${login}`}>
      <Loaded query={sessions} what={`the sessions of ${login}`}>
        {(data) => (
          <>
            <SessionTable
              label={`Sessions of ${login}`}
              sessions={data.sessions}
              onEnd={(session) => endOne.mutate({ userId: user.id, sessionId: session.id })}
              ending={endOne.isPending}
            />
            {data.sessions.length > 0 && (
              <div className="row">
                <ConfirmButton
                  question={`Sign ${login} out everywhere?`}
                  onConfirm={() => endAll.mutate(user.id)}
                  disabled={endAll.isPending}
                >
                  End all sessions
                </ConfirmButton>
              </div>
            )}
          </>
        )}
      </Loaded>
      <ErrorMessage error={endOne.error ?? endAll.error} />
    </section>
  );
}

const SIGN_ONS_PER_PAGE = 20;

/** How each sign-in was made, as the history names it. */
const SIGN_IN_WAYS: Record<Schemas['signOnSchema']['authType'], string> = { password: 'Password', oidc: 'OpenID Connect', saml: 'SAML' };

/** Every sign-in and refused sign-in, newest first: who, how, from where, and why a refusal was one. */
function SignInHistory() {
  const [offset, setOffset] = useState(0);
  const signOns = useQuery({ ...queries.signOns(offset, SIGN_ONS_PER_PAGE), placeholderData: (previous) => previous });
  return (
    <section aria-label="Sign-in history">
      <h2>Sign-in history</h2>
      <Loaded query={signOns} what="the sign-in history">
        {(data) =>
          data.signons.length === 0 ? (
            <p className="muted">No sign-ins yet.</p>
          ) : (
            <>
              <Table label="Sign-in history" columns={['When', 'Who', 'How', 'From', 'Result']}>
                {data.signons.map((entry) => (
                  <tr key={entry.id}>
                    <td className="small">{formatDate(entry.createdAt)}</td>
                    <td>{entry.username ?? '—'}</td>
                    <td className="small">{SIGN_IN_WAYS[entry.authType]}</td>
                    <td className="small" title={entry.userAgent ?? undefined}>
                      {entry.ip ?? '—'} · {describeAgent(entry.userAgent)}
                    </td>
                    <td>
                      {entry.successful ? (
                        <span className="badge success">Signed in</span>
                      ) : (
                        <>
                          <span className="badge failed">Refused</span> <span className="small">{entry.failureReason}</span>
                        </>
                      )}
                    </td>
                  </tr>
                ))}
              </Table>
              <Pager offset={offset} limit={SIGN_ONS_PER_PAGE} total={data.total} onChange={setOffset} />
            </>
          )
        }
      </Loaded>
    </section>
  );
}

const INVITE_DAYS = [1, 7, 30];

/** Invite links: made here with how long they work, shown once to copy, turned off when no longer wanted. */
function InviteLinks() {
  const links = useQuery(queries.inviteLinks());
  const create = useAction(actions.createInviteLink);
  const setEnabled = useAction(actions.setInviteLinkEnabled);
  return (
    <section className="stack" aria-label="Invite links">
      <h2>Invite links</h2>
      <p className="muted">Whoever follows an invite link makes their own account, as a Viewer, until the link expires or is turned off.</p>
      <form
        className="row fields"
        aria-label="New invite link"
        onSubmit={onFormSubmit((form) => {
          const days = Number(form.get('days'));
          create.mutate({ name: String(form.get('name')), expiresAt: new Date(Date.now() + days * 86_400_000).toISOString() });
        })}
      >
        <Field label="Name" error={create.error} field="name">
          <input name="name" required placeholder="Join the flag team" />
        </Field>
        <Field label="Works for" error={create.error} field="expiresAt">
          <select name="days" defaultValue="7">
            {INVITE_DAYS.map((days) => (
              <option key={days} value={days}>
                {days === 1 ? '1 day' : `${days} days`}
              </option>
            ))}
          </select>
        </Field>
        <button className="primary" type="submit" disabled={create.isPending}>
          Make invite link
        </button>
      </form>
      {create.data && <OneTimeSecret label={`Invite link "${create.data.name}"`} secret={create.data.url} />}
      <LoadedList query={links} what="the invite links" items={(data) => data.tokens} empty="No invite links yet.">
        {(tokens) => (
          <Table label="Invite links" columns={['Name', 'State', 'Expires', 'Accounts made', '']}>
            {tokens.map((link) => (
              <tr key={link.id}>
                <td>{link.name}</td>
                <td>{link.enabled ? <span className="badge success">Working</span> : <span className="badge">Off</span>}</td>
                <td className="small">{formatDate(link.expiresAt)}</td>
                <td className="small">
                  {link.users.length === 0 ? 'None' : link.users.map((user) => user.email ?? user.username).join(', ')}
                </td>
                <td>
                  {link.enabled && (
                    <ConfirmButton
                      question={`Turn off the invite link "${link.name}"?`}
                      onConfirm={() => setEnabled.mutate({ id: link.id, enabled: false })}
                      disabled={setEnabled.isPending}
                    >
                      Turn off
                    </ConfirmButton>
                  )}
                </td>
              </tr>
            ))}
          </Table>
        )}
      </LoadedList>
      <ErrorMessage error={setEnabled.error} />
    </section>
  );
}

function NewUserForm({ roles, onCreated }: { roles: Role[]; onCreated: (user: User) => void }) {
  const create = useAction(actions.createUser, onCreated);
  const submit = (form: FormData) => {
    const email = formText(form, 'email');
    create.mutate({
      username: formText(form, 'username'),
      name: formText(form, 'name'),
      ...(email ? { email } : {}),
      rootRole: String(form.get('rootRole')),
      password: String(form.get('password')),
    });
  };
  return (
    <EditorForm label="New user" submitLabel="Create user" mutation={create} onSubmit={submit}>
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
            <RootRoleOptions roles={roles} by="name" />
          </select>
        </Field>
        <NewPasswordField label="Password" error={create.error} />
      </div>
    </EditorForm>
  );
}

export function AdminUsers() {
  const me = useMe().data;
  const users = useQuery(queries.users());
  const roles = users.data?.rootRoles ?? [];
  const [notice, setNotice] = useState<string | null>(null);
  /** What is open under a user's row: the form setting their password, or their sessions. */
  const [open, setOpen] = useState<{ userId: number; part: 'password' | 'sessions' | 'reset' } | null>(null);
  const toggle = (userId: number, part: 'password' | 'sessions' | 'reset') =>
    setOpen(open?.userId === userId && open.part === part ? null : { userId, part });
  const isOpen = (userId: number, part: 'password' | 'sessions' | 'reset') => open?.userId === userId && open.part === part;
  const loginOf = (user: User) => user.username ?? user.email ?? String(user.id);
  return (
    <>
      <AdminList
        title="Users"
        intro="People who sign in to Vexil. Each has a root role; projects can give them more through project access and groups."
        notice={notice}
        query={users}
        items={(data) => data.users}
        columns={['User', 'Role', 'Created', 'Last seen']}
        cells={(user) => (
          <>
            <NameCell name={user.name ?? user.username} description={[...new Set([user.username, user.email].filter(Boolean))].join(' · ')}>
              {' '}
              {user.deactivatedAt && (
                <span className="badge failed" title={`Deactivated ${formatDate(user.deactivatedAt)}: cannot sign in or use a token`}>
                  Deactivated
                </span>
              )}{' '}
              {user.scimId && (
                <span className="badge" title="Managed by the identity provider over SCIM">
                  SCIM
                </span>
              )}
            </NameCell>
            <RoleCell user={user} login={loginOf(user)} roles={roles} own={user.id === me?.user.id} />
            <td className="small">{formatDate(user.createdAt)}</td>
            <td className="small">{formatDate(user.seenAt)}</td>
          </>
        )}
        actions={(user) => (
          <>
            <button type="button" aria-expanded={isOpen(user.id, 'sessions')} onClick={() => toggle(user.id, 'sessions')}>
              Sessions
            </button>
            <button type="button" aria-expanded={isOpen(user.id, 'password')} onClick={() => toggle(user.id, 'password')}>
              Set password
            </button>
            {!user.scimId && (
              <button type="button" aria-expanded={isOpen(user.id, 'reset')} onClick={() => toggle(user.id, 'reset')}>
                Reset link
              </button>
            )}
          </>
        )}
        below={(user) =>
          isOpen(user.id, 'sessions') ? (
            <UserSessions user={user} login={loginOf(user)} />
          ) : isOpen(user.id, 'reset') ? (
            <ResetLink login={loginOf(user)} />
          ) : (
            isOpen(user.id, 'password') && (
              <PasswordForm
                user={user}
                login={loginOf(user)}
                onSet={() => {
                  setOpen(null);
                  setNotice('Password set; the user’s sessions were ended.');
                }}
                onCancel={() => setOpen(null)}
              />
            )
          )
        }
        changeable={(user) => user.id !== me?.user.id}
        nameOf={loginOf}
        remove={{ action: actions.deleteUser }}
        noun="user"
        create={(done) => (
          <NewUserForm
            roles={roles}
            onCreated={(user) => {
              setNotice(`Created ${user.username ?? user.email}.`);
              done();
            }}
          />
        )}
      />
      <InviteLinks />
      <SignInHistory />
    </>
  );
}
