import { InMemStorageProvider, Unleash, type UnleashConfig, UnleashEvents } from 'unleash-client';
import { expectStatus } from './assertions.js';
import { uniqueName } from './fixtures.js';
import type { TestApp } from './test-app.js';

/** Creates an API token through the admin API and returns its secret. */
export async function createSdkToken(
  ctx: TestApp,
  type: 'client' | 'frontend',
  environment: string,
  projects: string[] = ['*'],
): Promise<string> {
  const response = await ctx.admin.post('/api/admin/api-tokens', { tokenName: uniqueName(type), type, environment, projects });
  expectStatus(response, 201);
  return (response.json() as { secret: string }).secret;
}

/**
 * The official Node SDK connected to a listening Vexil with a token, resolved once it has synchronised (rejected
 * on an error before that). Metrics are off unless the options turn them on; the caller destroys it.
 */
export async function startNodeSdk(baseUrl: string, token: string, options: Partial<UnleashConfig> = {}): Promise<Unleash> {
  const sdk = new Unleash({
    url: `${baseUrl}/api/`,
    appName: uniqueName('node-sdk'),
    customHeaders: { Authorization: token },
    disableMetrics: true,
    storageProvider: new InMemStorageProvider(),
    ...options,
  });
  await new Promise<void>((resolve, reject) => {
    sdk.once(UnleashEvents.Synchronized, () => resolve());
    sdk.once(UnleashEvents.Error, reject);
  });
  // Later errors (a poll during shutdown) are the test's to assert, not unhandled.
  sdk.on(UnleashEvents.Error, () => undefined);
  return sdk;
}
