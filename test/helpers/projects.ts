import { expectStatus, uniqueName } from './fixtures.js';
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

/** A flag in the project (`default` unless given), with a fresh name unless the body names it; returns the name. */
export async function createFlag(
  ctx: Pick<TestApp, 'admin'>,
  project = 'default',
  body: { name?: string } & Record<string, unknown> = {},
): Promise<string> {
  const name = body.name ?? uniqueName('flag');
  expectStatus(await ctx.admin.post(`${projectPath(project)}/features`, { ...body, name }), 201);
  return name;
}

/** A project of its own with the given environments (development and production by default) and one flag in it. */
export async function createProjectWithFlag(
  ctx: Pick<TestApp, 'admin'>,
  environments: string[] = ['development', 'production'],
): Promise<{ project: string; flag: string }> {
  const project = await createProject(ctx, { environments });
  return { project, flag: await createFlag(ctx, project) };
}
