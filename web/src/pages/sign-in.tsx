import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState, type FormEvent } from 'react';
import { useNavigate, useSearchParams } from 'react-router';
import { actions, queries } from '../api/queries';
import { ErrorMessage, onFormSubmit } from '../components/ui';

/**
 * Only a path of this app: `next` comes from the URL, which anyone can write. Resolved as the browser would
 * (tabs and newlines dropped, `\` read as `/`, dot segments removed), it is kept only when it stays on this origin
 * and does not start with `//` (`/.//evil.example` resolves to `//evil.example`, another host to a browser).
 */
function sameOriginPath(next: string | null): string | undefined {
  if (!next?.startsWith('/')) return undefined;
  try {
    const resolved = new URL(next, window.location.origin);
    const path = `${resolved.pathname}${resolved.search}${resolved.hash}`;
    return resolved.origin === window.location.origin && !path.startsWith('//') ? path : undefined;
  } catch {
    return undefined;
  }
}

const REFUSAL_COOKIE = 'vexil-sign-in-refused';

/**
 * Why the server refused the last sign-in through the identity provider, read from the cookie it set (never from the
 * URL, which anyone can write).
 */
function readRefusal(): string | undefined {
  const entry = document.cookie.split('; ').find((cookie) => cookie.startsWith(`${REFUSAL_COOKIE}=`));
  if (!entry) return undefined;
  try {
    return decodeURIComponent(entry.slice(REFUSAL_COOKIE.length + 1));
  } catch {
    return undefined;
  }
}

export function SignIn() {
  const [search] = useSearchParams();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const options = useQuery(queries.signInOptions());
  // The identity providers configured (OpenID Connect, SAML), each offered as a button.
  const providers = [options.data?.oidc, options.data?.saml].filter((provider) => provider != null);
  const next = search.get('next');
  const returnTo = sameOriginPath(next) ?? '/flags';
  // Set by the server when a sign-in through the identity provider was refused; shown once, then forgotten.
  const [providerError] = useState(readRefusal);
  useEffect(() => {
    // biome-ignore lint/suspicious/noDocumentCookie: the Cookie Store API is not in every browser Vexil supports (Firefox, Safari).
    document.cookie = `${REFUSAL_COOKIE}=; Max-Age=0; path=/login`;
  }, []);

  const submit = onFormSubmit(async (form) => {
    setBusy(true);
    setError(undefined);
    try {
      await actions.signIn.run({ username: String(form.get('username')), password: String(form.get('password')) });
      queryClient.clear();
      navigate(returnTo, { replace: true });
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  });

  return (
    <main className="login">
      <div className="card stack">
        <h1>Sign in to Vexil</h1>
        {providerError && (
          <p className="error box" role="alert">
            {providerError}
          </p>
        )}
        {providers.map((provider) => (
          <a key={provider.path} className="button primary" href={`${provider.path}?next=${encodeURIComponent(returnTo)}`}>
            Sign in with {provider.name}
          </a>
        ))}
        {options.data?.password === false ? null : (
          <>
            {providers.length > 0 && <p className="muted small">or with a username and password:</p>}
            <PasswordForm busy={busy} error={error} onSubmit={submit} />
            <ForgotPassword />
            <p className="muted small">
              First start? Vexil created the user <code>admin</code> and printed its password once in the terminal it started in. Sign in
              with it, then choose your own password on your profile page. A lost password is reset with{' '}
              <code>npm run admin -- reset-password admin</code>.
            </p>
          </>
        )}
      </div>
    </main>
  );
}

/** Asks for a reset link by email; the answer is the same whether or not the address is someone's. */
function ForgotPassword() {
  const [open, setOpen] = useState(false);
  const [sent, setSent] = useState(false);
  const [error, setError] = useState<unknown>();
  if (!open) {
    return (
      <button type="button" className="link" onClick={() => setOpen(true)}>
        Forgot your password?
      </button>
    );
  }
  if (sent) {
    return (
      <p className="muted small" role="status">
        If someone who signs in with a password has this address, an email with a link to choose a new one is on its way. It works for 24
        hours.
      </p>
    );
  }
  return (
    <form
      className="stack"
      aria-label="Reset password"
      onSubmit={onFormSubmit((form) => {
        const email = String(form.get('email'));
        setError(undefined);
        actions.askForResetEmail.run(email).then(
          () => setSent(true),
          (caught: unknown) => setError(caught),
        );
      })}
    >
      <label className="field">
        Your email
        <input name="email" type="email" autoComplete="email" required />
      </label>
      <ErrorMessage error={error} />
      <button type="submit">Email me a reset link</button>
    </form>
  );
}

function PasswordForm({ busy, error, onSubmit }: { busy: boolean; error: unknown; onSubmit: (event: FormEvent<HTMLFormElement>) => void }) {
  return (
    <form className="stack" onSubmit={onSubmit}>
      <label className="field">
        Username or email
        <input name="username" autoComplete="username" required autoFocus />
      </label>
      <label className="field">
        Password
        <input name="password" type="password" autoComplete="current-password" required />
      </label>
      <ErrorMessage error={error} />
      <button className="primary" type="submit" disabled={busy}>
        {busy ? 'Signing in…' : 'Sign in'}
      </button>
    </form>
  );
}
