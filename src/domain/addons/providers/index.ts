import { datadogProvider } from './datadog.js';
import type { AddonProvider } from './provider.js';
import { slackProvider } from './slack.js';
import { teamsProvider } from './teams.js';
import { webhookProvider } from './webhook.js';

/** The providers a configuration may use, by name (case-sensitive, as in Unleash). */
export const ADDON_PROVIDERS: ReadonlyMap<string, AddonProvider> = new Map(
  [webhookProvider, slackProvider, teamsProvider, datadogProvider].map((provider) => [provider.definition.name, provider]),
);

export function findProvider(name: string): AddonProvider | undefined {
  return ADDON_PROVIDERS.get(name);
}
