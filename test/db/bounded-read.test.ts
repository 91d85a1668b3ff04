import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { boundedRead } from '../../src/db/bounded-read.js';
import type { DatabaseHandle } from '../../src/db/database.js';
import { translateDatabaseError } from '../../src/db/pg-errors.js';
import { createTestDatabase, usingPostgres, type TestDatabase } from '../helpers/test-database.js';

// Statement timeouts and cancellation exist on PostgreSQL only; the embedded engine runs the work as it is.
describe('bounded reads', { skip: !usingPostgres() && 'needs PostgreSQL (TEST_DATABASE_URL)' }, () => {
  let database: TestDatabase;
  let handle: DatabaseHandle;
  before(async () => {
    database = await createTestDatabase();
    handle = await database.open();
  });
  after(async () => {
    await handle.close();
    await database.drop();
  });

  async function expectCancelled(run: Promise<unknown>, withinMs: number): Promise<void> {
    const started = performance.now();
    await assert.rejects(run, (error: { code?: string }) => error.code === '57014');
    const elapsed = performance.now() - started;
    assert.ok(elapsed < withinMs, `stopped after ${elapsed.toFixed(0)} ms`);
  }

  test('a read running past its timeout is stopped and answered as a 503', async () => {
    const signal = new AbortController().signal;
    let caught: unknown;
    await expectCancelled(
      boundedRead(handle.db, { engine: 'postgres', timeoutMs: 200, signal }, (db) => sql`SELECT pg_sleep(10)`.execute(db)).catch(
        (error) => {
          caught = error;
          throw error;
        },
      ),
      3_000,
    );
    const answer = translateDatabaseError(caught);
    assert.equal(answer?.statusCode, 503);
    assert.equal(answer?.name, 'ServiceUnavailableError');
  });

  test('the timeout bounds the whole read, not each of its statements', async () => {
    const signal = new AbortController().signal;
    await expectCancelled(
      boundedRead(handle.db, { engine: 'postgres', timeoutMs: 600, signal }, async (db) => {
        // Each statement alone stays under the timeout; together they pass it.
        for (let i = 0; i < 4; i += 1) await sql`SELECT pg_sleep(0.4)`.execute(db);
      }),
      1_200,
    );
  });

  test('a read whose client goes away is cancelled at once', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    await expectCancelled(
      boundedRead(handle.db, { engine: 'postgres', timeoutMs: 60_000, signal: controller.signal }, (db) =>
        sql`SELECT pg_sleep(10)`.execute(db),
      ),
      3_000,
    );
  });

  test('reads are read-only, without JIT, and leave the pooled connection as it was', async () => {
    const signal = new AbortController().signal;
    await boundedRead(handle.db, { engine: 'postgres', timeoutMs: 1234, signal }, async (db) => {
      await assert.rejects(sql`CREATE TABLE must_not_exist (id int)`.execute(db), /read-only/);
    });
    const inside = await boundedRead(handle.db, { engine: 'postgres', timeoutMs: 1234, signal }, async (db) => {
      const { rows } = await sql<{
        timeout: string;
        jit: string;
      }>`SELECT current_setting('statement_timeout') AS timeout, current_setting('jit') AS jit`.execute(db);
      return rows[0]!;
    });
    assert.deepEqual(inside, { timeout: '1234ms', jit: 'off' });
    const { rows } = await sql<{ timeout: string }>`SELECT current_setting('statement_timeout') AS timeout`.execute(handle.db);
    assert.equal(rows[0]!.timeout, '0');
    const table = await sql`SELECT to_regclass('must_not_exist') AS t`.execute(handle.db);
    assert.deepEqual(table.rows, [{ t: null }]);
  });
});
