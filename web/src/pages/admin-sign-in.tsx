import { useQuery } from '@tanstack/react-query';
import type { FormEvent } from 'react';
import { actions, queries } from '../api/queries';
import { ErrorMessage, Field, Loaded, useAction } from '../components/ui';

/** Who the company's identity provider may bring in: email domains, automatic creation, and the role new people get. */
export function AdminSignIn() {
  const settings = useQuery(queries.oidcSettings());
  const save = useAction(actions.setOidcSettings);
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    save.mutate({
      emailDomains: String(form.get('emailDomains')),
      autoCreate: form.get('autoCreate') === 'on',
      defaultRootRole: String(form.get('defaultRootRole')),
    });
  };
  return (
    <div>
      <h1>Sign-in</h1>
      <Loaded query={settings} what="the sign-in settings">
        {(data) => (
          <>
            <p className={data.enabled ? undefined : 'muted'}>
              {data.enabled
                ? 'People sign in with the company’s identity provider (OpenID Connect). These settings decide who it may bring in.'
                : 'OpenID Connect sign-in is not configured on this server (OIDC_ISSUER): these settings take effect once it is.'}
            </p>
            <form className="card stack" onSubmit={submit} aria-label="Sign-in policy" style={{ maxWidth: '40rem' }}>
              <Field
                label="Allowed email domains"
                error={save.error}
                field="emailDomains"
                hint="Comma-separated, such as example.com, corp.example.com. People with an email elsewhere are refused; empty lets anyone the provider signs in."
              >
                <input name="emailDomains" defaultValue={data.emailDomains} />
              </Field>
              <label className="row">
                <input type="checkbox" name="autoCreate" defaultChecked={data.autoCreate} />
                Create an account for a person signing in for the first time
              </label>
              <Field label="Role of new accounts" error={save.error} field="defaultRootRole">
                <select name="defaultRootRole" defaultValue={data.defaultRootRole}>
                  <option>Viewer</option>
                  <option>Editor</option>
                  <option>Admin</option>
                </select>
              </Field>
              <ErrorMessage error={save.error} />
              {save.isSuccess && <p className="success">Saved.</p>}
              <div>
                <button className="primary" type="submit" disabled={save.isPending}>
                  Save sign-in settings
                </button>
              </div>
            </form>
          </>
        )}
      </Loaded>
    </div>
  );
}
