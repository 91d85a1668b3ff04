import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout } from 'node:timers/promises';
import { openDatabase } from '../../src/db/database.js';
import { inUnitOfWork } from '../../src/db/unit-of-work.js';
import { SYSTEM_ACTOR } from '../../src/domain/access/actor.js';
import { setFeatureEnvironmentEnabled } from '../../src/domain/features/feature-environments.js';
import { systemClock } from '../../src/shared/clock.js';
import { type PostgresCluster, type Pooler, poolerUnavailable, startPgBouncer, startPostgresCluster } from '../helpers/postgres-cluster.js';
import { eventually } from '../helpers/eventually.js';
import { type RunningServer, startServer, stopServer } from '../helpers/server-process.js';

// Vexil behind PgBouncer in transaction mode, where consecutive statements outside a transaction may reach different
// server connections: start-up (migrations under their lock) must never hang, however often it is repeated; and
// LISTEN hears nothing, so what one instance changes reaches the other's SDKs by polling the event log, or by a
// direct connection for LISTEN (DATABASE_LISTEN_URL).

const unavailable = poolerUnavailable();
const ADMIN_TOKEN = '*:*.pooler-admin-token-0123456789abcdef';

async function call(server: RunningServer, method: string, path: string, body?: unknown, token = ADMIN_TOKEN): Promise<Response> {
  return fetch(`${server.baseUrl}${path}`, {
    method,
    headers: { authorization: token, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function expectOk(response: Promise<Response>, status = 200): Promise<Response> {
  const answered = await response;
  assert.equal(answered.status, status, await answered.clone().text());
  return answered;
}

/** Whether the instance's client API shows the flag on, to an SDK holding `token`. */
async function servedOn(server: RunningServer, token: string, flag: string): Promise<boolean> {
  const response = await expectOk(call(server, 'GET', '/api/client/features', undefined, token));
  const { features } = (await response.json()) as { features: Array<{ name: string; enabled: boolean }> };
  return features.find((feature) => feature.name === flag)?.enabled === true;
}

/**
 * A flag turned on through `writer` and then a token deleted through it: how long each takes to reach `reader`'s
 * client API.
 */
async function propagation(writer: RunningServer, reader: RunningServer, flag: string): Promise<{ change: number; revocation: number }> {
  const created = await expectOk(
    call(writer, 'POST', '/api/admin/api-tokens', {
      tokenName: `sdk-${flag}`,
      type: 'client',
      environment: 'development',
      projects: ['*'],
    }),
    201,
  );
  const { secret } = (await created.json()) as { secret: string };
  await expectOk(call(writer, 'POST', '/api/admin/projects/default/features', { name: flag }), 201);
  // The reader knows the token and holds the flag off before the change.
  await eventually(async () => (await call(reader, 'GET', '/api/client/features', undefined, secret)).status === 200, 5_000);
  assert.equal(await servedOn(reader, secret, flag), false);

  await expectOk(call(writer, 'POST', `/api/admin/projects/default/features/${flag}/environments/development/on`));
  const change = await eventually(() => servedOn(reader, secret, flag), 5_000);
  await expectOk(call(writer, 'DELETE', `/api/admin/api-tokens/${encodeURIComponent(secret)}`));
  const revocation = await eventually(
    async () => (await call(reader, 'GET', '/api/client/features', undefined, secret)).status === 401,
    5_000,
  );
  return { change, revocation };
}

describe('behind PgBouncer in transaction mode', { skip: unavailable, timeout: 240_000 }, () => {
  let cluster: PostgresCluster;
  let pooler: Pooler;

  before(
    async () => {
      cluster = await startPostgresCluster();
      pooler = await startPgBouncer(cluster, 3);
    },
    { timeout: 60_000 },
  );
  after(() => {
    pooler?.close();
    cluster?.destroy();
  });

  test('ten start-ups in a row, two at a time, each migrating under the lock and serving, none hanging', async () => {
    for (let round = 0; round < 5; round++) {
      const servers = await Promise.all(
        [0, 1].map(() => startServer({ DATABASE_URL: pooler.url, DATABASE_POOL_SIZE: '2', INIT_ADMIN_API_TOKENS: ADMIN_TOKEN })),
      );
      try {
        for (const server of servers) {
          const created = await fetch(`${server.baseUrl}/api/admin/projects`, {
            method: 'POST',
            headers: { authorization: ADMIN_TOKEN, 'content-type': 'application/json' },
            body: JSON.stringify({ id: `pooled-${round}-${server.process.pid}`, name: 'Through the pooler' }),
          });
          assert.equal(created.status, 201, await created.text());
        }
      } finally {
        for (const server of servers) assert.equal(await stopServer(server), 0);
      }
    }
  });

  test('a change and a deleted token reach the other instance within 2 s by polling, where LISTEN hears nothing', async (t) => {
    const env = { DATABASE_URL: pooler.url, DATABASE_POOL_SIZE: '2', INIT_ADMIN_API_TOKENS: ADMIN_TOKEN };
    const [writer, reader] = await Promise.all([startServer(env), startServer(env)]);
    try {
      const { change, revocation } = await propagation(writer, reader, 'polled');
      t.diagnostic(`by polling: the change in ${Math.round(change)} ms, the revocation in ${Math.round(revocation)} ms`);
      assert.ok(change <= 2_000, `the change took ${change} ms`);
      assert.ok(revocation <= 2_000, `the revocation took ${revocation} ms`);
      assert.match(reader.output(), /LISTEN hears no notifications through DATABASE_URL \(a pooler in transaction mode\?\)/);

      // A change whose event id is older than one already read, since its transaction committed later, still comes.
      const { secret } = (await (
        await expectOk(
          call(writer, 'POST', '/api/admin/api-tokens', {
            tokenName: 'sdk-late',
            type: 'client',
            environment: 'development',
            projects: ['*'],
          }),
          201,
        )
      ).json()) as { secret: string };
      await expectOk(call(writer, 'POST', '/api/admin/projects/default/features', { name: 'late' }), 201);
      await expectOk(call(writer, 'POST', '/api/admin/projects/default/features', { name: 'early' }), 201);
      await eventually(async () => (await call(reader, 'GET', '/api/client/features', undefined, secret)).status === 200, 5_000);
      const other = await openDatabase({ kind: 'postgres', url: pooler.url, poolSize: 1, waitMs: 0, changePollMs: 1_000 });
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      let recorded!: () => void;
      const wasRecorded = new Promise<void>((resolve) => (recorded = resolve));
      const slow = inUnitOfWork({ db: other.db, clock: systemClock }, SYSTEM_ACTOR, async (uow) => {
        await setFeatureEnvironmentEnabled(uow, { project: 'default', featureName: 'late', environment: 'development' }, true);
        recorded();
        await released;
      });
      try {
        await wasRecorded;
        await expectOk(call(writer, 'POST', '/api/admin/projects/default/features/early/environments/development/on'));
        await eventually(() => servedOn(reader, secret, 'early'), 5_000);
        // Polls pass while the older change is still uncommitted.
        await setTimeout(1_500);
        assert.equal(await servedOn(reader, secret, 'late'), false);
        release();
        await slow;
        const late = await eventually(() => servedOn(reader, secret, 'late'), 5_000);
        t.diagnostic(`a change committed after a later one: in ${Math.round(late)} ms`);
        assert.ok(late <= 2_000, `the late change took ${late} ms`);
      } finally {
        release();
        await slow.catch(() => undefined);
        await other.close();
      }
    } finally {
      assert.equal(await stopServer(writer), 0);
      assert.equal(await stopServer(reader), 0);
    }
  });

  test('with DATABASE_LISTEN_URL direct to PostgreSQL, changes are heard at once', async (t) => {
    const env = { DATABASE_URL: pooler.url, DATABASE_LISTEN_URL: cluster.url, DATABASE_POOL_SIZE: '2', INIT_ADMIN_API_TOKENS: ADMIN_TOKEN };
    const [writer, reader] = await Promise.all([startServer(env), startServer(env)]);
    try {
      const { change, revocation } = await propagation(writer, reader, 'heard');
      t.diagnostic(`by LISTEN: the change in ${Math.round(change)} ms, the revocation in ${Math.round(revocation)} ms`);
      // A poll would take up to a second; a notification a few milliseconds.
      assert.ok(change < 500, `the change took ${change} ms`);
      assert.ok(revocation < 500, `the revocation took ${revocation} ms`);
      assert.doesNotMatch(reader.output(), /LISTEN hears no notifications/);
    } finally {
      assert.equal(await stopServer(writer), 0);
      assert.equal(await stopServer(reader), 0);
    }
  });
});
