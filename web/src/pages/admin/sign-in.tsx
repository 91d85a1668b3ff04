import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { actions, queries } from '../../api/queries';
import { ConfirmButton, ErrorMessage, Field, formatDate, Loaded, OneTimeSecret, useAction, onFormSubmit } from '../../components/ui';

const PROVIDERS = {
  oidc: { title: 'OpenID Connect', variable: 'OIDC_ISSUER' },
  saml: { title: 'SAML', variable: 'SAML_METADATA_URL' },
} as const;

/** Who one identity provider may bring in: email domains, automatic creation, and the role new people get. */
function SignInPolicyForm({ provider }: { provider: keyof typeof PROVIDERS }) {
  const { title, variable } = PROVIDERS[provider];
  const settings = useQuery(queries.signInSettings(provider));
  const save = useAction(actions.setSignInSettings);
  const submit = onFormSubmit((form) => {
    save.mutate({
      provider,
      emailDomains: String(form.get('emailDomains')),
      autoCreate: form.get('autoCreate') === 'on',
      defaultRootRole: String(form.get('defaultRootRole')),
    });
  });
  return (
    <section className="stack" style={{ maxWidth: '40rem' }}>
      <h2>{title}</h2>
      <Loaded query={settings} what={`the ${title} settings`}>
        {(data) => (
          <>
            <p className={data.enabled ? undefined : 'muted'}>
              {data.enabled
                ? `People sign in with the company’s identity provider over ${title}. These settings decide who it may bring in.`
                : `${title} sign-in is not configured on this server (${variable}): these settings take effect once it is.`}
            </p>
            <form className="card stack" onSubmit={submit} aria-label={`${title} sign-in policy`}>
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
                  Save {title} settings
                </button>
              </div>
            </form>
          </>
        )}
      </Loaded>
    </section>
  );
}

/** Who each of the company's identity providers may bring in, and provisioning over SCIM. */
export function AdminSignIn() {
  return (
    <div className="stack">
      <h1>Sign-in</h1>
      <SignInPolicyForm provider="oidc" />
      <SignInPolicyForm provider="saml" />
      <ScimProvisioning />
    </div>
  );
}

/**
 * Provisioning over SCIM: where the identity provider sends its requests and the token it sends them with, made
 * (or replaced) here and shown only once.
 */
function ScimProvisioning() {
  const status = useQuery(queries.scimToken());
  const [token, setToken] = useState<string>();
  const create = useAction(actions.createScimToken, (made) => setToken(made.token));
  const remove = useAction(actions.deleteScimToken, () => setToken(undefined));
  const baseUrl = `${window.location.origin}/scim/v2`;
  return (
    <section className="stack" aria-label="Provisioning (SCIM)" style={{ maxWidth: '40rem' }}>
      <h2>Provisioning (SCIM)</h2>
      <p className="muted">
        The identity provider (Okta, Microsoft Entra ID, …) creates, updates and deactivates people and groups here over SCIM 2.0. A
        deactivated person’s sessions and tokens end at once; group changes apply at their next request.
      </p>
      <Loaded query={status} what="the SCIM status">
        {(data) => (
          <div className="card stack">
            <p>
              SCIM base URL: <code>{baseUrl}</code>
            </p>
            <p data-testid="scim-status">
              {data.enabled
                ? `On: token made ${formatDate(data.createdAt)} by ${data.createdBy}; ${data.seenAt ? `last used ${formatDate(data.seenAt)}` : 'not used yet'}.`
                : 'Off: there is no SCIM token.'}
            </p>
            {token && <OneTimeSecret label="The SCIM token: give it to the identity provider as its bearer token" secret={token} />}
            <ErrorMessage error={create.error ?? remove.error} />
            <div className="row">
              {data.enabled ? (
                <>
                  <ConfirmButton
                    question="Make a new SCIM token? The current one stops working at once."
                    onConfirm={() => create.mutate(undefined)}
                    disabled={create.isPending}
                  >
                    Replace the token
                  </ConfirmButton>
                  <ConfirmButton
                    question="Turn provisioning off? The identity provider’s requests are refused until a new token is made."
                    onConfirm={() => remove.mutate(undefined)}
                    disabled={remove.isPending}
                  >
                    Turn provisioning off
                  </ConfirmButton>
                </>
              ) : (
                <button className="primary" type="button" onClick={() => create.mutate(undefined)} disabled={create.isPending}>
                  Make a SCIM token
                </button>
              )}
            </div>
          </div>
        )}
      </Loaded>
    </section>
  );
}
