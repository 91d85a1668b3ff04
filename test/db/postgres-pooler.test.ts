import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type PostgresCluster, type Pooler, poolerUnavailable, startPgBouncer, startPostgresCluster } from '../helpers/postgres-cluster.js';
import { startServer, stopServer } from '../helpers/server-process.js';

// Vexil behind PgBouncer in transaction mode, where consecutive statements outside a transaction may reach different
// server connections: start-up (migrations under their lock) must never hang, however often it is repeated.

const unavailable = poolerUnavailable();
const ADMIN_TOKEN = '*:*.pooler-admin-token-0123456789abcdef';

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
});
