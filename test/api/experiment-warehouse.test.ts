import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { expectError, expectStatus } from '../helpers/assertions.js';
import { uniqueName } from '../helpers/fixtures.js';
import { createExperiment } from '../helpers/experiments.js';
import { createFlag } from '../helpers/projects.js';
import { seededRandom } from '../helpers/seeded-random.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

/*
 * Warehouse-native experiments: a customer's PostgreSQL (a database of its own on the PostgreSQL at 127.0.0.1:5432,
 * skipped where none answers) with their own assignment and event tables; Vexil composes the analysis there, through
 * the data source's queries, in a read-only transaction, and gets back the sums per variant. The results equal what
 * the test computes from the rows it wrote. The credentials are never shown again, and a private host is refused
 * unless the operator allows private networks.
 */
const SERVER = 'postgres://postgres@127.0.0.1:5432/postgres';
const warehouseName = `vexil_warehouse_${Date.now()}`;
let available = false;
let ctx: TestApp;

async function admin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: SERVER });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

try {
  await admin('SELECT 1');
  available = true;
} catch {
  available = false;
}

describe('experiments analysed in a warehouse', {
  skip: available ? false : 'no PostgreSQL answers on 127.0.0.1:5432 to be the warehouse',
}, () => {
  const warehouseUrl = `postgres://postgres@127.0.0.1:5432/${warehouseName}`;
  const units = Array.from({ length: 600 }, (_, i) => `w-${i}`);
  const variantOf = (unit: string) => (Number(unit.slice(2)) % 2 === 0 ? 'control' : 'big');
  const converted = new Set<string>();

  before(async () => {
    await admin(`CREATE DATABASE ${warehouseName}`);
    const warehouse = new pg.Client({ connectionString: warehouseUrl });
    await warehouse.connect();
    await warehouse.query(`CREATE SCHEMA analytics`);
    await warehouse.query(`CREATE TABLE analytics.assignments (user_id text, ts timestamptz, experiment text, variant text)`);
    await warehouse.query(`CREATE TABLE analytics.events (user_id text, name text, ts timestamptz, amount numeric)`);
    const random = seededRandom(5);
    const now = Date.now();
    for (const unit of units) {
      const at = new Date(now - 3_600_000);
      await warehouse.query('INSERT INTO analytics.assignments VALUES ($1, $2, $3, $4)', [unit, at, 'big-button', variantOf(unit)]);
      // A second assignment later: the first one counts.
      await warehouse.query('INSERT INTO analytics.assignments VALUES ($1, $2, $3, $4)', [
        unit,
        new Date(now - 1_800_000),
        'big-button',
        variantOf(unit),
      ]);
      if (random() < (variantOf(unit) === 'big' ? 0.45 : 0.3)) {
        converted.add(unit);
        await warehouse.query('INSERT INTO analytics.events VALUES ($1, $2, $3, $4)', [unit, 'checkout', new Date(now - 600_000), 1]);
      }
    }
    // Another experiment's assignments, and a unit assigned both variants: neither counts.
    await warehouse.query("INSERT INTO analytics.assignments VALUES ('other', now() - interval '1 hour', 'another-test', 'control')");
    await warehouse.query(
      "INSERT INTO analytics.assignments VALUES ('both', now() - interval '1 hour', 'big-button', 'control'), ('both', now() - interval '1 hour', 'big-button', 'big')",
    );
    await warehouse.end();
    ctx = await startTestApp({ env: { INTEGRATIONS_ALLOW_PRIVATE_NETWORKS: 'true' } });
  });

  after(async () => {
    await ctx?.close();
    await admin(`DROP DATABASE IF EXISTS ${warehouseName} WITH (FORCE)`);
  });

  const dataSource = (name: string) => ({
    name,
    url: warehouseUrl.replace('postgres@', 'postgres:a-secret-password@'),
    assignmentQuery: 'SELECT user_id AS unit_id, ts AS timestamp, experiment AS experiment_key, variant FROM analytics.assignments',
    eventsQuery: 'SELECT user_id AS unit_id, name AS event, ts AS timestamp, amount AS value FROM analytics.events',
  });

  test('a data source is saved without showing its credentials again, tested, and analysed in: the sums come from the warehouse', async () => {
    const name = uniqueName('warehouse');
    const created = await ctx.admin.post('/api/admin/experiment-data-sources', dataSource(name));
    expectStatus(created, 201);
    assert.equal((created.json() as { address: string }).address, `postgres@127.0.0.1:5432/${warehouseName}`);
    const listed = await ctx.admin.get('/api/admin/experiment-data-sources');
    assert.ok(!listed.body.includes('a-secret-password'), 'the password is never shown');
    const events = await ctx.db.selectFrom('events').select(['data']).where('type', '=', 'experiment-data-source-created').execute();
    assert.ok(!JSON.stringify(events).includes('a-secret-password'), 'nor put in an event');
    const stored = await ctx.db
      .selectFrom('experiment_data_sources')
      .select('connection_sealed')
      .where('name', '=', name)
      .executeTakeFirstOrThrow();
    assert.ok(!stored.connection_sealed.includes('a-secret-password'), 'and kept sealed');
    const tested = await ctx.admin.post(`/api/admin/experiment-data-sources/${name}/test`);
    expectStatus(tested, 200);
    assert.deepEqual(tested.json(), {
      assignmentColumns: ['unit_id', 'timestamp', 'experiment_key', 'variant'],
      eventColumns: ['unit_id', 'event', 'timestamp', 'value'],
    });

    const variants = ['control', 'big'].map((variant) => ({ name: variant, weight: 500, weightType: 'variable', stickiness: 'userId' }));
    const flag = await createFlag(ctx, 'default', {
      strategies: [{ name: 'flexibleRollout', parameters: { rollout: '100', stickiness: 'userId', groupId: 'w' }, variants }],
    });
    // The phase starts now; the warehouse's assignments of the last hour are before it. Backdate the phase, as an
    // experiment that has run for a while would be.
    const warehouse = { name, experimentKey: 'big-button' };
    const experiment = await createExperiment(ctx, flag, {
      goal: { kind: 'proportion', event: 'checkout' },
      settings: { dataSource: warehouse },
    });
    assert.deepEqual(((await ctx.admin.get(experiment.path)).json() as { dataSource: unknown }).dataSource, warehouse);
    await ctx.db
      .updateTable('experiment_phases')
      .set({ started_at: new Date(Date.now() - 2 * 3_600_000) })
      .execute();
    const results = (await ctx.admin.post(`${experiment.path}/results`)).json() as {
      exposures: Array<{ variant: string; units: number }>;
      multipleExposures: number;
      metrics: Array<{ variants: Array<{ variant: string; units: number; value: number }> }>;
    };
    const count = (variant: string) => units.filter((unit) => variantOf(unit) === variant).length;
    assert.deepEqual(
      results.exposures.map((arm) => [arm.variant, arm.units]),
      [
        ['control', count('control')],
        ['big', count('big')],
      ],
    );
    assert.equal(results.multipleExposures, 1, 'the unit assigned both variants is counted and left out');
    const rate = (variant: string) => units.filter((unit) => variantOf(unit) === variant && converted.has(unit)).length / count(variant);
    assert.deepEqual(
      results.metrics[0]!.variants.map((arm) => [arm.variant, Number(arm.value.toFixed(12))]),
      [
        ['control', Number(rate('control').toFixed(12))],
        ['big', Number(rate('big').toFixed(12))],
      ],
    );
    expectError(await ctx.admin.delete(`/api/admin/experiment-data-sources/${name}`), 409, 'ConflictError');
  });

  test('bad data sources: not PostgreSQL, a query that fails, a private host without the operator allowing it', async () => {
    expectError(
      await ctx.admin.post('/api/admin/experiment-data-sources', { ...dataSource(uniqueName('w')), url: 'http://example.com/x' }),
      400,
      'BadDataError',
    );
    expectError(
      await ctx.admin.post('/api/admin/experiment-data-sources', { ...dataSource(uniqueName('w')), url: 'not a url' }),
      400,
      'BadDataError',
    );
    expectError(
      await ctx.admin.post('/api/admin/experiment-data-sources', { ...dataSource(uniqueName('w')), extra: 1 }),
      400,
      'BadDataError',
    );
    const broken = uniqueName('broken');
    expectStatus(
      await ctx.admin.post('/api/admin/experiment-data-sources', { ...dataSource(broken), eventsQuery: 'SELECT 1 AS unit_id' }),
      201,
    );
    const tested = await ctx.admin.post(`/api/admin/experiment-data-sources/${broken}/test`);
    expectError(tested, 400, 'BadDataError');
    assert.match((tested.json() as { message: string }).message, /lacks the column\(s\) event, timestamp, value/);
    const failing = uniqueName('failing');
    expectStatus(
      await ctx.admin.post('/api/admin/experiment-data-sources', {
        ...dataSource(failing),
        assignmentQuery: 'SELECT * FROM no_such_table',
      }),
      201,
    );
    expectError(await ctx.admin.post(`/api/admin/experiment-data-sources/${failing}/test`), 400, 'BadDataError');

    const guarded = await startTestApp();
    try {
      const refused = await guarded.admin.post('/api/admin/experiment-data-sources', dataSource(uniqueName('private')));
      expectError(refused, 400, 'BadDataError');
      assert.match((refused.json() as { message: string }).message, /loopback address/);
      assert.deepEqual((await guarded.admin.get('/api/admin/experiment-data-sources')).json(), { dataSources: [] });
    } finally {
      await guarded.close();
    }
  });
});
