import { expectStatus, uniqueName } from './fixtures.js';
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

/** A flag with its strategies in one environment, turned on there unless `enabled` is false. */
export async function createFlag(
  ctx: TestApp,
  project: string,
  name: string,
  options: { environment?: string; strategies?: unknown[]; variants?: unknown[]; enabled?: boolean; impressionData?: boolean } = {},
): Promise<void> {
  const environment = options.environment ?? 'development';
  const flagUrl = `/api/admin/projects/${project}/features/${name}`;
  expectStatus(
    await ctx.admin.post(`/api/admin/projects/${project}/features`, { name, impressionData: options.impressionData ?? false }),
    201,
  );
  for (const strategy of options.strategies ?? []) {
    expectStatus(await ctx.admin.post(`${flagUrl}/environments/${environment}/strategies`, strategy), 200);
  }
  if (options.variants) expectStatus(await ctx.admin.put(`${flagUrl}/environments/${environment}/variants`, options.variants), 200);
  if (options.enabled !== false) expectStatus(await ctx.admin.post(`${flagUrl}/environments/${environment}/on`), 200);
}
