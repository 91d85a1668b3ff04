import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { eventually } from '../helpers/eventually.js';
import { expectStatus } from '../helpers/assertions.js';
import { uniqueName } from '../helpers/fixtures.js';
import { createProject, featurePath, createSegment } from '../helpers/projects.js';
import { createFlag } from '../helpers/projects.js';
import { createSdkToken, startNodeSdk } from '../helpers/sdk-fixtures.js';
import { useTestApp } from '../helpers/test-app.js';

/**
 * Two projects, a token for each: whatever happens in one project, nothing of it (flag names, project names,
 * segments) reaches a token scoped to the other, on any SDK endpoint. A flag that leaves a scope (moved to
 * another project, a tag taken off) is the one change announced to it, as a removal.
 */
const mine = uniqueName('scope-mine');
const theirs = uniqueName('scope-theirs');
const always = { name: 'default', constraints: [] };
let baseUrl: string;
let myToken: string;
let theirToken: string;
let myFrontendToken: string;
let theirSegment: { id: number; name: string };

const ctx = useTestApp({}, async (ctx) => {
  baseUrl = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  await createProject(ctx, { id: mine, environments: ['development', 'production'] });
  // Their project has no production environment: its flags are still served there, off (as Unleash does).
  await createProject(ctx, { id: theirs, environments: ['development'] });
  myToken = await createSdkToken(ctx, 'client', 'development', [mine]);
  theirToken = await createSdkToken(ctx, 'client', 'development', [theirs]);
  myFrontendToken = await createSdkToken(ctx, 'frontend', 'development', [mine]);
  const segment = await createSegment(ctx, {
    name: uniqueName('their-segment'),
    constraints: [{ contextName: 'region', operator: 'IN', values: ['their-region'] }],
  });
  theirSegment = segment;
  await createFlag(ctx, mine, { name: `${mine}-on`, strategies: [always] });
  await createFlag(ctx, mine, { name: `${mine}-tagged`, strategies: [always] });
  await createFlag(ctx, theirs, { name: `${theirs}-on`, strategies: [{ ...always, segments: [theirSegment.id] }] });
  await createFlag(ctx, theirs, { name: `${theirs}-off`, strategies: [always], enabled: false });
});

/** What one token's SDK would hear from `/api/client/streaming`, as raw text. */
async function openStream(token: string, query = '') {
  const controller = new AbortController();
  const response = await fetch(`${baseUrl}/api/client/streaming${query}`, { headers: { authorization: token }, signal: controller.signal });
  assert.equal(response.status, 200);
  let text = '';
  const reading = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of response.body!) text += decoder.decode(chunk as Uint8Array, { stream: true });
  })().catch(() => undefined);
  await eventually(() => text.includes('event: unleash-connected'), 2000);
  return {
    text: () => text,
    /** The `unleash-updated` events received so far, in order. */
    updates: () =>
      [...text.matchAll(/event: unleash-updated\nid: \d+\ndata: (.*)\n/g)].flatMap(
        (match) => (JSON.parse(match[1]!) as { events: Array<Record<string, unknown>> }).events,
      ),
    close: async () => {
      controller.abort();
      await reading;
    },
  };
}

const streams: Array<{ close(): Promise<void> }> = [];
after(() => Promise.all(streams.map((stream) => stream.close())));

function assertNothingOf(project: string, text: string, what: string): void {
  assert.ok(!text.includes(project), `${what} mentions ${project}: ${text.slice(0, 2000)}`);
  assert.ok(!text.includes(theirSegment.name), `${what} mentions their segment: ${text.slice(0, 2000)}`);
}

/** Changes only their project: toggles, a new flag, their segment, a flag created and archived. */
async function changeTheirProject(): Promise<void> {
  const on = featurePath(theirs, `${theirs}-on`);
  expectStatus(await ctx.admin.post(`${on}/environments/development/off`), 200);
  expectStatus(await ctx.admin.post(`${on}/environments/development/on`), 200);
  await createFlag(ctx, theirs, { name: `${theirs}-new-${uniqueName('f')}`, strategies: [always] });
  const created = `${theirs}-archived-${uniqueName('f')}`;
  await createFlag(ctx, theirs, { name: created, strategies: [always] });
  const segment = await ctx.admin.put(`/api/admin/segments/${theirSegment.id}`, {
    name: theirSegment.name,
    constraints: [{ contextName: 'region', operator: 'IN', values: ['their-region', uniqueName('r')] }],
  });
  expectStatus(segment, 204);
  expectStatus(await ctx.admin.delete(featurePath(theirs, created)), 202);
}

async function deltaFrom(token: string, etag: string) {
  return ctx.as(token).inject({ method: 'GET', url: '/api/client/delta', headers: { 'if-none-match': etag } });
}

