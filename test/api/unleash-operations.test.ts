import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { useTestApp } from '../helpers/test-app.js';

// Every operation of Unleash's open-source API (its 8.2.0 OpenAPI document, kept as a list in test/fixtures) has a
// route in Vexil, under Unleash's operationId, so clients generated from either document call things alike.

const { operations } = JSON.parse(readFileSync(join(import.meta.dirname, '../fixtures/unleash-8.2.0-operations.json'), 'utf8')) as {
  operations: Array<{ method: string; path: string; operationId: string; success: number[] }>;
};

/**
 * Where Vexil's success statuses differ from those Unleash's document lists, and why. Unleash's document says 200
 * for two creations its code answers 201 to (as Vexil does); a flag tagged again is a 200 in Vexil (nothing was
 * made); Unleash answers 204 to metrics only where an operator turned them off, which Vexil cannot.
 */
const SUCCESS_DIFFERENCES: Record<string, string> = {
  createFeature: '201',
  createAddon: '201',
  addTag: '200,201',
  registerClientMetrics: '202',
  registerFrontendMetrics: '200',
};

/** A path with its parameters' names left out: `/a/{id}` and `/a/:name` are one route. */
const shapeOf = (method: string, path: string) => `${method.toUpperCase()} ${path.replace(/\{[^}]+\}|:[^/]+/g, '{}')}`;

describe("Unleash 8.2.0's open-source API", () => {
  const ctx = useTestApp();

  test('every operation has a route in Vexil, named as Unleash names it', async () => {
    const document = (await ctx.as().get('/docs/openapi.json')).json() as {
      paths: Record<string, Record<string, { operationId?: string }>>;
    };
    const vexil = new Map(
      Object.entries(document.paths).flatMap(([path, item]) =>
        Object.entries(item).map(([method, operation]) => [shapeOf(method, path), operation.operationId] as const),
      ),
    );
    assert.equal(operations.length, 211);
    assert.deepEqual(
      operations
        .filter((operation) => !vexil.has(shapeOf(operation.method, operation.path)))
        .map((operation) => `${operation.operationId}: ${operation.method} ${operation.path}`),
      [],
      'operations missing from Vexil',
    );
    assert.deepEqual(
      operations
        .filter((operation) => vexil.get(shapeOf(operation.method, operation.path)) !== operation.operationId)
        .map(
          (operation) =>
            `${operation.method} ${operation.path}: Unleash ${operation.operationId}, Vexil ${vexil.get(shapeOf(operation.method, operation.path))}`,
        ),
      [],
      'operations Vexil names otherwise',
    );
  });

  test("each operation answers success with Unleash's statuses, but for the differences named", async () => {
    const document = (await ctx.as().get('/docs/openapi.json')).json() as {
      paths: Record<string, Record<string, { operationId?: string; responses?: Record<string, unknown> }>>;
    };
    const success = new Map(
      Object.values(document.paths).flatMap((item) =>
        Object.values(item).map((operation) => [
          operation.operationId,
          Object.keys(operation.responses ?? {})
            .filter((status) => status.startsWith('2'))
            .sort()
            .join(','),
        ]),
      ),
    );
    assert.deepEqual(
      operations
        .filter(
          (operation) => success.get(operation.operationId) !== (SUCCESS_DIFFERENCES[operation.operationId] ?? operation.success.join(',')),
        )
        .map(
          (operation) => `${operation.operationId}: Unleash ${operation.success.join(',')}, Vexil ${success.get(operation.operationId)}`,
        ),
      [],
    );
  });
});
