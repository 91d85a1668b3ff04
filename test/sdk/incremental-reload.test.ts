import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadEnvironmentConfiguration } from '../../src/domain/client-features/environment-configuration.js';
import { expectStatus } from '../helpers/assertions.js';
import { eventually } from '../helpers/eventually.js';
import { uniqueName } from '../helpers/fixtures.js';
import { createFlag, createProject, createSegment, featurePath, projectPath } from '../helpers/projects.js';
import { createSdkToken } from '../helpers/sdk-fixtures.js';
import { useTestApp } from '../helpers/test-app.js';

/**
 * A change reloads only the flags it names (or segments, or everything when it is not about single flags) and
 * merges them into what is held. After changes of every kind, what SDKs are served must be exactly what a full
 * read of the database gives.
 */
const ctx = useTestApp();

interface Served {
  features: Array<{ name: string }>;
  segments: Array<{ id: number }>;
}

async function served(token: string): Promise<Served> {
  // As current SDKs ask: announcing the segments specification, so segments come as a list of their own.
  const response = await ctx.as(token).inject({ method: 'GET', url: '/api/client/features', headers: { 'unleash-client-spec': '5.2.0' } });
  expectStatus(response, 200);
  return response.json() as Served;
}

/** What a fresh, full read of the database gives a token of every project, as the API would serialise it. */
async function fullRead(environment: string): Promise<Served> {
  const configuration = await loadEnvironmentConfiguration(ctx.db, environment);
  const used = new Set(configuration.features.flatMap((f) => f.strategies.flatMap((s) => s.segments ?? [])));
  const segments = [...configuration.segments.values()].filter((s) => used.has(s.id)).sort((a, b) => a.id - b.id);
  return JSON.parse(JSON.stringify({ features: configuration.features, segments })) as Served;
}

/** Waits until the served configuration has taken in the change, then holds it to a full read. */
async function assertServedIsFullRead(token: string, environment: string, settled: (body: Served) => boolean): Promise<void> {
  await eventually(async () => settled(await served(token)), 3000);
  const body = await served(token);
  assert.deepEqual({ features: body.features, segments: body.segments }, await fullRead(environment));
}

test('after changes of every kind, what SDKs are served equals a full read', async () => {
  const project = await createProject(ctx, { environments: ['development'] });
  const segment = await createSegment(ctx, { constraints: [{ contextName: 'userId', operator: 'IN', values: ['a'] }] });
  const token = await createSdkToken(ctx, 'client', 'development');
  const parent = await createFlag(ctx, project, { strategies: [{ name: 'default', segments: [segment.id] }] });
  const child = await createFlag(ctx, project, { strategies: [{ name: 'default' }] });
  const has = (name: string) => (body: Served) => body.features.some((f) => f.name === name);
  await assertServedIsFullRead(token, 'development', has(child));

  // A segment's definition: its own kind of change.
  expectStatus(
    await ctx.admin.put(`/api/admin/segments/${segment.id}`, {
      name: segment.name,
      constraints: [{ contextName: 'userId', operator: 'IN', values: ['b', 'c'] }],
    }),
    204,
  );
  await assertServedIsFullRead(token, 'development', (body) => JSON.stringify(body.segments).includes('"c"'));

  // A dependency and a tag, recorded under the flag.
  expectStatus(await ctx.admin.post(`${featurePath(project, child)}/dependencies`, { feature: parent }), 200);
  await assertServedIsFullRead(token, 'development', (body) => JSON.stringify(body.features).includes(`"feature":"${parent}"`));

  // Not about one flag: the project gains an environment, so its flags are served there as they are configured.
  expectStatus(await ctx.admin.post(`${projectPath(project)}/environments`, { environment: 'production' }), 200);
  expectStatus(await ctx.admin.post(`${featurePath(project, parent)}/environments/production/on`), 200);
  const productionToken = await createSdkToken(ctx, 'client', 'production');
  await assertServedIsFullRead(productionToken, 'production', (body) =>
    JSON.stringify(body.features.find((f) => f.name === parent)).includes('"enabled":true'),
  );

  // Archived and revived.
  expectStatus(await ctx.admin.delete(featurePath(project, child)), 202);
  await assertServedIsFullRead(token, 'development', (body) => !has(child)(body));
  expectStatus(await ctx.admin.post(`${projectPath(project)}/revive`, { features: [child] }), 200);
  await assertServedIsFullRead(token, 'development', has(child));

  // More flags in one commit than a notification names: announced as a change of everything.
  const many = Array.from({ length: 60 }, () => uniqueName('bulk'));
  for (const name of many) await createFlag(ctx, project, { name });
  await assertServedIsFullRead(token, 'development', has(many.at(-1)!));
  expectStatus(await ctx.admin.post(`${projectPath(project)}/archive`, { features: many }), 202);
  await assertServedIsFullRead(token, 'development', (body) => !many.some((name) => has(name)(body)));
});