describe('a token scoped to one project', () => {
  test('features: its flags only, and no segment of the other project', async () => {
    const response = await ctx.as(myToken).get('/api/client/features');
    expectStatus(response, 200);
    const body = response.json() as { features: Array<{ name: string; project: string }>; segments: unknown[] };
    assert.deepEqual(
      body.features.map((feature) => [feature.name, feature.project]),
      [
        [`${mine}-on`, mine],
        [`${mine}-tagged`, mine],
      ],
    );
    assert.deepEqual(body.segments, []);
    assertNothingOf(theirs, response.body, 'features');
    // Asking for the other project by name narrows nothing open: the token's projects bound every filter.
    const asked = (await ctx.as(myToken).get(`/api/client/features?project=${theirs}`)).json() as { features: unknown[] };
    assert.deepEqual(asked.features, []);
    const single = await ctx.as(myToken).get(`/api/client/features/${theirs}-on`);
    expectStatus(single, 404);
  });

  test('delta: changes in the other project are not mentioned, not even as removals', async () => {
    const first = await ctx.as(myToken).get('/api/client/delta');
    expectStatus(first, 200);
    const etag = first.headers.etag as string;
    assertNothingOf(theirs, first.body, 'the hydration');
    const theirFirst = await ctx.as(theirToken).get('/api/client/delta');
    const theirEtag = theirFirst.headers.etag as string;

    await changeTheirProject();
    // Their own token sees their changes (so the store has them), and then mine still has nothing to hear.
    let theirDelta = await deltaFrom(theirToken, theirEtag);
    await eventually(async () => {
      theirDelta = await deltaFrom(theirToken, theirEtag);
      return theirDelta.statusCode === 200 && theirDelta.body.includes('segment-updated') && theirDelta.body.includes('-new-');
    }, 3000);
    const unchanged = await deltaFrom(myToken, etag);
    expectStatus(unchanged, 304);

    expectStatus(await ctx.admin.post(`${featurePath(mine, `${mine}-on`)}/environments/development/off`), 200);
    let mineDelta = await deltaFrom(myToken, etag);
    await eventually(async () => {
      mineDelta = await deltaFrom(myToken, etag);
      return mineDelta.statusCode === 200;
    }, 3000);
    const events = (mineDelta.json() as { events: Array<{ type: string; feature?: { name: string; enabled: boolean } }> }).events;
    assert.deepEqual(
      events.map((event) => [event.type, event.feature?.name, event.feature?.enabled]),
      [['feature-updated', `${mine}-on`, false]],
    );
    assertNothingOf(theirs, mineDelta.body, 'the delta');
    expectStatus(await ctx.admin.post(`${featurePath(mine, `${mine}-on`)}/environments/development/on`), 200);
  });

  test('streaming: nothing of the other project arrives; a flag moved out arrives as a removal, and in the other scope as an update', async () => {
    const myStream = await openStream(myToken);
    // A second SDK of the same scope, told of each change by the same update as the first.
    const mySecondStream = await openStream(myToken);
    const theirStream = await openStream(theirToken);
    streams.push(myStream, mySecondStream, theirStream);
    await changeTheirProject();
    await eventually(() => theirStream.text().includes('segment-updated') && theirStream.text().includes('feature-removed'), 3000);
    const theirTypes = new Set(theirStream.updates().map((event) => event.type));
    assert.deepEqual([...theirTypes].sort(), ['feature-removed', 'feature-updated', 'segment-updated']);

    const moving = `${mine}-moving`;
    await createFlag(ctx, mine, { name: moving, strategies: [always] });
    await eventually(() => myStream.updates().some((event) => (event.feature as { name?: string } | undefined)?.name === moving), 3000);
    expectStatus(await ctx.admin.post(`${featurePath(mine, moving)}/changeProject`, { newProjectId: theirs }), 200);
    await eventually(() => myStream.updates().some((event) => event.type === 'feature-removed' && event.featureName === moving), 3000);
    await eventually(
      () => theirStream.updates().some((event) => event.type === 'feature-updated' && (event.feature as { name: string }).name === moving),
      3000,
    );

    // Created, given a strategy and turned on: one update per commit, then the removal, and nothing else.
    const updates = myStream.updates();
    const removal = updates.at(-1)!;
    assert.deepEqual([removal.type, removal.featureName, removal.project], ['feature-removed', moving, mine]);
    assert.deepEqual(
      new Set(updates.slice(0, -1).map((event) => `${event.type} ${(event.feature as { name: string }).name}`)),
      new Set([`feature-updated ${moving}`]),
    );
    assertNothingOf(theirs, myStream.text(), 'the stream');
    await eventually(() => mySecondStream.updates().length === updates.length, 3000);
    assert.deepEqual(mySecondStream.updates(), updates);
  });

  test('streaming and delta with a tag filter: a flag that gains the tag arrives, one that loses it is removed, others are never named', async () => {
    const tag = { type: 'simple', value: uniqueName('scoped') };
    const filtered = await openStream(myToken, `?tag=simple:${tag.value}`);
    streams.push(filtered);
    const tagged = `${mine}-tagged`;
    expectStatus(await ctx.admin.post(`${featurePath(mine, `${mine}-on`)}/environments/development/off`), 200);
    expectStatus(await ctx.admin.post(`${featurePath(mine, `${mine}-on`)}/environments/development/on`), 200);
    expectStatus(await ctx.admin.post(`/api/admin/features/${tagged}/tags`, tag), 201);
    await eventually(() => filtered.updates().length >= 1, 3000);
    expectStatus(await ctx.admin.delete(`/api/admin/features/${tagged}/tags/${tag.type}/${tag.value}`), 200);
    await eventually(() => filtered.updates().length >= 2, 3000);
    assert.deepEqual(
      filtered.updates().map((event) => [event.type, (event.feature as { name?: string } | undefined)?.name ?? event.featureName]),
      [
        ['feature-updated', tagged],
        ['feature-removed', tagged],
      ],
    );
    assert.ok(!filtered.text().includes(`${mine}-on`), 'a flag without the tag is never named');
  });

  test('frontend API: only its project’s flags are evaluated and answered', async () => {
    const response = await ctx.as(myFrontendToken).get('/api/frontend?userId=alice');
    expectStatus(response, 200);
    const names = (response.json() as { toggles: Array<{ name: string }> }).toggles.map((toggle) => toggle.name).sort();
    assert.deepEqual(names, [`${mine}-on`, `${mine}-tagged`]);
    assertNothingOf(theirs, response.body, 'the frontend API');
  });

  test('playground: projects narrow the answer to their flags', async () => {
    const response = await ctx.admin.post('/api/admin/playground', {
      environment: 'development',
      projects: [mine],
      context: { userId: 'alice' },
    });
    expectStatus(response, 200);
    const features = (response.json() as { features: Array<{ name: string; projectId: string }> }).features;
    assert.deepEqual(features.map((feature) => feature.name).sort(), [`${mine}-on`, `${mine}-tagged`]);
    assertNothingOf(theirs, JSON.stringify(features), 'the playground');
  });
});

