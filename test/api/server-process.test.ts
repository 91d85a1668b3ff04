import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createServer, connect, type AddressInfo, type Server } from 'node:net';
import { join } from 'node:path';
import { setTimeout } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { freePort } from '../helpers/free-port.js';
import { createTestDatabase, usingPostgres } from '../helpers/test-database.js';
import { logIn, MAIN, runAdminCommand, startServer, stopServer, waitForOutput } from '../helpers/server-process.js';

/**
 * The server as `npm start` runs it (src/main.ts), on its own embedded database in a temporary directory:
 * first start, restart, shutdown and configuration errors.
 */
let dataDir: string;
before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'vexil-server-'));
});
after(() => rm(dataDir, { recursive: true, force: true }));

/** A server started on `env` that is expected to stop at once: its exit code and what it wrote to stderr. */
async function refusedStart(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
    env: { PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  return { code, stderr };
}

describe('the server process', () => {
  test('first start creates an admin user, prints the password once, and the data survives a restart', async () => {
    const first = await startServer({ DATA_DIR: dataDir });
    const password = (await waitForOutput(first, /as "admin" with the password (\S+)\nIt is shown only this once/))[1]!;
    assert.match(first.output(), new RegExp(`Creating a new embedded database in ${dataDir}`), 'a new data directory is announced');
    assert.equal(first.output().split(password).length - 1, 1, 'the password appears exactly once');
    assert.match(first.output(), /BASE_URL is not https: session and sign-in cookies are sent without the Secure flag/);

    const health = await fetch(`${first.baseUrl}/health`);
    assert.equal(health.status, 200);
    const login = await fetch(`${first.baseUrl}/auth/simple/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password }),
    });
    assert.equal(login.status, 200);
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    const created = await fetch(`${first.baseUrl}/api/admin/projects`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie },
      body: JSON.stringify({ id: 'kept', name: 'Kept' }),
    });
    assert.equal(created.status, 201);
    assert.equal(await stopServer(first), 0, 'SIGTERM shuts down cleanly');
    assert.match(first.output(), /Shutting down/);

    const second = await startServer({ DATA_DIR: dataDir });
    try {
      assert.doesNotMatch(second.output(), /Creating a new embedded database/);
      assert.match(second.output(), new RegExp(`Using the embedded database in ${dataDir}`));
      const again = await fetch(`${second.baseUrl}/auth/simple/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'admin', password }),
      });
      assert.equal(again.status, 200);
      const project = await fetch(`${second.baseUrl}/api/admin/projects/kept`, {
        headers: { cookie: again.headers.get('set-cookie')!.split(';')[0]! },
      });
      assert.equal(project.status, 200);
      assert.equal(((await project.json()) as { name: string }).name, 'Kept');
    } finally {
      await stopServer(second);
    }
    // Read once the process has exited, so nothing it printed after listening is still on its way.
    assert.doesNotMatch(second.output(), /password/, 'no password on later starts');
  });

  test('a second server on a data directory in use exits naming the first; a crashed owner does not block a restart', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'vexil-server-lock-'));
    const token = '*:*.process-lock-token-0123456789';
    try {
      const first = await startServer({ DATA_DIR: dir, INIT_ADMIN_API_TOKENS: token });
      const created = await fetch(`${first.baseUrl}/api/admin/projects`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: token },
        body: JSON.stringify({ id: 'first-owner', name: 'First' }),
      });
      assert.equal(created.status, 201);

      assert.deepEqual(await refusedStart({ DATA_DIR: dir, INIT_ADMIN_API_TOKENS: token }), {
        code: 1,
        stderr: `Vexil cannot start: the data directory ${dir} is in use by another Vexil (pid ${first.process.pid}); stop it or set another DATA_DIR\n`,
      });

      // The first server still serves its data.
      const kept = await fetch(`${first.baseUrl}/api/admin/projects/first-owner`, { headers: { authorization: token } });
      assert.equal(kept.status, 200);

      // kill -9 leaves the lock file behind; the next start takes it over.
      first.process.kill('SIGKILL');
      await first.exited;
      const restarted = await startServer({ DATA_DIR: dir, INIT_ADMIN_API_TOKENS: token });
      try {
        const again = await fetch(`${restarted.baseUrl}/api/admin/projects/first-owner`, { headers: { authorization: token } });
        assert.equal(again.status, 200);
      } finally {
        assert.equal(await stopServer(restarted), 0);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('a lock of another host (a container replaced after a crash) is taken over once its owner stops touching it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'vexil-server-lock-host-'));
    const lock = join(dir, 'vexil.lock');
    const token = '*:*.process-lock-token-0123456789';
    try {
      // An owner on another host that still touches its lock: refused, naming it.
      await writeFile(lock, JSON.stringify({ pid: 1, host: 'container-before' }));
      const touching = setInterval(() => void utimes(lock, new Date(), new Date()).catch(() => undefined), 500);
      const refused = await refusedStart({ DATA_DIR: dir, INIT_ADMIN_API_TOKENS: token }).finally(() => clearInterval(touching));
      assert.deepEqual(refused, {
        code: 1,
        stderr: `Vexil cannot start: the data directory ${dir} is in use by a Vexil on host container-before (pid 1); stop it or set another DATA_DIR\n`,
      });

      // The same lock left long ago by a process that is gone: taken over at once.
      const longAgo = new Date(Date.now() - 10 * 60_000);
      await utimes(lock, longAgo, longAgo);
      const server = await startServer({ DATA_DIR: dir, INIT_ADMIN_API_TOKENS: token });
      try {
        assert.equal((await fetch(`${server.baseUrl}/health`)).status, 200);
        assert.equal(JSON.parse(await readFile(lock, 'utf8')).pid, server.process.pid, 'the lock names the new owner');
      } finally {
        assert.equal(await stopServer(server), 0);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('with INIT_ADMIN_API_TOKENS creates that token and no admin user', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'vexil-server-token-'));
    const token = '*:*.process-test-token-0123456789';
    try {
      const server = await startServer({ DATA_DIR: dir, INIT_ADMIN_API_TOKENS: token });
      try {
        const users = await fetch(`${server.baseUrl}/api/admin/user-admin`, { headers: { authorization: token } });
        assert.equal(users.status, 200);
        assert.deepEqual(((await users.json()) as { users: unknown[] }).users, []);
      } finally {
        await stopServer(server);
      }
      assert.doesNotMatch(server.output(), /first admin user/);
      assert.ok(!server.output().includes(token.slice(4)), 'the token is never logged');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('an invalid variable stops start-up with one line naming it', async () => {
    assert.deepEqual(await refusedStart({ PORT: 'eighty', DATA_DIR: dataDir }), {
      code: 1,
      stderr: 'Vexil cannot start: PORT must be a whole number from 0 to 65535 (got "eighty")\n',
    });
  });

  test('started before its PostgreSQL answers, waits with backoff and serves once it does', { skip: !usingPostgres() }, async () => {
    const database = await createTestDatabase();
    const target = new URL((database.config as { url: string }).url);
    // A port where nothing answers yet; later a proxy to the real server opens on it, as a database coming up would.
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port: free } = probe.address() as AddressInfo;
        probe.close(() => resolve(free));
      });
    });
    const url = new URL(target);
    url.hostname = '127.0.0.1';
    url.port = String(port);
    let proxy: Server | undefined;
    try {
      let retried: () => void = () => undefined;
      let startingOutput = '';
      const twoRetries = new Promise<void>((resolve) => (retried = resolve));
      const httpPort = await freePort();
      const adminToken = '*:*.waiting-token-0123456789';
      const starting = startServer(
        { PORT: String(httpPort), DATABASE_URL: url.toString(), DATABASE_WAIT_SECONDS: '30', INIT_ADMIN_API_TOKENS: adminToken },
        (output) => {
          startingOutput = output;
          if (output.split('PostgreSQL does not answer yet').length > 2) retried();
        },
      );
      await Promise.race([twoRetries, starting]);
      // A script as Unleash's users write them: wait for /health to be GOOD, then make its first calls at once.
      const script = (async () => {
        while ((await fetch(`http://127.0.0.1:${httpPort}/health`).catch(() => undefined))?.status !== 200) await setTimeout(50);
        return fetch(`http://127.0.0.1:${httpPort}/api/admin/projects/default/features`, {
          method: 'POST',
          headers: { authorization: adminToken, 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'created-right-after-health' }),
        });
      })();
      // While it waits, the port answers: alive on the liveness path (so an orchestrator does not kill it), and not
      // healthy on Unleash's /health, so a script that waits for /health before its first call does not race the start.
      const waiting = /"url":"(http:\/\/127\.0\.0\.1:\d+)","msg":"Starting: \/health\/live answers/.exec(startingOutput)?.[1];
      assert.ok(waiting, startingOutput);
      const live = await fetch(`${waiting}/health/live`);
      assert.deepEqual([live.status, await live.json()], [200, { health: 'STARTING' }]);
      for (const path of ['/health', '/ready', '/api/admin/projects']) {
        const notYet = await fetch(`${waiting}${path}`);
        assert.equal(notYet.status, 503, path);
        assert.equal(notYet.headers.get('retry-after'), '5');
        assert.equal(((await notYet.json()) as { name: string }).name, 'ServiceUnavailableError');
      }
      proxy = createServer((socket) => {
        const upstream = connect(Number(target.port || 5432), target.hostname);
        socket.pipe(upstream).pipe(socket);
        socket.on('error', () => upstream.destroy());
        upstream.on('error', () => socket.destroy());
      });
      await new Promise<void>((resolve) => proxy!.listen(port, '127.0.0.1', resolve));
      const server = await starting;
      try {
        const retries = server
          .output()
          .split('\n')
          .filter((line) => line.includes('PostgreSQL does not answer yet'))
          .map((line) => JSON.parse(line) as { level: number; attempt: number; reason: string; retryInMs: number });
        assert.ok(retries.length >= 2, `it retried: ${server.output()}`);
        assert.deepEqual(
          retries.slice(0, 3).map((line) => [line.attempt, line.level, line.reason]),
          [[1, 40, 'ECONNREFUSED'], [2, 40, 'ECONNREFUSED'], ...(retries.length > 2 ? [[3, 40, 'ECONNREFUSED']] : [])],
        );
        assert.deepEqual(
          retries.slice(0, 2).map((line) => line.retryInMs),
          [250, 500],
          'the delay doubles',
        );
        assert.match(server.output(), /PostgreSQL answers/);
        const firstCall = await script;
        assert.equal(firstCall.status, 201, await firstCall.text());
        for (const path of ['/health', '/health/live', '/health/ready']) {
          const serving = await fetch(`${server.baseUrl}${path}`);
          assert.deepEqual([path, serving.status, await serving.json()], [path, 200, { health: 'GOOD' }]);
        }
      } finally {
        assert.equal(await stopServer(server), 0);
      }
    } finally {
      await new Promise<void>((resolve) => (proxy ? proxy.close(() => resolve()) : resolve()));
      await database.drop();
    }
  });

  test('a locked-out admin gets in again with `npm run admin -- reset-password`', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'vexil-server-reset-'));
    try {
      const first = await startServer({ DATA_DIR: dir });
      const oldPassword = (await waitForOutput(first, /with the password (\S+)/))[1]!;

      // The embedded database belongs to the running server: the command says so and changes nothing.
      const refused = await runAdminCommand(['reset-password', 'admin'], { DATA_DIR: dir });
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /^vexil admin: the data directory .* is in use by another Vexil \(pid \d+\)/);
      assert.equal(await stopServer(first), 0);

      const unknown = await runAdminCommand(['reset-password', 'nobody'], { DATA_DIR: dir });
      assert.deepEqual([unknown.code, unknown.stderr], [1, 'vexil admin: No user has the username or email "nobody"\n']);
      const usage = await runAdminCommand(['reset-pasword', 'admin'], { DATA_DIR: dir });
      assert.equal(usage.code, 2);
      assert.match(usage.stderr, /^Unknown command or arguments: reset-pasword admin\n\nUsage: npm run admin/);

      const reset = await runAdminCommand(['reset-password', 'ADMIN'], { DATA_DIR: dir });
      assert.equal(reset.code, 0, reset.stderr);
      const newPassword = reset.stdout.match(/^The password of "admin" is now (\S+)\n/)![1]!;
      assert.notEqual(newPassword, oldPassword);

      const token = '*:*.reset-check-token-0123456789';
      const second = await startServer({ DATA_DIR: dir, INIT_ADMIN_API_TOKENS: token });
      try {
        assert.equal(await logIn(second.baseUrl, 'admin', oldPassword), 401, 'the old password no longer works');
        assert.equal(await logIn(second.baseUrl, 'admin', newPassword), 200, 'the new one does');
        const events = await fetch(`${second.baseUrl}/api/admin/search/events?type=IS:user-password-changed`, {
          headers: { authorization: token },
        });
        const [event] = ((await events.json()) as { events: Array<{ createdBy: string; data: { username: string } }> }).events;
        assert.deepEqual([event!.createdBy, event!.data.username], ['system', 'admin']);
        assert.ok(!JSON.stringify(event).includes(newPassword));
      } finally {
        assert.equal(await stopServer(second), 0);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
