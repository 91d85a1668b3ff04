import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import {
  type AnalysisInput,
  type AnalysisMetric,
  builtInSources,
  ClickHouseAnalysisSql,
  PostgresAnalysisSql,
} from '../../src/domain/experiments/analysis-sql.js';

/*
 * Snapshots of the SQL the analysis builder writes, per dialect and source: a change to the shape shows here as a
 * diff to read, not only as a figure that moved. `UPDATE_SNAPSHOTS=1` rewrites them (then read the diff).
 */
const FIXTURES = new URL('../fixtures/analysis-sql/', import.meta.url);

function matchesSnapshot(name: string, actual: { sql: string; parameters: unknown[] }) {
  const file = new URL(`${name}.sql`, FIXTURES);
  const text = `${actual.sql}\n-- parameters: ${JSON.stringify(actual.parameters)}\n`;
  if (process.env.UPDATE_SNAPSHOTS === '1' || !existsSync(file)) writeFileSync(file, text);
  assert.equal(text, readFileSync(file, 'utf8'), `${name}.sql`);
}

const END = new Date('2026-11-29T12:00:00.000Z');
const metrics: AnalysisMetric[] = [
  {
    kind: 'proportion',
    event: 'checkout',
    aggregation: 'sum',
    denominatorEvent: null,
    denominatorAggregation: null,
    windowHours: 72,
    cap: null,
    lookbackHours: null,
  },
  {
    kind: 'mean',
    event: 'purchase',
    aggregation: 'sum',
    denominatorEvent: null,
    denominatorAggregation: null,
    windowHours: 72,
    cap: 1000,
    lookbackHours: 336,
  },
  {
    kind: 'ratio',
    event: 'purchase',
    aggregation: 'sum',
    denominatorEvent: 'order',
    denominatorAggregation: 'count',
    windowHours: null,
    cap: null,
    lookbackHours: null,
  },
];
const warehouse = {
  assignmentQuery: 'SELECT user_id AS unit_id, ts AS timestamp, experiment AS experiment_key, variant FROM analytics.assignments',
  eventsQuery: 'SELECT user_id AS unit_id, name AS event, ts AS timestamp, amount AS value FROM analytics.events',
};
const experiment = { key: 'checkout-button', variants: ['control', 'big'], phaseStartedAt: new Date('2026-11-01T00:00:00.000Z') };

describe('the analysis SQL', () => {
  it("on Vexil's own tables, in PostgreSQL", () => {
    const input: AnalysisInput = { ...builtInSources(7, 1, 'production'), end: END, metrics };
    matchesSnapshot('postgres-built-in', new PostgresAnalysisSql().build(input));
  });

  it("on a warehouse's tables, in PostgreSQL, with the units per variant", () => {
    const dialect = new PostgresAnalysisSql();
    const sources = dialect.warehouseSources(warehouse, experiment);
    matchesSnapshot('postgres-warehouse', dialect.build({ ...sources, end: END, metrics }));
    matchesSnapshot('postgres-warehouse-units', dialect.exposureCounts(sources.units, END));
  });

  it("on a warehouse's tables, in ClickHouse", () => {
    const dialect = new ClickHouseAnalysisSql();
    matchesSnapshot('clickhouse-warehouse', dialect.build({ ...dialect.warehouseSources(warehouse, experiment), end: END, metrics }));
  });

  it('binds every value as a parameter: names and keys never become SQL', () => {
    const dialect = new PostgresAnalysisSql();
    const hostile = { ...experiment, key: "x'; DROP TABLE users; --", variants: ["a' OR '1'='1", 'b'] };
    const query = dialect.build({
      ...dialect.warehouseSources(warehouse, hostile),
      end: END,
      metrics: [{ ...metrics[0]!, event: "e'--" }],
    });
    assert.ok(!query.sql.includes('DROP TABLE') && !query.sql.includes("a' OR") && !query.sql.includes("e'--"), query.sql);
    assert.ok(query.parameters.includes("x'; DROP TABLE users; --") && query.parameters.includes("e'--"));
  });
});
