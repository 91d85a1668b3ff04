import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { adminApi } from '../../src/cli/http-api.js';

// The CLI's client of an admin API against a plain HTTP server on this machine that answers 429 with Retry-After (what
// Unleash 8's rate limits send) a given number of times, then 200. It is no imitation of Unleash: it answers any path.
describe('the admin API client of the CLI', () => {
  let baseUrl: string;
  let refusalsLeft = 0;
  const server = createServer((request, response) => {
    if (refusalsLeft > 0) {
      refusalsLeft -= 1;
      response.writeHead(429, { 'retry-after': '1', 'content-type': 'application/json' }).end('{"message":"Too many requests"}');
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ answered: request.url }));
  });
  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test('a 429 is waited for as Retry-After says, and the request then answers; each wait is told', async () => {
    refusalsLeft = 2;
    const notices: string[] = [];
    const api = adminApi('The server', baseUrl, 'token', { notice: (line) => notices.push(line) });
    const started = performance.now();
    assert.deepEqual(await api.get('/api/admin/search/features'), { answered: '/api/admin/search/features' });
    assert.ok(performance.now() - started >= 1_900, 'it waited a second each time');
    assert.deepEqual(notices, [
      'The server is rate-limiting GET /api/admin/search/features (429); waiting 1 s (try 1 of 8)',
      'The server is rate-limiting GET /api/admin/search/features (429); waiting 1 s (try 2 of 8)',
    ]);
  });
});
