import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, brotliDecompressSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { apiTypes, API_TYPES_FILE } from '../../scripts/api-types.js';
import { expectError, expectStatus } from '../helpers/assertions.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

// A stand-in for dist/web with the shape Vite builds: index.html and hashed assets.
const INDEX = '<!doctype html><title>Vexil</title><div id="root"></div>';
let webUiDir: string;
let ctx: TestApp;

before(async () => {
  webUiDir = await mkdtemp(join(tmpdir(), 'vexil-web-'));
  await mkdir(join(webUiDir, 'assets'));
  await writeFile(join(webUiDir, 'index.html'), INDEX);
  await writeFile(join(webUiDir, 'assets', 'index-abc123.js'), 'console.log("app")');
  await writeFile(join(webUiDir, 'assets', 'index-abc123.js.br'), brotliCompressSync('console.log("app")'));
  await writeFile(join(webUiDir, 'favicon.svg'), '<svg/>');
  ctx = await startTestApp({ webUiDir });
});

after(async () => {
  await ctx.close();
  await rm(webUiDir, { recursive: true, force: true });
});

const asBrowser = (url: string) => ctx.as().inject({ method: 'GET', url, headers: { accept: 'text/html,application/xhtml+xml' } });

describe('the web UI is served beside the API', () => {
  test('/ and every page of the app answer index.html, never cached, with a content security policy', async () => {
    // `/index.html` is also a file of the build: it carries the same policy, so no HTML answer can be framed.
    for (const url of ['/', '/index.html', '/flags?project=IS:default', '/projects/default/flags/a-flag', '/admin/users']) {
      const response = await asBrowser(url);
      expectStatus(response, 200);
      assert.equal(response.body, INDEX, url);
      assert.match(String(response.headers['content-type']), /^text\/html/);
      assert.equal(response.headers['cache-control'], 'no-cache');
      assert.match(String(response.headers['content-security-policy']), /default-src 'self'; script-src 'self'.*frame-ancestors 'none'/);
    }
  });

  test('hashed assets are cached for a year; a missing asset is a 404, not the app', async () => {
    const asset = await ctx.as().get('/assets/index-abc123.js');
    expectStatus(asset, 200);
    assert.equal(asset.body, 'console.log("app")');
    assert.equal(asset.headers['cache-control'], 'public, max-age=31536000, immutable');
    expectError(await asBrowser('/assets/index-missing.js'), 404, 'NotFoundError');

    // The build's brotli copy goes to browsers that take it.
    const compressed = await ctx.as().inject({ method: 'GET', url: '/assets/index-abc123.js', headers: { 'accept-encoding': 'br, gzip' } });
    expectStatus(compressed, 200);
    assert.equal(compressed.headers['content-encoding'], 'br');
    assert.equal(brotliDecompressSync(compressed.rawPayload).toString(), 'console.log("app")');
    expectStatus(await ctx.as().get('/favicon.svg'), 200);
  });

  test('API paths keep their JSON errors, whatever the client accepts', async () => {
    for (const url of ['/api/admin/nothing-here', '/api/client/nothing', '/auth/nothing', '/internal-backstage/nothing']) {
      const error = expectError(await asBrowser(url), 404, 'NotFoundError');
      assert.equal(error.message, `Could not find GET ${url}`);
    }
    // Only reads by a browser get the app; anything else is the API's 404.
    expectError(await ctx.as().post('/flags', {}), 404, 'NotFoundError');
    expectError(await ctx.as().get('/flags'), 404, 'NotFoundError');
    expectError(await asBrowser('/api/admin/projects'), 401, 'AuthenticationRequired');
  });

  test('without a build, / says how to build the UI and the API still works', async () => {
    const bare = await startTestApp({ webUiDir: join(webUiDir, 'not-built') });
    try {
      const response = await bare.as().get('/');
      expectStatus(response, 503);
      assert.match(response.body, /npm run build/);
      expectStatus(await bare.admin.get('/api/admin/projects'), 200);
    } finally {
      await bare.close();
    }
  });
});

describe("the UI's API client is typed from the served OpenAPI document", () => {
  test('web/src/api/schema.d.ts is what `npm run api-types` makes of it now', async () => {
    const document = (await ctx.as().get('/docs/openapi.json')).json() as object;
    const expected = await apiTypes(document);
    const committed = await readFile(API_TYPES_FILE, 'utf8');
    assert.ok(committed === expected, 'web/src/api/schema.d.ts is out of date: run `npm run api-types`');
  });
});
