import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useParams } from 'react-router';
import { ApiError } from '../api/errors';
import { actions, queries } from '../api/queries';
import { ErrorMessage, Field, NewPasswordField, onFormSubmit } from '../components/ui';

/** Where an invite link leads: a form to make one's own account, with the role the link gives. */
export function Invite() {
  const secret = useParams().token ?? '';
  const valid = useQuery(queries.inviteLinkValid(secret));
  const [created, setCreated] = useState<string | null>(null);
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  return (
    <main className="login">
      <div className="card stack">
        <h1>Join Vexil</h1>
        {valid.isError && (
          <>
            <p className="error box" role="alert">
              This invite link is unknown, turned off or expired. Ask an Admin for a new one.
            </p>
            <Link to="/login">Sign in instead</Link>
          </>
        )}
        {created && (
          <>
            <p role="status">
              Your account <strong>{created}</strong> is made. Sign in with your email and password.
            </p>
            <Link className="button primary" to="/login">
              Sign in
            </Link>
          </>
        )}
        {valid.data && !created && (
          <form
            className="stack"
            aria-label="Make your account"
            onSubmit={onFormSubmit((form) => {
              const email = String(form.get('email'));
              setBusy(true);
              setError(undefined);
              actions.signUpWithInvite
                .run({ secret, email, name: String(form.get('name')), password: String(form.get('password')) })
                .then(
                  () => setCreated(email),
                  (caught: unknown) => setError(caught),
                )
                .finally(() => setBusy(false));
            })}
          >
            <p className="muted">You were invited: your account starts as a Viewer, who can read everything and change nothing.</p>
            <Field label="Name" error={error} field="name">
              <input name="name" autoComplete="name" required />
            </Field>
            <Field label="Email" error={error} field="email">
              <input name="email" type="email" autoComplete="email" required />
            </Field>
            <NewPasswordField label="Password" error={error} />
            {error instanceof ApiError && (error.about('name') || error.about('email') || error.about('password')) ? null : (
              <ErrorMessage error={error} />
            )}
            <button className="primary" type="submit" disabled={busy}>
              Make my account
            </button>
          </form>
        )}
      </div>
    </main>
  );
}
