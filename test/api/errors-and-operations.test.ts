import assert from 'node:assert/strict';
import SwaggerParser from '@apidevtools/swagger-parser';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { PUBLIC } from '../../src/http/plugins/route-access.js';
import { expectError, expectStatus } from '../helpers/assertions.js';
import { eventsSince, lastEventId } from '../helpers/events.js';
import { uniqueName, sendMalformedJson } from '../helpers/fixtures.js';
import { createSdkToken } from '../helpers/sdk-fixtures.js';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../helpers/test-app.js';

/** Everything the server logged, one JSON record per line. */
const logLines: string[] = [];
const logStream = new Writable({
  write(chunk, _encoding, done) {
    logLines.push(...chunk.toString().split('\n').filter(Boolean));
    done();
  },
});

let ctx: TestApp;
before(async () => {
  ctx = await startTestApp({
    logLevel: 'info',
    logStream,
    // A route that fails the way a bug would, to see what a client and the log get from a 500.
    extend: (app) =>
      app.get('/test/failure', { schema: { hide: true }, config: { access: PUBLIC } }, async () => {
        throw new Error('connection string postgres://secret@db failed');
      }),
  });
});
after(() => ctx.close());

describe('the error model', () => {
  test('an unknown route is a 404 NotFoundError', async () => {
    const error = expectError(await ctx.admin.get('/api/admin/no-such-thing'), 404, 'NotFoundError');
    assert.match(error.message, /GET \/api\/admin\/no-such-thing/);
  });

  test('malformed JSON is a 400 BadDataError', async () => {
    const response = await sendMalformedJson(ctx.admin, 'POST', '/api/admin/projects', '{"id": "broken",');
    const error = expectError(response, 400, 'BadDataError');
    assert.equal(error.details[0]!.path, '/body');
  });

  test('a body that is not JSON is a 415 ContentTypeError', async () => {
    for (const contentType of ['text/plain', 'application/xml', 'application/x-www-form-urlencoded']) {
      const response = await ctx.admin.inject({
        method: 'POST',
        url: '/api/admin/projects',
        headers: { 'content-type': contentType },
        payload: 'id=x&name=y',
      });
      expectError(response, 415, 'ContentTypeError');
    }
  });

  test('a missing body where one is required is a 400', async () => {
    const error = expectError(await ctx.admin.post('/api/admin/projects'), 400, 'BadDataError');
    assert.equal(error.details[0]!.path, '/body');
  });

  test('a JSON content type with an empty body is accepted where no body is needed', async () => {
    const id = uniqueName('empty-body');
    expectStatus(await ctx.admin.post('/api/admin/projects', { id, name: 'x' }), 201);
    const response = await ctx.admin.inject({
      method: 'DELETE',
      url: `/api/admin/projects/${id}`,
      headers: { 'content-type': 'application/json' },
      payload: '',
    });
    expectStatus(response, 200);
  });

  test('the NUL character is refused with a 400 and nothing is stored', async () => {
    const id = uniqueName('nul');
    const before = await lastEventId(ctx);
    const error = expectError(await ctx.admin.post('/api/admin/projects', { id, name: 'bad\u0000name' }), 400, 'BadDataError');
    assert.match(error.message, /NUL/);
    expectError(await ctx.admin.get(`/api/admin/projects/${id}`), 404, 'NotFoundError');
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('bodies nested deeper than 32 levels are a 400 that leaks nothing, with or without credentials', async () => {
    const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
    const login = await ctx.as().inject({
      method: 'POST',
      url: '/auth/simple/login',
      headers: { 'content-type': 'application/json' },
      payload: nested(10_000),
    });
    const error = expectError(login, 400, 'BadDataError');
    assert.match(error.message, /nested too deeply: at most 32 levels/);
    assert.doesNotMatch(login.body, /stack|Maximum call/);

    const project = uniqueName('nested');
    expectStatus(await ctx.admin.post('/api/admin/projects', { id: project, name: 'Nested' }), 201);
    const flag = uniqueName('deep');
    expectStatus(await ctx.admin.post(`/api/admin/projects/${project}/features`, { name: flag, description: 'kept' }), 201);
    const value = `${'{"v":'.repeat(5_000)}"leaf"${'}'.repeat(5_000)}`;
    const patch = await ctx.admin.inject({
      method: 'PATCH',
      url: `/api/admin/projects/${project}/features/${flag}`,
      headers: { 'content-type': 'application/json' },
      payload: `[{"op":"replace","path":"/description","value":${value}}]`,
    });
    expectError(patch, 400, 'BadDataError');
    const stored = await ctx.admin.get(`/api/admin/projects/${project}/features/${flag}`);
    assert.equal((stored.json() as { description: string }).description, 'kept');

    // Braces inside strings do not count, and a body at the limit is parsed as usual.
    const inString = await ctx.admin.post('/api/admin/projects', { id: uniqueName('brace'), name: '['.repeat(100) });
    expectStatus(inString, 201);
  });

  test('a rejected value is described by its first levels and items, never rendered whole', async () => {
    const wide = Array.from({ length: 5_000 }, (_, i) => ({ id: i, deep: [[[[i]]]] }));
    const response = await ctx.admin.post('/api/admin/projects', { id: uniqueName('wide'), name: wide });
    const error = expectError(response, 400, 'BadDataError');
    const detail = error.details.find((d) => d.path === '/body/name');
    assert.ok(detail, response.body);
    assert.match(detail.message, /\(got \[\{"id":0,"deep":\[\[\.\.\.\]\]\},/);
    assert.ok(response.body.length < 1_000, `the error body has ${response.body.length} characters`);
  });

  test('a body of many bad items is refused at its first problem, with or without an admin credential', async () => {
    // Listing every problem of 100,000 bad items took Ajv minutes of the server's one thread and wrote megabytes.
    const project = uniqueName('many');
    expectStatus(await ctx.admin.post('/api/admin/projects', { id: project, name: 'Many' }), 201);
    const changes = await ctx.admin.post(
      `/api/admin/projects/${project}/environments/development/change-requests`,
      Array.from({ length: 100_000 }, () => ({})),
    );
    const error = expectError(changes, 400, 'BadDataError');
    assert.deepEqual(
      error.details.map((detail) => detail.path),
      ['/body'],
    );
    assert.match(error.message, /must NOT have more than 100 items/);
    const pending = await ctx.admin.get(`/api/admin/projects/${project}/change-requests`);
    assert.deepEqual(pending.json(), []);

    // A frontend token ships inside web pages: anyone can send this.
    const frontendToken = await createSdkToken(ctx, 'frontend', 'development');
    const registration = await ctx.as(frontendToken).post('/api/frontend/client/register', {
      appName: 'web',
      instanceId: 'browser',
      started: new Date().toISOString(),
      interval: 10_000,
      strategies: Array.from({ length: 200_000 }, () => ({})),
    });
    const refused = expectError(registration, 400, 'BadDataError');
    assert.deepEqual(
      refused.details.map((detail) => detail.path),
      ['/body/strategies'],
    );
    assert.ok(registration.body.length < 1_000, `the error body has ${registration.body.length} characters`);
  });

  test('a rejected body lists its first 100 problems and says how many there are', async () => {
    const id = uniqueName('props');
    const unknown = Object.fromEntries(Array.from({ length: 150 }, (_, i) => [`extra${i}`, i]));
    const response = await ctx.admin.post('/api/admin/projects', { id, name: 'Props', ...unknown });
    const error = expectError(response, 400, 'BadDataError');
    assert.equal(error.message, 'Request validation failed: The request has 150 problems; the first 100 are in details');
    assert.deepEqual(
      error.details.map((detail) => detail.path),
      Array.from({ length: 100 }, (_, i) => `/body/extra${i}`),
    );
    expectStatus(await ctx.admin.get(`/api/admin/projects/${id}`), 404);
  });

  test('SQL-looking, emoji and very long input is stored as text, never run', async () => {
    const id = uniqueName('weird');
    const description = `'; DROP TABLE projects; -- 🚩 ${'x'.repeat(900)}`;
    const response = await ctx.admin.post('/api/admin/projects', { id, name: "Robert'); --", description });
    expectStatus(response, 201);
    const stored = (await ctx.admin.get(`/api/admin/projects/${id}`)).json() as { description: string; name: string };
    assert.equal(stored.description, description);
    assert.equal(stored.name, "Robert'); --");
    expectError(
      await ctx.admin.post('/api/admin/projects', { id: uniqueName('long'), name: 'x', description: 'y'.repeat(1001) }),
      400,
      'BadDataError',
    );
  });

  test('an unexpected failure is a 500 UnknownError that leaks nothing and is logged under the same id', async () => {
    const error = expectError(await ctx.as().get('/test/failure'), 500, 'UnknownError');
    assert.doesNotMatch(JSON.stringify(error), /postgres|secret|stack|Error:/);
    assert.match(error.message, new RegExp(error.id));
    const logged = logLines.map((line) => JSON.parse(line) as Record<string, unknown>).find((r) => r.errorId === error.id);
    assert.ok(logged, 'the failure must be logged with the error id');
    assert.match(JSON.stringify(logged.err), /connection string/);
  });
});

describe('logs', () => {
  test('never carry tokens, cookies or token secrets in paths', async () => {
    const created = await ctx.admin.post('/api/admin/api-tokens', { tokenName: uniqueName('t'), type: 'client' });
    expectStatus(created, 201);
    const { secret } = created.json() as { secret: string };
    expectStatus(await ctx.admin.delete(`/api/admin/api-tokens/${encodeURIComponent(secret)}`), 200);
    await ctx.as(`Bearer ${ADMIN_TOKEN}`).get('/api/admin/projects');
    await ctx.withCookie('vexil-session=cookie-secret-value').get('/api/admin/projects');
    const everything = logLines.join('\n');
    assert.ok(everything.includes('api-tokens/[redacted]'), 'the delete request is logged, masked');
    for (const secretText of [secret.split('.')[1]!, ADMIN_TOKEN.split('.')[1]!, 'cookie-secret-value']) {
      assert.ok(!everything.includes(secretText), `logs must not contain ${secretText.slice(0, 6)}…`);
    }
  });

  test('write one line per request with its status and time, and leave health probes out at info', async () => {
    const marker = uniqueName('one-line');
    const before = logLines.length;
    expectStatus(await ctx.as().get('/health'), 200);
    expectStatus(await ctx.as().get('/health/ready'), 200);
    const ready = await ctx.as().get('/ready');
    expectStatus(ready, 200);
    assert.deepEqual(ready.json(), { health: 'GOOD' });
    expectStatus(await ctx.admin.get(`/api/admin/projects/${marker}`), 404);
    const written = logLines.slice(before).map((line) => JSON.parse(line) as Record<string, any>);
    assert.deepEqual(
      written.filter((record) => record.msg === 'request completed').map((record) => [record.req.url, record.res.statusCode]),
      [[`/api/admin/projects/${marker}`, 404]],
    );
    assert.equal(written.filter((record) => JSON.stringify(record).includes(marker)).length, 1, 'one line for the request');
    const line = written.find((record) => record.msg === 'request completed')!;
    assert.equal(line.req.method, 'GET');
    assert.equal(typeof line.responseTime, 'number');
    assert.match(line.reqId, /^[0-9a-f-]{36}$/);
  });
});

describe('operations', () => {
  test('GET /health answers GOOD without authentication', async () => {
    const response = await ctx.as().get('/health');
    expectStatus(response, 200);
    assert.deepEqual(response.json(), { health: 'GOOD' });
  });

  test('the OpenAPI document lists the routes and Unleash component names', async () => {
    const response = await ctx.as().get('/docs/openapi.json');
    expectStatus(response, 200);
    const document = response.json() as {
      openapi: string;
      paths: Record<string, Record<string, unknown>>;
      components: { schemas: Record<string, unknown> };
    };
    assert.match(document.openapi, /^3\./);
    for (const [path, method] of [
      ['/api/admin/projects', 'post'],
      ['/api/admin/projects/{projectId}', 'put'],
      ['/api/admin/projects/{projectId}/environments/{environment}', 'delete'],
      ['/api/admin/environments/{name}', 'get'],
      ['/api/admin/api-tokens', 'post'],
      ['/api/admin/api-tokens/{token}', 'delete'],
      ['/api/admin/user-admin/{id}/change-password', 'post'],
      ['/api/admin/user/tokens', 'get'],
      ['/auth/simple/login', 'post'],
      ['/health', 'get'],
    ] as const) {
      assert.ok(document.paths[path]?.[method], `missing ${method.toUpperCase()} ${path}`);
    }
    for (const name of [
      'projectSchema',
      'createProjectSchema',
      'environmentSchema',
      'apiTokenSchema',
      'createApiTokenSchema',
      'userSchema',
      'createUserSchema',
      'patSchema',
      'errorSchema',
    ]) {
      assert.ok(document.components.schemas[name], `missing component ${name}`);
    }
    const createProject = document.paths['/api/admin/projects']!.post as { responses: Record<string, unknown> };
    assert.ok(createProject.responses['400'] && createProject.responses['403'], 'error responses are documented');
  });

  test("the browsable documentation is served at /docs under Vexil's title", async () => {
    const response = await ctx.as().inject({ method: 'GET', url: '/docs/' });
    expectStatus(response, 200);
    assert.match(response.headers['content-type'] as string, /text\/html/);
    assert.match(response.body, /<title>Vexil API<\/title>/);
  });

  test('the OpenAPI document is valid OpenAPI 3.1, and every operation is named, summarised and answered', async () => {
    const document = (await ctx.as().get('/docs/openapi.json')).json() as {
      openapi: string;
      paths: Record<string, Record<string, { operationId?: string; summary?: string; responses: Record<string, { content?: unknown }> }>>;
    };
    assert.equal(document.openapi, '3.1.0');
    await SwaggerParser.validate(structuredClone(document) as never);
    const ids = new Map<string, string>();
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const where = `${method.toUpperCase()} ${path}`;
        assert.match(operation.operationId ?? '', /^[a-z][A-Za-z]+$/, `${where} has an operationId`);
        assert.ok(!ids.has(operation.operationId!), `${where} and ${ids.get(operation.operationId!)} share ${operation.operationId}`);
        ids.set(operation.operationId!, where);
        assert.ok((operation.summary ?? '').length > 5, `${where} has a summary`);
        assert.ok(
          // The sign-in's browser steps succeed by redirecting.
          Object.keys(operation.responses).some((status) => /^(2\d\d|302)$/.test(status)),
          `${where} documents its success`,
        );
        assert.ok(!JSON.stringify(operation).includes('errorMessage'), `${where} carries no Ajv keywords`);
      }
    }
    // Unleash's names, so clients generated from either document call things alike.
    const named = (method: string, path: string) => document.paths[path]![method]!.operationId;
    assert.equal(named('get', '/api/client/features'), 'getAllClientFeatures');
    assert.equal(
      named('post', '/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/on'),
      'toggleFeatureEnvironmentOn',
    );
    assert.equal(named('get', '/api/admin/search/features'), 'searchFeatures');
    assert.equal(named('post', '/api/admin/strategies/{name}/deprecate'), 'deprecateStrategy');
    // Bodiless answers say their real status; errors are only those the route can answer.
    const toggleOn = document.paths['/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/on']!.post!;
    assert.deepEqual(Object.keys(toggleOn.responses).sort(), ['200', '400', '401', '403', '404', '409']);
    assert.equal(toggleOn.responses['200']!.content, undefined);
    assert.ok(document.paths['/auth/oidc/callback']!.get!.responses['302'], 'the sign-in callback answers with a redirect');
    const health = document.paths['/health']!.get!;
    assert.deepEqual(Object.keys(health.responses), ['200']);
    const archive = document.paths['/api/admin/projects/{projectId}/features/{featureName}']!.delete!;
    assert.ok(archive.responses['202'] && !archive.responses['200'], 'archiving answers 202');
    assert.ok(document.paths['/api/admin/search/features']!.get!.responses['503'], 'a bounded search may answer 503');
    // A body may name an environment or project that does not exist; sign-in is a 404 where OIDC is not set.
    for (const [method, path] of [
      ['post', '/api/admin/projects'],
      ['post', '/api/admin/segments'],
      ['post', '/api/admin/api-tokens'],
      ['post', '/api/admin/playground'],
      ['post', '/api/admin/features-batch/import'],
      ['get', '/auth/oidc/login'],
      ['get', '/auth/oidc/callback'],
    ] as const) {
      assert.ok(document.paths[path]![method]!.responses['404'], `${method.toUpperCase()} ${path} documents its 404`);
    }
    // OFREP's routes answer errors in OFREP's own shape.
    const ofrep = document.paths['/ofrep/v1/evaluate/flags/{key}']!.post!;
    assert.deepEqual(Object.keys(ofrep.responses).sort(), ['200', '400', '401', '403', '404', '415', '429', '500']);
    for (const status of ['400', '401', '404', '500']) {
      assert.match(JSON.stringify(ofrep.responses[status]), /ofrepError/, `OFREP's ${status} is its own error shape`);
    }
  });
});
