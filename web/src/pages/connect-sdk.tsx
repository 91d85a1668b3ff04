import { useQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { actions, queries } from '../api/queries';
import { useCan } from '../components/layout';
import { ErrorMessage, Field, formatDate, OneTimeSecret, useAction } from '../components/ui';

type Language = 'node' | 'react' | 'python' | 'go' | 'java' | 'openfeature';

interface Guide {
  label: string;
  tokenType: 'client' | 'frontend';
  install: string;
  /** Whether the SDK registers itself, so the page can see it arrive. */
  registers: boolean;
  code: (values: { url: string; token: string; appName: string; flag: string }) => string;
}

const GUIDES: Record<Language, Guide> = {
  node: {
    label: 'Node.js',
    tokenType: 'client',
    install: 'npm install unleash-client',
    registers: true,
    code: ({ url, token, appName, flag }) => `const { initialize } = require('unleash-client');

const unleash = initialize({
  url: '${url}/api/',
  appName: '${appName}',
  customHeaders: { Authorization: '${token}' },
});

unleash.on('synchronized', () => {
  console.log('${flag} is', unleash.isEnabled('${flag}') ? 'on' : 'off');
});
`,
  },
  react: {
    label: 'Browser / React',
    tokenType: 'frontend',
    install: 'npm install @unleash/proxy-client-react unleash-proxy-client',
    registers: true,
    code: ({ url, token, appName, flag }) => `import { createRoot } from 'react-dom/client';
import { FlagProvider, useFlag } from '@unleash/proxy-client-react';

const config = { url: '${url}/api/frontend', clientKey: '${token}', appName: '${appName}', refreshInterval: 15 };

function Feature() {
  const enabled = useFlag('${flag}');
  return <p>${flag} is {enabled ? 'on' : 'off'}</p>;
}

createRoot(document.getElementById('root')).render(
  <FlagProvider config={config}>
    <Feature />
  </FlagProvider>,
);
`,
  },
  python: {
    label: 'Python',
    tokenType: 'client',
    install: 'pip install UnleashClient',
    registers: true,
    code: ({ url, token, appName, flag }) => `from UnleashClient import UnleashClient

client = UnleashClient(url="${url}/api", app_name="${appName}", custom_headers={"Authorization": "${token}"})
client.initialize_client()
print("${flag} is", "on" if client.is_enabled("${flag}") else "off")
`,
  },
  go: {
    label: 'Go',
    tokenType: 'client',
    install: 'go get github.com/Unleash/unleash-client-go/v4',
    registers: true,
    code: ({ url, token, appName, flag }) => `package main

import (
	"fmt"
	"net/http"

	"github.com/Unleash/unleash-client-go/v4"
)

func main() {
	unleash.Initialize(
		unleash.WithUrl("${url}/api/"),
		unleash.WithAppName("${appName}"),
		unleash.WithCustomHeaders(http.Header{"Authorization": {"${token}"}}),
	)
	unleash.WaitForReady()
	fmt.Println("${flag} is on:", unleash.IsEnabled("${flag}"))
}
`,
  },
  java: {
    label: 'Java',
    tokenType: 'client',
    install: 'Maven: io.getunleash:unleash-client-java',
    registers: true,
    code: ({ url, token, appName, flag }) => `import io.getunleash.DefaultUnleash;
import io.getunleash.Unleash;
import io.getunleash.util.UnleashConfig;

public class FlagCheck {
    public static void main(String[] args) {
        UnleashConfig config = UnleashConfig.builder()
            .appName("${appName}")
            .unleashAPI("${url}/api/")
            .apiKey("${token}")
            .synchronousFetchOnInitialisation(true)
            .build();
        Unleash unleash = new DefaultUnleash(config);
        System.out.println("${flag} is on: " + unleash.isEnabled("${flag}"));
    }
}
`,
  },
  openfeature: {
    label: 'OpenFeature (OFREP)',
    tokenType: 'client',
    install: 'npm install @openfeature/server-sdk @openfeature/ofrep-provider',
    registers: false,
    code: ({ url, token, flag }) => `const { OpenFeature } = require('@openfeature/server-sdk');
const { OFREPProvider } = require('@openfeature/ofrep-provider');

(async () => {
  await OpenFeature.setProviderAndWait(new OFREPProvider({ baseUrl: '${url}', headers: [['Authorization', '${token}']] }));
  const enabled = await OpenFeature.getClient().getBooleanValue('${flag}', false, { targetingKey: 'user-1' });
  console.log('${flag} is', enabled ? 'on' : 'off');
})();
`,
  },
};

/**
 * Polls for the application the snippet names until its first registration arrives: the applications list,
 * searched by the name, answers before then too (a read of the one application would be a 404 each time).
 */
function Arrival({ appName }: { appName: string }) {
  const arrived = (applications: Array<{ appName: string }> | undefined) => applications?.some((entry) => entry.appName === appName);
  const search = useQuery({
    ...queries.applications({ query: appName, offset: 0, limit: 100 }),
    refetchInterval: (query) => (arrived(query.state.data?.applications) ? false : 2000),
  });
  const application = useQuery({ ...queries.application(appName), enabled: arrived(search.data?.applications) ?? false });
  if (application.data) {
    const instance = application.data.instances[0];
    return (
      <p className="success" role="status" data-testid="arrival">
        Connected: {appName} registered {formatDate(application.data.createdAt)}
        {instance?.sdkVersion ? ` with ${instance.sdkVersion}` : ''} in {instance?.environment ?? 'its environment'}.{' '}
        <Link to={`/applications/${encodeURIComponent(appName)}`}>See the application →</Link>
      </p>
    );
  }
  return (
    <p className="muted" role="status" data-testid="arrival">
      Waiting for {appName} to register… run the code above.
    </p>
  );
}

/**
 * Connecting an SDK: a language, an environment, a token made for them (Admins), and code that works as
 * pasted; then the page watches for the application's first registration.
 */
export function ConnectSdk() {
  const [search] = useSearchParams();
  const project = search.get('project') ?? '';
  const flag = search.get('flag') || 'my-flag';
  const environments = useQuery(queries.environments());
  const canCreateToken = useCan('CREATE_API_TOKEN');
  const [language, setLanguage] = useState<Language>('node');
  const [environment, setEnvironment] = useState('');
  const [token, setToken] = useState<string | null>(null);
  const guide = GUIDES[language];
  const chosenEnvironment = environment || environments.data?.environments[0]?.name || 'development';
  const appName = useMemo(() => `${language}-quickstart-${Math.random().toString(36).slice(2, 7)}`, [language]);
  const create = useAction(actions.createApiToken, (created) => setToken(created.secret ?? null));
  const placeholder = guide.tokenType === 'client' ? '<a client token>' : '<a frontend token>';
  const code = guide.code({ url: window.location.origin, token: token ?? placeholder, appName, flag });
  const choose = (next: Partial<{ language: Language; environment: string }>) => {
    setToken(null);
    create.reset();
    if (next.language) setLanguage(next.language);
    if (next.environment) setEnvironment(next.environment);
  };
  return (
    <div>
      <h1>Connect an SDK</h1>
      <p className="muted">
        {project ? `For project ${project}` : 'For all projects'}
        {search.get('flag') ? `, reading ${flag}` : ''}. Pick a language and an environment, make a token for them, and run the code.
      </p>
      <div className="card stack">
        <div className="grid2">
          <Field label="Language" error={undefined} field="language">
            <select value={language} onChange={(event) => choose({ language: event.target.value as Language })}>
              {Object.entries(GUIDES).map(([value, entry]) => (
                <option key={value} value={value}>
                  {entry.label}
                </option>
              ))}
            </select>
          </Field>
          <Field label="Environment" error={undefined} field="environment">
            <select value={chosenEnvironment} onChange={(event) => choose({ environment: event.target.value })}>
              {(environments.data?.environments ?? []).map((entry) => (
                <option key={entry.name}>{entry.name}</option>
              ))}
            </select>
          </Field>
        </div>
        <h3 style={{ margin: 0 }}>1. A {guide.tokenType} token</h3>
        {token ? (
          <OneTimeSecret label={`${guide.tokenType} token for ${chosenEnvironment}`} secret={token} />
        ) : canCreateToken ? (
          <div>
            <button
              type="button"
              className="primary"
              disabled={create.isPending}
              onClick={() =>
                create.mutate({
                  tokenName: appName,
                  type: guide.tokenType,
                  environment: chosenEnvironment,
                  projects: project ? [project] : ['*'],
                })
              }
            >
              Create a {guide.tokenType} token for {chosenEnvironment}
            </button>
          </div>
        ) : (
          <p className="muted">
            An Admin makes tokens (Admin → API tokens): ask for a {guide.tokenType} token for {chosenEnvironment}.
          </p>
        )}
        <ErrorMessage error={create.error} />
        <h3 style={{ margin: 0 }}>2. Install</h3>
        <pre className="code">
          <code data-testid="install">{guide.install}</code>
        </pre>
        <h3 style={{ margin: 0 }}>3. Run</h3>
        <pre className="code">
          <code data-testid="snippet">{code}</code>
        </pre>
        <h3 style={{ margin: 0 }}>4. See it arrive</h3>
        {guide.registers ? (
          <Arrival appName={appName} />
        ) : (
          <p className="muted">
            OpenFeature providers do not register; their evaluations show on the flag's chart, as the application openfeature.
          </p>
        )}
      </div>
    </div>
  );
}
