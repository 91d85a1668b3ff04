import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { actions, queries } from '../api/queries';
import { useMe } from '../components/layout';
import { SessionTable } from '../components/sessions';
import {
  ConfirmButton,
  ErrorMessage,
  Field,
  formatDate,
  Loaded,
  LoadedList,
  NewPasswordField,
  Table,
  useAction,
  onFormSubmit,
} from '../components/ui';

/** The signed-in person's open sessions: where each was opened, ended one by one or all but this one at once. */
function YourSessions() {
  const sessions = useQuery(queries.mySessions());
  const [ended, setEnded] = useState<string | null>(null);
  const endOne = useAction(actions.endMySession, () => setEnded('The session was ended.'));
  const endOthers = useAction(actions.endMyOtherSessions, (result) =>
    setEnded(result.ended === 1 ? 'One other session was ended.' : `${result.ended} other sessions were ended.`),
  );
  return (
    <section aria-label="Your sessions">
      <h2>Your sessions</h2>
      <p className="muted small">Each browser you signed in with. End one you do not recognise, or every one but this.</p>
      <Loaded query={sessions} what="your sessions">
        {(data) => (
          <div className="stack">
            <SessionTable
              label="Your sessions"
              sessions={data.sessions}
              onEnd={(session) => endOne.mutate(session.id)}
              ending={endOne.isPending}
            />
            <div className="row">
              <ConfirmButton
                question="Sign out every other browser?"
                onConfirm={() => endOthers.mutate(undefined)}
                disabled={endOthers.isPending || data.sessions.every((session) => session.current)}
              >
                End all other sessions
              </ConfirmButton>
            </div>
          </div>
        )}
      </Loaded>
      <ErrorMessage error={endOne.error ?? endOthers.error} />
      {ended && <p className="success">{ended}</p>}
    </section>
  );
}

/** The agents the person granted access through MCP (OAuth), each until its token expires or is revoked here. */
function YourAgents() {
  const tokens = useQuery(queries.myMcpTokens());
  const revoke = useAction(actions.revokeMcpToken);
  return (
    <section aria-label="Agents with access">
      <h2>Agents with access</h2>
      <p className="muted small">Coding agents you let act as you through Vexil's MCP server. Revoke one and it stops at once.</p>
      <LoadedList query={tokens} what="your agents" items={(data) => data.tokens} empty="No agent holds access.">
        {(held) => (
          <Table label="Agents with access" columns={['Agent', 'Granted', 'Expires', 'Last used', '']}>
            {held.map((token) => (
              <tr key={token.id}>
                <td>{token.clientName}</td>
                <td className="small">{formatDate(token.createdAt)}</td>
                <td className="small">{formatDate(token.expiresAt)}</td>
                <td className="small">{token.seenAt ? formatDate(token.seenAt) : 'never'}</td>
                <td>
                  <ConfirmButton
                    question={`Revoke ${token.clientName}'s access?`}
                    onConfirm={() => revoke.mutate(token.id)}
                    disabled={revoke.isPending}
                  >
                    Revoke
                  </ConfirmButton>
                </td>
              </tr>
            ))}
          </Table>
        )}
      </LoadedList>
      <ErrorMessage error={revoke.error} />
    </section>
  );
}

export function Profile() {
  const me = useMe().data!;
  const [done, setDone] = useState(false);
  const change = useAction(actions.changeOwnPassword, () => setDone(true));
  const submit = onFormSubmit((form, element) => {
    setDone(false);
    change.mutate(
      {
        oldPassword: String(form.get('oldPassword')),
        password: String(form.get('password')),
        confirmPassword: String(form.get('confirmPassword')),
      },
      { onSuccess: () => element.reset() },
    );
  });
  return (
    <div>
      <h1>Your profile</h1>
      <div className="card">
        <p>
          <strong>{me.user.name ?? me.user.username}</strong> · {me.user.username ?? me.user.email} · last seen {formatDate(me.user.seenAt)}
        </p>
        <p className="muted small">Permissions: {me.permissions.map((entry) => entry.permission).join(', ')}</p>
      </div>
      <h2>Change your password</h2>
      <form className="card stack" onSubmit={submit} style={{ maxWidth: '28rem' }} aria-label="Change your password">
        <Field label="Current password" error={change.error} field="oldPassword">
          <input name="oldPassword" type="password" autoComplete="current-password" required />
        </Field>
        <NewPasswordField label="New password" error={change.error} />
        <Field label="New password again" error={change.error} field="confirmPassword">
          <input name="confirmPassword" type="password" autoComplete="new-password" required />
        </Field>
        <ErrorMessage error={change.error} />
        {done && <p className="success">Your password was changed; your other sessions were signed out.</p>}
        <button className="primary" type="submit" disabled={change.isPending}>
          Change password
        </button>
      </form>
      {me.user.id > 0 && <YourSessions />}
      {me.user.id > 0 && <YourAgents />}
    </div>
  );
}
