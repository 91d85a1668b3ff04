import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { actions, queries } from '../api/queries';
import { ErrorMessage, onFormSubmit } from '../components/ui';

/** Where a reset link leads: whom it is for, and a new password for them (the link then stops working). */
export function ResetPassword() {
  const [search] = useSearchParams();
  const token = search.get('token') ?? '';
  const link = useQuery({ ...queries.resetLink(token), enabled: token !== '' });
  const [done, setDone] = useState(false);
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  return (
    <main className="login">
      <div className="card stack">
        <h1>Choose a new password</h1>
        {(token === '' || link.isError) && (
          <>
            <p className="error box" role="alert">
              This link is unknown, used or expired. Ask for a new one on the sign-in page, or ask an Admin.
            </p>
            <Link to="/login">Back to sign in</Link>
          </>
        )}
        {done && (
          <>
            <p role="status">Your password is changed. Every session you had is signed out.</p>
            <Link className="button primary" to="/login">
              Sign in
            </Link>
          </>
        )}
        {link.data && !done && (
          <form
            className="stack"
            aria-label="New password"
            onSubmit={onFormSubmit((form) => {
              const password = String(form.get('password'));
              if (password !== String(form.get('confirm'))) {
                setError(new Error('The two passwords differ'));
                return;
              }
              setBusy(true);
              setError(undefined);
              actions.resetPassword
                .run({ token, password })
                .then(
                  () => setDone(true),
                  (caught: unknown) => setError(caught),
                )
                .finally(() => setBusy(false));
            })}
          >
            <p className="muted">
              For <strong data-testid="reset-for">{link.data.email}</strong>. At least 10 characters, with lower and upper case letters, a
              digit and a symbol.
            </p>
            <label className="field">
              New password
              <input name="password" type="password" autoComplete="new-password" required />
            </label>
            <label className="field">
              The same again
              <input name="confirm" type="password" autoComplete="new-password" required />
            </label>
            <ErrorMessage error={error} />
            <button className="primary" type="submit" disabled={busy}>
              Set password
            </button>
          </form>
        )}
      </div>
    </main>
  );
}
