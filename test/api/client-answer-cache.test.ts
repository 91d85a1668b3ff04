import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MAX_CACHED_ANSWERS } from '../../src/domain/client-features/client-feature-store.js';
import { expectStatus } from '../helpers/assertions.js';
import { createFlag, createProject } from '../helpers/projects.js';
import { scrapedValue } from '../helpers/prometheus.js';
import { createSdkToken } from '../helpers/sdk-fixtures.js';
import { useTestApp } from '../helpers/test-app.js';

/**
 * A client token chooses its scope with query parameters, and `namePrefix` takes any text: the answers kept per
 * scope are bounded, so ever new prefixes cannot grow the server's memory, and every answer stays right.
 */
const ctx = useTestApp();

const cachedAnswers = () => scrapedValue(ctx.app, 'vexil_client_cached_answers');

test('answers kept per scope stop at the bound however many prefixes a client token asks for', async () => {
  const project = await createProject(ctx, { environments: ['development'] });
  const alpha = await createFlag(ctx, project, { name: `alpha-${project}` });
  const beta = await createFlag(ctx, project, { name: `beta-${project}` });
  const token = await createSdkToken(ctx, 'client', 'development', [project]);
  const features = (query = '', headers: Record<string, string> = {}) =>
    ctx.app.inject({ method: 'GET', url: `/api/client/features${query}`, headers: { authorization: token, ...headers } });
  const namesIn = (response: Awaited<ReturnType<typeof features>>) =>
    (response.json() as { features: Array<{ name: string }> }).features.map((feature) => feature.name).sort();

  const whole = await features();
  expectStatus(whole, 200);
  assert.deepEqual(namesIn(whole), [alpha, beta].sort());
  const etag = whole.headers.etag as string;
  assert.equal(await cachedAnswers(), 1);

  for (let probe = 0; probe < MAX_CACHED_ANSWERS + 50; probe++) {
    const response = await features(`?namePrefix=probe-${probe}-`);
    expectStatus(response, 200);
    assert.deepEqual(namesIn(response), []);
    // The scope an SDK polls goes on being asked for among the flood, and answers 304 to its ETag throughout.
    if (probe % 100 === 0) expectStatus(await features('', { 'if-none-match': etag }), 304);
  }
  assert.equal(await cachedAnswers(), MAX_CACHED_ANSWERS);

  // Scopes asked for again after they were dropped are answered afresh, and rightly.
  const first = await features('?namePrefix=probe-0-');
  expectStatus(first, 200);
  assert.deepEqual(namesIn(first), []);
  const alphas = await features(`?namePrefix=${encodeURIComponent('alpha-')}`);
  expectStatus(alphas, 200);
  assert.deepEqual(namesIn(alphas), [alpha]);
  const again = await features();
  assert.equal(again.headers.etag, etag);
  assert.deepEqual(namesIn(again), [alpha, beta].sort());
  assert.equal(await cachedAnswers(), MAX_CACHED_ANSWERS);
});
