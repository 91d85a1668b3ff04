import assert from 'node:assert/strict';
import { test } from 'node:test';
import { expectError, expectStatus } from '../helpers/assertions.js';
import { createProject } from '../helpers/projects.js';
import { createSdkToken } from '../helpers/sdk-fixtures.js';
import { ADMIN_TOKEN, useTestApp } from '../helpers/test-app.js';

/** `POST /edge/validate`, as Unleash answers it: what an edge asks before it serves a token it has not seen. */
const ctx = useTestApp();
const anonymous = () => ctx.as();

test('valid client and frontend tokens come back with their environment and projects; others are left out', async () => {
  const project = await createProject(ctx);
  const client = await createSdkToken(ctx, 'client', 'development', [project]);
  const frontend = await createSdkToken(ctx, 'frontend', 'production');
  const response = await anonymous().post('/edge/validate', {
    tokens: [client, 'default:development.not-a-token', frontend, ADMIN_TOKEN, 'user:not-a-pat'],
  });
  expectStatus(response, 200);
  const { tokens } = response.json() as { tokens: unknown[] };
  assert.deepEqual(
    tokens.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
    [
      { token: client, type: 'client', environment: 'development', projects: [project] },
      { token: frontend, type: 'frontend', environment: 'production', projects: ['*'] },
    ].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
    'the admin token is never confirmed',
  );
});

test('a deleted token is no longer valid', async () => {
  const client = await createSdkToken(ctx, 'client', 'development');
  assert.equal(((await anonymous().post('/edge/validate', { tokens: [client] })).json() as { tokens: unknown[] }).tokens.length, 1);
  expectStatus(await ctx.admin.delete(`/api/admin/api-tokens/${encodeURIComponent(client)}`), 200);
  const after = await anonymous().post('/edge/validate', { tokens: [client] });
  expectStatus(after, 200);
  assert.deepEqual(after.json(), { tokens: [] });
});

test('bad input is a 400: no list, too many tokens, an empty or overlong token, other fields', async () => {
  for (const [body, path] of [
    [{}, '/body'],
    [{ tokens: Array.from({ length: 101 }, (_, index) => `t${index}`) }, '/body/tokens'],
    [{ tokens: [''] }, '/body/tokens/0'],
    [{ tokens: ['x'.repeat(501)] }, '/body/tokens/0'],
    [{ tokens: [], other: 1 }, '/body'],
    [{ tokens: 'one' }, '/body/tokens'],
  ] as const) {
    const error = expectError(await anonymous().post('/edge/validate', body), 400, 'BadDataError');
    assert.ok(
      error.details.some((detail) => detail.path?.startsWith(path)),
      `${JSON.stringify(body).slice(0, 60)}: ${JSON.stringify(error.details)}`,
    );
  }
});
