import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';
import { startServer, stopServer, type RunningServer } from '../helpers/server-process.js';
import { createTestDatabase, usingPostgres } from '../helpers/test-database.js';

/**
 * The backup and restore procedures of docs/operations.md, followed to the letter against real server processes: a
 * copy of a stopped embedded data directory, and pg_dump / pg_restore of a PostgreSQL database.
 */
const run = promisify(execFile);
const TOKEN = '*:*.backup-test-token-0123456789';
const hasPgTools = ['pg_dump', 'pg_restore'].every((tool) => spawnSync(tool, ['--version']).status === 0);

async function api(server: RunningServer, method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const response = await fetch(`${server.baseUrl}${path}`, {
    method,
    headers: { authorization: TOKEN, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, json: text ? JSON.parse(text) : null };
}

/** A project with a flag turned on, to find again after the restore. */
async function writeSomething(server: RunningServer): Promise<void> {
  assert.equal((await api(server, 'POST', '/api/admin/projects', { id: 'backed-up', name: 'Backed up' })).status, 201);
  assert.equal((await api(server, 'POST', '/api/admin/projects/backed-up/features', { name: 'kept-flag' })).status, 201);
  assert.equal((await api(server, 'POST', '/api/admin/projects/backed-up/features/kept-flag/environments/development/on')).status, 200);
}

async function assertRestored(server: RunningServer): Promise<void> {
  const flag = await api(server, 'GET', '/api/admin/projects/backed-up/features/kept-flag');
  assert.equal(flag.status, 200);
  assert.deepEqual(
    flag.json.environments.map((environment: { name: string; enabled: boolean }) => [environment.name, environment.enabled]),
    [
      ['development', true],
      ['production', false],
    ],
  );
  const events = await api(server, 'GET', '/api/admin/search/events?project=IS:backed-up');
  assert.deepEqual(events.json.events.map((event: { type: string }) => event.type).reverse(), [
    'project-created',
    'feature-created',
    'feature-strategy-add',
    'feature-environment-enabled',
  ]);
}

describe('backup and restore', () => {
  test('embedded database: a copy of the stopped data directory starts as the same installation', async () => {
    const workDir = await mkdtemp(join(tmpdir(), 'vexil-backup-'));
    const dataDir = join(workDir, 'data');
    const backupDir = join(workDir, 'backup');
    try {
      const original = await startServer({ DATA_DIR: dataDir, INIT_ADMIN_API_TOKENS: TOKEN });
      await writeSomething(original);
      assert.equal(await stopServer(original), 0);
      await cp(dataDir, backupDir, { recursive: true });
      // The original is lost; the copy is started in its place elsewhere.
      await rm(dataDir, { recursive: true, force: true });
      const restored = await startServer({ DATA_DIR: backupDir, INIT_ADMIN_API_TOKENS: TOKEN });
      try {
        assert.doesNotMatch(restored.output(), /Creating a new embedded database/);
        await assertRestored(restored);
      } finally {
        assert.equal(await stopServer(restored), 0);
      }
    } finally {
      await rm(workDir, { recursive: true, force: true });
    }
  });

  test('PostgreSQL: pg_dump of a running installation, pg_restore into an empty database', {
    skip: !usingPostgres() || !hasPgTools,
  }, async () => {
    const source = await createTestDatabase();
    const target = await createTestDatabase();
    const workDir = await mkdtemp(join(tmpdir(), 'vexil-pgdump-'));
    const dump = join(workDir, 'vexil.dump');
    const sourceUrl = (source.config as { url: string }).url;
    const targetUrl = (target.config as { url: string }).url;
    try {
      const original = await startServer({ DATABASE_URL: sourceUrl, INIT_ADMIN_API_TOKENS: TOKEN });
      try {
        await writeSomething(original);
        // Taken while the server runs: pg_dump reads one consistent snapshot.
        await run('pg_dump', ['--format=custom', '--no-owner', `--file=${dump}`, sourceUrl]);
      } finally {
        assert.equal(await stopServer(original), 0);
      }
      await run('pg_restore', ['--no-owner', '--exit-on-error', `--dbname=${targetUrl}`, dump]);
      const restored = await startServer({ DATABASE_URL: targetUrl, INIT_ADMIN_API_TOKENS: TOKEN });
      try {
        await assertRestored(restored);
        // The restored sequences continue after the restored rows.
        assert.equal((await api(restored, 'POST', '/api/admin/projects/backed-up/features', { name: 'after-restore' })).status, 201);
      } finally {
        assert.equal(await stopServer(restored), 0);
      }
    } finally {
      await rm(workDir, { recursive: true, force: true });
      await source.drop();
      await target.drop();
    }
  });
});