describe('the flag set of an environment a project does not have', () => {
  test("a production token lists that project's flags off with no strategies, so the SDK answers false, not its fallback", async () => {
    const productionToken = await createSdkToken(ctx, 'client', 'production', ['*']);
    const response = await ctx.as(productionToken).get('/api/client/features');
    expectStatus(response, 200);
    const features = (
      response.json() as { features: Array<{ name: string; enabled: boolean; strategies: unknown[]; variants: unknown[] }> }
    ).features;
    const theirFlag = features.find((feature) => feature.name === `${theirs}-on`);
    assert.deepEqual(theirFlag && { enabled: theirFlag.enabled, strategies: theirFlag.strategies, variants: theirFlag.variants }, {
      enabled: false,
      strategies: [],
      variants: [],
    });
    assert.ok(features.some((feature) => feature.name === `${mine}-on`));

    const sdk = await startNodeSdk(baseUrl, productionToken);
    try {
      assert.equal(sdk.isEnabled(`${theirs}-on`, {}, true), false, 'a known, disabled flag is false whatever the fallback');
      assert.equal(sdk.isEnabled(uniqueName('unknown'), {}, true), true, 'an unknown flag falls back');
    } finally {
      sdk.destroy();
    }
  });
});

describe('ETags follow what a token sees', () => {
  async function etagOf(token: string): Promise<string> {
    const response = await fetch(`${baseUrl}/api/client/features`, { headers: { authorization: token } });
    assert.equal(response.status, 200);
    return response.headers.get('etag')!;
  }
  const statusWith = async (token: string, etag: string) =>
    (await fetch(`${baseUrl}/api/client/features`, { headers: { authorization: token, 'if-none-match': etag } })).status;

  test('events no SDK can see keep every ETag; a change in one project keeps the ETags of tokens of the others', async () => {
    const everything = await createSdkToken(ctx, 'client', 'development');
    const mineBefore = await etagOf(myToken);
    const allBefore = await etagOf(everything);

    // Tokens, users and the like are recorded as events, but change nothing an SDK reads. The wait gives the
    // commit's notification time to arrive; were it late, the assertions would pass without proving anything.
    await createSdkToken(ctx, 'client', 'production');
    expectStatus(await ctx.admin.post('/api/admin/user-admin', { username: uniqueName('someone'), rootRole: 'Viewer' }), 201);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(await statusWith(everything, allBefore), 304);
    assert.equal(await statusWith(myToken, mineBefore), 304);

    expectStatus(await ctx.admin.post(`${featurePath(theirs, `${theirs}-on`)}/environments/development/on`), 200);
    expectStatus(await ctx.admin.post(`${featurePath(theirs, `${theirs}-off`)}/environments/development/on`), 200);
    await eventually(async () => (await statusWith(everything, allBefore)) === 200, 2000);
    assert.equal(await statusWith(myToken, mineBefore), 304, 'their change leaves my ETag as it was');
    const delta = await fetch(`${baseUrl}/api/client/delta`, {
      headers: { authorization: myToken, 'if-none-match': `"${mineBefore.split(':')[1]!.replace('"', '')}"` },
    });
    assert.equal(delta.status, 304);

    expectStatus(await ctx.admin.post(`${featurePath(mine, `${mine}-on`)}/environments/development/off`), 200);
    await eventually(async () => (await statusWith(myToken, mineBefore)) === 200, 2000);
    expectStatus(await ctx.admin.post(`${featurePath(mine, `${mine}-on`)}/environments/development/on`), 200);
  });
});
