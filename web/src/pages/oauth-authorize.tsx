import { useQuery } from '@tanstack/react-query';
import { useSearchParams } from 'react-router';
import { actions, queries, type McpAuthorizationQuery } from '../api/queries';
import { useMe } from '../components/layout';
import { ErrorMessage, Loading, useAction } from '../components/ui';

const PARAMETERS = [
  'client_id',
  'redirect_uri',
  'response_type',
  'code_challenge',
  'code_challenge_method',
  'state',
  'scope',
  'resource',
] as const;

/** The request as its client put it in the address, each parameter once (a missing required one is the API's to refuse). */
function requestFrom(search: URLSearchParams): McpAuthorizationQuery {
  const entries = PARAMETERS.flatMap((name) => (search.has(name) ? [[name, search.get(name)!]] : []));
  return {
    client_id: '',
    redirect_uri: '',
    response_type: '',
    code_challenge: '',
    code_challenge_method: '',
    ...Object.fromEntries(entries),
  };
}

/** Where the browser goes next, as a person recognises it: the site, or the application's own scheme (`cursor://…`). */
function destinationOf(uri: string): string {
  const url = new URL(uri);
  return url.origin !== 'null' ? url.origin : `${url.protocol}//${url.host}`;
}

/**
 * Where an agent's client sends the person (MCP's OAuth authorization): who asks, what it will be able to do, and a
 * choice. Nothing is granted without the click; a request that names an unknown client or an address it did not
 * register is refused here, and the browser goes nowhere.
 */
export function OAuthAuthorize() {
  const [search] = useSearchParams();
  const request = requestFrom(search);
  const me = useMe().data;
  const described = useQuery(queries.mcpAuthorizationRequest(request));
  const answer = useAction(actions.answerMcpAuthorization, ({ redirectTo }) => window.location.assign(redirectTo));

  return (
    <main className="login">
      <div className="card stack" style={{ maxWidth: '32rem' }}>
        <h1>Grant an agent access</h1>
        {described.isError && (
          <>
            <p className="error box" role="alert">
              This request cannot be granted.
            </p>
            <ErrorMessage error={described.error} />
          </>
        )}
        {described.isPending && <Loading what="the request" />}
        {described.data && (
          <>
            <p data-testid="oauth-client">
              <strong>{described.data.clientName}</strong> asks to manage feature flags in Vexil as you
              {me ? (
                <>
                  , <strong>{me.user.username ?? me.user.email}</strong>
                </>
              ) : null}
              .
            </p>
            <ul className="small">
              <li>It can do what you can do, through Vexil's MCP tools only: read flags, create and change them where your roles allow.</li>
              <li>Changes to environments that require change requests go into your draft change request; someone else approves them.</li>
              <li>Every change it makes is recorded under your name, with the agent's.</li>
              <li>Access ends after {described.data.expiresInHours} hours; revoke it sooner on your profile.</li>
            </ul>
            <p className="muted small">
              The agent names itself: allow only a request you started from your editor just now. Afterwards your browser goes to{' '}
              <code>{destinationOf(described.data.redirectUri)}</code>.
            </p>
            <ErrorMessage error={answer.error} />
            <div className="row">
              <button
                className="primary"
                type="button"
                disabled={answer.isPending}
                onClick={() => answer.mutate({ ...request, approve: true })}
              >
                Allow
              </button>
              <button type="button" disabled={answer.isPending} onClick={() => answer.mutate({ ...request, approve: false })}>
                Deny
              </button>
            </div>
          </>
        )}
      </div>
    </main>
  );
}
