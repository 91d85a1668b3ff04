import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { actions, queries } from '../../api/queries';
import { ErrorMessage, Field, Loaded, useAction, onFormSubmit } from '../../components/ui';

/** Which web origins may call the frontend API from a browser (Unleash's CORS setting). */
export function AdminSdkSettings() {
  const config = useQuery(queries.uiConfig());
  const save = useAction(actions.setFrontendApiOrigins);
  const submit = onFormSubmit((form) => {
    const text = String(form.get('origins'));
    save.mutate(
      text
        .split(/[\s,]+/)
        .map((origin) => origin.trim())
        .filter(Boolean),
    );
  });
  return (
    <div>
      <h1>SDK settings</h1>
      <p>
        <Link to="/connect">Connect an SDK →</Link>
      </p>
      <Loaded query={config} what="the settings">
        {(data) => (
          <form className="card stack" onSubmit={submit} aria-label="Frontend API origins">
            <Field
              label="Origins allowed to call the frontend API"
              error={save.error}
              field="frontendApiOrigins"
              hint="One per line, such as https://shop.example.com; * allows every origin. Browser SDKs on other pages are refused by the browser."
            >
              <textarea name="origins" rows={5} defaultValue={data.frontendApiOrigins.join('\n')} />
            </Field>
            <ErrorMessage error={save.error} />
            {save.isSuccess && <p className="success">Saved: {data.frontendApiOrigins.join(', ')}</p>}
            <div>
              <button className="primary" type="submit" disabled={save.isPending}>
                Save origins
              </button>
            </div>
          </form>
        )}
      </Loaded>
    </div>
  );
}
