import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { test } from 'node:test';
import { expectStatus } from '../helpers/assertions.js';
import { eventually } from '../helpers/eventually.js';
import { uniqueName } from '../helpers/fixtures.js';
import { createFlag, createProject, featurePath } from '../helpers/projects.js';
import { scrapedValue } from '../helpers/prometheus.js';
import { createSdkToken } from '../helpers/sdk-fixtures.js';
import { useTestApp } from '../helpers/test-app.js';

/**
 * A streaming client that stops reading must not make the server keep every change for it: once more than a
 * megabyte waits unsent, its stream is ended (an SDK reconnects and is hydrated again), and streams that read
 * carry on.
 */
let port: number;
const ctx = useTestApp({}, async (app) => {
  const url = new URL(await app.app.listen({ port: 0, host: '127.0.0.1' }));
  port = Number(url.port);
});

const streamingConnections = () => scrapedValue(ctx.app, 'vexil_client_streaming_connections');

/** A raw stream whose reading can stop, as a stalled or hostile client's would. */
function openRawStream(token: string): Promise<{ socket: Socket; received: () => number }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(`GET /api/client/streaming HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${token}\r\nAccept: text/event-stream\r\n\r\n`);
    });
    let received = 0;
    socket.on('error', () => undefined);
    socket.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (chunk.toString().includes('unleash-connected')) resolve({ socket, received: () => received });
    });
    socket.on('close', () => reject(new Error('closed before it was connected')));
  });
}

test('a stream whose client stops reading is ended once a megabyte waits for it; a reading stream carries on', async () => {
  const project = await createProject(ctx, { environments: ['development'] });
  // A large flag (1,500 values of 120 characters) so each change sends about 200 kB.
  const values = Array.from({ length: 1500 }, (_, i) => `${'v'.repeat(110)}-${i}`);
  const flag = await createFlag(ctx, project, {
    name: uniqueName('large'),
    strategies: [{ name: 'default', constraints: [{ contextName: 'userId', operator: 'IN', values }] }],
  });
  const token = await createSdkToken(ctx, 'client', 'development', [project]);
  const before = await streamingConnections();
  const stalled = await openRawStream(token);
  stalled.socket.pause();
  const reading = await openRawStream(token);
  assert.equal(await streamingConnections(), before + 2);

  // Kernel buffers take a few megabytes before the server's own backlog grows: change the flag until it is cut.
  const toggle = featurePath(project, flag);
  for (let change = 0; change < 120 && (await streamingConnections()) === before + 2; change++) {
    expectStatus(await ctx.admin.post(`${toggle}/environments/development/${change % 2 === 0 ? 'off' : 'on'}`), 200);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await eventually(async () => (await streamingConnections()) === before + 1, 5000);
  assert.equal(reading.socket.destroyed, false, 'the stream that reads is still open');
  const readSoFar = reading.received();
  expectStatus(await ctx.admin.post(`${toggle}/environments/development/on`), 200);
  expectStatus(await ctx.admin.post(`${toggle}/environments/development/off`), 200);
  await eventually(() => reading.received() > readSoFar, 5000);
  reading.socket.destroy();
  stalled.socket.destroy();
});
