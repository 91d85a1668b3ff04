import assert from 'node:assert/strict';
import { test } from 'node:test';
import { expectStatus, getOk } from '../helpers/assertions.js';
import { enableChangeRequests, propose } from '../helpers/change-requests.js';
import { eventsSince, lastEventId } from '../helpers/events.js';
import { createUserSession, uniqueName } from '../helpers/fixtures.js';
import { createFlag, createSegment, projectPath } from '../helpers/projects.js';
import { createSdkToken } from '../helpers/sdk-fixtures.js';
import { type Client, useTestApp } from '../helpers/test-app.js';

// Every operation of the OpenAPI document, walked as someone who may not see a private project: a non-member Viewer,
// a non-member Editor, an SDK token of another project and an anonymous caller. None may answer anything of the
// private project it was not told, and none may change it. A route added later is walked too, so a new read that
// forgets the rule fails here.

const ctx = useTestApp();

/** What the private project holds that a caller never sends: any of it in an answer is a leak. */
interface Canaries {
  project: string;
  flag: string;
  unnamedFlag: string;
  field: string;
  secrets: string[];
}

async function privateProject(): Promise<Canaries & { segment: number; changeRequest: number }> {
  const project = uniqueName('secretproj');
  expectStatus(await ctx.admin.post('/api/admin/projects', { id: project, name: project, mode: 'private' }), 201);
  const field = uniqueName('secretfield');
  const legalValue = uniqueName('acme-secret-tenant');
  expectStatus(await ctx.admin.post(`${projectPath(project)}/context`, { name: field, legalValues: [{ value: legalValue }] }), 201);
  const victim = `${uniqueName('ceo')}@victim.example`;
  const segment = await createSegment(ctx, { constraints: [{ contextName: 'userId', operator: 'IN', values: ['segment-member'] }] });
  const description = uniqueName('secret-description');
  const flag = await createFlag(ctx, project, {
    description,
    strategies: [
      {
        name: 'flexibleRollout',
        parameters: { rollout: '100', stickiness: 'default', groupId: 'g' },
        constraints: [
          { contextName: 'userId', operator: 'IN', values: [victim] },
          { contextName: field, operator: 'IN', values: [legalValue] },
        ],
        segments: [segment.id],
      },
    ],
  });
  const unnamedFlag = await createFlag(ctx, project, { name: uniqueName('secret-unnamed'), strategies: [{ name: 'default' }] });
  await enableChangeRequests(ctx, project);
  const proposalValue = `${uniqueName('cr-secret')}@victim.example`;
  const request = await propose(ctx.admin, project, {
    action: 'addStrategy',
    feature: flag,
    payload: { name: 'default', constraints: [{ contextName: 'userId', operator: 'IN', values: [proposalValue] }] },
  });
  const token = await createSdkToken(ctx, 'client', 'development');
  const now = new Date().toISOString();
  expectStatus(
    await ctx.as(token).post('/api/client/metrics', {
      appName: 'secret-app',
      bucket: { start: now, stop: now, toggles: { [flag]: { yes: 3, no: 1 }, [unnamedFlag]: { yes: 1, no: 0 } } },
    }),
    202,
  );
  return {
    project,
    flag,
    unnamedFlag,
    field,
    secrets: [victim, legalValue, description, proposalValue, unnamedFlag],
    segment: segment.id,
    changeRequest: request.id,
  };
}

interface Operation {
  method: string;
  path: string;
}

async function operations(): Promise<Operation[]> {
  const document = await getOk<{ paths: Record<string, Record<string, unknown>> }>(ctx.admin, '/docs/json');
  return Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.keys(methods)
      .filter((method) => method !== 'head')
      .map((method) => ({ method: method.toUpperCase(), path })),
  );
}

/**
 * What the walk leaves alone: ways that end the caller's own session, doors that are not about projects (their own
 * tests hold them), and the SDK streams, which stay open and serve a token's own scope.
 */
const NOT_WALKED =
  /^\/(logout|auth\/|oauth\/|invite\/|scim\/|api\/signal-endpoint\/|api\/admin\/user\/sessions|api\/admin\/mcp|api\/client\/streaming|ofrep\/v1\/.*events)/;

