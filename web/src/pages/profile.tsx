import { useState, type FormEvent } from 'react';
import { actions } from '../api/queries';
import { useMe } from '../components/layout';
import { ErrorMessage, Field, formatDate, NewPasswordField, useAction } from '../components/ui';

export function Profile() {
  const me = useMe().data!;
  const [done, setDone] = useState(false);
  const change = useAction(actions.changeOwnPassword, () => setDone(true));
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setDone(false);
    change.mutate(
      {
        oldPassword: String(form.get('oldPassword')),
        password: String(form.get('password')),
        confirmPassword: String(form.get('confirmPassword')),
      },
      { onSuccess: () => (event.target as HTMLFormElement).reset() },
    );
  };
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
    </div>
  );
}
