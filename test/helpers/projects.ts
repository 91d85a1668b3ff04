import { expectStatus } from './assertions.js';
import { uniqueName } from './fixtures.js';
import type { TestApp } from './test-app.js';

/** Projects and flags made through the admin API as the admin token: the set-up most tests start from. */

export const projectPath = (project: string) => `/api/admin/projects/${project}`;
export const featurePath = (project: string, flag: string) => `${projectPath(project)}/features/${flag}`;

/** A project of the test's own (a fresh name unless `id` is given), with the given environments or the default ones. */
export async function createProject(
  ctx: Pick<TestApp, 'admin'>,
  options: { id?: string; prefix?: string; environments?: string[] } = {},
): Promise<string> {
  const id = options.id ?? uniqueName(options.prefix ?? 'proj');
  const body = { id, name: id, ...(options.environments ? { environments: options.environments } : {}) };
  expectStatus(await ctx.admin.post('/api/admin/projects', body), 201);
  return id;
}

/**
 * A flag in the project (`default` unless given), with a fresh name unless the body names it; returns the name.
 * Any other body field goes to the create request. `strategies` and `variants` are added in `environment`
 * (development unless given), where the flag is turned on when it was given strategies, or when `enabled` says so.
 */
export async function createFlag(
  ctx: Pick<TestApp, 'admin'>,
  project = 'default',
  options: FlagOptions & Record<string, unknown> = {},
): Promise<string> {
  const { name = uniqueName('flag'), environment = 'development', strategies, variants, enabled, ...body } = options;
  expectStatus(await ctx.admin.post(`${projectPath(project)}/features`, { ...body, name }), 201);
  const inEnvironment = `${featurePath(project, name)}/environments/${environment}`;
  for (const strategy of strategies ?? []) expectStatus(await ctx.admin.post(`${inEnvironment}/strategies`, strategy), 200);
  if (variants) expectStatus(await ctx.admin.put(`${inEnvironment}/variants`, variants), 200);
  if (enabled ?? strategies !== undefined) expectStatus(await ctx.admin.post(`${inEnvironment}/on`), 200);
  return name;
}

interface FlagOptions {
  name?: string;
  environment?: string;
  strategies?: unknown[];
  variants?: unknown[];
  enabled?: boolean;
}

/** A project of its own with the given environments (development and production by default) and one flag in it. */
export async function createProjectWithFlag(
  ctx: Pick<TestApp, 'admin'>,
  environments: string[] = ['development', 'production'],
): Promise<{ project: string; flag: string }> {
  const project = await createProject(ctx, { environments });
  return { project, flag: await createFlag(ctx, project) };
}

/** A segment through the admin API (a fresh name unless the body names one); returns its id and name. */
export async function createSegment(
  ctx: Pick<TestApp, 'admin'>,
  body: { name?: string; constraints?: unknown[] } & Record<string, unknown> = {},
): Promise<{ id: number; name: string }> {
  const response = await ctx.admin.post('/api/admin/segments', { name: uniqueName('segment'), constraints: [], ...body });
  expectStatus(response, 201);
  return response.json() as { id: number; name: string };
}