/** The URLs to try for an operation: its path parameters filled with the private project's names. */
function urlsOf(operation: Operation, canaries: Canaries & { segment: number; changeRequest: number }): string[] {
  const values: Record<string, string[]> = {
    projectId: [canaries.project],
    featureName: [canaries.flag],
    name: operation.path.includes('/context') ? [canaries.field] : [canaries.flag],
    environment: ['development'],
    id: operation.path.includes('segment') ? [String(canaries.segment)] : [String(canaries.changeRequest)],
    changeRequestId: [String(canaries.changeRequest)],
    appName: ['secret-app'],
    key: [canaries.flag],
  };
  const filled = operation.path.replace(/\{(\w+)\}/g, (_match, name: string) => values[name]?.[0] ?? 'x');
  if (operation.path.includes('{')) return [filled];
  // A path without parameters is also asked about the project and the flag by name, as filters do.
  return [filled, `${filled}?project=${canaries.project}&query=${canaries.flag}&feature=IS:${canaries.flag}`];
}

function bodyOf(canaries: Canaries): Record<string, unknown> {
  return {
    project: canaries.project,
    projectId: canaries.project,
    newProjectId: canaries.project,
    environment: 'development',
    environmentId: 'development',
    name: canaries.flag,
    featureName: canaries.flag,
    features: [canaries.flag],
    projects: [canaries.project],
    context: { appName: 'walk', userId: 'someone' },
  };
}

/** The answer names nothing of the private project the caller did not send (nothing at all when it sent nothing). */
function assertNothingLeaked(answer: { statusCode: number; body: string }, where: string, canaries: Canaries, named: boolean): void {
  const leaked = [...canaries.secrets, ...(named ? [] : [canaries.project, canaries.flag, canaries.field])].filter((secret) =>
    answer.body.includes(secret),
  );
  assert.deepEqual(leaked, [], `${where} answered ${answer.statusCode}: ${answer.body.slice(0, 400)}`);
}

test('no operation reveals or changes a private project for a non-member Viewer or Editor, another project’s SDK token, or no one', async () => {
  const canaries = await privateProject();
  const viewer = await createUserSession(ctx, 'Viewer');
  const editor = await createUserSession(ctx, 'Editor');
  const sdkToken = await createSdkToken(ctx, 'client', 'development', ['default']);
  const frontendToken = await createSdkToken(ctx, 'frontend', 'development', ['default']);
  const callers: Array<{ who: string; client: Client }> = [
    { who: 'a non-member Viewer', client: ctx.withCookie(viewer.cookie) },
    { who: 'a non-member Editor', client: ctx.withCookie(editor.cookie) },
    { who: "another project's client token", client: ctx.as(sdkToken) },
    { who: "another project's frontend token", client: ctx.as(frontendToken) },
    { who: 'an anonymous caller', client: ctx.as() },
  ];
  const before = {
    export: (await ctx.admin.post('/api/admin/features-batch/export', { environment: 'development', project: canaries.project })).body,
    file: (await ctx.admin.get(`/api/admin/flags-file?project=${canaries.project}`)).body,
    changeRequest: (await ctx.admin.get(`${projectPath(canaries.project)}/change-requests/${canaries.changeRequest}`)).body,
  };
  const since = await lastEventId(ctx);
  const walked = (await operations()).filter((operation) => !NOT_WALKED.test(operation.path));
  // Reads first (GETs), then everything else, so that what a write might change is seen by the reads of the next caller.
  walked.sort((a, b) => Number(a.method !== 'GET') - Number(b.method !== 'GET'));
  let requests = 0;
  for (const { who, client } of callers) {
    for (const operation of walked) {
      for (const url of urlsOf(operation, canaries)) {
        const answer = await client.inject({
          method: operation.method as 'GET',
          url,
          ...(operation.method === 'GET' || operation.method === 'DELETE' ? {} : { payload: bodyOf(canaries) }),
        });
        requests++;
        const named = [canaries.project, canaries.flag, canaries.field].some((name) => url.includes(name)) || operation.method !== 'GET';
        assertNothingLeaked(answer, `${operation.method} ${url} as ${who}`, canaries, named);
      }
    }
  }
  assert.ok(requests > 1000, `${requests} requests`);
  // The signed-in callers were walked to the end, not signed out half-way.
  for (const { client } of callers.slice(0, 2)) expectStatus(await client.get('/api/admin/user'), 200);

  assert.equal(
    (await ctx.admin.post('/api/admin/features-batch/export', { environment: 'development', project: canaries.project })).body,
    before.export,
  );
  assert.equal((await ctx.admin.get(`/api/admin/flags-file?project=${canaries.project}`)).body, before.file);
  assert.equal(
    (await ctx.admin.get(`${projectPath(canaries.project)}/change-requests/${canaries.changeRequest}`)).body,
    before.changeRequest,
  );
  // The Admin's own exports above are the only events of the project since the walk began.
  const touched = (await eventsSince(ctx, since)).filter(
    (event) => event.project === canaries.project && event.createdBy !== 'admin-token',
  );
  assert.deepEqual(
    touched.map((event) => event.type),
    [],
  );
});
